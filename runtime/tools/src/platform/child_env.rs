//! The environment a spawned process (RunCommand's shell, git) inherits: the runtime's own
//! credentials, anything named like a secret, any value shaped like a credential (URL
//! userinfo `scheme://user:pw@`, keys with a known prefix such as `sk-`, `ghp_`, `glpat-`)
//! and the sockets of credential agents (`SSH_AUTH_SOCK`, `GPG_AGENT_INFO`, …, which sign or
//! decrypt with the user's keys for whoever connects) are removed, so `printenv | base64` or
//! `${TOKEN:0:9}` cannot carry them past exact-value redaction. The rest of the environment
//! (PATH, HOME, locale, proxies, …) stays, so tools behave as in the user's terminal.
//!
//! `AGENT_RUNTIME_CHILD_ENV_ALLOW` (comma-separated names, a trailing `*` is a prefix) keeps
//! named variables anyway, e.g. `NPM_TOKEN,AWS_PROFILE,SSH_AUTH_SOCK`; the runtime's own
//! credentials are never kept.

use std::sync::OnceLock;

/// Variables whose values are the runtime's own credentials or carry them.
const RUNTIME_SECRETS: &[&str] = &[
    "LLM_GATEWAY_AUTH_TOKEN",
    "LLM_GATEWAY_HEADERS",
    "AGENT_RUNTIME_HTTP_TOKEN",
    "AGENT_RUNTIME_CHILD_ENV_ALLOW",
];

/// Variables that name a credential agent or cache: a child holding one can have the user's
/// keys used (an SSH login, a signature) without ever reading them.
const AGENT_SOCKETS: &[&str] = &[
    "SSH_AUTH_SOCK",
    "SSH_AGENT_PID",
    "GPG_AGENT_INFO",
    "GNOME_KEYRING_CONTROL",
    "GNOME_KEYRING_PID",
    "KRB5CCNAME",
];

/// Prefixes of keys and tokens with a distinctive shape (the redactor's rules know them too).
const KEY_PREFIXES: &[&str] = &[
    "sk-",
    "sk_live_",
    "sk_test_",
    "rk_live_",
    "rk_test_",
    "ghp_",
    "gho_",
    "ghu_",
    "ghs_",
    "ghr_",
    "github_pat_",
    "glpat-",
    "gldt-",
    "glrt-",
    "npm_",
    "hf_",
    "AIza",
    "xoxa-",
    "xoxb-",
    "xoxp-",
    "xoxo-",
    "xoxs-",
    "xoxr-",
    "AKIA",
    "ASIA",
    "-----BEGIN",
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
        || upper.contains("APIKEY")
        || upper.contains("API_KEY")
        || upper.contains("ACCESSKEY")
        || upper.contains("PASSPHRASE")
        || upper.ends_with("_AUTH")
        || upper.contains("PASSWORD")
        || upper.contains("PASSWD")
        || upper.contains("CREDENTIAL")
        || upper.starts_with("AWS_")
}

/// Whether a value looks like a credential whatever its variable's name: a URL with a
/// password in it (`postgres://app:pw@db/app`), or a key with a known prefix (at the start,
/// or after `=`/`:`/a space as in `--token=ghp_…`) followed by at least 16 key characters.
pub(crate) fn looks_secret_value(value: &str) -> bool {
    url_password(value)
        || value
            .split([' ', '=', ':', ',', ';', '"', '\''])
            .any(|part| {
                KEY_PREFIXES.iter().any(|prefix| {
                    part.strip_prefix(prefix).is_some_and(|rest| {
                        prefix.starts_with('-')
                            || rest
                                .bytes()
                                .take_while(|b| b.is_ascii_alphanumeric() || b"-_".contains(b))
                                .count()
                                >= 16
                    })
                })
            })
}

/// `scheme://user:password@host…` somewhere in `value`.
fn url_password(value: &str) -> bool {
    let mut rest = value;
    while let Some(at) = rest.find("://") {
        let after = &rest[at + 3..];
        let authority = after
            .split(['/', '?', '#', ' ', '"', '\''])
            .next()
            .unwrap_or_default();
        if let Some((userinfo, _host)) = authority.rsplit_once('@')
            && let Some((_user, password)) = userinfo.split_once(':')
            && !password.is_empty()
        {
            return true;
        }
        rest = after;
    }
    false
}

/// Whether a child process may see the variable `name` holding `value`, given the allowlist.
pub(crate) fn passes(name: &str, value: &str, allow: &[String]) -> bool {
    if RUNTIME_SECRETS.contains(&name) {
        return false;
    }
    let allowed = allow.iter().any(|entry| match entry.strip_suffix('*') {
        Some(prefix) => name.starts_with(prefix),
        None => entry == name,
    });
    allowed || !(looks_secret(name) || AGENT_SOCKETS.contains(&name) || looks_secret_value(value))
}

/// Removes from `command`'s environment every inherited variable a child may not see.
pub(crate) fn scrub(command: &mut tokio::process::Command) {
    let allow = ALLOW.get().map(Vec::as_slice).unwrap_or_default();
    for (name, value) in std::env::vars_os() {
        let Some(text) = name.to_str() else {
            continue;
        };
        if !passes(text, &value.to_string_lossy(), allow) {
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
            ("SSH_AUTH_SOCK", false),
            ("GPG_AGENT_INFO", false),
            ("SSH_AGENT_PID", false),
            ("MY_APIKEY", false),
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
            assert_eq!(passes(name, "plain", &allow), want, "{name}");
        }
        let sockets = parse_allowlist("SSH_AUTH_SOCK");
        assert!(passes("SSH_AUTH_SOCK", "/tmp/ssh-x/agent.1", &sockets));
        assert!(!passes("GPG_AGENT_INFO", "/run/gpg:1:1", &sockets));
    }

    #[test]
    fn values_shaped_like_credentials_are_withheld_unless_allowed() {
        let allow = parse_allowlist("DEPLOY_URL");
        let cases = [
            (
                "DATABASE_URL",
                "postgres://app:pw@db.internal:5432/app",
                false,
            ),
            ("DEPLOY_URL", "https://ci:hunter22@deploy.example.com", true),
            ("MIRROR", "https://user@example.com/x", true),
            ("HTTP_PROXY", "http://proxy.internal:3128", true),
            ("OPENAI", "sk-proj-Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8", false),
            ("GH", "ghp_Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8Qr9St0", false),
            (
                "NPMRC_LINE",
                "//registry.npmjs.org/:_authToken=npm_Ab1Cd2Ef3Gh4Ij5Kl6Mn7",
                false,
            ),
            ("GITLAB", "glpat-Ab1Cd2Ef3Gh4Ij5Kl6Mn", false),
            ("HF", "hf_AbCdEfGhIjKlMnOpQrStUvWx", false),
            ("MAPS", "AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY", false),
            ("PEM", "-----BEGIN OPENSSH PRIVATE KEY-----", false),
            ("EDITOR", "vim", true),
            ("LS_COLORS", "rs=0:di=01;34:ln=01;36:sk-=01", true),
            (
                "PATH",
                "/usr/local/bin:/usr/bin:/home/u/.npm_global/bin",
                true,
            ),
            ("GREETING", "ask-for-permission", true),
            ("PS1", "\\u@\\h:\\w$ ", true),
        ];
        for (name, value, want) in cases {
            assert_eq!(passes(name, value, &allow), want, "{name}={value}");
        }
    }
}
