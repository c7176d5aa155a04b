//! The Local State Store checkpoint (local-agent-host.md §9.2).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::approval::ApprovalRequest;
use crate::message::ConversationMessage;
use crate::methods::TaskOptions;
use crate::state::SessionStatus;
use crate::tool::FileChange;

pub const CHECKPOINT_VERSION: &str = "1.0";

/// `task.status` of a task that has not ended — still running, or paused by a recoverable
/// failure: a resumed session reports it as `incompleteTask`.
pub const CHECKPOINT_TASK_RUNNING: &str = "running";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CheckpointTask {
    pub task_id: String,
    pub prompt: String,
    /// `running`, `completed`, `failed` or `cancelled`.
    pub status: String,
    pub step_count: u32,
    pub max_steps: u32,
    /// The task's own options (system-design.md §2a): a task continued after a crash keeps
    /// its approvalMode and allowNetwork, which the continuing StartTask need not repeat.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_options: Option<TaskOptions>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Checkpoint {
    pub checkpoint_version: String,
    pub session_id: String,
    pub workspace_id: String,
    pub tenant_id: String,
    pub user_id: String,
    pub session_status: SessionStatus,
    pub task: Option<CheckpointTask>,
    /// Last completed step; a resumed task continues with the step after it.
    pub step_cursor: Option<String>,
    pub thread: Vec<ConversationMessage>,
    pub session_tokens_used: u64,
    pub policy_bundle_version: String,
    pub checkpointed_at: String,
    #[serde(default)]
    pub pending_approvals: Vec<ApprovalRequest>,
    /// The workspace root the session was created with, needed to rebuild the policy scope.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace_root: Option<String>,
    /// How many times the session was restored in a new process: event ids of a process
    /// start above every id an earlier process can have sent (see [`EVENT_ID_EPOCH_SPAN`]).
    #[serde(default)]
    pub event_id_epoch: u64,
    /// Every write and delete the task's completed steps reported, so GetPatchPreview of a
    /// resumed task still shows what was changed before the crash.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub file_changes: Vec<FileChange>,
    /// What the handshake gave the session for its whole working period (system-design.md
    /// §2a): a session restored in a new process reports and uses the same name, feature
    /// flags, execution environment and OS family (the Session Service's resume answer need not carry
    /// them, INTEROP.md §3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(
        default,
        skip_serializing_if = "Map::is_empty",
        deserialize_with = "crate::serde_util::null_as_default"
    )]
    pub feature_flags: Map<String, Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub execution_environment: Option<String>,
    /// The OS family the desktop app reported (clientInfo.osFamily): the system prompt
    /// names it, and a session keeps one system prompt across a restore.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub os_family: Option<String>,
    /// The ended session this one continues (INTEROP.md §8): after a crash the app goes on
    /// naming it, and the restarted runtime finds this checkpoint by it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub continued_from: Option<String>,
}

/// Event ids one process may use: a process of epoch `e` numbers its events from
/// `e × EVENT_ID_EPOCH_SPAN + 1`. Events sent after the last checkpoint and before a crash
/// are in no checkpoint, so a resumed process cannot continue from the last id it knows;
/// starting a new span keeps ids monotonic per session (INTEROP.md §1) whatever was lost.
pub const EVENT_ID_EPOCH_SPAN: u64 = 1_000_000_000;
