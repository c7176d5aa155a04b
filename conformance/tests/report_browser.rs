//! The report's first screen in a real browser: a 382-requirement report of a runtime that
//! fails a third of its scenarios (made from the built-in features, results written as
//! cucumber would) is opened in headless Chromium at 1280 × 900; the page must not scroll
//! sideways and the summary (bars per profile and area, the "fix first" list) must be on the
//! first screen. A screenshot is kept in the target dir for a person to look at.
//!
//! Chromium is not part of CI (a large download on every run), so the test is ignored by
//! default and runs where Chromium is installed (Debian: `apt-get install chromium`):
//!
//! ```sh
//! cargo test -p conformance --test report_browser -- --ignored
//! ```

// Test helpers outside #[test] functions: a failure is the test's failure, shown with its output.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)]

use std::path::Path;
use std::process::Command;

use conformance::catalogue::{self, Catalogue};
use conformance::report::manifest::{KitInfo, Manifest, OsInfo, RuntimeInfo, SpecInfo};
use conformance::report::{self, ReportContext, RunStats};

/// cucumber's JSON for every scenario of `features`, every third one failing at a `Then`.
fn cucumber_json(scanned: &[catalogue::ScenarioRef]) -> String {
    let mut by_file: std::collections::BTreeMap<&str, Vec<serde_json::Value>> = Default::default();
    for (i, scenario) in scanned.iter().enumerate() {
        let result = if i % 3 == 0 {
            serde_json::json!({"status": "failed", "duration": 40_000_000u64 + i as u64 * 1_000_000,
                "error_message": format!("expected a task_completed event within 5000 ms, saw only step_started, llm_request_started and text_chunk ({}); the runtime's stderr names no cause", "x".repeat(i % 90))})
        } else {
            serde_json::json!({"status": "passed", "duration": 3_000_000})
        };
        by_file.entry(&scenario.file).or_default().push(serde_json::json!({
            "type": "scenario", "name": scenario.name, "line": scenario.line,
            "tags": scenario.tags.iter().map(|t| serde_json::json!({"name": format!("@{t}")})).collect::<Vec<_>>(),
            "steps": [{"keyword": "Then ", "name": "the runtime does what the requirement says", "line": scenario.line + 2, "result": result}]
        }));
    }
    let features: Vec<serde_json::Value> = by_file
        .into_iter()
        .map(
            |(file, elements)| serde_json::json!({"uri": file, "name": file, "elements": elements}),
        )
        .collect();
    serde_json::to_string(&features).unwrap()
}

fn write_report(dir: &Path) {
    let features = conformance::builtin::features_dir().unwrap();
    let catalogue = Catalogue::load(&features.join("requirements.toml")).unwrap();
    let scanned = catalogue::scan_features(&features).unwrap();
    let json = cucumber_json(&scanned);
    std::fs::write(dir.join("cucumber.json"), &json).unwrap();
    let results = report::parse_cucumber_json(&json).unwrap();
    let now = time::OffsetDateTime::now_utc();
    let manifest = Manifest {
        runtime: RuntimeInfo {
            command: "python3 -m desktop_runtime --with-a-rather-long-option-list".to_owned(),
            version: Some("desktop-runtime 0.9".to_owned()),
            transport: "stdio".to_owned(),
        },
        kit: KitInfo::current(),
        spec: SpecInfo::of_catalogue(
            &features.join("requirements.toml"),
            catalogue.requirements.len(),
        ),
        started_at: "2026-01-01T00:00:00Z".to_owned(),
        finished_at: "2026-01-01T00:04:00Z".to_owned(),
        os: OsInfo::current(),
        tags: None,
        name: None,
        shard: None,
    };
    let context = ReportContext {
        runtime: manifest.runtime.command.clone(),
        started_at: now,
        finished_at: now,
        features: features.clone(),
        tags: None,
        name: None,
        stats: RunStats::default(),
        transcripts_dir: Some(dir.join("transcripts")),
        transport: "stdio".to_owned(),
        manifest,
        not_certified: Vec::new(),
    };
    let outcome = report::build_outcome(
        &catalogue,
        &scanned,
        &results,
        &Default::default(),
        &conformance::runtime_manifest::RuntimeManifest::default(),
        &context,
    );
    report::write_reports(dir, &catalogue, &outcome, &context).unwrap();
}

/// Measures the page as Chromium lays it out at 1280 × 900 (a script appended to a copy
/// writes the numbers into the DOM, which `--dump-dom` prints).
const PROBE: &str = "<script>(function(){var q=function(s){return document.querySelector(s).getBoundingClientRect();};\
document.body.setAttribute('data-probe',[document.documentElement.scrollWidth,window.innerWidth,window.innerHeight,\
q('.bars').top,q('.fix h2').top,q('.fix h3').top,q('#matrix').top].join(','));})();</script></body>";

#[test]
#[ignore = "needs headless Chromium: cargo test -p conformance --test report_browser -- --ignored"]
fn the_summary_is_on_the_first_screen_and_nothing_scrolls_sideways() {
    let dir = tempfile::tempdir().unwrap();
    write_report(dir.path());
    let page = std::fs::read_to_string(dir.path().join("certification.html")).unwrap();
    assert!(
        !page.contains("src=\"http") && !page.contains("href=\"http"),
        "one self-contained file"
    );
    let probe = dir.path().join("probe.html");
    std::fs::write(&probe, page.replace("</body>", PROBE)).unwrap();
    let chromium = |args: &[&str]| {
        Command::new("chromium")
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--hide-scrollbars",
                "--window-size=1280,900",
            ])
            .args(args)
            .output()
            .expect("chromium is not installed (apt-get install chromium)")
    };
    let url = format!("file://{}", probe.display());
    let dom = chromium(&["--dump-dom", &url]);
    let dom = String::from_utf8_lossy(&dom.stdout);
    let numbers: Vec<f64> = dom
        .split("data-probe=\"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .expect("the probe ran")
        .split(',')
        .map(|n| n.parse().unwrap())
        .collect();
    let [scroll_width, width, height, bars, fix, first_area, matrix] = numbers[..] else {
        panic!("{numbers:?}");
    };
    eprintln!(
        "scrollWidth {scroll_width} of {width}; bars at {bars}, fix-first at {fix}, its first area at {first_area}, matrix at {matrix} (screen {height})"
    );
    assert!(
        scroll_width <= width,
        "the page scrolls sideways: {scroll_width} > {width}"
    );
    assert!(
        bars < height && fix < height && first_area < height,
        "the summary is on the first screen"
    );
    assert!(matrix > bars, "the matrix follows the summary");

    let shot = Path::new(env!("CARGO_TARGET_TMPDIR")).join("report-first-screen.png");
    let output = chromium(&[&format!("--screenshot={}", shot.display()), &url]);
    assert!(
        shot.is_file(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    eprintln!("screenshot: {}", shot.display());
}
