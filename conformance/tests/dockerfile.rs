//! The container recipe (`conformance/Dockerfile`) without a container engine: its stages
//! agree (the build stage installs the package whose binary the image copies and runs), and,
//! on request, its build step runs here as written but for `--root` and `--debug`:
//!
//! ```sh
//! cargo test -p conformance --test dockerfile -- --ignored   # a full build of the kit
//! ```

// Test helpers outside #[test] functions: a failure is the test's failure, shown with its output.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)]

mod support;

use std::path::PathBuf;
use std::process::Command;

use support::workspace_root;

/// One instruction: its keyword and the rest of its (joined) line.
fn instructions() -> Vec<(String, String)> {
    let text = std::fs::read_to_string(workspace_root().join("conformance/Dockerfile")).unwrap();
    let joined = text.replace("\\\n", " ");
    joined
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
        .map(|line| {
            let (keyword, rest) = line.split_once(' ').unwrap_or((line, ""));
            (keyword.to_uppercase(), rest.trim().to_owned())
        })
        .collect()
}

/// `cargo install` of the build stage, with the values of `--path` and `--root`.
fn install_step() -> (String, String, String) {
    let runs: Vec<String> = instructions()
        .into_iter()
        .filter(|(k, rest)| k == "RUN" && rest.contains("cargo install"))
        .map(|(_, rest)| rest)
        .collect();
    assert_eq!(runs.len(), 1, "one `cargo install` step: {runs:?}");
    let run = runs[0].clone();
    let words: Vec<&str> = run.split_whitespace().collect();
    let value = |flag: &str| {
        let at = words.iter().position(|w| *w == flag).unwrap();
        words[at + 1].to_owned()
    };
    assert!(
        words.contains(&"--locked"),
        "the image builds what Cargo.lock pins"
    );
    (run.clone(), value("--path"), value("--root"))
}

#[test]
fn the_stages_agree_on_the_binary() {
    let steps = instructions();
    let (_, path, root) = install_step();
    let package = std::fs::read_to_string(workspace_root().join(&path).join("Cargo.toml")).unwrap();
    assert!(
        package.contains("name = \"conformance\""),
        "--path {path} is the kit"
    );
    assert!(
        steps.iter().any(|(k, rest)| k == "COPY" && rest == ". ."),
        "the build sees the workspace"
    );
    let copy = format!("--from=build {root}/bin/conformance /usr/local/bin/conformance");
    assert!(
        steps.iter().any(|(k, rest)| k == "COPY" && *rest == copy),
        "the image copies what the build installed: {copy}"
    );
    assert!(steps.contains(&("ENTRYPOINT".to_owned(), "[\"conformance\"]".to_owned())));
    // The toolchain image is at least the workspace's rust-version.
    let from = &steps.iter().find(|(k, _)| k == "FROM").unwrap().1;
    let manifest = std::fs::read_to_string(workspace_root().join("Cargo.toml")).unwrap();
    let wanted = manifest
        .lines()
        .find_map(|l| l.strip_prefix("rust-version = "))
        .unwrap()
        .trim_matches('"');
    assert!(
        from.starts_with(&format!("rust:{wanted}")),
        "{from} vs rust-version {wanted}"
    );
}

#[test]
#[ignore = "a full build of the kit: cargo test -p conformance --test dockerfile -- --ignored"]
fn the_build_step_runs_here_and_the_result_runs_anywhere() {
    let (run, _, root) = install_step();
    let out = tempfile::tempdir().unwrap();
    let command = format!(
        "{} --debug",
        run.replace(
            &format!("--root {root}"),
            &format!("--root {}", out.path().display())
        )
    );
    // The image builds in /src, a copy of the workspace: here, the workspace itself. A target
    // dir of its own (cargo's lock on this test's target dir is held while tests run).
    let target: PathBuf = std::env::var_os("CONFORMANCE_DOCKER_TARGET_DIR")
        .map_or_else(|| out.path().join("target"), PathBuf::from);
    let status = Command::new("sh")
        .args(["-c", &command])
        .current_dir(workspace_root())
        .env("CARGO_TARGET_DIR", &target)
        .status()
        .unwrap();
    assert!(status.success(), "{command}: {status}");
    let empty = tempfile::tempdir().unwrap();
    let version = Command::new(out.path().join("bin/conformance"))
        .arg("--version")
        .current_dir(empty.path())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&version.stdout);
    assert!(
        text.starts_with("conformance ") && text.contains("catalogue fnv1a64:"),
        "{text}"
    );
}
