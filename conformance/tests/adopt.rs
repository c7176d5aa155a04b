//! The adopt-and-ratchet walk-through of `conformance/docs/ci-gate.md`, end to end with the
//! non-conforming example runtime and the kit's binary, as a CI job would run it:
//!
//! 1. adopt: `conformance baseline --write` on the first run, then certifying with that
//!    baseline passes with its known failures;
//! 2. break one more thing: the run fails (exit 1) and `conformance diff` names the newly
//!    failed requirement (exit 1);
//! 3. fix one: the baseline's entry is reported stale (exit 1) and the diff names it as
//!    newly passed (exit 0);
//!
//! then `conformance matrix` puts the three runs side by side.

// Test helpers outside #[test] functions: a failure is the test's failure, shown with its output.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)]
#![cfg(unix)]

mod support;

use std::os::unix::fs::PermissionsExt as _;
use std::path::Path;

use support::{kit, reference_runtime, run, stdout, workspace_root};

const TAGS: &str = "@REQ-RPC-003 or @REQ-RPC-005 or @REQ-RPC-006 or @REQ-RPC-010";

/// A runtime script in `dir`: `body` with `$EXAMPLE` and `$RUNTIME` filled in.
fn script(dir: &Path, name: &str, body: &str) -> String {
    let example = workspace_root().join("conformance/examples/nonconforming-runtime.sh");
    let text = format!(
        "#!/usr/bin/env bash\nset -euo pipefail\nEXAMPLE='{}'\nRUNTIME='{}'\n{body}\n",
        example.display(),
        reference_runtime().display()
    );
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path.display().to_string()
}

fn certify(
    dir: &Path,
    runtime: &str,
    report: &str,
    baseline: Option<&str>,
) -> std::process::Output {
    let mut args = vec!["--runtime", runtime, "--tags", TAGS, "--report-dir", report];
    if let Some(file) = baseline {
        args.extend(["--baseline", file]);
    }
    run(&kit(), &args, dir)
}

#[test]
fn adopt_break_one_more_fix_one() {
    let dir = tempfile::tempdir().unwrap();
    let here = dir.path();
    // The example breaks -32601 (REQ-RPC-006 and a batch scenario).
    let today = script(here, "today.sh", "exec \"$EXAMPLE\" \"$RUNTIME\"");
    // One more thing broken: parse errors (-32700, REQ-RPC-003) answered as -32600.
    let worse = script(
        here,
        "worse.sh",
        "\"$EXAMPLE\" \"$RUNTIME\" | sed -u -e 's/\"code\":-32700/\"code\":-32600/g'",
    );
    // -32601 fixed: the reference runtime itself.
    let fixed = script(here, "fixed.sh", "exec \"$RUNTIME\"");

    // 1. Adopt: the baseline from the first run, then a green gate with known failures.
    let adopt = run(
        &kit(),
        &[
            "baseline",
            "--write",
            "baseline.toml",
            "--runtime",
            &today,
            "--tags",
            TAGS,
            "--report-dir",
            "adopt",
        ],
        here,
    );
    assert_eq!(adopt.status.code(), Some(0));
    let baseline = std::fs::read_to_string(here.join("baseline.toml")).unwrap();
    assert!(baseline.contains("id = \"REQ-RPC-006\""), "{baseline}");
    assert!(
        baseline.contains("-32601"),
        "the reason is the failing step's message: {baseline}"
    );
    assert!(!baseline.contains("REQ-RPC-003"), "{baseline}");
    let gate = certify(here, &today, "r1", Some("baseline.toml"));
    assert_eq!(gate.status.code(), Some(0));
    assert!(stdout(&gate).contains("CERTIFIED"));
    assert!(stdout(&gate).contains("known failure"));

    // 2. Break one more: the gate fails and the diff names the new failure.
    let broken = certify(here, &worse, "r2", Some("baseline.toml"));
    assert_eq!(broken.status.code(), Some(1));
    assert!(stdout(&broken).contains("NEW FAILURE"));
    let diff = run(&kit(), &["diff", "r1", "r2", "--output", "diff.md"], here);
    assert_eq!(diff.status.code(), Some(1), "a regression exits 1");
    let text = stdout(&diff);
    let newly_failed = text.split("**Newly failed").nth(1).unwrap_or("");
    assert!(
        newly_failed.contains("- REQ-RPC-003 (was passed)"),
        "{text}"
    );
    assert!(!newly_failed.contains("REQ-RPC-006"), "{text}");
    assert_eq!(std::fs::read_to_string(here.join("diff.md")).unwrap(), text);

    // 3. Fix one: its baseline entry is stale, and the diff says it passes now.
    let better = certify(here, &fixed, "r3", Some("baseline.toml"));
    assert_eq!(better.status.code(), Some(1));
    assert!(
        stdout(&better).contains("STALE REQ-RPC-006"),
        "{}",
        stdout(&better)
    );
    let diff = run(&kit(), &["diff", "r1", "r3"], here);
    assert_eq!(diff.status.code(), Some(0));
    assert!(stdout(&diff).contains("**Newly passed"));
    assert!(stdout(&diff).contains("- REQ-RPC-006"));

    // The three runs side by side.
    let matrix = run(
        &kit(),
        &["matrix", "r1", "r2", "r3", "--output", "m.html"],
        here,
    );
    assert_eq!(matrix.status.code(), Some(0));
    let page = std::fs::read_to_string(here.join("m.html")).unwrap();
    assert_eq!(page.matches("<th title=").count(), 3, "a column per run");
    assert!(page.contains("<td>REQ-RPC-003</td>"));
    assert!(page.contains("class=\"v failed\""));
}

#[test]
fn init_writes_a_manifest_the_kit_accepts() {
    let dir = tempfile::tempdir().unwrap();
    let init = run(
        &kit(),
        &["init", "--name", "python-runtime 0.9"],
        dir.path(),
    );
    assert_eq!(init.status.code(), Some(0));
    let text = std::fs::read_to_string(dir.path().join("conformance.toml")).unwrap();
    assert!(text.contains("name = \"python-runtime 0.9\""));
    assert!(text.contains("# [knobs.APPROVAL_TIMEOUT_SECONDS]"));
    let again = run(&kit(), &["init"], dir.path());
    assert_eq!(again.status.code(), Some(2), "an existing manifest is kept");
    // The kit reads it: a run that selects nothing still parses the manifest first.
    let runtime = reference_runtime().display().to_string();
    let certify = run(
        &kit(),
        &[
            "--runtime",
            &runtime,
            "--manifest",
            "conformance.toml",
            "--tags",
            "@REQ-RPC-001",
        ],
        dir.path(),
    );
    assert_eq!(certify.status.code(), Some(0));
}
