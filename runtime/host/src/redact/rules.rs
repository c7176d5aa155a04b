//! Redaction rules: the built-in defaults and the rules file format.
//!
//! A rules file (`AGENT_RUNTIME_REDACTION_RULES_FILE`) holds one rule per line:
//!
//! ```text
//! # comment lines and blank lines are ignored
//! kind = regular expression
//! internal_ticket = \bTCK-[0-9]{6}\b
//! db_url = postgres://[^:\s]+:(?P<secret>[^@\s]+)@
//! ```
//!
//! `kind` (letters, digits, `_`, `-`) names the rule in the replacement `[REDACTED:kind]`.
//! The expression uses the `regex` crate's syntax. When it has a group named `secret`, only
//! that group is replaced (so `password=` stays readable); otherwise the whole match is.
//! Expressions should not match `"` or `\`, so that redacting JSON text keeps it valid.

use std::sync::OnceLock;

use regex::Regex;

use super::RedactError;

/// One rule: matches of its pattern are replaced by `[REDACTED:kind]`.
#[derive(Debug, Clone)]
pub struct Rule {
    pub kind: String,
    pattern: String,
    /// Compiled on first use. Compiling the built-in rules costs more than the rest of
    /// the process start-up together, and clean text never needs them (one pass of the
    /// [`super::Redactor`]'s set decides), so they are not compiled before the first answer.
    regex: OnceLock<Option<Regex>>,
}

impl Rule {
    /// A configured rule (rules file, policy bundle): compiled now, so a bad pattern is
    /// reported where it was configured.
    pub fn new(kind: &str, pattern: &str) -> Result<Self, RedactError> {
        if kind.is_empty()
            || !kind
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        {
            return Err(RedactError::BadKind {
                kind: kind.to_owned(),
            });
        }
        let regex = Regex::new(pattern).map_err(|source| RedactError::BadPattern {
            kind: kind.to_owned(),
            detail: source.to_string(),
        })?;
        Ok(Self {
            kind: kind.to_owned(),
            pattern: pattern.to_owned(),
            regex: OnceLock::from(Some(regex)),
        })
    }

    /// A built-in rule, compiled on first use (the unit tests compile every one).
    fn builtin(kind: &str, pattern: &str) -> Self {
        Self {
            kind: kind.to_owned(),
            pattern: pattern.to_owned(),
            regex: OnceLock::new(),
        }
    }

    pub fn pattern(&self) -> &str {
        &self.pattern
    }

    /// The compiled rule; `None` only if the pattern does not compile (never for a rule
    /// made by [`Rule::new`]).
    pub fn regex(&self) -> Option<&Regex> {
        self.regex
            .get_or_init(|| Regex::new(&self.pattern).ok())
            .as_ref()
    }
}

/// The defaults: API keys and tokens with a recognisable shape, JWTs, PEM private keys and
/// `password=`/`secret:`-style assignments. Values exclude `"` and `\` (see the module doc).
pub(crate) const DEFAULT_RULES: &[(&str, &str)] = &[
    (
        "private_key",
        // A whole PEM block, or (when output truncation cut its end) the header and the
        // base64 body that follows it.
        r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----(?:[\s\S]*?-----END [A-Z0-9 ]*PRIVATE KEY-----|(?:\s|\\n|\\r|[A-Za-z0-9+/=])*)",
    ),
    (
        "api_key",
        r"\bsk-(?:proj-|ant-|live-|test-)?[A-Za-z0-9_\-]{16,}",
    ),
    ("aws_access_key", r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),
    (
        "github_token",
        r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,})",
    ),
    ("slack_token", r"\bxox[abposr]-[A-Za-z0-9\-]{10,}"),
    (
        "jwt",
        r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}",
    ),
    (
        "bearer_token",
        r"(?i)\bbearer\s+(?P<secret>[A-Za-z0-9._~+/\-]{12,}=*)",
    ),
    (
        "private_key",
        // The body and END line of a key whose BEGIN line was cut off (read from an
        // offset): base64 lines right before the armour.
        r"(?:[A-Za-z0-9+/=]{16,}(?:\r?\n|\\r?\\n))+-----END [A-Z0-9 ]*PRIVATE KEY-----",
    ),
    (
        "private_key",
        // A PEM body without either armour line: three or more full 64-column base64 lines.
        r"(?m)(?:^[A-Za-z0-9+/]{64}(?:\r?\n|\\r?\\n)){3,}",
    ),
    ("stripe_key", r"\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}"),
    (
        "aws_secret_key",
        // By context: the 40-character secret after its name, also as the CLI's JSON prints
        // it (`"SecretAccessKey": "…"`).
        r#"(?i)secret_?access_?key["']?\s*[:=]\s*["']?(?P<secret>[A-Za-z0-9/+=]{40})"#,
    ),
    (
        "url_credentials",
        r#"\b[A-Za-z][A-Za-z0-9+.\-]*://[^\s:/?#@"'\\]*:(?P<secret>[^\s@/?#"'\\]+)@"#,
    ),
    (
        "api_key",
        // An OpenAI or Anthropic key glued to the text before it (`prefixsk-proj-…`,
        // `VAL_sk-…`): no word boundary, so only the distinctive shapes — a product prefix,
        // or 32 letters and digits without a dash.
        r"sk-(?:(?:proj|ant|svcacct|admin)-[A-Za-z0-9_\-]{20,}|[A-Za-z0-9]{32,})",
    ),
    ("npm_token", r"npm_[A-Za-z0-9]{36}"),
    (
        "gitlab_token",
        r"gl(?:pat|dt|rt|ptt|soat|ffct|cbt|imt|oas)-[A-Za-z0-9_\-]{20,}",
    ),
    ("google_api_key", r"AIza[0-9A-Za-z_\-]{35}"),
    (
        "slack_webhook",
        // The path after the host is the credential; the host stays readable.
        r"hooks\.slack\.com/(?:services|workflows|triggers)/(?P<secret>[A-Za-z0-9_\-]+/[A-Za-z0-9_/\-]+)",
    ),
    ("huggingface_token", r"hf_[A-Za-z0-9]{30,}"),
    (
        "password",
        // A netrc entry (`machine h login u password p`, also over lines or JSON-escaped
        // line breaks): the value after `password` in an entry that starts with `machine`.
        r#"\bmachine(?:\s|\\[nt])+[^\s"'\\]+(?:(?:\s|\\[nt])+(?:login|account|port)(?:\s|\\[nt])+[^\s"'\\]+)*(?:\s|\\[nt])+password(?:\s|\\[nt])+(?P<secret>[^\s"'\\]+)"#,
    ),
    (
        "basic_auth",
        // `Authorization: Basic …` as a header line, in curl's `-H` or in JSON.
        r#"(?i)\bauthorization\\?["']?\s*:\s*\\?["']?basic\s+(?P<secret>[A-Za-z0-9+/]{6,}=*)"#,
    ),
    (
        "docker_auth",
        // ~/.docker/config.json: `"auth": "base64(user:password)"` and identity tokens,
        // also JSON-escaped inside other JSON text.
        r#"\\?"(?:auth|identitytoken|registrytoken)\\?"\s*:\s*\\?"(?P<secret>[A-Za-z0-9+/._\-]{12,}=*)"#,
    ),
    (
        "password",
        // The name may carry a prefix (`DB_PASSWORD`, `aws_secret_access_key`): any letters
        // before password/passwd/passphrase, whole `_`/`-`/`.`-separated words before the
        // shorter names (so `OLDPWD` stays an ordinary variable).
        r#"(?i)\b(?:[a-z0-9_.\-]*(?:password|passwd|passphrase)|(?:[a-z0-9]+[_.\-])*(?:pwd|secret|client[_\-]?secret|api[_\-]?key|access[_\-]?key|secret[_\-]?key|auth[_\-]?token|access[_\-]?token|private[_\-]?key)(?:[_\-]access[_\-]key)?)["']?\s*[:=]\s*["']?(?P<secret>[^\s"'\\,;\[(][^\s"'\\,;]{3,})"#,
    ),
];

pub(crate) fn defaults() -> Vec<Rule> {
    DEFAULT_RULES
        .iter()
        .map(|(kind, pattern)| Rule::builtin(kind, pattern))
        .collect()
}

/// Parses a rules file (format in the module doc); errors name the line.
pub(crate) fn parse(text: &str) -> Result<Vec<Rule>, RedactError> {
    let mut rules = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let Some((kind, pattern)) = line.split_once('=') else {
            return Err(RedactError::Line {
                line: index + 1,
                detail: "expected `kind = regular expression`".to_owned(),
            });
        };
        let rule = Rule::new(kind.trim(), pattern.trim()).map_err(|error| RedactError::Line {
            line: index + 1,
            detail: error.to_string(),
        })?;
        rules.push(rule);
    }
    Ok(rules)
}
