//! No comment or document points at a file the repository does not have: a path such as
//! `policy/paths.rs` or a document name such as `ARCHITECTURE.md` in a code comment or a
//! Markdown file must name an existing file, so a reader never chases a missing one.

use std::path::Path;

use regex::Regex;

use super::{assert_clean, read, repo_files};

/// The spec's documents live beside the repository (`../shared/spec/`), not in it.
const SPEC_DOCUMENTS: [&str; 7] = [
    "INTEROP.md",
    "README.md",
    "agent-run-plan.md",
    "architecture.md",
    "local-agent-host.md",
    "local-tool-runtime.md",
    "system-design.md",
];

/// Names that are mentioned as examples or outputs, not as files of the repository.
const NOT_REPO_FILES: [&str; 5] = [
    "certification.md",    // a report the kit writes
    "conformance.toml",    // the runtime manifest `conformance init` writes
    "known-failures.toml", // a baseline a user of the kit writes
    "my-runtime.toml",     // a user's runtime manifest, in a command example
    "dir/file.feature",    // a scenario location, in a format example
];

/// Prefixes of paths outside the repository or made by a build.
const OUTSIDE: [&str; 4] = ["../shared/", "target/", "OUT_DIR/", "/"];

/// The text that may cite files: every line of a Markdown file, the comment lines of a
/// Rust file.
fn cited_text(path: &str, text: &str) -> Vec<(usize, String)> {
    text.lines()
        .enumerate()
        .filter(|(_, line)| path.ends_with(".md") || line.trim_start().starts_with("//"))
        .map(|(index, line)| (index + 1, line.to_owned()))
        .collect()
}

fn resolves(reference: &str, citing: &str, files: &[String]) -> bool {
    if SPEC_DOCUMENTS.contains(&reference)
        || NOT_REPO_FILES.contains(&reference)
        || OUTSIDE.iter().any(|prefix| reference.starts_with(prefix))
    {
        return true;
    }
    let beside = Path::new(citing)
        .parent()
        .unwrap_or(Path::new(""))
        .join(reference);
    let beside = beside.to_string_lossy().replace('\\', "/");
    let suffix = format!("/{reference}");
    files
        .iter()
        .any(|file| file == reference || file == &beside || file.ends_with(&suffix))
}

fn violations(sources: &[(String, String)], files: &[String]) -> Vec<String> {
    let reference =
        Regex::new(r"(?:^|[^\w./-])((?:\.\.?/)*[\w.-]+(?:/[\w.-]+)*\.(?:rs|md|toml|feature))\b")
            .unwrap();
    let mut found = Vec::new();
    for (path, text) in sources {
        for (line, cited) in cited_text(path, text) {
            for capture in reference.captures_iter(&cited) {
                let name = &capture[1];
                if !resolves(name, path, files) {
                    found.push(format!(
                        "{path}:{line} cites {name}, which is not in the repository"
                    ));
                }
            }
        }
    }
    found
}

#[test]
fn every_cited_file_exists() {
    let files = repo_files();
    let sources: Vec<(String, String)> = files
        .iter()
        .filter(|path| path.ends_with(".md") || path.ends_with(".rs"))
        .map(|path| (path.clone(), read(path)))
        .collect();
    assert!(sources.len() > 200, "only {} sources read", sources.len());
    assert_clean("cited files", &violations(&sources, &files));
}

#[test]
fn a_comment_citing_a_missing_file_is_named() {
    let files = [
        "runtime/host/src/policy/paths.rs".to_owned(),
        "README.md".to_owned(),
    ];
    let sources = [
        (
            "runtime/host/src/lib.rs".to_owned(),
            "//! See policy/paths.rs and INTEROP.md §2.\n// The crate rules are in CRATES.md.\nlet s = \"x.rs\";\n"
                .to_owned(),
        ),
        ("README.md".to_owned(), "Read `runtime/host/src/gone.rs` and ../shared/spec/x.md.\n".to_owned()),
    ];
    assert_eq!(
        violations(&sources, &files),
        [
            "runtime/host/src/lib.rs:2 cites CRATES.md, which is not in the repository",
            "README.md:1 cites runtime/host/src/gone.rs, which is not in the repository",
        ]
    );
}
