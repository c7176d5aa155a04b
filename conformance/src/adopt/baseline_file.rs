//! `conformance baseline --write FILE`: a run's failures as a baseline, one entry per failed
//! or not-judged requirement (its reason: the first failing step's message) and one per
//! failed scenario no such entry covers. Certifying with it passes today; once an entry
//! passes it is stale and fails the run until removed, so the baseline only shrinks.

use std::fmt::Write as _;

use crate::baseline::{Baseline, KnownFailure};

use super::record::{RunRecord, one_line};

/// The entries that make `run` pass when used as its baseline.
pub fn entries(run: &RunRecord) -> Vec<(KnownFailure, String)> {
    let mut entries = Vec::new();
    for requirement in run.requirements.iter().filter(|r| r.is_failure()) {
        let comment = format!(
            "{} [{} {}] {}",
            requirement.id,
            requirement.level,
            requirement.profile,
            one_line(&requirement.statement, 160)
        );
        entries.push((
            KnownFailure {
                id: Some(requirement.id.clone()),
                scenario: None,
                reason: run.reason(requirement),
            },
            comment,
        ));
    }
    // A failed scenario whose own tags name no failed requirement (its failure was charged
    // elsewhere) is named by itself, once.
    let named = |tags: &[String], entries: &[(KnownFailure, String)]| {
        entries.iter().any(|(entry, _)| {
            entry
                .id
                .as_ref()
                .is_some_and(|id| tags.iter().any(|t| t.trim_start_matches('@') == id))
        })
    };
    for scenario in run.scenarios.iter().filter(|s| s.counts_as_failure()) {
        if named(&scenario.tags, &entries)
            || entries
                .iter()
                .any(|(e, _)| e.scenario.as_deref() == Some(scenario.name.as_str()))
        {
            continue;
        }
        let comment = format!("{}:{}", scenario.uri, scenario.line);
        entries.push((
            KnownFailure {
                id: None,
                scenario: Some(scenario.name.clone()),
                reason: scenario.one_line_failure(),
            },
            comment,
        ));
    }
    entries
}

/// The baseline file's text: a header, then each entry under a comment saying what it is.
pub fn render(run: &RunRecord, entries: &[(KnownFailure, String)]) -> String {
    let mut text = format!(
        "# Known failures of {}, written by `conformance baseline --write` from {}.\n\
         # Certify with `--baseline` this file: these failures do not fail the run, new ones do,\n\
         # and an entry that passes is stale and fails the run until it is deleted.\n",
        run.label,
        run.path.display()
    );
    if entries.is_empty() {
        text.push_str("# The run failed nothing: no entry.\n");
    }
    for (entry, comment) in entries {
        let _ = write!(text, "\n# {}\n[[known_failure]]\n", one_line(comment, 200));
        if let Some(id) = &entry.id {
            let _ = writeln!(text, "id = {}", toml_string(id));
        }
        if let Some(name) = &entry.scenario {
            let _ = writeln!(text, "scenario = {}", toml_string(name));
        }
        let reason = if entry.reason.trim().is_empty() {
            "failed".to_owned()
        } else {
            entry.reason.clone()
        };
        let _ = writeln!(text, "reason = {}", toml_string(&reason));
    }
    text
}

/// A TOML basic string (JSON's escaping is a subset TOML accepts for basic strings).
fn toml_string(text: &str) -> String {
    serde_json::to_string(text).unwrap_or_else(|_| "\"\"".to_owned())
}

/// Writes the baseline of `run` to `file` and checks it reads back as a valid baseline.
pub fn write(run: &RunRecord, file: &std::path::Path) -> anyhow::Result<usize> {
    let entries = entries(run);
    let text = render(run, &entries);
    let parsed = Baseline::parse(&text)?;
    anyhow::ensure!(
        parsed.known_failure.len() == entries.len(),
        "the written baseline does not read back"
    );
    if let Some(parent) = file.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)?;
    }
    std::fs::write(file, text)
        .map_err(|error| anyhow::anyhow!("cannot write {}: {error}", file.display()))?;
    Ok(entries.len())
}

#[cfg(test)]
mod tests {
    use super::super::record::RunRecord;
    use super::*;

    fn run() -> RunRecord {
        let mut run: RunRecord = serde_json::from_str(
            r#"{"passed": false, "profiles": "core", "scenarios": [
                {"name": "a", "uri": "rpc/x.feature", "line": 3, "tags": ["REQ-RPC-006"], "status": "failed",
                 "failure": "Then the error code is -32601: got -32600\nmore"},
                {"name": "b \"quoted\"", "uri": "rpc/x.feature", "line": 9, "tags": ["REQ-RPC-005"], "status": "failed",
                 "failure": "Then x: y", "chargedTo": ["REQ-RPC-010"]},
                {"name": "c", "uri": "rpc/x.feature", "line": 12, "tags": ["REQ-RPC-005"], "status": "passed"}],
              "requirements": [
                {"id": "REQ-RPC-006", "level": "MUST", "profile": "core", "statement": "s", "verdict": "failed",
                 "decisive": true, "scenarios": [0]},
                {"id": "REQ-RPC-005", "level": "MUST", "profile": "core", "statement": "t", "verdict": "passed",
                 "decisive": true, "scenarios": [1, 2]}]}"#,
        )
        .unwrap();
        run.label = "rt".to_owned();
        run
    }

    #[test]
    fn every_failure_gets_one_entry_with_the_failing_step_as_its_reason() {
        let run = run();
        let entries = entries(&run);
        assert_eq!(entries.len(), 2, "{entries:?}");
        assert_eq!(entries[0].0.id.as_deref(), Some("REQ-RPC-006"));
        assert_eq!(
            entries[0].0.reason,
            "Then the error code is -32601: got -32600"
        );
        assert_eq!(entries[1].0.scenario.as_deref(), Some("b \"quoted\""));
        let parsed = Baseline::parse(&render(&run, &entries)).unwrap();
        assert_eq!(parsed.known_failure.len(), 2);
        assert_eq!(
            parsed.known_failure[1].scenario.as_deref(),
            Some("b \"quoted\"")
        );
    }
}
