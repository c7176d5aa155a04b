//! `StartTask.taskOptions.approvalMode` and `allowNetwork` (system-design.md §5, architecture.md
//! §6): per-task options a client may set. They can only **tighten** the policy bundle, never
//! loosen it — the bundle is the security boundary, the client is not trusted to widen it.
//!
//! - `approvalMode`:
//!   - `on_risky_actions` (the default, also when absent): the bundle decides; a call needs
//!     approval exactly when its capability entry sets `requiresApproval`.
//!   - `always`: every call the bundle allows also asks the user first (riskLevel per §8.5;
//!     title from the entry's approval rule when it names one, else "Allow <tool>?").
//!   - `never`: the task never waits for a person. A call that would need approval is
//!     denied instead (CAPABILITY_DENIED, saying so); `requiresApproval` cannot be switched
//!     off by a task option.
//! - `allowNetwork` (default `true`): `false` withholds the `Network.Http` tools
//!   (`HttpRequest`, `FetchUrl`) and WebSearch (`Search.Web`) from the model for this task,
//!   and a call to one anyway is denied; ExecuteCode's process gets no network then.
//!   Shell commands are judged by the bundle's command rules alone (`curl` is a command).
//!
//! A denial by the bundle stays a denial whatever the options say.

use agent_protocol::methods::{ApprovalMode, TaskOptions};
use serde_json::{Map, Value};

use super::{PolicyEnforcer, Verdict};

/// Whether a tool of `capability` is offered to the model under `options`.
pub(crate) fn offers(options: &TaskOptions, capability: &str) -> bool {
    !(matches!(capability, "Network.Http" | "Search.Web") && options.allow_network == Some(false))
}

impl PolicyEnforcer {
    /// [`PolicyEnforcer::check_tool`], then tightened by the task's options.
    pub fn check_tool_for_task(
        &self,
        tool_name: &str,
        capability: &str,
        arguments: &Map<String, Value>,
        options: &TaskOptions,
    ) -> Verdict {
        if !offers(options, capability) {
            return Verdict::Denied(
                "Network access is turned off for this task (taskOptions.allowNetwork is false)."
                    .to_owned(),
            );
        }
        let verdict = self.check_named_tool(tool_name, capability, arguments);
        match (options.approval_mode, verdict) {
            (Some(ApprovalMode::Always), Verdict::Allowed) => {
                let entry = self.capabilities.get(capability);
                let risk = entry
                    .and_then(|entry| self.check_scope(capability, entry, arguments).ok())
                    .unwrap_or_else(|| super::default_risk(capability));
                Verdict::ApprovalRequired {
                    rule_id: entry.and_then(|entry| entry.approval_rule_id.clone()),
                    risk,
                }
            }
            (Some(ApprovalMode::Never), Verdict::ApprovalRequired { .. }) => Verdict::Denied(
                "This action needs the user's approval, but the task runs with approvalMode \"never\", so it was not run."
                    .to_owned(),
            ),
            (_, verdict) => verdict,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_protocol::policy::PolicyBundle;
    use serde_json::json;

    fn enforcer(root: &std::path::Path) -> PolicyEnforcer {
        let bundle: PolicyBundle = serde_json::from_value(json!({
            "policyBundleVersion": "v", "schemaVersion": "1.0", "sessionId": "s",
            "expiresAt": "2999-01-01T00:00:00Z",
            "capabilities": [
                {"name": "File.Read", "allowedPaths": ["."]},
                {"name": "File.Write", "allowedPaths": ["."], "requiresApproval": true},
                {"name": "Network.Http", "allowedDomains": ["example.com"]}
            ],
            "llmPolicy": {"allowedModels": ["m"]}
        }))
        .unwrap();
        PolicyEnforcer::new(bundle, Some(root.to_path_buf()))
    }

    fn options(mode: Option<ApprovalMode>, network: Option<bool>) -> TaskOptions {
        TaskOptions {
            max_steps: None,
            allow_network: network,
            approval_mode: mode,
        }
    }

    /// "allowed", "approval <risk>" or "denied".
    fn judge(verdict: Verdict) -> String {
        match verdict {
            Verdict::Allowed => "allowed".to_owned(),
            Verdict::ApprovalRequired { risk, .. } => format!("approval {risk:?}").to_lowercase(),
            Verdict::Denied(_) => "denied".to_owned(),
        }
    }

    #[test]
    fn options_only_tighten() {
        let dir = tempfile::tempdir().unwrap();
        let policy = enforcer(dir.path());
        let (always, never, risky) = (
            Some(ApprovalMode::Always),
            Some(ApprovalMode::Never),
            Some(ApprovalMode::OnRiskyActions),
        );
        let read = json!({"path": "a"});
        let http = json!({"url": "https://example.com/"});
        let cases = [
            (None, None, "File.Read", &read, "allowed"),
            (None, None, "File.Write", &read, "approval medium"),
            (risky, None, "File.Read", &read, "allowed"),
            (risky, None, "File.Write", &read, "approval medium"),
            (always, None, "File.Read", &read, "approval low"),
            (always, None, "Network.Http", &http, "approval medium"),
            (
                always,
                None,
                "File.Read",
                &json!({"path": "/etc/passwd"}),
                "denied",
            ),
            (
                always,
                None,
                "Shell.Exec",
                &json!({"command": "ls"}),
                "denied",
            ),
            (never, None, "File.Read", &read, "allowed"),
            (never, None, "File.Write", &read, "denied"),
            (None, None, "Network.Http", &http, "allowed"),
            (None, Some(true), "Network.Http", &http, "allowed"),
            (None, Some(false), "Network.Http", &http, "denied"),
            (always, Some(false), "Network.Http", &http, "denied"),
            (None, Some(false), "File.Read", &read, "allowed"),
        ];
        let mut failures = Vec::new();
        for (mode, network, capability, arguments, expected) in cases {
            let arguments = arguments.as_object().unwrap().clone();
            let got = judge(policy.check_tool_for_task(
                "any",
                capability,
                &arguments,
                &options(mode, network),
            ));
            if got != expected {
                failures.push(format!(
                    "{mode:?}/{network:?} {capability} {arguments:?}: expected {expected}, got {got}"
                ));
            }
        }
        assert!(failures.is_empty(), "{}", failures.join("\n"));
    }

    #[test]
    fn network_tools_are_withheld_only_when_network_is_off() {
        assert!(offers(&options(None, None), "Network.Http"));
        assert!(!offers(&options(None, Some(false)), "Network.Http"));
        assert!(offers(&options(None, Some(false)), "File.Read"));
        // WebSearch reaches the web too (INTEROP.md §11); ExecuteCode's own network is
        // its sandbox grant's.
        assert!(offers(&options(None, None), "Search.Web"));
        assert!(!offers(&options(None, Some(false)), "Search.Web"));
        assert!(offers(&options(None, Some(false)), "Code.Execute"));
    }
}
