//! The README's configuration tables list exactly the environment variables the runtime
//! reads. Those are declared in one place, `runtime/cli/src` (the clap `env = "…"` attributes
//! of `config.rs` and `audit_args.rs`, and sandbox mode's `env("…")` reads), plus the
//! `*_ENV` name constants of the runtime's libraries (read by the binary or the library).

use std::collections::BTreeSet;

use regex::Regex;

use super::{assert_clean, read, repo_files};

/// The code of a file without its unit tests (a test's clap struct declares no setting).
fn without_tests(text: &str) -> &str {
    text.split("#[cfg(test)]").next().unwrap_or(text)
}

fn names(pattern: &str, text: &str) -> BTreeSet<String> {
    Regex::new(pattern)
        .unwrap()
        .captures_iter(text)
        .map(|found| found[1].to_owned())
        .collect()
}

/// The variable names in the first column of the tables of the README section `heading`.
fn table(readme: &str, heading: &str) -> BTreeSet<String> {
    let section = readme
        .split("\n## ")
        .find(|section| section.starts_with(heading))
        .unwrap_or_else(|| panic!("README.md has no section `## {heading}`"));
    let rows: String = section
        .lines()
        .filter_map(|line| line.strip_prefix('|'))
        .filter_map(|row| row.split('|').next())
        .collect::<Vec<_>>()
        .join("\n");
    names(r"`([A-Z][A-Z0-9_]+)`", &rows)
}

/// What the runtime reads, from the sources: the clap settings, sandbox mode's own reads.
struct Reads {
    settings: BTreeSet<String>,
    sandbox: BTreeSet<String>,
}

fn violations(readme: &str, reads: &Reads) -> Vec<String> {
    let configuration = table(readme, "Configuration");
    let sandbox = table(readme, "Sandbox mode");
    let mut found = Vec::new();
    for name in reads.settings.difference(&configuration) {
        found.push(format!(
            "{name} is read by the runtime but missing from the README's Configuration table"
        ));
    }
    for name in configuration.difference(&reads.settings) {
        found.push(format!(
            "{name} is in the README's Configuration table but the runtime does not declare it"
        ));
    }
    for name in reads.sandbox.difference(&sandbox) {
        found.push(format!(
            "{name} is read in sandbox mode but missing from the README's Sandbox mode table"
        ));
    }
    for name in sandbox
        .iter()
        .filter(|name| !reads.sandbox.contains(*name) && !reads.settings.contains(*name))
    {
        found.push(format!(
            "{name} is in the README's Sandbox mode table but the runtime does not read it"
        ));
    }
    found
}

fn reads() -> Reads {
    let mut settings = BTreeSet::new();
    let mut sandbox = BTreeSet::new();
    for path in repo_files().iter().filter(|path| path.ends_with(".rs")) {
        let in_cli = path.starts_with("runtime/cli/src/");
        let in_library = path.starts_with("runtime/") && path.contains("/src/");
        if !in_library {
            continue;
        }
        let text = read(path);
        let code = without_tests(&text);
        if in_cli {
            settings.extend(names(r#"\benv\s*=\s*"([A-Z][A-Z0-9_]+)""#, code));
        }
        if path == "runtime/cli/src/sandbox_host.rs" {
            sandbox.extend(names(r#"\b(?:env|seconds)\("([A-Z][A-Z0-9_]+)""#, code));
        }
        settings.extend(names(
            r#"const [A-Z_]*ENV: &str = "([A-Z][A-Z0-9_]+)""#,
            code,
        ));
    }
    assert!(
        settings.len() > 40,
        "only {} settings found: is the scan broken?",
        settings.len()
    );
    assert!(
        sandbox.len() > 5,
        "only {} sandbox reads found: is the scan broken?",
        sandbox.len()
    );
    Reads { settings, sandbox }
}

#[test]
fn the_readme_lists_exactly_the_variables_the_runtime_reads() {
    assert_clean(
        "configuration table",
        &violations(&read("README.md"), &reads()),
    );
}

#[test]
fn a_missing_or_stale_row_is_named() {
    let readme = "intro\n## Configuration\n\n| variable | default |\n|---|---|\n\
        | `A_VAR` | 1 |\n| `STALE_VAR` | 2 |\n\n## Sandbox mode\n\n| variable |\n|---|\n\
        | `SESSION_ID` | — |\n| `A_VAR`, `B_VAR` | as above |\n";
    let reads = Reads {
        settings: ["A_VAR", "B_VAR", "NEW_VAR"].map(str::to_owned).into(),
        sandbox: ["SESSION_ID", "SANDBOX_ONLY"].map(str::to_owned).into(),
    };
    let found = violations(readme, &reads);
    assert_eq!(
        found,
        [
            "B_VAR is read by the runtime but missing from the README's Configuration table",
            "NEW_VAR is read by the runtime but missing from the README's Configuration table",
            "STALE_VAR is in the README's Configuration table but the runtime does not declare it",
            "SANDBOX_ONLY is read in sandbox mode but missing from the README's Sandbox mode table",
        ]
    );
}

#[test]
fn settings_of_unit_tests_are_not_settings() {
    let text = "#[arg(env = \"REAL\")]\n#[cfg(test)]\nmod tests { #[arg(env = \"TEST_KNOB\")] }";
    assert_eq!(
        names(r#"\benv\s*=\s*"([A-Z][A-Z0-9_]+)""#, without_tests(text)),
        ["REAL".to_owned()].into()
    );
}
