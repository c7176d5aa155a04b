//! Params and results of the JSON-RPC methods (architecture.md §6.1, INTEROP.md §1).
//! A missing `params` is read as `{}`, so every params type must accept an empty object
//! where the method allows it.

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};

use crate::approval::Decision;
use crate::events::SessionEvent;
use crate::serde_util::null_as_default;
use crate::state::{SessionStatus, TaskStatus};

pub const CREATE_SESSION: &str = "CreateSession";
pub const START_TASK: &str = "StartTask";
pub const CANCEL_TASK: &str = "CancelTask";
pub const RESUME_SESSION: &str = "ResumeSession";
pub const GET_SESSION_STATE: &str = "GetSessionState";
pub const GET_PATCH_PREVIEW: &str = "GetPatchPreview";
pub const APPROVE_ACTION: &str = "ApproveAction";
pub const SHUTDOWN: &str = "Shutdown";
pub const GET_EVENTS: &str = "GetEvents";
/// Sandbox mode only (INTEROP.md §9): sent by the Session Service after a file upload.
pub const WORKSPACE_SYNC: &str = "workspace.sync";

pub const ALL: &[&str] = &[
    CREATE_SESSION,
    START_TASK,
    CANCEL_TASK,
    RESUME_SESSION,
    GET_SESSION_STATE,
    GET_PATCH_PREVIEW,
    APPROVE_ACTION,
    SHUTDOWN,
    GET_EVENTS,
];

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WorkspaceHint {
    #[serde(default, deserialize_with = "null_as_default")]
    pub local_paths: Vec<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClientInfo {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub desktop_app_version: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub local_agent_host_version: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub os_family: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub os_version: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CreateSessionParams {
    pub user_id: String,
    pub tenant_id: String,
    #[serde(
        default = "default_execution_environment",
        deserialize_with = "execution_environment_or_default"
    )]
    pub execution_environment: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace_hint: Option<WorkspaceHint>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_info: Option<ClientInfo>,
    #[serde(default, deserialize_with = "null_as_default")]
    pub supported_capabilities: Vec<String>,
    /// Continue a past conversation (system-design.md §2a): the ended session whose
    /// `session_history` seeds this session's thread.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub continue_from_session_id: Option<String>,
}

fn default_execution_environment() -> String {
    "desktop".to_owned()
}

/// `null` means absent (INTEROP.md): the default environment.
fn execution_environment_or_default<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<String, D::Error> {
    Ok(Option::<String>::deserialize(deserializer)?.unwrap_or_else(default_execution_environment))
}

/// Result of CreateSession and ResumeSession.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionReadyResult {
    pub session_id: String,
    pub workspace_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub log_dir: Option<String>,
    pub status: SessionStatus,
    pub compatibility_status: String,
    pub policy_bundle_version: String,
    #[serde(default)]
    pub feature_flags: Map<String, Value>,
    /// ResumeSession of an ended session continued in a new one (INTEROP.md §8).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub continued_from_session_id: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ApprovalMode {
    Always,
    OnRiskyActions,
    Never,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskOptions {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_steps: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allow_network: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval_mode: Option<ApprovalMode>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StartTaskParams {
    pub session_id: String,
    /// Optional: the runtime generates a UUID-based id when absent. Passing the id of an
    /// incomplete task resumes it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_id: Option<String>,
    pub prompt: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_options: Option<TaskOptions>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StartTaskResult {
    pub task_id: String,
    /// Always `running`: the task goes on in the background.
    pub status: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CancelTaskParams {
    pub session_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_id: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CancelTaskResult {
    /// Optional in the schema (the spec does not define this result): left out when empty.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub task_id: String,
    /// `cancelling`: the task ends at its next safe point with `task_cancelled`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub status: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResumeSessionParams {
    pub session_id: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GetSessionStateParams {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskState {
    pub task_id: String,
    pub status: TaskStatus,
    pub step_count: u32,
    pub max_steps: u32,
}

/// What the app offers to resume after a crash.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct IncompleteTask {
    pub task_id: String,
    pub prompt: String,
    pub last_step: u32,
    pub max_steps: u32,
}

/// GetSessionState: the spec's two levels plus the flat fields the desktop app reads.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionStateResult {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace_id: Option<String>,
    pub session_status: SessionStatus,
    pub task: Option<TaskState>,
    /// Same as `sessionStatus` (desktop app name).
    pub status: SessionStatus,
    pub current_task_id: Option<String>,
    pub step_count: u32,
    pub session_tokens_used: u64,
    pub max_session_tokens: Option<u64>,
    pub incomplete_task: Option<IncompleteTask>,
    /// What confines the processes the tools start.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<crate::sandbox::SandboxStatus>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GetPatchPreviewParams {
    pub session_id: String,
    pub task_id: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FileChangeStatus {
    Added,
    Modified,
    Deleted,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FilePatch {
    pub file_path: String,
    pub status: FileChangeStatus,
    /// Unified-diff text from the first `@@` (no `---`/`+++` header lines).
    pub hunks: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PatchPreviewResult {
    pub task_id: String,
    pub files: Vec<FilePatch>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ApproveActionParams {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    pub approval_id: String,
    /// `approved` or `denied`.
    pub decision: Decision,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// ApproveAction never fails (INTEROP.md §1); the status says what happened.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ApproveActionStatus {
    Accepted,
    NotFound,
    AlreadyResolved,
    Expired,
    /// `decision` was neither `approved` nor `denied`; nothing changed.
    InvalidDecision,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ApproveActionResult {
    /// Optional in the schema (INTEROP.md §1 asks only for a status): left out when empty.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub approval_id: String,
    pub status: ApproveActionStatus,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ShutdownResult {
    /// `shutting_down`. Optional in the schema (the spec does not define this result): left
    /// out when empty.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub status: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GetEventsParams {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub since_id: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GetEventsResult {
    pub events: Vec<SessionEvent>,
    /// Events after `sinceId` were dropped from the ring before this call.
    pub gap_detected: bool,
    pub latest_id: u64,
}

/// `workspace.sync` (INTEROP.md §9): `pull` copies the Workspace Service's files into the
/// sandbox's workspace folder, `push` the folder's files to the service. No `paths` (or an
/// empty list) means every file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WorkspaceSyncParams {
    pub direction: SyncDirection,
    #[serde(default, deserialize_with = "null_as_default")]
    pub paths: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SyncDirection {
    Pull,
    Push,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WorkspaceSyncResult {
    pub direction: SyncDirection,
    /// Workspace-relative paths copied.
    pub synced: Vec<String>,
    pub failed: Vec<SyncFailure>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SyncFailure {
    pub path: String,
    pub message: String,
}
