//! ARCHITECTURE.md's crate map names every workspace crate once, with its folder and the
//! workspace crates it depends on, as `cargo metadata` has them: a crate added, moved or
//! given a new dependency changes the map in the same commit.

use std::collections::BTreeSet;

use regex::Regex;

use super::{assert_clean, members, metadata, read};

/// A crate as the map or the metadata describes it.
#[derive(Debug, PartialEq)]
struct Entry {
    name: String,
    dir: String,
    /// Normal and build dependencies on workspace crates.
    deps: BTreeSet<String>,
    /// Dev dependencies on workspace crates.
    dev: BTreeSet<String>,
}

fn names(text: &str) -> BTreeSet<String> {
    Regex::new(r"`([\w-]+)`")
        .unwrap()
        .captures_iter(text)
        .map(|found| found[1].to_owned())
        .collect()
}

/// The rows of the table under `## Crate map`: crate, path, …, depends on (last column,
/// `(dev: …)` for dev dependencies).
fn mapped(architecture: &str) -> Vec<Entry> {
    let section = architecture
        .split("\n## ")
        .find(|section| section.starts_with("Crate map"))
        .unwrap_or("");
    section
        .lines()
        .filter(|line| line.starts_with("| `"))
        .map(|line| {
            let cells: Vec<&str> = line.trim_matches('|').split(" | ").map(str::trim).collect();
            let depends = cells.last().copied().unwrap_or("");
            let (normal, dev) = depends.split_once("(dev:").unwrap_or((depends, ""));
            Entry {
                name: cells[0].trim_matches('`').to_owned(),
                dir: cells.get(1).unwrap_or(&"").trim_matches('`').to_owned(),
                deps: names(normal),
                dev: names(dev),
            }
        })
        .collect()
}

fn actual(metadata: &serde_json::Value) -> Vec<Entry> {
    members(metadata)
        .into_iter()
        .map(|member| {
            let (dev, normal): (Vec<_>, Vec<_>) =
                member.deps.into_iter().partition(|(_, dev)| *dev);
            Entry {
                name: member.name,
                dir: member.dir,
                deps: normal.into_iter().map(|(name, _)| name).collect(),
                dev: dev.into_iter().map(|(name, _)| name).collect(),
            }
        })
        .collect()
}

fn violations(map: &[Entry], crates: &[Entry]) -> Vec<String> {
    let mut found = Vec::new();
    for krate in crates {
        match map.iter().find(|row| row.name == krate.name) {
            None => found.push(format!("{}: not in ARCHITECTURE.md's crate map", krate.name)),
            Some(row) if row != krate => found.push(format!(
                "{}: the crate map says {:?} depending on {:?} (dev {:?}); Cargo says {:?} depending on {:?} (dev {:?})",
                krate.name, row.dir, row.deps, row.dev, krate.dir, krate.deps, krate.dev
            )),
            Some(_) => {}
        }
    }
    for row in map {
        if !crates.iter().any(|krate| krate.name == row.name) {
            found.push(format!(
                "{}: in ARCHITECTURE.md's crate map but not a workspace crate",
                row.name
            ));
        }
    }
    found
}

#[test]
fn the_crate_map_is_the_workspace() {
    let map = mapped(&read("ARCHITECTURE.md"));
    assert!(
        map.len() >= 5,
        "only {} rows read from the crate map",
        map.len()
    );
    assert_clean("crate map", &violations(&map, &actual(&metadata())));
}

#[test]
fn a_crate_missing_from_the_map_or_a_dependency_left_out_is_named() {
    let architecture = "# A\n\n## Crate map\n\n| crate | path | job | depends on |\n|---|---|---|---|\n\
        | `agent-host` | `runtime/host` | the host | `agent-protocol` (dev: `agent-schemas`) |\n\
        | `gone` | `gone` | — | — |\n\n## Next\n";
    let map = mapped(architecture);
    let entry = |name: &str, dir: &str, deps: &[&str], dev: &[&str]| Entry {
        name: name.to_owned(),
        dir: dir.to_owned(),
        deps: deps.iter().map(|dep| (*dep).to_owned()).collect(),
        dev: dev.iter().map(|dep| (*dep).to_owned()).collect(),
    };
    assert_eq!(
        map[0],
        entry(
            "agent-host",
            "runtime/host",
            &["agent-protocol"],
            &["agent-schemas"]
        )
    );
    let crates = [
        entry(
            "agent-host",
            "runtime/host",
            &["agent-protocol", "agent-paths"],
            &["agent-schemas"],
        ),
        entry("agent-paths", "runtime/paths", &[], &[]),
    ];
    let found = violations(&map, &crates);
    assert_eq!(found.len(), 3, "{found:#?}");
    assert!(found[0].starts_with("agent-host: the crate map says"));
    assert_eq!(found[1], "agent-paths: not in ARCHITECTURE.md's crate map");
    assert_eq!(
        found[2],
        "gone: in ARCHITECTURE.md's crate map but not a workspace crate"
    );
}
