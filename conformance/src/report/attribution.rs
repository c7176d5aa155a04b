//! One defect, one verdict inside a scenario that certifies several requirements. A comment
//! `# judges @REQ-AREA-NNN` on the line(s) just above a step names the requirement(s) that
//! step judges; when that step is the one that fails, the failure is charged to those
//! requirements only, and the scenario judges its other requirements not at all (their steps
//! passed before it or never ran). A failing step without such a comment is charged to every
//! requirement of the scenario.
//!
//! A missing event is one defect too: a scenario whose step waited for an event (a task's
//! terminal event, an approval request) and failed without it, in a run where the runtime
//! never sent that type of event at all, is not judged; the failure belongs to the
//! requirement about that event ([`AWAITED_EVENTS`]), whose own scenario fails.

use std::path::{Path, PathBuf};

use super::{ScenarioResult, ScenarioStatus};

pub use crate::catalogue::JUDGES_COMMENT;

/// The messages steps wait for: the name a waiting step gives it, the kind of message the
/// run counts (a [`crate::validation::judged`] name) and the requirement whose scenario
/// judges that the runtime sends it at all.
pub const AWAITED_EVENTS: &[(&str, &str, &str)] = &[
    (
        "task_completed",
        "events/payloads/task_completed",
        "REQ-TASK-008",
    ),
    ("task_failed", "events/payloads/task_failed", "REQ-LOOP-012"),
    (
        "task_cancelled",
        "events/payloads/task_cancelled",
        "REQ-CAN-003",
    ),
    (
        "approval_requested",
        "events/payloads/approval_requested",
        "REQ-APR-001",
    ),
    ("Shutdown", "methods/Shutdown.result", "REQ-SES-012"),
];

/// The name a step waiting for the response to `method` gives it, if the run counts it.
pub fn awaited_response(method: &str) -> Option<String> {
    AWAITED_EVENTS
        .iter()
        .find(|(name, judged, _)| *name == method && judged.starts_with("methods/"))
        .map(|(name, _, _)| awaited(&[name]))
}

/// Marks a step error that came of waiting for one of [`AWAITED_EVENTS`]:
/// `awaited events: task_completed, task_failed.` (see [`awaited`]).
const AWAITED_MARK: &str = "awaited events:";

/// The note a waiting step adds to its error, naming the event types it waited for.
pub fn awaited(event_types: &[&str]) -> String {
    format!("({AWAITED_MARK} {}.)", event_types.join(", "))
}

/// The event types a step error says it waited for (empty when it says none).
pub fn awaited_in(message: &str) -> Vec<&str> {
    let Some(at) = message.find(AWAITED_MARK) else {
        return Vec::new();
    };
    let rest = &message[at + AWAITED_MARK.len()..];
    let list = rest.split(['.', ')', '\n']).next().unwrap_or("");
    list.split(',')
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .collect()
}

/// Charges a failure caused by a message the runtime never sent (anywhere in the run) to the
/// requirement about that message: the scenario is not judged for the others. `observed`
/// counts the messages of a kind (a judged name) the whole run saw.
pub fn attribute_missing_events(results: &mut [ScenarioResult], observed: impl Fn(&str) -> u64) {
    for scenario in results
        .iter_mut()
        .filter(|s| s.status == ScenarioStatus::Failed && s.charged_to.is_none())
    {
        let Some(failure) = scenario.failure.as_deref() else {
            continue;
        };
        let missing: Vec<(&str, &str)> = awaited_in(failure)
            .into_iter()
            .filter_map(|t| AWAITED_EVENTS.iter().find(|(e, _, _)| *e == t))
            .filter(|(_, judged, _)| observed(judged) == 0)
            .map(|(name, _, id)| (*name, *id))
            .collect();
        if missing.is_empty() {
            continue;
        }
        let own: Vec<String> = missing
            .iter()
            .filter(|(_, id)| scenario.requirement_ids().any(|r| r == *id))
            .map(|(_, id)| (*id).to_owned())
            .collect();
        if !own.is_empty() {
            // The scenario judges that event itself: its other requirements are not judged.
            if scenario.requirement_ids().count() > own.len() {
                scenario.charged_to = Some(own);
            }
            continue;
        }
        let named = missing
            .iter()
            .map(|(event, id)| format!("{event} ({id})"))
            .collect::<Vec<_>>()
            .join(", ");
        scenario.status = ScenarioStatus::Blocked;
        scenario.failure = Some(format!(
            "{} the runtime sent no {named} in the whole run, so this scenario could not reach its behaviour: {failure}",
            crate::contract::NOT_JUDGED
        ));
    }
}

/// The requirement ids named by `# judges` comments directly above line `step_line`
/// (1-based) of a feature's `source`.
pub fn judged_by_comment(source: &str, step_line: usize) -> Vec<String> {
    let lines: Vec<&str> = source.lines().collect();
    let mut ids = Vec::new();
    let mut index = step_line.saturating_sub(1);
    while index > 0 {
        index -= 1;
        let line = lines.get(index).map_or("", |l| l.trim());
        let Some(rest) = line.strip_prefix(JUDGES_COMMENT) else {
            break;
        };
        ids.extend(
            rest.split_whitespace()
                .map(|token| token.trim_start_matches('@'))
                .filter(|token| token.starts_with(crate::catalogue::REQUIREMENT_PREFIX))
                .map(str::to_owned),
        );
    }
    ids
}

/// Sets [`ScenarioResult::charged_to`] on every failed scenario with several requirements
/// whose failing step carries a `# judges` comment naming some of them.
pub fn attribute_failures(results: &mut [ScenarioResult], features: &Path) {
    for scenario in results
        .iter_mut()
        .filter(|s| s.status == ScenarioStatus::Failed && s.charged_to.is_none())
    {
        let Some(line) = scenario.failed_step_line else {
            continue;
        };
        let tags: Vec<String> = scenario.requirement_ids().map(str::to_owned).collect();
        if tags.len() < 2 {
            continue;
        }
        let Some(source) = feature_source(features, &scenario.uri) else {
            continue;
        };
        let judged: Vec<String> = judged_by_comment(&source, line)
            .into_iter()
            .filter(|id| tags.contains(id))
            .collect();
        if !judged.is_empty() {
            scenario.charged_to = Some(judged);
        }
    }
}

/// The text of the feature file cucumber names `uri`: relative to the features directory's
/// parent or to the working directory, or, for a features directory outside the working
/// directory, the absolute path without its leading `/` (`/home/ci/repo/features/…` is
/// named `home/ci/repo/features/…`).
fn feature_source(features: &Path, uri: &str) -> Option<String> {
    let mut candidates: Vec<PathBuf> = [
        features.parent().map(|parent| parent.join(uri)),
        Some(PathBuf::from(uri)),
        Some(Path::new("/").join(uri)),
        Path::new(uri)
            .strip_prefix("features")
            .ok()
            .map(|rest| features.join(rest)),
    ]
    .into_iter()
    .flatten()
    .collect();
    // Any tail of the uri that names a file under the features directory.
    let parts: Vec<&str> = uri.split(['/', '\\']).collect();
    candidates.extend((1..parts.len()).map(|at| features.join(parts[at..].join("/"))));
    candidates
        .iter()
        .find_map(|path| std::fs::read_to_string(path).ok())
}

#[cfg(test)]
mod tests {
    use super::{attribute_failures, attribute_missing_events, awaited, judged_by_comment};
    use crate::report::{ScenarioResult, ScenarioStatus};

    const FEATURE: &str = "Feature: F\n\n  @REQ-A-001 @REQ-B-002\n  Scenario: s\n    When x\n    # judges @REQ-B-002\n    Then y\n    Then z\n";

    fn failed_at(line: usize) -> ScenarioResult {
        ScenarioResult {
            uri: "features/f.feature".to_owned(),
            feature: "F".to_owned(),
            name: "s".to_owned(),
            line: 4,
            tags: vec!["REQ-A-001".to_owned(), "REQ-B-002".to_owned()],
            passed: false,
            status: ScenarioStatus::Failed,
            failure: Some("Then y: broke".to_owned()),
            failed_step_line: Some(line),
            charged_to: None,
            baselined: None,
        }
    }

    #[test]
    fn a_failing_step_with_a_comment_is_charged_to_its_requirement_only() {
        let dir = tempfile::tempdir().unwrap();
        let features = dir.path().join("features");
        std::fs::create_dir(&features).unwrap();
        std::fs::write(features.join("f.feature"), FEATURE).unwrap();
        let mut results = vec![failed_at(7), failed_at(8)];
        attribute_failures(&mut results, &features);
        assert_eq!(results[0].charged_to, Some(vec!["REQ-B-002".to_owned()]));
        assert_eq!(results[0].status_for("REQ-B-002"), ScenarioStatus::Failed);
        assert_eq!(results[0].status_for("REQ-A-001"), ScenarioStatus::Blocked);
        // Without a comment the failure is every requirement's.
        assert_eq!(results[1].charged_to, None);
        assert_eq!(results[1].status_for("REQ-A-001"), ScenarioStatus::Failed);
        // A features directory outside the working directory: cucumber names the file by its
        // absolute path without the leading `/`.
        let mut outside = vec![failed_at(7)];
        outside[0].uri = features
            .join("f.feature")
            .display()
            .to_string()
            .trim_start_matches('/')
            .to_owned();
        attribute_failures(&mut outside, &features);
        assert_eq!(outside[0].charged_to, Some(vec!["REQ-B-002".to_owned()]));
    }

    #[test]
    fn a_wait_for_an_event_the_run_never_saw_is_not_judged_but_fails_its_own_requirement() {
        let mut waiting = failed_at(7);
        waiting.failure = Some(format!(
            "When the task finishes: the task never ended {}",
            awaited(&["task_completed", "task_failed"])
        ));
        let mut own = waiting.clone();
        own.tags = vec!["REQ-TASK-008".to_owned(), "REQ-A-001".to_owned()];
        let mut results = [waiting.clone(), own, waiting];
        let none_seen = |t: &str| u64::from(t == "events/payloads/task_failed");
        attribute_missing_events(&mut results[..2], none_seen);
        assert_eq!(results[0].status, ScenarioStatus::Blocked);
        assert!(
            results[0]
                .failure
                .as_deref()
                .unwrap()
                .contains("no task_completed (REQ-TASK-008)"),
            "{:?}",
            results[0].failure
        );
        assert_eq!(results[1].status, ScenarioStatus::Failed);
        assert_eq!(
            results[1].status_for("REQ-TASK-008"),
            ScenarioStatus::Failed
        );
        assert_eq!(results[1].status_for("REQ-A-001"), ScenarioStatus::Blocked);
        // When the run saw the event elsewhere, a wait that timed out is the scenario's own.
        attribute_missing_events(&mut results[2..], |_| 1);
        assert_eq!(results[2].status, ScenarioStatus::Failed);
    }

    #[test]
    fn awaited_requirements_are_in_the_catalogue() {
        let catalogue = crate::catalogue::Catalogue::load(
            &crate::runner::default_features_dir().join("requirements.toml"),
        )
        .unwrap();
        for (_, _, id) in super::AWAITED_EVENTS {
            assert!(catalogue.get(id).is_some(), "{id} is not in the catalogue");
        }
    }

    #[test]
    fn a_comment_above_the_step_names_its_requirements() {
        let source = "  @REQ-A-001 @REQ-B-002\n  Scenario: s\n    When x\n    # judges @REQ-B-002\n    Then y\n    Then z\n";
        assert_eq!(judged_by_comment(source, 5), vec!["REQ-B-002".to_owned()]);
        assert!(judged_by_comment(source, 6).is_empty());
        assert!(judged_by_comment(source, 3).is_empty());
    }
}
