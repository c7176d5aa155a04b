//! The two levels of the state machine as they appear on the wire (local-agent-host.md §3.3).
//! The transition rules live in the agent host; these are only the names.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum SessionStatus {
    SessionCreated,
    SessionRunning,
    SessionPaused,
    SessionCompleted,
    SessionFailed,
    SessionCancelled,
}

impl SessionStatus {
    pub fn is_terminal(self) -> bool {
        matches!(
            self,
            SessionStatus::SessionCompleted
                | SessionStatus::SessionFailed
                | SessionStatus::SessionCancelled
        )
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum TaskStatus {
    Idle,
    TaskRunning,
    WaitingForLlm,
    ProcessingResponse,
    CheckingPolicy,
    WaitingForApproval,
    ExecutingTools,
    TaskCompleted,
    TaskFailed,
    TaskCancelled,
}

impl TaskStatus {
    pub fn is_terminal(self) -> bool {
        matches!(
            self,
            TaskStatus::TaskCompleted | TaskStatus::TaskFailed | TaskStatus::TaskCancelled
        )
    }

    /// A task in this state occupies the session: a new StartTask must wait for it.
    pub fn is_active(self) -> bool {
        !self.is_terminal() && self != TaskStatus::Idle
    }
}
