//! Policy bundles as the real Session Service serves them (system-design.md §10, INTEROP.md
//! §5), built from a template so a scenario can change any part — including making the
//! bundle wrong on purpose (a foreign `sessionId`, a past `expiresAt`, a missing field).
//!
//! Template rules, applied to every bundle the fake serves:
//! - a string equal to one of the placeholders below, anywhere in the template, is replaced
//!   by the value for this session;
//! - if the template is an object without one of the top-level keys `sessionId`, `tenantId`,
//!   `userId`, `expiresAt`, `policyBundleVersion`, the key is added with its placeholder
//!   (so leaving a key out does not drop it — use [`OMIT`] for that);
//! - an object member or array item equal to [`OMIT`] is removed;
//! - any other value is served as given ("pinned").

use serde_json::{Map, Value, json};

pub const SESSION_ID: &str = "{{sessionId}}";
pub const TENANT_ID: &str = "{{tenantId}}";
pub const USER_ID: &str = "{{userId}}";
pub const WORKSPACE_ID: &str = "{{workspaceId}}";
/// Now plus the fake's bundle lifetime (1 hour unless changed), RFC 3339 with `Z` and µs.
pub const EXPIRES_AT: &str = "{{expiresAt}}";
/// Like `2026-11-22.492b7fde`; changes whenever the template changes.
pub const POLICY_BUNDLE_VERSION: &str = "{{policyBundleVersion}}";
/// Removes the member or array item it is the value of.
pub const OMIT: &str = "{{omit}}";

/// Every scope field of a capability entry as the real Policy Service serves it: it dumps the
/// platform's `Capability` model (cowork-platform `generated/python/cowork_platform/
/// policy_bundle.py`, `extra="forbid"`) without `exclude_none`, so every entry carries all of
/// these, unset ones as `null` (cowork-policy-service `routes/policy_bundles.py`,
/// `services/capability_resolver.py`). Nothing else: members a scenario needs beyond these
/// (`allowedToolNames`, `mcpServers`: the reference runtime's extensions) go in `scope`.
pub const SCOPE_FIELDS: &[&str] = &[
    "allowedPaths",
    "blockedPaths",
    "allowedCommands",
    "blockedCommands",
    "allowedDomains",
    "blockedDomains",
    "maxFileSizeBytes",
    "maxOutputBytes",
    "requiresApproval",
    "approvalRuleId",
    "allowedLanguages",
    "maxExecutionTimeSeconds",
    "allowCodeNetwork",
];

/// The default template: File.Read and File.Write on the workspace (`.env` and `.git/`
/// blocked for writes), LLM.Call, one model, and the shell approval rule.
pub fn default_policy_template() -> Value {
    json!({
        "policyBundleVersion": POLICY_BUNDLE_VERSION,
        "schemaVersion": "1.0",
        "tenantId": TENANT_ID,
        "userId": USER_ID,
        "sessionId": SESSION_ID,
        "expiresAt": EXPIRES_AT,
        "capabilities": [
            capability_entry("File.Read", json!({
                "allowedPaths": ["."],
                "maxFileSizeBytes": 10_485_760,
            })),
            capability_entry("File.Write", json!({
                "allowedPaths": ["."],
                "blockedPaths": [".env", ".git/"],
                "requiresApproval": false,
            })),
            capability_entry("LLM.Call", json!({})),
        ],
        "llmPolicy": {
            "allowedModels": ["gpt-test-1"],
            "maxInputTokens": 64000,
            "maxOutputTokens": 4000,
            "maxSessionTokens": 250000,
        },
        "approvalRules": [{
            "approvalRuleId": "approval_shell_exec",
            "title": "Local command execution",
            "description": "User approval required for shell commands",
        }],
    })
}

/// A capability entry `{name, ...scope}` with every scope field not in `scope` set to
/// `null`, as the real service sends it. Extra fields in `scope` (e.g. `allowedLanguages`)
/// are kept.
pub fn capability_entry(name: &str, scope: Value) -> Value {
    let mut entry = Map::new();
    entry.insert("name".into(), json!(name));
    for field in SCOPE_FIELDS {
        entry.insert((*field).to_string(), Value::Null);
    }
    if let Value::Object(scope) = scope {
        entry.extend(scope);
    }
    Value::Object(entry)
}

/// Replaces the capability of the same name in a template, or appends it.
pub fn set_capability(template: &mut Value, entry: Value) {
    let name = entry.get("name").cloned();
    let Some(capabilities) = capabilities_mut(template) else {
        return;
    };
    match capabilities
        .iter_mut()
        .find(|existing| existing.get("name") == name.as_ref())
    {
        Some(existing) => *existing = entry,
        None => capabilities.push(entry),
    }
}

/// Removes a capability from a template.
pub fn remove_capability(template: &mut Value, name: &str) {
    if let Some(capabilities) = capabilities_mut(template) {
        capabilities.retain(|entry| entry.get("name").and_then(Value::as_str) != Some(name));
    }
}

fn capabilities_mut(template: &mut Value) -> Option<&mut Vec<Value>> {
    let object = template.as_object_mut()?;
    let capabilities = object
        .entry("capabilities")
        .or_insert_with(|| Value::Array(Vec::new()));
    if !capabilities.is_array() {
        *capabilities = Value::Array(Vec::new());
    }
    capabilities.as_array_mut()
}

/// The values the placeholders stand for in one served bundle.
pub(crate) struct BundleValues<'a> {
    pub session_id: &'a str,
    pub workspace_id: &'a str,
    pub tenant_id: &'a str,
    pub user_id: &'a str,
    pub expires_at: String,
    pub version: &'a str,
}

/// Applies the template rules (module docs).
pub(crate) fn render_bundle(template: &Value, values: &BundleValues<'_>) -> Value {
    let mut bundle = template.clone();
    if let Some(object) = bundle.as_object_mut() {
        for (key, placeholder) in [
            ("sessionId", SESSION_ID),
            ("tenantId", TENANT_ID),
            ("userId", USER_ID),
            ("expiresAt", EXPIRES_AT),
            ("policyBundleVersion", POLICY_BUNDLE_VERSION),
        ] {
            object
                .entry(key)
                .or_insert_with(|| Value::String(placeholder.to_string()));
        }
    }
    substitute(&mut bundle, values);
    bundle
}

fn substitute(value: &mut Value, values: &BundleValues<'_>) {
    match value {
        Value::String(text) => {
            let replacement = match text.as_str() {
                SESSION_ID => values.session_id.to_string(),
                WORKSPACE_ID => values.workspace_id.to_string(),
                TENANT_ID => values.tenant_id.to_string(),
                USER_ID => values.user_id.to_string(),
                EXPIRES_AT => values.expires_at.clone(),
                POLICY_BUNDLE_VERSION => values.version.to_string(),
                _ => return,
            };
            *text = replacement;
        }
        Value::Array(items) => {
            items.retain(|item| item.as_str() != Some(OMIT));
            items.iter_mut().for_each(|item| substitute(item, values));
        }
        Value::Object(members) => {
            members.retain(|_, member| member.as_str() != Some(OMIT));
            members
                .values_mut()
                .for_each(|member| substitute(member, values));
        }
        Value::Null | Value::Bool(_) | Value::Number(_) => {}
    }
}

/// A fresh `policyBundleVersion` like `2026-11-22.492b7fde`.
pub(crate) fn new_bundle_version() -> String {
    let today = time::OffsetDateTime::now_utc().date();
    let hex = uuid::Uuid::new_v4().simple().to_string();
    format!(
        "{:04}-{:02}-{:02}.{}",
        today.year(),
        u8::from(today.month()),
        today.day(),
        hex.get(..8).unwrap_or(&hex)
    )
}
