//! The environment a spawned process (RunCommand's shell, git) inherits: the runtime's own
//! credentials and anything named like a secret are removed, so `printenv | base64` or
//! `${TOKEN:0:9}` cannot carry them past exact-value redaction. The rest of the
//! environment (PATH, HOME, locale, proxies, SSH agent socket, …) stays, so tools behave as
//! in the user's terminal.
//!
//! `AGENT_RUNTIME_CHILD_ENV_ALLOW` (comma-separated names, a trailing `*` is a prefix) keeps
//! named variables anyway, e.g. `NPM_TOKEN,AWS_PROFILE,AWS_REGION`; the runtime's own
//! credentials are never kept.

use std::sync::OnceLock;

/// Variables whose values are the runtime's own credentials or carry them.
const RUNTIME_SECRETS: &[&str] = &[
    "LLM_GATEWAY_AUTH_TOKEN",
    "LLM_GATEWAY_HEADERS",
    "AGENT_RUNTIME_HTTP_TOKEN",
    "AGENT_RUNTIME_CHILD_ENV_ALLOW",
];

static ALLOW: OnceLock<Vec<String>> = OnceLock::new();

/// Sets the allowlist once, at start-up (from `AGENT_RUNTIME_CHILD_ENV_ALLOW`); later calls
/// are ignored. Unset, nothing named like a secret is passed on.
pub fn set_allowlist(names: &str) {
    let _ = ALLOW.set(parse_allowlist(names));
}

fn parse_allowlist(names: &str) -> Vec<String> {
    names
        .split(',')
        .map(str::trim)
        .filter(|name| !name.is_empty())
        .map(str::to_owned)
        .collect()
}

/// Whether a variable of this name looks like a credential.
pub(crate) fn looks_secret(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    upper.ends_with("_TOKEN")
        || upper == "TOKEN"
        || upper.contains("SECRET")
        || upper.ends_with("_KEY")
        || upper.contains("PASSWORD")
        || upper.contains("PASSWD")
        || upper.contains("CREDENTIAL")
        || upper.starts_with("AWS_")
}

/// Whether a child process may see the variable `name`, given the allowlist.
pub(crate) fn passes(name: &str, allow: &[String]) -> bool {
    if RUNTIME_SECRETS.contains(&name) {
        return false;
    }
    let allowed = allow.iter().any(|entry| match entry.strip_suffix('*') {
        Some(prefix) => name.starts_with(prefix),
        None => entry == name,
    });
    allowed || !looks_secret(name)
}

/// Removes from `command`'s environment every inherited variable a child may not see.
pub(crate) fn scrub(command: &mut tokio::process::Command) {
    let allow = ALLOW.get().map(Vec::as_slice).unwrap_or_default();
    for (name, _) in std::env::vars_os() {
        let Some(text) = name.to_str() else {
            continue;
        };
        if !passes(text, allow) {
            command.env_remove(&name);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_by_name_are_withheld_unless_allowed() {
        let allow = parse_allowlist(" NPM_TOKEN , AWS_REGION*,LLM_GATEWAY_AUTH_TOKEN");
        let cases = [
            ("PATH", true),
            ("HOME", true),
            ("LANG", true),
            ("SSH_AUTH_SOCK", true),
            ("KEYBOARD", true),
            ("GITHUB_TOKEN", false),
            ("NPM_TOKEN", true),
            ("CLIENT_SECRET_ID", false),
            ("MY_SECRET", false),
            ("OPENAI_API_KEY", false),
            ("DB_PASSWORD", false),
            ("PGPASSWORD", false),
            ("AWS_SECRET_ACCESS_KEY", false),
            ("AWS_REGION", true),
            ("AWS_REGION_2", true),
            ("LLM_GATEWAY_AUTH_TOKEN", false),
            ("LLM_GATEWAY_HEADERS", false),
            ("AGENT_RUNTIME_HTTP_TOKEN", false),
            ("LLM_GATEWAY_ENDPOINT", true),
        ];
        for (name, want) in cases {
            assert_eq!(passes(name, &allow), want, "{name}");
        }
    }
}
