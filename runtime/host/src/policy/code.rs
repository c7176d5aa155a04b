//! `Code.Execute`, the capability of ExecuteCode (INTEROP.md §5, §11): the scope fields the
//! real Policy Service sends beside the spec's — `allowedLanguages`,
//! `maxExecutionTimeSeconds`, `allowCodeNetwork` — read from the entry's extra fields, where
//! `null` means unset as everywhere in the bundle.
//!
//! - The language (`language`, else Python, the one the Python runtime runs) must be one of
//!   `allowedLanguages` when that is set, compared without case.
//! - When the entry sets `allowedPaths` or `blockedPaths`, the folder the code runs in (the
//!   project folder, else the home folder) must pass them, as a command's does.
//! - `maxExecutionTimeSeconds` lowers the call's timeout; `allowCodeNetwork: true` is the
//!   only way the code's process reaches the network (the sandbox grant).

use std::time::Duration;

use agent_protocol::approval::RiskLevel;
use agent_protocol::policy::CapabilityEntry;
use serde_json::{Map, Value};

use super::PolicyEnforcer;

/// The capability's name.
pub(crate) const CODE_EXECUTE: &str = "Code.Execute";

/// The language of a call that names none.
pub(crate) const DEFAULT_LANGUAGE: &str = "python";

/// `allowedLanguages`, when set.
fn allowed_languages(entry: &CapabilityEntry) -> Option<Vec<&str>> {
    entry
        .extra
        .get("allowedLanguages")
        .and_then(Value::as_array)
        .map(|languages| languages.iter().filter_map(Value::as_str).collect())
}

/// `allowCodeNetwork: true`; absent, `null` or anything else is no network.
pub(crate) fn allows_network(entry: Option<&CapabilityEntry>) -> bool {
    entry.and_then(|entry| entry.extra.get("allowCodeNetwork")) == Some(&Value::Bool(true))
}

/// `maxExecutionTimeSeconds`, when set to a positive number.
pub(crate) fn max_execution_time(entry: Option<&CapabilityEntry>) -> Option<Duration> {
    entry
        .and_then(|entry| entry.extra.get("maxExecutionTimeSeconds"))
        .and_then(Value::as_f64)
        .filter(|seconds| seconds.is_finite() && *seconds > 0.0)
        .and_then(|seconds| Duration::try_from_secs_f64(seconds).ok())
}

impl PolicyEnforcer {
    /// The scope of one ExecuteCode call; on success its risk: high, as for any command
    /// the policy does not list.
    pub(super) fn check_code(
        &self,
        entry: &CapabilityEntry,
        arguments: &Map<String, Value>,
    ) -> Result<RiskLevel, String> {
        if !arguments.get("code").is_some_and(Value::is_string) {
            return Err("ExecuteCode needs a code string".to_owned());
        }
        let language = match arguments.get("language") {
            None | Some(Value::Null) => DEFAULT_LANGUAGE,
            Some(Value::String(language)) => language.as_str(),
            Some(_) => return Err("ExecuteCode's language must be a string".to_owned()),
        };
        if let Some(allowed) = allowed_languages(entry)
            && !allowed
                .iter()
                .any(|name| name.trim().eq_ignore_ascii_case(language.trim()))
        {
            return Err(format!(
                "Language not allowed: {language} (allowed: {})",
                if allowed.is_empty() {
                    "none".to_owned()
                } else {
                    allowed.join(", ")
                }
            ));
        }
        if entry.allowed_paths.is_some() || entry.blocked_paths.is_some() {
            let here = if self.workspace_root.is_some() {
                "."
            } else {
                "~"
            };
            self.check_tool_path(entry, here, false)?;
        }
        Ok(RiskLevel::High)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::Verdict;
    use crate::testing::enforcer;
    use serde_json::json;

    fn check(capabilities: Value, arguments: Value) -> Verdict {
        let root = std::env::temp_dir().join("code-execute-proj");
        let policy = enforcer(&root, capabilities);
        policy.check_tool(CODE_EXECUTE, arguments.as_object().unwrap())
    }

    /// The real default (INTEROP.md §5): Python only, 30 s, no network.
    fn real_default() -> Value {
        json!([{"name": "Code.Execute", "allowedLanguages": ["python"], "maxExecutionTimeSeconds": 30, "allowCodeNetwork": false, "requiresApproval": null}])
    }

    #[test]
    fn python_passes_the_real_default_and_other_languages_do_not() {
        assert_eq!(
            check(real_default(), json!({"code": "print(1)"})),
            Verdict::Allowed
        );
        assert_eq!(
            check(
                real_default(),
                json!({"code": "print(1)", "language": "Python"})
            ),
            Verdict::Allowed
        );
        assert_eq!(
            check(
                real_default(),
                json!({"code": "console.log(1)", "language": "javascript"})
            ),
            Verdict::Denied("Language not allowed: javascript (allowed: python)".to_owned())
        );
        assert_eq!(
            check(
                json!([{"name": "Code.Execute", "allowedLanguages": ["bash"]}]),
                json!({"code": "print(1)"})
            ),
            Verdict::Denied("Language not allowed: python (allowed: bash)".to_owned())
        );
        // Unset (or null) allowedLanguages admits any language.
        assert_eq!(
            check(
                json!([{"name": "Code.Execute", "allowedLanguages": null}]),
                json!({"code": "x", "language": "ruby"})
            ),
            Verdict::Allowed
        );
        assert!(matches!(
            check(real_default(), json!({"language": "python"})),
            Verdict::Denied(reason) if reason.contains("code string")
        ));
        assert!(matches!(
            check(json!([]), json!({"code": "print(1)"})),
            Verdict::Denied(reason) if reason == "Capability not granted: Code.Execute"
        ));
    }

    #[test]
    fn blocked_paths_cover_the_folder_the_code_runs_in() {
        assert!(matches!(
            check(
                json!([{"name": "Code.Execute", "blockedPaths": ["."]}]),
                json!({"code": "print(1)"})
            ),
            Verdict::Denied(reason) if reason.starts_with("Path is blocked")
        ));
    }

    #[test]
    fn network_and_time_come_from_the_entry_and_null_is_unset() {
        let entry = |extra: Value| CapabilityEntry {
            name: CODE_EXECUTE.to_owned(),
            extra: extra.as_object().cloned().unwrap(),
            ..CapabilityEntry::default()
        };
        assert!(allows_network(Some(&entry(
            json!({"allowCodeNetwork": true})
        ))));
        for off in [
            json!({"allowCodeNetwork": false}),
            json!({"allowCodeNetwork": null}),
            json!({"allowCodeNetwork": "true"}),
            json!({}),
        ] {
            assert!(!allows_network(Some(&entry(off))));
        }
        assert!(!allows_network(None));
        assert_eq!(
            max_execution_time(Some(&entry(json!({"maxExecutionTimeSeconds": 30})))),
            Some(Duration::from_secs(30))
        );
        assert_eq!(
            max_execution_time(Some(&entry(json!({"maxExecutionTimeSeconds": null})))),
            None
        );
        assert_eq!(
            max_execution_time(Some(&entry(json!({"maxExecutionTimeSeconds": 0})))),
            None
        );
    }
}
