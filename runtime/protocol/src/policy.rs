//! The policy bundle as the Session Service really serves it (system-design.md §10,
//! INTEROP.md §5): capabilities as a list of `{name, ...scope}`, every unset scope field
//! possibly `null`, unknown capabilities and fields tolerated.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::serde_util::null_as_default;

/// The only bundle schema version this runtime understands.
pub const SUPPORTED_SCHEMA_VERSIONS: &[&str] = &["1.0"];

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PolicyBundle {
    pub policy_bundle_version: String,
    pub schema_version: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tenant_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_id: Option<String>,
    pub session_id: String,
    /// RFC 3339; the real service sends `Z` and microseconds.
    pub expires_at: String,
    #[serde(default, deserialize_with = "null_as_default")]
    pub capabilities: Vec<CapabilityEntry>,
    #[serde(default, deserialize_with = "null_as_default")]
    pub llm_policy: LlmPolicy,
    #[serde(default, deserialize_with = "null_as_default")]
    pub approval_rules: Vec<ApprovalRule>,
}

impl PolicyBundle {
    pub fn capability(&self, name: &str) -> Option<&CapabilityEntry> {
        self.capabilities.iter().find(|entry| entry.name == name)
    }
}

/// One granted capability and its scope. A list field that is `None` is "not set" (no
/// constraint); `Some(vec![])` is an explicit empty list.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CapabilityEntry {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allowed_paths: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blocked_paths: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allowed_commands: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blocked_commands: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allowed_domains: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blocked_domains: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allowed_tool_names: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_file_size_bytes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_output_bytes: Option<u64>,
    /// `null` means false (INTEROP.md §5).
    #[serde(default, deserialize_with = "null_as_default")]
    pub requires_approval: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval_rule_id: Option<String>,
    /// Scope fields of capabilities this version does not interpret (`Code.Execute`, ...).
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LlmPolicy {
    #[serde(default, deserialize_with = "null_as_default")]
    pub allowed_models: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_input_tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_output_tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_session_tokens: Option<u64>,
    /// Extra redaction rules for outbound prompts (local-agent-host.md §8.7, Phase 2+).
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub redaction_rules: Vec<RedactionRule>,
}

/// One redaction rule of the policy bundle: matches of `pattern` become `[REDACTED:kind]`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RedactionRule {
    pub kind: String,
    pub pattern: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ApprovalRule {
    pub approval_rule_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn nulls_mean_absent_and_unknown_capabilities_are_kept() {
        let bundle: PolicyBundle = serde_json::from_value(json!({
            "policyBundleVersion": "2026-11-22.492b7fde",
            "schemaVersion": "1.0",
            "sessionId": "s",
            "expiresAt": "2026-11-22T10:00:00.123456Z",
            "capabilities": [
                {"name": "File.Read", "allowedPaths": ["."], "blockedPaths": null,
                 "requiresApproval": null, "approvalRuleId": null},
                {"name": "Code.Execute", "allowedLanguages": ["python"]}
            ],
            "llmPolicy": {"allowedModels": ["m"], "maxInputTokens": null},
            "approvalRules": null
        }))
        .unwrap();
        let read = bundle.capability("File.Read").unwrap();
        assert_eq!(read.blocked_paths, None);
        assert!(!read.requires_approval);
        assert_eq!(
            bundle.capability("Code.Execute").unwrap().extra["allowedLanguages"],
            json!(["python"])
        );
        assert!(bundle.approval_rules.is_empty());
    }
}
