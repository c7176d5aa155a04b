//! `cargo xtask lint`: what makes a feature file unfit to certify with, found before a run:
//! a step no definition matches (or more than one does), a scenario without a requirement
//! tag, two scenarios with the same name (baselines and reports name scenarios), a tag or a
//! requirement the catalogue does not know or cannot place (no spec reference).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;

use crate::catalogue::{Catalogue, Coverage, scan_features};
use crate::vocabulary::{self, kind_name};

#[derive(clap::Args)]
pub(crate) struct Args {
    /// Features directory holding requirements.toml (default: the repository's features/).
    #[arg(long, value_name = "DIR")]
    features: Option<PathBuf>,
}

pub(crate) fn run(args: Args) -> anyhow::Result<ExitCode> {
    let features = args.features.unwrap_or_else(crate::features_dir);
    let problems = lint(&features)?;
    if problems.is_empty() {
        println!("lint OK ({})", features.display());
        return Ok(ExitCode::SUCCESS);
    }
    println!(
        "{} lint problem(s) in {}:",
        problems.len(),
        features.display()
    );
    for problem in &problems {
        println!("  - {problem}");
    }
    Ok(ExitCode::FAILURE)
}

/// Every problem, as one readable line each.
pub(crate) fn lint(features: &std::path::Path) -> anyhow::Result<Vec<String>> {
    let catalogue = Catalogue::load(&features.join("requirements.toml"))?;
    let scenarios = scan_features(features)?;
    let defs = vocabulary::step_definitions(&crate::steps_dir())?;
    let steps = vocabulary::feature_steps(features)?;
    let mut problems = Vec::new();

    // An outline yields the same line once per example row: report each line once.
    let mut seen = std::collections::BTreeSet::new();
    for step in &steps {
        let found = vocabulary::matches(&defs, step);
        let key = (step.location.clone(), step.text.clone());
        if found.len() == 1 || !seen.insert(key) {
            continue;
        }
        if found.is_empty() {
            let other_kind = defs
                .iter()
                .find(|d| d.kind != step.kind && d.regex.is_match(&step.text));
            let hint = match other_kind {
                Some(def) => format!(
                    " (a {} step of that text exists at {}; And/But take the type of the step before them)",
                    kind_name(def.kind),
                    def.location
                ),
                None => " (see `cargo xtask steps`)".to_owned(),
            };
            problems.push(format!(
                "{}: undefined {} step \"{}\" in \"{}\"{hint}",
                step.location,
                kind_name(step.kind),
                step.text,
                step.scenario
            ));
        } else {
            let at: Vec<&str> = found
                .iter()
                .filter_map(|i| defs.get(*i))
                .map(|d| d.location.as_str())
                .collect();
            problems.push(format!(
                "{}: ambiguous step \"{}\" matches {} definitions ({})",
                step.location,
                step.text,
                found.len(),
                at.join(", ")
            ));
        }
    }

    let mut by_name: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for scenario in &scenarios {
        by_name
            .entry(scenario.name.as_str())
            .or_default()
            .push(format!("{}:{}", scenario.file, scenario.line));
    }
    for (name, places) in by_name.iter().filter(|(_, p)| p.len() > 1) {
        problems.push(format!(
            "duplicate scenario name \"{name}\" at {} (baselines and reports name scenarios, so names must be unique)",
            places.join(", ")
        ));
    }

    for requirement in &catalogue.requirements {
        let spec = requirement.spec.trim();
        if !spec.is_empty() && !names_a_document(spec) {
            problems.push(format!(
                "{} has spec = {spec:?}, which names no document (expected e.g. \"INTEROP.md §2\")",
                requirement.id
            ));
        }
    }

    // Untagged scenarios, unknown tags, requirements without a spec reference and uncovered
    // MUSTs: the same rules as `cargo xtask coverage`, so the two never disagree.
    problems.extend(Coverage::compute(&catalogue, &scenarios).problems(&catalogue));
    Ok(problems)
}

/// A spec reference starts with the document it points into: a Markdown file of the spec
/// (or ARCHITECTURE.md), or the JSON-RPC 2.0 specification.
fn names_a_document(spec: &str) -> bool {
    let first = spec.split_whitespace().next().unwrap_or("");
    first.ends_with(".md") || spec.starts_with("JSON-RPC 2.0")
}

#[cfg(test)]
mod tests {
    use super::*;

    const CATALOGUE: &str = r#"
[[area]]
id = "RPC"
title = "t"
feature = "rpc.feature"

[[requirement]]
id = "REQ-RPC-001"
level = "MUST"
profile = "core"
spec = "INTEROP.md §1"
statement = "s"

[[requirement]]
id = "REQ-RPC-002"
level = "SHOULD"
profile = "core"
spec = ""
statement = "s"

[[requirement]]
id = "REQ-RPC-003"
level = "SHOULD"
profile = "core"
spec = "somewhere"
statement = "s"
"#;

    const FEATURE: &str = r#"Feature: lint fixture

  @REQ-RPC-001
  Scenario: same name
    When the client sends the line '{}'
    Then the runtime answers with error -32600

  @REQ-RPC-001
  Scenario: same name
    When the client sends the kettle a postcard
    Then the client sends the line '{}'

  Scenario: no tag
    When the client sends the line '{}'
    Then the runtime answers with error -32600

  @REQ-RPC-001
  Scenario Outline: outline <code>
    When the client sends the line '{}'
    Then the runtime answers with error <code>

    Examples:
      | code   |
      | -32600 |
      | banana |
"#;

    fn fixture() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("requirements.toml"), CATALOGUE).unwrap();
        std::fs::write(dir.path().join("rpc.feature"), FEATURE).unwrap();
        dir
    }

    #[test]
    fn finds_every_kind_of_problem() {
        let dir = fixture();
        let problems = lint(dir.path()).unwrap();
        let has = |needle: &str| problems.iter().any(|p| p.contains(needle));
        assert!(
            has("rpc.feature:10: undefined When step \"the client sends the kettle a postcard\""),
            "{problems:#?}"
        );
        // A When sentence used after Then is a Then step, which does not exist.
        assert!(has("rpc.feature:11: undefined Then step"), "{problems:#?}");
        assert!(has("a When step of that text exists"), "{problems:#?}");
        // Only the outline row that fills in a non-number fails.
        assert!(
            has("rpc.feature:20: undefined Then step \"the runtime answers with error banana\""),
            "{problems:#?}"
        );
        assert!(!has("error -32600\""), "{problems:#?}");
        assert!(has(
            "duplicate scenario name \"same name\" at rpc.feature:4, rpc.feature:9"
        ));
        assert!(has("rpc.feature:13 \"no tag\" carries no requirement tag"));
        assert!(has("REQ-RPC-002 has no spec reference"));
        assert!(has(
            "REQ-RPC-003 has spec = \"somewhere\", which names no document"
        ));
        assert_eq!(problems.len(), 7, "{problems:#?}");
    }

    #[test]
    fn the_repository_features_are_clean() {
        let problems = lint(&crate::features_dir()).unwrap();
        assert!(problems.is_empty(), "{problems:#?}");
    }
}
