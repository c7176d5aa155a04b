//! The Markdown and HTML reports of one fixed outcome, pinned byte for byte: a change to a
//! renderer shows up as a diff of `conformance/tests/snapshots/`. After a deliberate
//! change, `UPDATE_SNAPSHOTS=1 cargo test -p conformance --lib snapshot` rewrites them.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::manifest::{KitInfo, Manifest, OsInfo, RuntimeInfo, SpecInfo};
use super::timing::ScenarioTime;
use super::*;
use crate::catalogue::{Level, NotCertified, ScenarioRef};
use crate::runtime_manifest::RuntimeManifest;

/// Two areas; a MUST that fails, one not judged, one not applicable, one passed, one
/// without scenario, one scenario-less under a tag filter; a SHOULD that fails (a
/// warning); a tag naming no requirement; a deliberately uncertified entry.
const CATALOGUE: &str = r#"
[[area]]
id = "RPC"
title = "framing"
feature = "rpc/framing.feature"

[[area]]
id = "TOOL"
title = "tools"
feature = "tools/files.feature"

[[requirement]]
id = "REQ-RPC-001"
level = "MUST"
profile = "core"
spec = "local-agent-host.md §3.1"
statement = "stdout carries only JSON-RPC | nothing else"

[[requirement]]
id = "REQ-RPC-002"
level = "SHOULD"
profile = "core"
spec = "INTEROP.md §1"
statement = "a long line is answered"

[[requirement]]
id = "REQ-TOOL-001"
level = "MUST"
profile = "core"
spec = "local-tool-runtime.md §4"
statement = "ReadFile returns the file's text"

[[requirement]]
id = "REQ-TOOL-002"
level = "MUST"
profile = "core"
spec = "local-tool-runtime.md §4"
statement = "WriteFile writes <atomically>"

[[requirement]]
id = "REQ-TOOL-003"
level = "MUST"
profile = "interop"
spec = "INTEROP.md §11"
statement = "EditFile replaces exact text"

[[requirement]]
id = "REQ-TOOL-004"
level = "MUST"
profile = "core"
spec = "local-tool-runtime.md §5"
statement = "DeleteFile refuses a folder"
"#;

const CUCUMBER_JSON: &str = r#"[
{"uri": "features/rpc/framing.feature", "name": "Framing", "elements": [
  {"type": "scenario", "name": "a <script> line", "line": 7, "tags": [{"name": "@REQ-RPC-001"}],
   "steps": [{"keyword": "Then ", "name": "stdout is clean", "line": 8,
              "result": {"status": "failed", "error_message": "stdout held \"hello\" | not JSON", "duration": 2000000000}}]},
  {"type": "scenario", "name": "long lines", "line": 12, "tags": [{"name": "@REQ-RPC-002"}, {"name": "@REQ-NOPE-009"}],
   "steps": [{"keyword": "Then ", "name": "answered", "line": 13,
              "result": {"status": "failed", "error_message": "no answer within 1s"}}]}
]},
{"uri": "features/tools/files.feature", "name": "Files", "elements": [
  {"type": "scenario", "name": "read a file", "line": 3, "tags": [{"name": "@REQ-TOOL-001"}],
   "steps": [{"keyword": "Then ", "name": "the text", "line": 4, "result": {"status": "passed", "duration": 5000000}}]},
  {"type": "scenario", "name": "write a file", "line": 9, "tags": [{"name": "@REQ-TOOL-002"}],
   "steps": [{"keyword": "Given ", "name": "a session", "line": 10,
              "result": {"status": "failed", "error_message": "NOT JUDGED, a precondition failed: CreateSession was refused"}}]},
  {"type": "scenario", "name": "edit a file", "line": 15, "tags": [{"name": "@REQ-TOOL-003"}],
   "steps": [{"keyword": "Given ", "name": "the runtime offers EditFile", "line": 16,
              "result": {"status": "failed", "error_message": "NOT APPLICABLE to this runtime: its manifest does not offer EditFile"}}]}
]}
]"#;

fn outcome_and_context() -> (Catalogue, Outcome, ReportContext) {
    let catalogue: Catalogue = toml::from_str(CATALOGUE).unwrap();
    let scanned: Vec<ScenarioRef> = Vec::new();
    let results = parse_cucumber_json(CUCUMBER_JSON).unwrap();
    let at = time::OffsetDateTime::UNIX_EPOCH;
    let manifest = Manifest {
        runtime: RuntimeInfo {
            command: "my-runtime --stdio".to_owned(),
            version: Some("1.2.3".to_owned()),
            transport: "stdio".to_owned(),
        },
        kit: KitInfo {
            name: "conformance",
            version: "0.0.0",
            sensitivity: "wire mutants: 3 of 3 caught".to_owned(),
        },
        spec: SpecInfo::of_catalogue(Path::new("/nonexistent"), 6),
        started_at: "1970-01-01T00:00:00Z".to_owned(),
        finished_at: "1970-01-01T00:00:00Z".to_owned(),
        os: OsInfo {
            family: "linux",
            arch: "x86_64",
            release: None,
        },
        tags: None,
        name: None,
        shard: None,
    };
    let context = ReportContext {
        runtime: "my-runtime --stdio".to_owned(),
        started_at: at,
        finished_at: at,
        features: PathBuf::from("features"),
        tags: None,
        name: None,
        stats: RunStats::default(),
        transcripts_dir: None,
        transport: "stdio".to_owned(),
        manifest,
        not_certified: vec![NotCertified {
            id: "REQ-UI-001".to_owned(),
            level: Level::Must,
            spec: "system-design.md §2".to_owned(),
            statement: "the app shows a spinner".to_owned(),
            reason: "UI only | not observable".to_owned(),
        }],
    };
    let outcome = build_outcome(
        &catalogue,
        &scanned,
        &results,
        &BTreeMap::new(),
        &RuntimeManifest::default(),
        &context,
    );
    (catalogue, outcome, context)
}

fn slowest() -> Vec<ScenarioTime> {
    vec![ScenarioTime {
        name: "a <script> line".to_owned(),
        uri: "features/rpc/framing.feature".to_owned(),
        line: 7,
        millis: 2000,
    }]
}

/// Compares `actual` with the snapshot `name`, or rewrites it under `UPDATE_SNAPSHOTS`.
fn check(name: &str, actual: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/snapshots")
        .join(name);
    if std::env::var_os("UPDATE_SNAPSHOTS").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&path)
        .unwrap_or_else(|error| panic!("{}: {error}", path.display()));
    if expected != actual {
        let (line, (want, got)) = expected
            .lines()
            .chain(std::iter::repeat(""))
            .zip(actual.lines().chain(std::iter::repeat("")))
            .take(expected.lines().count().max(actual.lines().count()) + 1)
            .enumerate()
            .find(|(_, (want, got))| want != got)
            .unwrap_or((0, ("(the same lines)", "(a different line ending)")));
        panic!(
            "{} is stale (UPDATE_SNAPSHOTS=1 rewrites it after a deliberate change); first \
             difference at line {}:\n  snapshot: {want}\n  rendered: {got}",
            path.display(),
            line + 1
        );
    }
}

#[test]
fn the_markdown_report_of_a_fixed_outcome_is_its_snapshot() {
    let (catalogue, outcome, context) = outcome_and_context();
    check(
        "certification.md",
        &markdown::render(&catalogue, &outcome, &context, &slowest()),
    );
}

#[test]
fn the_html_report_of_a_fixed_outcome_is_its_snapshot() {
    let (catalogue, outcome, context) = outcome_and_context();
    check(
        "certification.html",
        &html::render(
            &catalogue,
            &outcome,
            &context,
            &context.manifest,
            &slowest(),
        ),
    );
}
