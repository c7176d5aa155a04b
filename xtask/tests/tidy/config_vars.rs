//! The README's configuration tables list exactly the environment variables the runtime
//! reads. Those are declared in one place, `runtime/cli/src` (the clap `env = "…"` attributes
//! of `config.rs` and `audit_args.rs`, sandbox mode's `env("…")` reads and its duration
//! constants), plus the
//! `*_ENV` name constants of the runtime's libraries (read by the binary or the library).
//!
//! Defaults: the host's are written once, in `runtime/host/src/config.rs`, and the clap
//! declarations take them from there (`default_value_t = …::default().…`); a number written
//! in a declaration instead is a second copy and is named here. The README's default column
//! is held to the binary's declarations by `runtime/cli/src/config/defaults_tests.rs`, which
//! reads them from clap itself.

use std::collections::BTreeSet;

use regex::Regex;

use super::{assert_clean, read, repo_files};

/// The code of a file without its inline unit tests, which close the file by convention (a
/// test's clap struct declares no setting).
fn without_tests(text: &str) -> &str {
    let tests = Regex::new(r"#\[cfg\(test\)\]\s*mod \w+\s*\{").unwrap();
    tests
        .find(text)
        .map_or(text, |found| &text[..found.start()])
}

/// Whole files of unit tests (`#[cfg(test)] mod defaults_tests;`), named so by convention.
fn is_test_file(path: &str) -> bool {
    path.ends_with("tests.rs")
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

/// Whether a default as written is a number (`30`, `0.5`, `10 * 1024 * 1024`).
fn is_number(text: &str) -> bool {
    text.split('*')
        .all(|factor| factor.trim().replace('_', "").parse::<f64>().is_ok())
}

/// `(variable, default)` of every clap argument that declares both, the default as written.
fn clap_defaults(code: &str) -> Vec<(String, String)> {
    // Two levels of parentheses inside the attribute: `Seconds(Group::default().field)`.
    let attribute = Regex::new(r"#\[arg\(((?:[^()\]]|\((?:[^()]|\([^()]*\))*\))*)\)\]").unwrap();
    let env = Regex::new(r#"\benv\s*=\s*"([A-Z][A-Z0-9_]+)""#).unwrap();
    let text = Regex::new(r#"\bdefault_value\s*=\s*"([^"]*)""#).unwrap();
    let typed = Regex::new(r"\bdefault_value_t\s*=\s*(.+?)\s*(?:,\s*\w+\s*=|,?\s*$)").unwrap();
    let mut found = Vec::new();
    for arg in attribute.captures_iter(code) {
        let arg = &arg[1];
        let Some(name) = env.captures(arg) else {
            continue;
        };
        let default = text
            .captures(arg)
            .or_else(|| typed.captures(arg))
            .map(|default| default[1].to_owned());
        if let Some(default) = default {
            found.push((name[1].to_owned(), default));
        }
    }
    found
}

/// A number written as a clap default: a default of the host or the tool runtime written a
/// second time.
fn literal_violations(declared: &[(String, String)]) -> Vec<String> {
    declared
        .iter()
        .filter(|(_, default)| {
            is_number(default)
        })
        .map(|(name, default)| {
            format!(
                "{name}: its default `{default}` is written in the binary's declaration; take it from \
                 the library (`default_value_t = …::default().…`, `agent_tools::defaults::…`) so it \
                 is written once"
            )
        })
        .collect()
}

/// The clap defaults of `runtime/cli/src`, as written.
fn declarations() -> Vec<(String, String)> {
    let mut declared = Vec::new();
    for path in repo_files()
        .iter()
        .filter(|path| path.starts_with("runtime/cli/src/") && path.ends_with(".rs"))
        .filter(|path| !is_test_file(path))
    {
        declared.extend(clap_defaults(without_tests(&read(path))));
    }
    assert!(
        declared.len() > 30,
        "only {} defaults found: is the scan broken?",
        declared.len()
    );
    declared
}

fn reads() -> Reads {
    let mut settings = BTreeSet::new();
    let mut sandbox = BTreeSet::new();
    for path in repo_files()
        .iter()
        .filter(|path| path.ends_with(".rs") && !is_test_file(path))
    {
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
            sandbox.extend(names(r#"\benv\("([A-Z][A-Z0-9_]+)""#, code));
            // Its durations: `const NAME: (&str, f64) = ("VARIABLE", default)`.
            sandbox.extend(names(r#"\(&str, f64\) =\s*\(\s*"([A-Z][A-Z0-9_]+)""#, code));
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
    let text = "#[cfg(test)]\nmod tests_elsewhere;\n#[arg(env = \"REAL\")]\n#[cfg(test)]\nmod tests { #[arg(env = \"TEST_KNOB\")] }";
    assert_eq!(
        names(r#"\benv\s*=\s*"([A-Z][A-Z0-9_]+)""#, without_tests(text)),
        ["REAL".to_owned()].into()
    );
}

#[test]
fn a_host_default_is_written_once() {
    assert_clean(
        "defaults written twice",
        &literal_violations(&declarations()),
    );
}

#[test]
fn a_number_declared_for_a_setting_is_named() {
    let code = r#"
        #[arg(long, env = "A_SECONDS", default_value = "30")]
        a: Seconds,
        #[arg(
            long,
            env = "B_BYTES",
            default_value_t = 10 * 1024
        )]
        b: u64,
        #[arg(long, env = "C_LIST", default_value = "")]
        c: String,
        #[arg(long, env = "D_STEPS", default_value_t = LoopLimits::default().default_max_steps)]
        d: u32,
        #[arg(long, env = "E_SECONDS", default_value_t = Seconds(ToolTimeouts::default().file), hide = true)]
        e: Seconds,
        #[arg(long, env = "AGENT_RUNTIME_KILL_GRACE_SECONDS", default_value = "5")]
        f: Seconds,
        #[arg(long, env = "G_URL")]
        g: Option<String>,
    "#;
    let declared = clap_defaults(code);
    assert_eq!(declared.len(), 6, "{declared:?}");
    let found = literal_violations(&declared);
    assert_eq!(found.len(), 3, "{found:?}");
    assert!(
        found[0].starts_with("A_SECONDS: its default `30`"),
        "{found:?}"
    );
    assert!(
        found[1].starts_with("B_BYTES: its default `10 * 1024`"),
        "{found:?}"
    );
    // The tool runtime's knobs too: their defaults are agent-tools' (`agent_tools::defaults`).
    assert!(
        found[2].starts_with("AGENT_RUNTIME_KILL_GRACE_SECONDS: its default `5`"),
        "{found:?}"
    );
}
