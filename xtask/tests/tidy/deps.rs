//! Dependency rules between the workspace's crates, read from `cargo metadata`: the seams
//! ARCHITECTURE.md draws hold because Cargo refuses what crosses them, and this check
//! refuses a `Cargo.toml` that would add such a dependency.

use super::{assert_clean, members, metadata};

/// One workspace crate: its name, its folder and the workspace crates it names as
/// dependencies of any kind (normal, dev, build).
struct Krate {
    name: String,
    dir: String,
    deps: Vec<String>,
}

fn crates(metadata: &serde_json::Value) -> Vec<Krate> {
    members(metadata)
        .into_iter()
        .map(|member| Krate {
            name: member.name,
            dir: member.dir,
            deps: member.deps.into_iter().map(|(name, _)| name).collect(),
        })
        .collect()
}

/// The runtime's crates are the ones under `runtime/`, so a crate added there is covered by
/// the kit's and the fakes' rules without editing this file.
fn is_runtime(krate: &Krate) -> bool {
    krate.dir.starts_with("runtime/")
}

fn violations(crates: &[Krate]) -> Vec<String> {
    let mut found = Vec::new();
    let by_name = |name: &str| crates.iter().find(|krate| krate.name == name);
    let mut never = |from: &Krate, to: &str, why: &str| {
        if from.deps.iter().any(|dep| dep == to) {
            found.push(format!("{} depends on {to}: {why}", from.name));
        }
    };
    for krate in crates {
        match krate.name.as_str() {
            "agent-host" => never(
                krate,
                "agent-tools",
                "host and tools meet only at agent_protocol::ToolRouter",
            ),
            "agent-tools" => never(
                krate,
                "agent-host",
                "host and tools meet only at agent_protocol::ToolRouter",
            ),
            "agent-path-rules" => {
                for to in ["agent-host", "agent-tools", "agent-runtime"] {
                    never(
                        krate,
                        to,
                        "the path rules sit below host and tools, so both judge by the same ones",
                    );
                }
            }
            "agent-beneath" => {
                for to in ["agent-host", "agent-tools", "agent-runtime"] {
                    never(
                        krate,
                        to,
                        "the no-follow resolution sits below host and tools, so both open files the same way",
                    );
                }
            }
            "agent-protocol" => {
                for to in ["agent-host", "agent-tools", "agent-runtime"] {
                    never(
                        krate,
                        to,
                        "the protocol crate is the shared vocabulary, below host and tools",
                    );
                }
            }
            "conformance" | "conformance-catalogue" | "agent-mocks" => {
                for runtime in crates.iter().filter(|other| is_runtime(other)) {
                    never(
                        krate,
                        &runtime.name,
                        "the kit and its fakes see a runtime only as a process and JSON checked against schemas/",
                    );
                }
            }
            _ => {}
        }
    }
    for name in [
        "agent-host",
        "agent-tools",
        "agent-protocol",
        "conformance",
        "agent-mocks",
    ] {
        if by_name(name).is_none() {
            found.push(format!(
                "no crate named {name}: the rules name crates that must exist"
            ));
        }
    }
    found
}

#[test]
fn crates_depend_only_across_the_drawn_seams() {
    assert_clean("dependencies", &violations(&crates(&metadata())));
}

#[test]
fn a_host_depending_on_tools_or_a_kit_linking_the_runtime_is_refused() {
    let krate = |name: &str, dir: &str, deps: &[&str]| Krate {
        name: name.to_owned(),
        dir: dir.to_owned(),
        deps: deps.iter().map(|dep| (*dep).to_owned()).collect(),
    };
    let mut crates = vec![
        krate("agent-protocol", "runtime/protocol", &[]),
        krate("agent-host", "runtime/host", &["agent-protocol"]),
        krate("agent-tools", "runtime/tools", &["agent-protocol"]),
        krate("agent-mocks", "mocks", &[]),
        krate("conformance", "conformance", &["agent-mocks"]),
    ];
    assert!(violations(&crates).is_empty());
    crates[1].deps.push("agent-tools".to_owned());
    crates[4].deps.push("agent-protocol".to_owned());
    let found = violations(&crates);
    assert_eq!(found.len(), 2, "{found:#?}");
    assert!(found[0].starts_with("agent-host depends on agent-tools"));
    assert!(found[1].starts_with("conformance depends on agent-protocol"));
}
