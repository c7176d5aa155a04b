//! One defect, one verdict inside a scenario that certifies several requirements. A comment
//! `# judges @REQ-AREA-NNN` on the line(s) just above a step names the requirement(s) that
//! step judges; when that step is the one that fails, the failure is charged to those
//! requirements only, and the scenario judges its other requirements not at all (their steps
//! passed before it or never ran). A failing step without such a comment is charged to every
//! requirement of the scenario.

use std::path::{Path, PathBuf};

use super::{ScenarioResult, ScenarioStatus};

pub use crate::catalogue::JUDGES_COMMENT;

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
                .filter(|token| token.starts_with(super::REQUIREMENT_PREFIX))
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
        .filter(|s| s.status == ScenarioStatus::Failed)
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

/// The text of the feature file cucumber names `uri` (relative to the features directory's
/// parent, as cucumber reports it, or as given).
fn feature_source(features: &Path, uri: &str) -> Option<String> {
    let candidates: Vec<PathBuf> = [
        features.parent().map(|parent| parent.join(uri)),
        Some(PathBuf::from(uri)),
        Path::new(uri)
            .strip_prefix("features")
            .ok()
            .map(|rest| features.join(rest)),
    ]
    .into_iter()
    .flatten()
    .collect();
    candidates
        .iter()
        .find_map(|path| std::fs::read_to_string(path).ok())
}

#[cfg(test)]
mod tests {
    use super::{attribute_failures, judged_by_comment};
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
    }

    #[test]
    fn a_comment_above_the_step_names_its_requirements() {
        let source = "  @REQ-A-001 @REQ-B-002\n  Scenario: s\n    When x\n    # judges @REQ-B-002\n    Then y\n    Then z\n";
        assert_eq!(judged_by_comment(source, 5), vec!["REQ-B-002".to_owned()]);
        assert!(judged_by_comment(source, 6).is_empty());
        assert!(judged_by_comment(source, 3).is_empty());
    }
}
