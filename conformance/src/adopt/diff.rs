//! `conformance diff OLD NEW`: what changed between two runs' `outcome.json` — requirements
//! newly failed, newly not judged, newly passed — as Markdown a CI job posts on a pull
//! request. A regression (a decisive requirement that now fails or goes unjudged and did not
//! before) makes the command exit 1.

use std::fmt::Write as _;

use super::record::{RequirementRecord, RunRecord};

/// One requirement whose verdict moved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    pub id: String,
    pub old: String,
    pub new: String,
    /// Why it fails now (newly failed / not judged), or its statement.
    pub detail: String,
    pub decisive: bool,
}

/// The comparison of two runs.
#[derive(Debug, Clone, Default)]
pub struct RunDiff {
    pub old_verdict: String,
    pub new_verdict: String,
    pub newly_failed: Vec<Change>,
    pub newly_not_judged: Vec<Change>,
    pub newly_passed: Vec<Change>,
    /// Other moves (not run, not applicable, …), and requirements only one run knows.
    pub other: Vec<Change>,
}

impl RunDiff {
    /// A decisive requirement newly failed or newly not judged.
    pub fn regressed(&self) -> bool {
        self.newly_failed
            .iter()
            .chain(&self.newly_not_judged)
            .any(|c| c.decisive)
    }
}

fn verdict_line(run: &RunRecord) -> String {
    if run.passed {
        format!("CERTIFIED {}", run.profiles)
    } else {
        format!("NOT CERTIFIED ({})", run.profiles)
    }
}

/// Compares `old` with `new`, requirement by requirement (in `new`'s order).
pub fn compare(old: &RunRecord, new: &RunRecord) -> RunDiff {
    let mut diff = RunDiff {
        old_verdict: verdict_line(old),
        new_verdict: verdict_line(new),
        ..Default::default()
    };
    let change = |r: &RequirementRecord, before: &str, detail: String| Change {
        id: r.id.clone(),
        old: before.to_owned(),
        new: r.verdict.clone(),
        detail,
        decisive: r.decisive,
    };
    for requirement in &new.requirements {
        let before = old
            .requirement(&requirement.id)
            .map_or("absent", |r| r.verdict.as_str());
        if before == requirement.verdict {
            continue;
        }
        match requirement.verdict.as_str() {
            "failed" => {
                diff.newly_failed
                    .push(change(requirement, before, new.reason(requirement)))
            }
            "blocked" if before != "failed" => {
                diff.newly_not_judged
                    .push(change(requirement, before, new.reason(requirement)))
            }
            "passed" if matches!(before, "failed" | "blocked") => {
                diff.newly_passed
                    .push(change(requirement, before, requirement.statement.clone()))
            }
            _ => diff
                .other
                .push(change(requirement, before, requirement.statement.clone())),
        }
    }
    for gone in old
        .requirements
        .iter()
        .filter(|r| new.requirement(&r.id).is_none())
    {
        diff.other.push(Change {
            id: gone.id.clone(),
            old: gone.verdict.clone(),
            new: "absent".to_owned(),
            detail: gone.statement.clone(),
            decisive: false,
        });
    }
    diff
}

fn label(verdict: &str) -> &str {
    match verdict {
        "failed" => "failed",
        "blocked" => "not judged",
        "passed" => "passed",
        "notApplicable" => "not applicable",
        "notRun" => "not run",
        "notObserved" => "not observed",
        "uncovered" => "no scenario",
        other => other,
    }
}

/// Markdown for a pull-request comment (readable as plain text too).
pub fn render(diff: &RunDiff, old: &RunRecord, new: &RunRecord) -> String {
    let mut md = format!(
        "### Conformance: {} → {}\n\n`{}` ({}) → `{}` ({})\n",
        diff.old_verdict,
        diff.new_verdict,
        old.path.display(),
        old.label,
        new.path.display(),
        new.label
    );
    let mut section = |title: &str, changes: &[Change], with_old: bool| {
        if changes.is_empty() {
            return;
        }
        let _ = write!(md, "\n**{title} ({})**\n\n", changes.len());
        for c in changes {
            let decides = if c.decisive { "" } else { " (does not decide)" };
            let was = if with_old {
                format!(" (was {})", label(&c.old))
            } else {
                String::new()
            };
            let _ = writeln!(md, "- {}{decides}{was}: {}", c.id, c.detail);
        }
    };
    section("Newly failed", &diff.newly_failed, true);
    section(
        "Newly not judged (a precondition failed)",
        &diff.newly_not_judged,
        true,
    );
    section("Newly passed", &diff.newly_passed, false);
    if diff.newly_failed.is_empty()
        && diff.newly_not_judged.is_empty()
        && diff.newly_passed.is_empty()
    {
        md.push_str("\nNo requirement newly failed, passed or went unjudged.\n");
    }
    if !diff.other.is_empty() {
        let _ = write!(
            md,
            "\n<details><summary>Other changes ({})</summary>\n\n",
            diff.other.len()
        );
        for c in &diff.other {
            let _ = writeln!(md, "- {}: {} → {}", c.id, label(&c.old), label(&c.new));
        }
        md.push_str("\n</details>\n");
    }
    md
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(verdicts: &[(&str, &str)], passed: bool) -> RunRecord {
        let requirements: Vec<serde_json::Value> = verdicts
            .iter()
            .enumerate()
            .map(|(i, (id, verdict))| {
                serde_json::json!({"id": id, "level": "MUST", "profile": "core",
                    "statement": format!("statement of {id}"), "verdict": verdict,
                    "decisive": true, "scenarios": [i]})
            })
            .collect();
        let scenarios: Vec<serde_json::Value> = verdicts
            .iter()
            .map(|(id, verdict)| {
                serde_json::json!({"name": format!("scenario of {id}"), "tags": [id],
                    "status": verdict, "failure": format!("Then {id} broke: because")})
            })
            .collect();
        serde_json::from_value(serde_json::json!({"passed": passed, "profiles": "core",
            "requirements": requirements, "scenarios": scenarios}))
        .unwrap()
    }

    #[test]
    fn a_new_failure_is_a_regression_and_a_fix_is_named() {
        let old = run(
            &[
                ("REQ-A-001", "passed"),
                ("REQ-A-002", "failed"),
                ("REQ-A-003", "passed"),
                ("REQ-A-004", "notRun"),
            ],
            false,
        );
        let new = run(
            &[
                ("REQ-A-001", "failed"),
                ("REQ-A-002", "passed"),
                ("REQ-A-003", "blocked"),
                ("REQ-A-004", "passed"),
            ],
            false,
        );
        let diff = compare(&old, &new);
        assert_eq!(diff.newly_failed.len(), 1);
        assert_eq!(diff.newly_failed[0].id, "REQ-A-001");
        assert_eq!(diff.newly_failed[0].detail, "Then REQ-A-001 broke: because");
        assert_eq!(diff.newly_not_judged[0].id, "REQ-A-003");
        assert_eq!(diff.newly_passed[0].id, "REQ-A-002");
        assert_eq!(diff.other[0].id, "REQ-A-004");
        assert!(diff.regressed());
        let text = render(&diff, &old, &new);
        assert!(
            text.contains("- REQ-A-001 (was passed): Then REQ-A-001 broke"),
            "{text}"
        );

        let same = compare(&new, &new);
        assert!(!same.regressed());
        assert!(render(&same, &new, &new).contains("No requirement newly failed"));
    }
}
