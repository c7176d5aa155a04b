//! Libraries never print: stdout carries the JSON-RPC stream and nothing else, and a stray
//! `println!` in a library would corrupt it. The workspace denies clippy's `print_stdout` and
//! `print_stderr` for every crate; programs (a binary's, test's, bench's or build script's
//! root) may allow them, and a library only at the few places listed here, each with its reason.

use regex::Regex;

use super::{assert_clean, metadata, read, relative, repo_files};

/// Library files that print on purpose.
const LIBRARY_FILES_THAT_PRINT: [&str; 3] = [
    // The sandbox launcher and the sandbox's first process (`agent-runtime --sandbox-exec`,
    // `--sandbox-init`): their stderr is the command's, and the only place to say why it
    // failed.
    "runtime/tools/src/sandbox/linux/mod.rs",
    // A fake's server stopping is told to the person running the kit or mock-services.
    "mocks/src/loopback.rs",
    // The kit's progress lines are its user interface.
    "conformance/src/runner.rs",
];

struct Workspace {
    /// The root `Cargo.toml`.
    manifest: toml::Table,
    /// Each member's `Cargo.toml`, by path.
    members: Vec<(String, toml::Table)>,
    /// The root files of the targets that are programs (bin, test, bench, build script, example).
    program_roots: Vec<String>,
    /// Every Rust file, with its text.
    sources: Vec<(String, String)>,
}

fn violations(workspace: &Workspace) -> Vec<String> {
    let mut found = Vec::new();
    let lints = &workspace.manifest["workspace"]["lints"]["clippy"];
    for lint in ["print_stdout", "print_stderr"] {
        if lints.get(lint).and_then(toml::Value::as_str) != Some("deny") {
            found.push(format!(
                "Cargo.toml: [workspace.lints.clippy] does not set {lint} = \"deny\""
            ));
        }
    }
    for (path, manifest) in &workspace.members {
        let inherits = manifest
            .get("lints")
            .and_then(|lints| lints.get("workspace"))
            .and_then(toml::Value::as_bool);
        if inherits != Some(true) {
            found.push(format!(
                "{path}: no `[lints] workspace = true`, so the workspace's lints do not apply"
            ));
        }
    }
    // An attribute starts its line; a sample in a string does not.
    let allow =
        Regex::new(r"(?m)^\s*#!?\[(?:allow|expect)\([^)]*clippy::print_std(?:out|err)").unwrap();
    for (path, text) in &workspace.sources {
        if allow.is_match(text)
            && !workspace.program_roots.contains(path)
            && !LIBRARY_FILES_THAT_PRINT.contains(&path.as_str())
        {
            found.push(format!(
                "{path}: allows printing, but it is library code (only a program's root file may, or a file listed in tidy's prints.rs with its reason)"
            ));
        }
    }
    found
}

fn workspace() -> Workspace {
    let metadata = metadata();
    let mut members = Vec::new();
    let mut program_roots = Vec::new();
    for package in metadata["packages"].as_array().unwrap() {
        let manifest = relative(package["manifest_path"].as_str().unwrap());
        members.push((manifest.clone(), read(&manifest).parse().unwrap()));
        for target in package["targets"].as_array().unwrap() {
            let kinds: Vec<&str> = target["kind"]
                .as_array()
                .unwrap()
                .iter()
                .map(|kind| kind.as_str().unwrap())
                .collect();
            if !kinds
                .iter()
                .any(|kind| kind.contains("lib") || *kind == "proc-macro")
            {
                program_roots.push(relative(target["src_path"].as_str().unwrap()));
            }
        }
    }
    assert!(members.len() >= 10, "only {} members", members.len());
    let sources = repo_files()
        .into_iter()
        .filter(|path| path.ends_with(".rs"))
        .map(|path| {
            let text = read(&path);
            (path, text)
        })
        .collect();
    Workspace {
        manifest: read("Cargo.toml").parse().unwrap(),
        members,
        program_roots,
        sources,
    }
}

#[test]
fn libraries_cannot_print() {
    assert_clean("printing", &violations(&workspace()));
}

#[test]
fn a_lint_switched_off_or_a_library_allowing_prints_is_named() {
    let table = |text: &str| -> toml::Table { text.parse().unwrap() };
    let good = Workspace {
        manifest: table(
            "[workspace.lints.clippy]\nprint_stdout = \"deny\"\nprint_stderr = \"deny\"\n",
        ),
        members: vec![(
            "a/Cargo.toml".to_owned(),
            table("[lints]\nworkspace = true\n"),
        )],
        program_roots: vec!["a/src/main.rs".to_owned()],
        sources: vec![
            (
                "a/src/main.rs".to_owned(),
                "#![allow(clippy::print_stdout)]\n".to_owned(),
            ),
            ("a/src/lib.rs".to_owned(), "//! A library.\n".to_owned()),
        ],
    };
    assert!(violations(&good).is_empty());
    let bad = Workspace {
        manifest: table("[workspace.lints.clippy]\nprint_stdout = \"deny\"\n"),
        members: vec![(
            "a/Cargo.toml".to_owned(),
            table("[package]\nname = \"a\"\n"),
        )],
        sources: vec![(
            "a/src/lib.rs".to_owned(),
            "#![allow(clippy::unwrap_used, clippy::print_stderr)]\n".to_owned(),
        )],
        ..good
    };
    assert_eq!(
        violations(&bad),
        [
            "Cargo.toml: [workspace.lints.clippy] does not set print_stderr = \"deny\"",
            "a/Cargo.toml: no `[lints] workspace = true`, so the workspace's lints do not apply",
            "a/src/lib.rs: allows printing, but it is library code (only a program's root file may, or a file listed in tidy's prints.rs with its reason)",
        ]
    );
}
