//! The installed kit needs nothing of this repository. The built `conformance` binary and
//! the reference runtime are copied into an empty temp dir and run from there; where the
//! machine allows a private mount namespace (`unshare -rm`, Linux) the repository itself is
//! hidden under an empty tmpfs for that run, so the features, the catalogue and the
//! manifests can only come from the binary. The run certifies a small tag selection with
//! the built-in `reference` manifest.

// Test helpers outside #[test] functions: a failure is the test's failure, shown with its output.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)]
#![cfg(unix)]

mod support;

use std::process::Command;

use support::{kit, reference_runtime, run, stdout, workspace_root};

const TAGS: &str = "@REQ-RPC-001 or @REQ-RPC-006 or @REQ-SES-002";

/// Whether a private mount namespace with a tmpfs over `dir` can be had here (a user
/// namespace may be refused, or mounting inside it).
fn private_mounts_work(dir: &std::path::Path) -> bool {
    Command::new("unshare")
        .args(["-rm", "sh", "-c", "mount -t tmpfs none \"$1\"", "sh"])
        .arg(dir)
        .output()
        .is_ok_and(|o| o.status.success())
}

#[test]
fn the_binary_alone_certifies_from_an_empty_directory() {
    let root = workspace_root();
    let dir = tempfile::tempdir().unwrap();
    let here = dir.path().canonicalize().unwrap();
    assert!(
        !here.starts_with(&root),
        "the temp dir {} lies inside the repository; set TMPDIR elsewhere",
        here.display()
    );
    std::fs::create_dir(here.join("bin")).unwrap();
    let kit_copy = here.join("bin/conformance");
    let runtime_copy = here.join("bin/agent-runtime");
    std::fs::copy(kit(), &kit_copy).unwrap();
    std::fs::copy(reference_runtime(), &runtime_copy).unwrap();

    let version = run(&kit_copy, &["--version"], &here);
    let fingerprint = format!(
        "fnv1a64:{:016x}",
        fnv1a64(&std::fs::read(root.join("features/requirements.toml")).unwrap())
    );
    assert!(
        stdout(&version).contains(&fingerprint),
        "--version must name the catalogue {fingerprint}"
    );

    let args = [
        "--runtime",
        "bin/agent-runtime",
        "--manifest",
        "reference",
        "--tags",
        TAGS,
        "--report-dir",
        "report",
    ];
    let output = if private_mounts_work(&here) {
        // The repository is an empty tmpfs inside; the check fails the run if it is not.
        let script =
            "mount -t tmpfs none \"$1\" && test ! -e \"$1/features\" && shift && exec \"$@\"";
        let mut all = vec!["-rm", "sh", "-c", script, "sh"];
        let root_text = root.display().to_string();
        let kit_text = kit_copy.display().to_string();
        all.push(&root_text);
        all.push(&kit_text);
        all.extend(args);
        run(std::path::Path::new("unshare"), &all, &here)
    } else {
        eprintln!(
            "note: no private mount namespace here; the repository stayed visible, the run is from {} only",
            here.display()
        );
        run(&kit_copy, &args, &here)
    };
    assert_eq!(output.status.code(), Some(0), "the kit must certify");
    assert!(stdout(&output).contains("CERTIFIED"));
    let manifest = std::fs::read_to_string(here.join("report/manifest.json")).unwrap();
    assert!(
        manifest.contains("\"catalogue\": \"built-in requirements.toml\""),
        "{manifest}"
    );
    assert!(manifest.contains(&fingerprint));
    let markdown = std::fs::read_to_string(here.join("report/certification.md")).unwrap();
    assert!(markdown.contains("built into the kit"));
}

fn fnv1a64(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, byte| {
        (hash ^ u64::from(*byte)).wrapping_mul(0x0100_0000_01b3)
    })
}
