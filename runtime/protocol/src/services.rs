//! Request and response bodies of the backend services (system-design.md §12, INTEROP.md
//! §3–§4, §6). Responses are parsed leniently: unknown fields are ignored.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::approval::{Decision, RiskLevel};
use crate::message::ConversationMessage;
use crate::methods::{ClientInfo, WorkspaceHint};
use crate::policy::PolicyBundle;
use crate::serde_util::null_as_default;

/// `POST /sessions`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CreateSessionRequest {
    pub tenant_id: String,
    pub user_id: String,
    pub execution_environment: String,
    pub workspace_hint: WorkspaceHint,
    pub client_info: ClientInfo,
    pub supported_capabilities: Vec<String>,
    /// Optional in the schema (INTEROP.md §3 does not list it).
    #[serde(default)]
    pub supported_tools: Vec<String>,
}

/// `201` from `POST /sessions` (also when incompatible).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CreateSessionResponse {
    pub session_id: String,
    pub workspace_id: String,
    pub compatibility_status: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy_bundle: Option<PolicyBundle>,
    #[serde(default, deserialize_with = "null_as_default")]
    pub feature_flags: Map<String, Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub incompatibility_reason: Option<String>,
}

/// `POST /sessions/{id}/resume`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResumeSessionRequest {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checkpoint_cursor: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResumeSessionResponse {
    pub session_id: String,
    pub workspace_id: String,
    pub compatibility_status: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy_bundle: Option<PolicyBundle>,
    /// Fresh session metadata (local-agent-host.md §9.5); absent or null keeps the
    /// session's flags — INTEROP.md §3 does not promise the service sends them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub feature_flags: Option<Map<String, Value>>,
}

/// `POST /sessions/{id}/cancel` (answered 204).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CancelSessionRequest {
    pub reason: String,
}

/// `POST /workspaces/{workspaceId}/artifacts`. `messages` for `session_history`,
/// `contentBase64` for the other artifact types.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ArtifactUploadRequest {
    pub session_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step_id: Option<String>,
    /// `session_history`, `tool_output` or `file_diff`.
    pub artifact_type: String,
    /// Required for `tool_output` and `file_diff` only; left out when empty.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub artifact_name: String,
    /// Required for `tool_output` and `file_diff` only; left out when empty.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub content_type: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content_base64: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub messages: Option<Vec<ConversationMessage>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snapshot_after_task_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snapshot_at: Option<String>,
    #[serde(default)]
    pub metadata: Map<String, Value>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ArtifactUploadResponse {
    pub artifact_id: String,
    pub artifact_uri: String,
}

/// `POST /approvals` (INTEROP.md §6).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ApprovalDecisionRecord {
    pub approval_id: String,
    pub session_id: String,
    pub task_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step_id: Option<String>,
    pub user_id: String,
    pub tenant_id: String,
    pub workspace_id: String,
    pub decision: Decision,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    pub action_summary: String,
    pub risk_level: RiskLevel,
    pub client_timestamp: String,
}

/// `POST /sessions/{id}/register` (INTEROP.md §9): the sandbox announces where it listens.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SandboxRegistrationRequest {
    /// `http://IP:PORT`, where the Session Service's proxy reaches the sandbox.
    pub sandbox_endpoint: String,
    /// `local:<pid>` for a local process, the ECS task ARN in the cloud.
    pub task_arn: String,
    pub registration_token: String,
}

/// The registration's 200 body: the session the sandbox serves, built from this answer
/// (no CreateSession follows).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SandboxRegistrationResponse {
    pub session_id: String,
    pub workspace_id: String,
    /// The Workspace Service the session's files live in; the environment's when absent.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::serde_util::empty_string_as_none"
    )]
    pub workspace_service_url: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy_bundle: Option<PolicyBundle>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub feature_flags: Option<Map<String, Value>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}
