//! The audit and telemetry envelope shared by every component (architecture.md §6.3,
//! system-design.md §14).

use serde::{Deserialize, Serialize};
use serde_json::Value;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Debug,
    Info,
    Warning,
    Error,
    Critical,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AuditEvent {
    pub event_id: String,
    pub event_type: String,
    pub timestamp: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tenant_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step_id: Option<String>,
    /// `LocalAgentHost`, `LocalToolRuntime`, ...
    pub component: String,
    /// `AgentExecution`, `ToolExecution`, ...
    pub bounded_context: String,
    pub severity: Severity,
    pub payload: Value,
}

/// The body of `POST /audit/events` and `POST /telemetry/events` as the reference runtime
/// sends it (schema `audit/AuditEventBatch`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AuditEventBatch {
    pub events: Vec<AuditEvent>,
}
