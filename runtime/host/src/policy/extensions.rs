//! Scope checks of tools that are named by the policy rather than by this build:
//! MCP tools (`Mcp.Invoke`: the server's `allowedTools`, per-tool approval rules) and
//! Backend Tool Service tools (`BackendTool.Invoke`: `allowedToolNames`,
//! local-agent-host.md §7.6). The tool runtime registers only allowed tools; this is the
//! enforcer's own check, so a tool that slips into the offer is still refused.

use agent_protocol::extensions::{
    BACKEND_TOOL_CAPABILITY, ExtensionConfig, MCP_CAPABILITY, split_mcp_name,
};
use serde_json::{Map, Value};

use super::{PolicyEnforcer, Verdict};

impl PolicyEnforcer {
    /// [`PolicyEnforcer::check_tool`] plus the name checks of extension tools.
    pub fn check_named_tool(
        &self,
        tool_name: &str,
        capability: &str,
        arguments: &Map<String, Value>,
    ) -> Verdict {
        match capability {
            MCP_CAPABILITY => self.check_mcp_tool(tool_name, arguments),
            BACKEND_TOOL_CAPABILITY => {
                let allowed = self
                    .capability(capability)
                    .and_then(|entry| entry.allowed_tool_names.as_ref())
                    .is_some_and(|names| names.iter().any(|name| name == tool_name));
                if self.grants(capability) && !allowed {
                    return Verdict::Denied(format!(
                        "Tool not in allowedToolNames of {BACKEND_TOOL_CAPABILITY}: {tool_name}"
                    ));
                }
                self.check_tool(capability, arguments)
            }
            _ => self.check_tool(capability, arguments),
        }
    }

    fn check_mcp_tool(&self, tool_name: &str, arguments: &Map<String, Value>) -> Verdict {
        let verdict = self.check_tool(MCP_CAPABILITY, arguments);
        if matches!(verdict, Verdict::Denied(_)) {
            return verdict;
        }
        let servers = match ExtensionConfig::from_bundle(self.bundle()) {
            Ok(config) => config.mcp_servers,
            Err(error) => return Verdict::Denied(error.to_string()),
        };
        let Some((server, tool)) = split_mcp_name(tool_name) else {
            return Verdict::Denied(format!("Not an MCP tool name: {tool_name}"));
        };
        let Some(entry) = servers.iter().find(|entry| entry.name == server) else {
            return Verdict::Denied(format!("MCP server not allowed by the policy: {server}"));
        };
        if !entry.allowed_tools.iter().any(|allowed| allowed == tool) {
            return Verdict::Denied(format!("MCP tool not allowed by the policy: {tool_name}"));
        }
        match (verdict, entry.tool_approval_rules.get(tool)) {
            (Verdict::Allowed, Some(rule)) => Verdict::ApprovalRequired {
                rule_id: Some(rule.clone()),
                risk: super::default_risk(MCP_CAPABILITY),
            },
            (Verdict::ApprovalRequired { risk, .. }, Some(rule)) => Verdict::ApprovalRequired {
                rule_id: Some(rule.clone()),
                risk,
            },
            (verdict, _) => verdict,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_protocol::policy::PolicyBundle;
    use serde_json::json;

    fn enforcer(capabilities: Value) -> PolicyEnforcer {
        let bundle: PolicyBundle = serde_json::from_value(json!({
            "policyBundleVersion": "1", "schemaVersion": "1.0", "sessionId": "s",
            "expiresAt": "2099-01-01T00:00:00Z", "capabilities": capabilities
        }))
        .unwrap();
        PolicyEnforcer::new(bundle, None)
    }

    #[test]
    fn mcp_tools_need_the_capability_the_server_and_the_tool_on_the_allowlist() {
        let none = Map::new();
        let policy = enforcer(json!([{"name": "Mcp.Invoke", "mcpServers": [
            {"name": "docs", "endpoint": "https://x", "allowedTools": ["search", "drop"],
             "toolApprovalRules": {"drop": "rule_drop"}}]}]));
        assert_eq!(
            policy.check_named_tool("docs/search", MCP_CAPABILITY, &none),
            Verdict::Allowed
        );
        assert!(matches!(
            policy.check_named_tool("docs/drop", MCP_CAPABILITY, &none),
            Verdict::ApprovalRequired { rule_id: Some(rule), .. } if rule == "rule_drop"
        ));
        for denied in ["docs/other", "mail/search"] {
            assert!(matches!(
                policy.check_named_tool(denied, MCP_CAPABILITY, &none),
                Verdict::Denied(_)
            ));
        }
        let without = enforcer(json!([]));
        assert!(matches!(
            without.check_named_tool("docs/search", MCP_CAPABILITY, &none),
            Verdict::Denied(reason) if reason.contains("Capability not granted")
        ));
    }

    #[test]
    fn backend_tools_must_be_in_allowed_tool_names() {
        let none = Map::new();
        let policy =
            enforcer(json!([{"name": "BackendTool.Invoke", "allowedToolNames": ["Translate"]}]));
        assert_eq!(
            policy.check_named_tool("Translate", BACKEND_TOOL_CAPABILITY, &none),
            Verdict::Allowed
        );
        assert!(matches!(
            policy.check_named_tool("Other", BACKEND_TOOL_CAPABILITY, &none),
            Verdict::Denied(_)
        ));
    }
}
