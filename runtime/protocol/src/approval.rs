//! ApprovalRequest and decisions (local-agent-host.md §10, system-design.md §13.4).

use serde::{Deserialize, Serialize};
use serde_json::Value;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RiskLevel {
    Low,
    Medium,
    High,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ApprovalRequest {
    pub approval_id: String,
    pub session_id: String,
    pub task_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step_id: Option<String>,
    pub title: String,
    /// What a person reads in the dialog, e.g. `Run: pytest tests/ --verbose`.
    pub action_summary: String,
    pub risk_level: RiskLevel,
    #[serde(default)]
    pub details: Value,
}

/// What the user (or the timeout) decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    Approved,
    Denied,
    /// No answer within APPROVAL_TIMEOUT_SECONDS: treated as denied, recorded apart.
    TimedOut,
    /// The task was cancelled while the approval was pending.
    Cancelled,
}
