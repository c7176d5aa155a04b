//! The verdict's rules: a scenario's results, the report's judge, a run that is incomplete.

use std::collections::BTreeMap;

use super::*;
use crate::catalogue::ScenarioRef;
use crate::runtime_manifest::RuntimeManifest;

/// A run of one passing scenario of REQ-A-001, REQ-A-002 (MUST) left without scenario
/// run, under the context's filter.
fn run_with(tags: Option<&str>) -> Outcome {
    let catalogue: Catalogue = toml::from_str(
        r#"
[[requirement]]
id = "REQ-A-001"
level = "MUST"
profile = "core"
spec = "x.md §1"
statement = "a"

[[requirement]]
id = "REQ-A-002"
level = "MUST"
profile = "core"
spec = "x.md §1"
statement = "b"
"#,
    )
    .unwrap();
    let scanned = vec![ScenarioRef {
        file: "a.feature".to_owned(),
        line: 9,
        name: "b".to_owned(),
        tags: vec!["REQ-A-002".to_owned()],
        judged_in_comments: Vec::new(),
    }];
    let json = r#"[{"uri": "features/a.feature", "name": "F", "elements": [
        {"type": "scenario", "name": "a", "line": 3, "tags": [{"name": "@REQ-A-001"}],
         "steps": [{"keyword": "Then ", "name": "y", "line": 4, "result": {"status": "passed"}}]}]}]"#;
    let results = parse_cucumber_json(json).unwrap();
    let now = time::OffsetDateTime::now_utc();
    let context = ReportContext {
        runtime: "rt".to_owned(),
        started_at: now,
        finished_at: now,
        features: "features".into(),
        tags: tags.map(str::to_owned),
        name: None,
        stats: RunStats::default(),
        transcripts_dir: None,
        transport: "stdio".to_owned(),
        manifest: manifest::Manifest {
            runtime: manifest::RuntimeInfo {
                command: "rt".to_owned(),
                version: None,
                transport: "stdio".to_owned(),
            },
            kit: manifest::KitInfo::current(),
            spec: manifest::SpecInfo::of_catalogue(Path::new("/nonexistent"), 2),
            started_at: "t0".to_owned(),
            finished_at: "t1".to_owned(),
            os: manifest::OsInfo::current(),
            tags: tags.map(str::to_owned),
            name: None,
            shard: None,
        },
        not_certified: Vec::new(),
    };
    build_outcome(
        &catalogue,
        &scanned,
        &results,
        &BTreeMap::new(),
        &RuntimeManifest::default(),
        &context,
    )
}

#[test]
fn a_decisive_requirement_not_run_without_a_filter_makes_the_run_incomplete() {
    let filtered = run_with(Some("@REQ-A-001"));
    assert!(filtered.passed, "{}", filtered.summary());
    let whole = run_with(None);
    assert!(!whole.passed);
    assert_eq!(whole.verdict_line(), "INCOMPLETE (core+interop)");
    assert!(
        whole
            .summary()
            .contains("not run although no filter was given: REQ-A-002")
    );
}

#[test]
fn a_run_stopped_early_is_never_certified() {
    let mut stopped = run_with(Some("@REQ-A-001"));
    stopped.mark_incomplete("--fail-fast stopped the run".to_owned());
    assert!(!stopped.passed);
    assert!(stopped.verdict_line().starts_with("INCOMPLETE"));
    // A baseline recomputing the verdict keeps it incomplete.
    stopped.decide(true);
    assert!(!stopped.passed);
}

#[test]
fn a_failed_background_fails_its_scenario_and_cucumber_noise_is_dropped() {
    let json = r#"[{"uri": "features/task/events.feature", "name": "F", "elements": [
        {"type": "scenario", "name": "s", "line": 14, "tags": [{"name": "REQ-EVT-001", "line": 13}],
         "steps": [], "after": [{"result": {"status": "passed", "duration": 1}}]},
        {"type": "background", "name": "s", "line": 14, "tags": [],
         "steps": [{"keyword": "Given ", "name": "a running session", "line": 7,
                    "result": {"status": "failed", "duration": 1,
                               "error_message": "Matched: x.rs:1:1\nStep panicked. Captured output: it broke"}}]},
        {"type": "scenario", "name": "t", "line": 20, "tags": [], "steps": [
            {"keyword": "Then ", "name": "ok", "line": 21, "result": {"status": "passed", "duration": 1}}]}
    ]}]"#;
    let results = parse_cucumber_json(json).unwrap();
    assert_eq!(results.len(), 2);
    assert!(!results[0].passed);
    assert_eq!(
        results[0].failure.as_deref(),
        Some("(background) Given a running session: it broke")
    );
    assert_eq!(results[0].tags, vec!["REQ-EVT-001"]);
    assert!(results[1].passed);
    assert_eq!(
        transcript_file_name(Some(Path::new(&results[0].uri)), 14),
        "task-events-L14.log"
    );
}
