//! Each default of the host is written once, in the `Default` of its group in
//! `agent_host::HostConfig`; the clap declarations take theirs from there, so `--help` shows
//! the values the library uses. These tests hold the rest to that: the configuration the
//! binary builds from its declared defaults is the library's, and the README's default
//! column quotes what the binary declares (read from clap itself, so a default given as an
//! expression is checked as well as a literal one) and sandbox mode's own durations.

use clap::{CommandFactory, FromArgMatches};

use super::Cli;

const README: &str = include_str!("../../../../README.md");

/// The configuration the binary builds from its declared defaults alone: the environment
/// of the test process is ignored, so a developer's exported variable changes nothing.
fn from_declared_defaults() -> agent_host::HostConfig {
    let command = Cli::command().mut_args(|arg| arg.env(None));
    let matches = command
        .try_get_matches_from([
            "agent-runtime",
            "--llm-gateway-endpoint",
            "http://gateway/v1",
            "--llm-gateway-auth-token",
            "token",
            "--session-service-url",
            "http://session",
            "--workspace-service-url",
            "http://workspace",
        ])
        .unwrap();
    Cli::from_arg_matches(&matches)
        .unwrap()
        .to_host_config()
        .unwrap()
}

#[test]
fn the_declared_defaults_are_the_host_configs_defaults() {
    let mut declared = from_declared_defaults();
    let library = agent_host::HostConfig::with_endpoints(
        "http://gateway/v1",
        "token",
        "http://session",
        "http://workspace",
    );
    // The one default that differs by design: the binary puts checkpoints in the
    // platform's data folder, the library (tests, benches) in the temporary folder.
    declared.dirs.checkpoints = library.dirs.checkpoints.clone();
    assert_eq!(format!("{declared:#?}"), format!("{library:#?}"));
}

/// The value a default denotes: a number (so `30`, `30.0` and `30_000` agree with their
/// spelled-out forms) or the text itself.
fn value(text: &str) -> String {
    let product: Option<f64> = text
        .split('*')
        .map(|factor| factor.trim().replace('_', "").parse::<f64>().ok())
        .product();
    product.map_or_else(|| text.to_owned(), |number| number.to_string())
}

/// The README's default column for `variable`: `Some` of a lone quoted value or of `empty`;
/// `None` when the cell quotes no value (`required`, `unset`, prose) or there is no row.
fn documented(readme: &str, variable: &str) -> Option<Option<String>> {
    let prefix = format!("| `{variable}` |");
    let row = readme.lines().find(|line| line.starts_with(&prefix))?;
    let cell = row[prefix.len()..].split('|').next()?.trim();
    Some(match cell {
        "empty" => Some(String::new()),
        _ => cell
            .strip_prefix('`')
            .and_then(|rest| rest.strip_suffix('`'))
            .filter(|inner| !inner.contains('`'))
            .map(value),
    })
}

/// `(variable, default)` of every argument of `command` that declares both, as clap holds
/// it (the text `--help` shows).
fn clap_defaults(command: &clap::Command) -> Vec<(String, String)> {
    command
        .get_arguments()
        .filter_map(|arg| {
            let variable = arg.get_env()?.to_string_lossy().into_owned();
            let default = arg
                .get_default_values()
                .first()?
                .to_string_lossy()
                .into_owned();
            Some((variable, default))
        })
        .collect()
}

/// `variable: …` for each declared default the README's row does not quote.
fn misquoted(readme: &str, declared: &[(String, String)]) -> Vec<String> {
    let mut found = Vec::new();
    for (variable, default) in declared {
        let default = value(default);
        // A missing row is tidy's finding (`xtask/tests/tidy/config_vars.rs`).
        if let Some(quoted) = documented(readme, variable)
            && quoted.as_ref() != Some(&default)
        {
            found.push(format!(
                "{variable}: the runtime's default is `{default}`, the README's default column says otherwise"
            ));
        }
    }
    found
}

#[test]
fn the_readme_quotes_every_declared_default() {
    let mut declared = clap_defaults(&Cli::command());
    assert!(
        declared.len() > 30,
        "only {} declared defaults: is the scan broken?",
        declared.len()
    );
    use crate::sandbox_host::{REGISTRATION_RETRY_DELAY, REGISTRATION_TIMEOUT};
    for (variable, seconds) in [REGISTRATION_TIMEOUT, REGISTRATION_RETRY_DELAY] {
        declared.push((variable.to_owned(), seconds.to_string()));
    }
    let found = misquoted(README, &declared);
    assert!(found.is_empty(), "{}", found.join("\n"));
}

#[test]
fn a_default_the_readme_misquotes_is_named() {
    #[derive(Debug, clap::Parser)]
    struct Knobs {
        #[arg(long, env = "A_SECONDS", default_value_t = super::Seconds(std::time::Duration::from_millis(500)))]
        a: super::Seconds,
        #[arg(long, env = "B_BYTES", default_value_t = 10 * 1024)]
        b: u64,
        #[arg(long, env = "C_LIST", default_value = "")]
        c: String,
        #[arg(long, env = "D_URL")]
        d: Option<String>,
    }
    let declared = clap_defaults(&Knobs::command());
    assert_eq!(declared.len(), 3, "{declared:?}");
    let readme = "| `A_SECONDS` | `0.50` | a |\n| `B_BYTES` | `10240` | b |\n| `C_LIST` | empty | c |\n\
        | `D_URL` | unset | d |\n";
    assert!(misquoted(readme, &declared).is_empty());
    let readme = "| `A_SECONDS` | `5` | a |\n| `B_BYTES` | 10 KiB | b |\n| `C_LIST` | `x` | c |\n";
    assert_eq!(
        misquoted(readme, &declared),
        [
            "A_SECONDS: the runtime's default is `0.5`, the README's default column says otherwise",
            "B_BYTES: the runtime's default is `10240`, the README's default column says otherwise",
            "C_LIST: the runtime's default is ``, the README's default column says otherwise",
        ]
    );
}
