//! Where unit tests live (ARCHITECTURE.md, "Tests"): inline in a `mod tests` at the end of the
//! file, or, when they would push the file past its size, in a file of their own beside it
//! (a `tests` file, or a `_tests` one named after the module) that a module declares under
//! `#[cfg(test)]`. A test file no
//! module declares is never compiled, so its tests pass by not running: each must be
//! declared.

use std::collections::BTreeMap;

use super::{assert_clean, read, repo_files};

/// The test files under a `src/` folder that no module declares: by `mod STEM;` in a file
/// of the same folder or in the module file the folder belongs to (the `.rs` file named
/// after it, beside it), or by `#[path = "FILE"]` in a file of the same folder.
fn orphans(sources: &BTreeMap<String, String>) -> Vec<String> {
    sources
        .keys()
        .filter(|path| path.contains("/src/"))
        .filter_map(|path| {
            let (folder, file) = path.rsplit_once('/')?;
            let stem = file.strip_suffix(".rs")?;
            (stem == "tests" || stem.ends_with("_tests")).then_some((path, folder, file, stem))
        })
        .filter(|(path, folder, file, stem)| {
            let declares = |text: &str| {
                text.contains(&format!("mod {stem};"))
                    || text.contains(&format!("#[path = \"{file}\"]"))
            };
            let parent_module = format!("{folder}.rs");
            !sources.iter().any(|(other, text)| {
                other != *path
                    && (other.rsplit_once('/').map(|(dir, _)| dir) == Some(*folder)
                        || *other == parent_module)
                    && declares(text)
            })
        })
        .map(|(path, ..)| format!("{path}: no module declares it, so its tests never run"))
        .collect()
}

#[test]
fn every_test_file_is_declared_by_a_module() {
    let sources: BTreeMap<String, String> = repo_files()
        .into_iter()
        .filter(|path| path.ends_with(".rs"))
        .map(|path| {
            let text = read(&path);
            (path, text)
        })
        .collect();
    assert_clean("test files", &orphans(&sources));
}

#[test]
fn an_undeclared_test_file_is_named() {
    let sources: BTreeMap<String, String> = [
        ("a/src/lib.rs", "#[cfg(test)]\nmod tests;\n"),
        ("a/src/tests.rs", "//! Tests.\n"),
        (
            "a/src/walk.rs",
            "#[cfg(test)]\n#[path = \"walk_tests.rs\"]\nmod tests;\n",
        ),
        ("a/src/walk_tests.rs", "//! Tests.\n"),
        ("a/src/policy.rs", "#[cfg(test)]\nmod fuzz_tests;\n"),
        ("a/src/policy/fuzz_tests.rs", "//! Tests.\n"),
        ("a/src/lost_tests.rs", "//! Tests nothing runs.\n"),
        ("a/src/deep/tests.rs", "//! Tests nothing runs.\n"),
    ]
    .into_iter()
    .map(|(path, text)| (path.to_owned(), text.to_owned()))
    .collect();
    assert_eq!(
        orphans(&sources),
        [
            "a/src/deep/tests.rs: no module declares it, so its tests never run",
            "a/src/lost_tests.rs: no module declares it, so its tests never run",
        ]
    );
}
