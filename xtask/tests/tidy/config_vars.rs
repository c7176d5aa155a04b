//! The README's configuration tables list exactly the environment variables the runtime
//! reads. Those are declared in one place, `runtime/cli/src` (the clap `env = "…"` attributes
//! of `config.rs` and `audit_args.rs`, and sandbox mode's `env("…")` reads), plus the
//! `*_ENV` name constants of the runtime's libraries (read by the binary or the library).
//! Where the declaration gives a default, the README's default column quotes it.

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

/// The value a default denotes: a number (so `30` and `30.0` agree) or the text itself.
fn value(text: &str) -> String {
    let product: Option<f64> = text
        .split('*')
        .map(|factor| factor.trim().replace('_', "").parse::<f64>().ok())
        .product();
    product.map_or_else(|| text.to_owned(), |number| number.to_string())
}

/// `(variable, default)` of every clap argument that declares both, and of sandbox mode's
/// `seconds("NAME", default)` reads.
fn declared_defaults(code: &str) -> Vec<(String, String)> {
    let attribute = Regex::new(r"#\[arg\(((?:[^()\]]|\([^()]*\))*)\)\]").unwrap();
    let env = Regex::new(r#"\benv\s*=\s*"([A-Z][A-Z0-9_]+)""#).unwrap();
    let text = Regex::new(r#"\bdefault_value\s*=\s*"([^"]*)""#).unwrap();
    let typed = Regex::new(r"\bdefault_value_t\s*=\s*([^,]+?)\s*(?:,|$)").unwrap();
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
            found.push((name[1].to_owned(), value(&default)));
        }
    }
    let seconds = Regex::new(r#"\bseconds\("([A-Z][A-Z0-9_]+)",\s*([0-9.]+)\)"#).unwrap();
    for read in seconds.captures_iter(code) {
        found.push((read[1].to_owned(), value(&read[2])));
    }
    found
}

/// The README's default column, by variable: a lone quoted value (`` `300` ``), or `empty`
/// for the empty text; anything else (`required`, `unset`, prose) quotes no value.
fn documented_defaults(readme: &str) -> Vec<(String, Option<String>)> {
    let row = Regex::new(r"(?m)^\| `([A-Z][A-Z0-9_]+)` \| ([^|]*) \|").unwrap();
    let lone = Regex::new(r"^`([^`]*)`$").unwrap();
    row.captures_iter(readme)
        .map(|row| {
            let cell = row[2].trim();
            let quoted = match cell {
                "empty" => Some(String::new()),
                _ => lone.captures(cell).map(|found| value(&found[1])),
            };
            (row[1].to_owned(), quoted)
        })
        .collect()
}

fn default_violations(readme: &str, declared: &[(String, String)]) -> Vec<String> {
    let documented = documented_defaults(readme);
    let mut found = Vec::new();
    for (name, default) in declared {
        let Some((_, quoted)) = documented.iter().find(|(row, _)| row == name) else {
            continue; // a missing row is the table check's finding
        };
        if quoted.as_ref() != Some(default) {
            found.push(format!(
                "{name}: the runtime's default is `{default}`, the README's default column says otherwise"
            ));
        }
    }
    found
}

fn declarations() -> Vec<(String, String)> {
    let mut declared = Vec::new();
    for path in repo_files()
        .iter()
        .filter(|path| path.starts_with("runtime/cli/src/") && path.ends_with(".rs"))
    {
        declared.extend(declared_defaults(without_tests(&read(path))));
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
    let text = "#[cfg(test)]\nmod tests_elsewhere;\n#[arg(env = \"REAL\")]\n#[cfg(test)]\nmod tests { #[arg(env = \"TEST_KNOB\")] }";
    assert_eq!(
        names(r#"\benv\s*=\s*"([A-Z][A-Z0-9_]+)""#, without_tests(text)),
        ["REAL".to_owned()].into()
    );
}

#[test]
fn the_readme_quotes_every_declared_default() {
    assert_clean(
        "configuration defaults",
        &default_violations(&read("README.md"), &declarations()),
    );
}

#[test]
fn a_default_the_readme_misquotes_is_named() {
    let code = r#"
        #[arg(long, env = "A_SECONDS", default_value = "30", value_parser = Seconds)]
        a: Duration,
        #[arg(
            long,
            env = "B_BYTES",
            default_value_t = 10 * 1024
        )]
        b: u64,
        #[arg(long, env = "C_LIST", default_value = "")]
        c: String,
        #[arg(long, env = "D_URL")]
        d: Option<String>,
        deadline: seconds("E_SECONDS", 150.0)?,
    "#;
    let declared = declared_defaults(code);
    assert_eq!(declared.len(), 4, "{declared:?}");
    let readme = "| `A_SECONDS` | `30.0` | a |\n| `B_BYTES` | `10240` | b |\n| `C_LIST` | empty | c |\n\
        | `D_URL` | unset | d |\n| `E_SECONDS` | `150` | e |\n";
    assert!(default_violations(readme, &declared).is_empty());
    let readme = "| `A_SECONDS` | `300` | a |\n| `B_BYTES` | 10 KiB | b |\n| `C_LIST` | `x` | c |\n\
        | `E_SECONDS` | `150` | e |\n";
    assert_eq!(
        default_violations(readme, &declared),
        [
            "A_SECONDS: the runtime's default is `30`, the README's default column says otherwise",
            "B_BYTES: the runtime's default is `10240`, the README's default column says otherwise",
            "C_LIST: the runtime's default is ``, the README's default column says otherwise",
        ]
    );
}
