//! Secret redaction (local-agent-host.md §8.7 Phase 2).
//!
//! Two kinds of secret, one [`Redactor`]:
//! - **rules**: regular expressions for secrets with a recognisable shape (API keys, tokens,
//!   JWTs, PEM private keys, `password=` assignments; [`rules::DEFAULT_RULES`]) plus any from
//!   a rules file (format in [`rules`]);
//! - **exact values**: the runtime's own credentials (gateway token, service and MCP bearer
//!   tokens, any `*_TOKEN`/`*_SECRET`/… variable of its environment), replaced wherever they
//!   appear whatever their shape.
//!
//! A match becomes `[REDACTED:kind]` (`credential` for exact values).
//!
//! Where it applies (the decision, so every later sink is clean): a tool's result is
//! redacted with everything **before it enters the thread**, so events, checkpoints, history
//! uploads, artifacts and model requests never hold it in clear; every model request is
//! redacted again as a whole (the prompt included, §8.7) and says so in the
//! [`REDACTION_HEADER`] header. Serialized sinks — stdout lines, checkpoint files, service
//! request bodies — pass through the exact values as a last backstop, which is
//! safe on JSON text. The process-wide instance ([`global`]) is what other modules call:
//! logging per line, audit and telemetry delivery per envelope with
//! `apply::json_value(&redact::global(), &mut envelope)` at merge time.
//!
//! Log lines get the rules too (stderr and LOG_DIR are read by people and support tools);
//! the built-in rules are written so that a redacted JSON log line stays JSON.

pub(crate) mod apply;
#[cfg(test)]
mod format_tests;
#[cfg(test)]
mod hardening_tests;
pub(crate) mod rules;
#[cfg(test)]
mod tests;

use std::borrow::Cow;
use std::sync::{Arc, OnceLock, RwLock};

use regex::{Captures, Regex, RegexSet};

pub(crate) use rules::Rule;

/// The model-request header that says content in this request was redacted (INTEROP.md §2
/// keeps the body as the upstream sees it, so request context travels in headers).
pub(crate) const REDACTION_HEADER: &str = "x-redaction-applied";

/// The start of every replacement; its presence in a request sets [`REDACTION_HEADER`].
pub(crate) const MARKER: &str = "[REDACTED:";

/// Exact values shorter than this are not redacted: a one-letter "token" would rewrite
/// every occurrence of that letter.
pub(crate) const MIN_SECRET_LEN: usize = 8;

#[derive(Debug, thiserror::Error)]
pub enum RedactError {
    #[error("redaction rule {kind:?} has an invalid regular expression: {detail}")]
    BadPattern { kind: String, detail: String },
    #[error("redaction rule kind {kind:?} is not a valid name (use letters, digits, `_` and `-`)")]
    BadKind { kind: String },
    #[error("line {line} of the redaction rules file: {detail}")]
    Line { line: usize, detail: String },
    #[error("cannot read the redaction rules file {path}: {detail}")]
    Read { path: String, detail: String },
}

#[derive(Debug, Clone)]
pub struct Redactor {
    /// Shared by the redactors that differ only in exact values (credentials learnt at
    /// run time), so the rules are compiled once per process.
    rules: Arc<RuleSet>,
    /// The exact values, longest first, as one alternation.
    secrets: Option<Regex>,
    values: Vec<String>,
}

impl Default for Redactor {
    fn default() -> Self {
        Self::with_defaults()
    }
}

impl Redactor {
    /// The default rules, no exact values.
    pub fn with_defaults() -> Self {
        Self::build(rules::defaults(), Vec::new())
    }

    /// `rules` (defaults first, then configured ones, as the caller chooses) and exact values.
    pub fn new(rules: Vec<Rule>, values: impl IntoIterator<Item = String>) -> Self {
        Self::build(rules, values.into_iter().collect())
    }

    fn build(rules: Vec<Rule>, values: Vec<String>) -> Self {
        Self::with_rule_set(
            Arc::new(RuleSet {
                rules,
                set: OnceLock::new(),
            }),
            values,
        )
    }

    fn with_rule_set(rules: Arc<RuleSet>, values: Vec<String>) -> Self {
        let mut values: Vec<String> = values
            .into_iter()
            .map(|value| value.trim().to_owned())
            .filter(|value| value.chars().count() >= MIN_SECRET_LEN)
            .collect();
        // JSON-escaped spellings too, so serialized sinks are covered.
        let escaped: Vec<String> = values
            .iter()
            .filter_map(|value| serde_json::to_string(value).ok())
            .map(|quoted| quoted[1..quoted.len() - 1].to_owned())
            .collect();
        values.extend(escaped);
        values.sort_by_key(|value| std::cmp::Reverse(value.len()));
        values.dedup();
        let secrets = (!values.is_empty())
            .then(|| {
                let alternation: Vec<String> =
                    values.iter().map(|value| regex::escape(value)).collect();
                Regex::new(&alternation.join("|")).ok()
            })
            .flatten();
        Self {
            rules,
            secrets,
            values,
        }
    }

    /// This redactor with more exact values (e.g. the MCP bearer tokens of a policy bundle).
    pub fn with_values(&self, more: impl IntoIterator<Item = String>) -> Self {
        let mut values = self.values.clone();
        values.extend(more);
        Self::with_rule_set(Arc::clone(&self.rules), values)
    }

    pub fn rules(&self) -> &[Rule] {
        &self.rules.rules
    }

    /// Compiles the rule set, which every redaction scans with. The binary calls this on a
    /// background thread at start-up ([`warm_up_in_background`]) so that neither the first
    /// answer nor the first tool result waits for it. A rule's own regex, needed only to
    /// replace what the set found, compiles when that rule first matches: compiling all of
    /// them up front doubled the work and the memory of warming up.
    pub fn warm(&self) {
        let _ = self.rules.set();
    }

    /// Every secret in `text` — exact values, then rules — replaced. Borrowed when clean.
    pub fn redact<'a>(&self, text: &'a str) -> Cow<'a, str> {
        let text = self.redact_values(text);
        let matched = self.rules.matching(&text);
        if matched.is_empty() {
            return text;
        }
        let mut out = text.into_owned();
        for rule in matched {
            let Some(regex) = rule.regex() else {
                continue;
            };
            if let Cow::Owned(replaced) =
                regex.replace_all(&out, |caps: &Captures<'_>| replacement(rule, caps))
            {
                out = replaced;
            }
        }
        Cow::Owned(out)
    }

    /// Only the exact values replaced: safe on any JSON text.
    pub fn redact_values<'a>(&self, text: &'a str) -> Cow<'a, str> {
        match &self.secrets {
            Some(secrets) => secrets.replace_all(text, "[REDACTED:credential]"),
            None => Cow::Borrowed(text),
        }
    }

    /// Redacts `text` in place; true when something was replaced.
    pub fn redact_in_place(&self, text: &mut String) -> bool {
        match self.redact(text) {
            Cow::Borrowed(_) => false,
            Cow::Owned(clean) => {
                *text = clean;
                true
            }
        }
    }
}

/// The rules of a redactor and, compiled on first use, all of them as one set: one scan
/// tells whether (and which) rules match, so clean text — the common case — costs a
/// single pass.
#[derive(Debug)]
struct RuleSet {
    rules: Vec<Rule>,
    set: OnceLock<Option<RegexSet>>,
}

impl RuleSet {
    fn set(&self) -> Option<&RegexSet> {
        self.set
            .get_or_init(|| RegexSet::new(self.rules.iter().map(Rule::pattern)).ok())
            .as_ref()
    }

    /// The rules that match `text`. When the set cannot be compiled (rules that together
    /// exceed the regex size limit), each rule is tried on its own rather than none.
    fn matching(&self, text: &str) -> Vec<&Rule> {
        match self.set() {
            // Clean text is the common case, and one non-overlapping pass that may stop
            // early costs a fraction of finding every rule that matches (a log line of a
            // step went from about 40 instructions per byte to a third of that).
            Some(set) if !set.is_match(text) => Vec::new(),
            Some(set) => set
                .matches(text)
                .iter()
                .filter_map(|index| self.rules.get(index))
                .collect(),
            None => self
                .rules
                .iter()
                .filter(|rule| rule.regex().is_some_and(|regex| regex.is_match(text)))
                .collect(),
        }
    }
}

fn replacement(rule: &Rule, caps: &Captures<'_>) -> String {
    let tag = format!("{MARKER}{}]", rule.kind);
    let (Some(whole), Some(secret)) = (caps.get(0), caps.name("secret")) else {
        return tag;
    };
    let text = whole.as_str();
    // `password = getpass()` is code, `PWD=/home/u` or `password_file=/run/secrets/db` a
    // path: neither is a secret value.
    if rule.kind == "password"
        && (secret.as_str().contains('(') || secret.as_str().starts_with('/'))
    {
        return text.to_owned();
    }
    let start = secret.start() - whole.start();
    let end = secret.end() - whole.start();
    format!("{}{tag}{}", &text[..start], &text[end..])
}

static GLOBAL: RwLock<Option<Arc<Redactor>>> = RwLock::new(None);

fn fallback() -> Arc<Redactor> {
    static DEFAULT: OnceLock<Arc<Redactor>> = OnceLock::new();
    Arc::clone(DEFAULT.get_or_init(|| Arc::new(Redactor::with_defaults())))
}

/// The process-wide redactor (the defaults until [`install`] is called).
pub fn global() -> Arc<Redactor> {
    let guard = match GLOBAL.read() {
        Ok(guard) => guard,
        Err(poisoned) => poisoned.into_inner(),
    };
    guard.as_ref().map(Arc::clone).unwrap_or_else(fallback)
}

/// Makes `redactor` the process-wide one (the binary does this before logging starts).
pub fn install(redactor: Redactor) {
    let mut guard = match GLOBAL.write() {
        Ok(guard) => guard,
        Err(poisoned) => poisoned.into_inner(),
    };
    *guard = Some(Arc::new(redactor));
}

/// Compiles the process-wide redactor's rules on a thread of its own (see
/// [`Redactor::warm`]); a redaction that comes first simply compiles them itself.
pub fn warm_up_in_background() {
    let spawned = std::thread::Builder::new()
        .name("redact-warm-up".to_owned())
        .spawn(|| global().warm());
    if let Err(error) = spawned {
        tracing::debug!(%error, "redaction rules will compile on first use");
    }
}

/// Adds exact values to the process-wide redactor (credentials learnt at run time).
pub(crate) fn add_values(values: Vec<String>) {
    let values: Vec<String> = values
        .into_iter()
        .filter(|value| value.trim().chars().count() >= MIN_SECRET_LEN)
        .collect();
    if values.is_empty() {
        return;
    }
    let mut guard = match GLOBAL.write() {
        Ok(guard) => guard,
        Err(poisoned) => poisoned.into_inner(),
    };
    let current = guard.as_ref().map(Arc::clone).unwrap_or_else(fallback);
    if values.iter().all(|value| current.values.contains(value)) {
        return;
    }
    *guard = Some(Arc::new(current.with_values(values)));
}

/// Adds the policy bundle's `llmPolicy.redactionRules` to the process-wide redactor (rules
/// already there are kept once). Returns a readable message per rule that cannot be used.
pub(crate) fn add_policy_rules(rules: &[agent_protocol::policy::RedactionRule]) -> Vec<String> {
    let mut problems = Vec::new();
    let mut parsed = Vec::new();
    for rule in rules {
        match Rule::new(&rule.kind, &rule.pattern) {
            Ok(rule) => parsed.push(rule),
            Err(error) => problems.push(format!(
                "The policy's {error}; the other redaction rules still apply."
            )),
        }
    }
    if parsed.is_empty() {
        return problems;
    }
    let mut guard = match GLOBAL.write() {
        Ok(guard) => guard,
        Err(poisoned) => poisoned.into_inner(),
    };
    let current = guard.as_ref().map(Arc::clone).unwrap_or_else(fallback);
    let mut all = current.rules().to_vec();
    for rule in parsed {
        let known = all
            .iter()
            .any(|have| have.kind == rule.kind && have.pattern() == rule.pattern());
        if !known {
            all.push(rule);
        }
    }
    if all.len() != current.rules().len() {
        *guard = Some(Arc::new(Redactor::build(all, current.values.clone())));
    }
    problems
}

/// Names of environment variables whose values are credentials of this process.
pub(crate) fn is_secret_variable(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    ["_TOKEN", "_SECRET", "_PASSWORD", "_API_KEY", "_CREDENTIALS"]
        .iter()
        .any(|suffix| upper.ends_with(suffix))
}

/// The redactor the binary installs: default rules, the rules of `rules_file` (if any), and
/// as exact values every secret-named variable of `env` plus `extra` (gateway token, the
/// credential-looking gateway headers).
pub fn from_environment(
    rules_file: Option<&std::path::Path>,
    env: impl IntoIterator<Item = (String, String)>,
    extra: impl IntoIterator<Item = String>,
) -> Result<Redactor, RedactError> {
    let mut all = rules::defaults();
    if let Some(path) = rules_file {
        let text = std::fs::read_to_string(path).map_err(|error| RedactError::Read {
            path: path.display().to_string(),
            detail: error.to_string(),
        })?;
        all.extend(rules::parse(&text)?);
    }
    let mut values: Vec<String> = env
        .into_iter()
        .filter(|(name, _)| is_secret_variable(name))
        .map(|(_, value)| value)
        .collect();
    values.extend(extra);
    Ok(Redactor::new(all, values))
}
