//! Every Rust file opens with a `//!` header saying why the module exists, so a reader
//! landing in any file knows what it owns before reading code.

use super::{assert_clean, read, repo_files};

/// The folders whose Rust files are the project's code (the fakes, the kit, the runtime,
/// the schemas crate and the chores).
const CODE_ROOTS: [&str; 5] = ["runtime/", "conformance/", "mocks/", "schemas/", "xtask/"];

fn violation(path: &str, text: &str) -> Option<String> {
    let first = text.lines().next().unwrap_or("");
    (!first.starts_with("//!")).then(|| {
        format!("{path}: the first line is not a `//!` header saying why the module exists")
    })
}

#[test]
fn every_rust_file_opens_with_a_module_header() {
    let found: Vec<String> = repo_files()
        .iter()
        .filter(|path| {
            path.ends_with(".rs") && CODE_ROOTS.iter().any(|root| path.starts_with(root))
        })
        .filter_map(|path| violation(path, &read(path)))
        .collect();
    assert_clean("module headers", &found);
}

#[test]
fn a_file_without_a_header_is_named() {
    assert_eq!(violation("a.rs", "//! Why.\nfn f() {}\n"), None);
    let found = violation("b.rs", "use super::*;\n//! Too late.\n");
    assert!(found.is_some_and(|message| message.starts_with("b.rs: ")));
    assert!(violation("c.rs", "").is_some());
}
