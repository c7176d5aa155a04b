//! Tools that do not ship with the runtime (local-tool-runtime.md §9, local-agent-host.md
//! §7.6): remote MCP servers and the Backend Tool Service. The host reads their settings
//! from the policy bundle and hands them to the tool runtime, which never reads the bundle.
//!
//! ## Where MCP servers come from
//!
//! The policy bundle's `Mcp.Invoke` capability entry carries the servers a session may use:
//!
//! ```json
//! { "name": "Mcp.Invoke", "requiresApproval": false, "approvalRuleId": null,
//!   "mcpServers": [
//!     { "name": "docs", "endpoint": "https://mcp.example.com/mcp",
//!       "bearerToken": "…", "allowedTools": ["search", "fetch"],
//!       "toolApprovalRules": { "fetch": "rule_mcp_fetch" } } ] }
//! ```
//!
//! Only the servers listed are contacted, and only their `allowedTools` are registered, as
//! `{serverName}/{toolName}`. Without the capability no server is contacted at all. A tool
//! named in `toolApprovalRules` needs approval under that rule (title and description from
//! `approvalRules`); `requiresApproval` on the entry makes every MCP tool need it.
//!
//! ## Names the model sees
//!
//! The OpenAI tools API accepts function names matching `^[A-Za-z0-9_-]{1,64}$`, so `/` is
//! not allowed. On the wire to the gateway `{server}/{tool}` is written `{server}__{tool}`
//! ([`to_wire_name`]) and read back by [`from_wire_name`]; everywhere else (events,
//! approvals, policy, the thread) the name is `{server}/{tool}`. Server names therefore may
//! not contain `__`.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::policy::PolicyBundle;

/// The capability that grants MCP tools.
pub const MCP_CAPABILITY: &str = "Mcp.Invoke";
/// The capability that grants Backend Tool Service tools (local-agent-host.md §7.2).
pub const BACKEND_TOOL_CAPABILITY: &str = "BackendTool.Invoke";
/// Separates server and tool in an MCP tool's name.
pub const MCP_NAME_SEPARATOR: char = '/';
/// What [`MCP_NAME_SEPARATOR`] becomes in the name sent to the LLM gateway.
pub const WIRE_NAME_SEPARATOR: &str = "__";
/// The longest function name the OpenAI tools API accepts.
pub const MAX_WIRE_NAME_LEN: usize = 64;

/// One MCP server a session may use (the `mcpServers` entries of `Mcp.Invoke`).
#[derive(Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct McpServerConfig {
    pub name: String,
    /// The streamable-HTTP endpoint; `https` (plain `http` only to loopback in test mode).
    pub endpoint: String,
    /// Sent as `Authorization: Bearer …`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bearer_token: Option<String>,
    /// Tool names as the server knows them (without the server prefix).
    #[serde(default)]
    pub allowed_tools: Vec<String>,
    /// Tool name (without prefix) → approval rule id.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub tool_approval_rules: std::collections::BTreeMap<String, String>,
}

// The token never reaches a log through `{:?}`.
impl std::fmt::Debug for McpServerConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpServerConfig")
            .field("name", &self.name)
            .field("endpoint", &self.endpoint)
            .field(
                "bearer_token",
                &self.bearer_token.as_ref().map(|_| "<redacted>"),
            )
            .field("allowed_tools", &self.allowed_tools)
            .field("tool_approval_rules", &self.tool_approval_rules)
            .finish()
    }
}

/// What the tool runtime needs to set up a session's extension tools.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ExtensionConfig {
    pub mcp_servers: Vec<McpServerConfig>,
    /// Tool names the Backend Tool Service may run (`BackendTool.Invoke.allowedToolNames`).
    pub backend_tools: Vec<String>,
}

/// Something a person should know about the extensions: a server that could not be
/// reached, a tool whose manifest was rejected. The host reports each as a `warning` event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExtensionNotice {
    pub message: String,
}

/// Why an `mcpServers` entry could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("The policy's Mcp.Invoke entry has an invalid mcpServers list: {0}")]
pub struct McpConfigError(pub String);

impl ExtensionConfig {
    /// The extension settings of `bundle`; a malformed `mcpServers` list is an error, so a
    /// typo never silently disables (or widens) what the policy meant.
    pub fn from_bundle(bundle: &PolicyBundle) -> Result<Self, McpConfigError> {
        let mcp_servers = match bundle
            .capability(MCP_CAPABILITY)
            .and_then(|entry| entry.extra.get("mcpServers"))
        {
            None | Some(Value::Null) => Vec::new(),
            Some(list) => serde_json::from_value::<Vec<McpServerConfig>>(list.clone())
                .map_err(|error| McpConfigError(error.to_string()))?,
        };
        for server in &mcp_servers {
            if !valid_server_name(&server.name) {
                return Err(McpConfigError(format!(
                    "server name \"{}\" must be 1–32 characters of A–Z, a–z, 0–9, '-' or '_' without \"__\"",
                    server.name
                )));
            }
        }
        let backend_tools = bundle
            .capability(BACKEND_TOOL_CAPABILITY)
            .and_then(|entry| entry.allowed_tool_names.clone())
            .unwrap_or_default();
        Ok(Self {
            mcp_servers,
            backend_tools,
        })
    }

    pub fn is_empty(&self) -> bool {
        self.mcp_servers.is_empty() && self.backend_tools.is_empty()
    }
}

fn valid_server_name(name: &str) -> bool {
    (1..=32).contains(&name.len())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        && !name.contains(WIRE_NAME_SEPARATOR)
}

/// `{server}/{tool}` → the server and tool, for names that are MCP tool names.
pub fn split_mcp_name(name: &str) -> Option<(&str, &str)> {
    name.split_once(MCP_NAME_SEPARATOR)
        .filter(|(server, tool)| !server.is_empty() && !tool.is_empty())
}

/// The name sent to the LLM gateway for a tool (identity for built-in tools).
pub fn to_wire_name(name: &str) -> String {
    match split_mcp_name(name) {
        Some((server, tool)) => format!("{server}{WIRE_NAME_SEPARATOR}{tool}"),
        None => name.to_owned(),
    }
}

/// The tool name for a name the model used (inverse of [`to_wire_name`]).
pub fn from_wire_name(wire: &str) -> String {
    match wire.split_once(WIRE_NAME_SEPARATOR) {
        Some((server, tool)) if !server.is_empty() && !tool.is_empty() => {
            format!("{server}{MCP_NAME_SEPARATOR}{tool}")
        }
        _ => wire.to_owned(),
    }
}

/// Whether the OpenAI tools API accepts `wire` as a function name.
pub fn is_valid_wire_name(wire: &str) -> bool {
    (1..=MAX_WIRE_NAME_LEN).contains(&wire.len())
        && wire
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn bundle(capabilities: Value) -> PolicyBundle {
        serde_json::from_value(json!({
            "policyBundleVersion": "1", "schemaVersion": "1.0", "sessionId": "s",
            "expiresAt": "2099-01-01T00:00:00Z", "capabilities": capabilities
        }))
        .unwrap()
    }

    #[test]
    fn servers_and_backend_tools_are_read_from_their_capabilities() {
        let config = ExtensionConfig::from_bundle(&bundle(json!([
            {"name": "Mcp.Invoke", "mcpServers": [
                {"name": "docs", "endpoint": "https://x/mcp", "bearerToken": "t",
                 "allowedTools": ["search"], "toolApprovalRules": {"search": "r1"}}]},
            {"name": "BackendTool.Invoke", "allowedToolNames": ["Translate"]}
        ])))
        .unwrap();
        assert_eq!(config.mcp_servers.len(), 1);
        assert_eq!(config.mcp_servers[0].allowed_tools, ["search"]);
        assert_eq!(config.mcp_servers[0].tool_approval_rules["search"], "r1");
        assert_eq!(config.backend_tools, ["Translate"]);
        assert!(!format!("{:?}", config).contains("\"t\""));
        assert!(
            ExtensionConfig::from_bundle(&bundle(json!([])))
                .unwrap()
                .is_empty()
        );
    }

    #[test]
    fn malformed_servers_and_unsafe_names_are_refused() {
        for servers in [
            json!([{"name": "docs"}]),
            json!("docs"),
            json!([{"name": "a__b", "endpoint": "https://x"}]),
            json!([{"name": "a/b", "endpoint": "https://x"}]),
            json!([{"name": "", "endpoint": "https://x"}]),
        ] {
            let result = ExtensionConfig::from_bundle(&bundle(
                json!([{"name": "Mcp.Invoke", "mcpServers": servers}]),
            ));
            assert!(result.is_err(), "{servers}");
        }
    }

    #[test]
    fn wire_names_round_trip_and_built_in_names_are_untouched() {
        assert_eq!(to_wire_name("docs/search"), "docs__search");
        assert_eq!(from_wire_name("docs__search"), "docs/search");
        assert_eq!(from_wire_name("docs__my__tool"), "docs/my__tool");
        assert_eq!(to_wire_name("ReadFile"), "ReadFile");
        assert_eq!(from_wire_name("ReadFile"), "ReadFile");
        assert!(is_valid_wire_name("docs__search"));
        assert!(!is_valid_wire_name("docs/search"));
        assert!(!is_valid_wire_name(&"a".repeat(65)));
        assert!(!is_valid_wire_name("a.b"));
    }
}
