//! Every message the runtime writes is checked against `agent-schemas`, the source of truth
//! shared with the reference runtime. This module is the kit's only door to those schemas,
//! so a rename there is a one-place change here.

use std::collections::BTreeSet;
use std::sync::OnceLock;

use serde_json::Value;

/// Schema names known to `agent-schemas`, read once.
fn schema_names() -> &'static BTreeSet<String> {
    static NAMES: OnceLock<BTreeSet<String>> = OnceLock::new();
    NAMES.get_or_init(|| agent_schemas::names().map(str::to_owned).collect())
}

/// Whether the schemas describe this method's result (so a response to it can be checked
/// against that result schema, not only the envelope).
pub fn is_known_method(method: &str) -> bool {
    schema_names().contains(&format!("methods/{method}.result"))
}

/// Checks a whole response object against the envelope and, when `method` is known, the
/// method's result schema.
pub fn check_response(method: Option<&str>, response: &Value) -> Result<(), String> {
    let method = method.filter(|m| is_known_method(m));
    agent_schemas::validate_response(method, response).map_err(|e| e.to_string())
}

/// Checks the `params` of a `SessionEvent` notification (envelope and payload).
pub fn check_event(params: &Value) -> Result<(), String> {
    agent_schemas::validate_session_event(params).map_err(|e| e.to_string())
}

/// Checks a value against a schema by name, e.g. `messages/ConversationMessage`.
pub fn check(name: &str, value: &Value) -> Result<(), String> {
    agent_schemas::validate(name, value).map_err(|e| e.to_string())
}

/// Whether a schema of this name exists.
pub fn has_schema(name: &str) -> bool {
    schema_names().contains(name)
}
