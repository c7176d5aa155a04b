//! Tidy: the workspace's structural invariants, checked by `cargo test` (the style of
//! rust-analyzer's tidy test). ARCHITECTURE.md states each invariant and names the
//! check here that holds it. Every check is a pure function over its inputs, tested once on
//! the real tree and once on a broken sample, so a check that can no longer fail is noticed.

// A test program: its helpers unwrap, and a failed unwrap is a failed check.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod config_vars;
mod crate_map;
mod deps;
mod file_refs;
mod headers;
mod layers;
mod prints;
mod test_files;

use std::path::{Path, PathBuf};

/// The workspace root (xtask sits one level below it).
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from(".."))
}

/// Every file of the repository, as `/`-separated paths relative to the root: build output,
/// version control and editor folders are not part of it.
fn repo_files() -> Vec<String> {
    let root = root();
    let mut files = Vec::new();
    let mut pending = vec![root.clone()];
    while let Some(dir) = pending.pop() {
        let entries = std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        for entry in entries {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if name.starts_with('.') && name != ".ci" && name != ".cargo" || name == "target" {
                continue;
            }
            if path.is_dir() {
                pending.push(path);
            } else {
                let relative = path.strip_prefix(&root).unwrap();
                files.push(relative.to_string_lossy().replace('\\', "/"));
            }
        }
    }
    files.sort();
    files
}

fn read(relative: &str) -> String {
    std::fs::read_to_string(root().join(relative)).unwrap_or_else(|e| panic!("{relative}: {e}"))
}

/// `cargo metadata --no-deps` of the workspace.
fn metadata() -> serde_json::Value {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let output = std::process::Command::new(cargo)
        .args(["metadata", "--format-version", "1", "--no-deps"])
        .current_dir(root())
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "cargo metadata failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).unwrap()
}

/// A path of the metadata (absolute) relative to the root, `/`-separated.
fn relative(path: &str) -> String {
    let root = root();
    let root = root.to_string_lossy().replace('\\', "/");
    let path = path.replace('\\', "/");
    path.strip_prefix(&root)
        .map(|rest| rest.trim_start_matches('/').to_owned())
        .unwrap_or(path)
}

/// A workspace crate as `cargo metadata` describes it: name, folder (relative to the root)
/// and the workspace crates it depends on, each with whether it is a dev-dependency.
struct Member {
    name: String,
    dir: String,
    deps: Vec<(String, bool)>,
}

fn members(metadata: &serde_json::Value) -> Vec<Member> {
    let packages = metadata["packages"].as_array().unwrap();
    let names: Vec<&str> = packages
        .iter()
        .map(|package| package["name"].as_str().unwrap())
        .collect();
    packages
        .iter()
        .map(|package| Member {
            name: package["name"].as_str().unwrap().to_owned(),
            dir: relative(package["manifest_path"].as_str().unwrap())
                .trim_end_matches("Cargo.toml")
                .trim_end_matches('/')
                .to_owned(),
            deps: package["dependencies"]
                .as_array()
                .unwrap()
                .iter()
                .map(|dep| {
                    (
                        dep["name"].as_str().unwrap(),
                        dep["kind"].as_str() == Some("dev"),
                    )
                })
                .filter(|(name, _)| names.contains(name))
                .map(|(name, dev)| (name.to_owned(), dev))
                .collect(),
        })
        .collect()
}

/// Fails with every violation listed, one per line.
fn assert_clean(check: &str, violations: &[String]) {
    assert!(
        violations.is_empty(),
        "tidy {check}: {} violation(s)\n  {}",
        violations.len(),
        violations.join("\n  ")
    );
}
