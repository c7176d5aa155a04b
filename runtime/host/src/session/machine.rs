//! The two-level state machine (local-agent-host.md §3.3). Every transition goes through
//! `transition`, which checks it against the one table of allowed arrows per level; an
//! arrow not in the table is refused loudly instead of silently corrupting the state.

use agent_protocol::state::{SessionStatus, TaskStatus};

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("illegal {level} transition {from:?} -> {to:?}")]
pub struct IllegalTransition {
    pub level: &'static str,
    pub from: String,
    pub to: String,
}

/// The session-level arrows of the §3.3 table.
pub fn session_transition_allowed(from: SessionStatus, to: SessionStatus) -> bool {
    use SessionStatus::*;
    matches!(
        (from, to),
        (SessionCreated, SessionRunning)
            | (SessionCreated, SessionFailed)
            | (SessionRunning, SessionPaused)
            | (SessionPaused, SessionRunning)
            | (SessionPaused, SessionCancelled)
            | (SessionRunning, SessionCompleted)
            | (SessionRunning, SessionCancelled)
            | (SessionRunning, SessionFailed)
    )
}

/// The task-level arrows of the §3.3 diagram, plus the failure and cancellation arrows the
/// diagram implies from every waiting state (an LLM error while streaming, a cancellation
/// while waiting for the model).
pub fn task_transition_allowed(from: TaskStatus, to: TaskStatus) -> bool {
    use TaskStatus::*;
    matches!(
        (from, to),
        (Idle, TaskRunning)
            | (TaskRunning, WaitingForLlm)
            | (TaskRunning, TaskFailed)
            | (TaskRunning, TaskCancelled)
            | (TaskRunning, TaskCompleted)
            | (WaitingForLlm, ProcessingResponse)
            | (WaitingForLlm, TaskFailed)
            | (WaitingForLlm, TaskCancelled)
            | (ProcessingResponse, TaskCompleted)
            | (ProcessingResponse, CheckingPolicy)
            | (ProcessingResponse, TaskRunning)
            | (ProcessingResponse, TaskFailed)
            | (CheckingPolicy, WaitingForApproval)
            | (CheckingPolicy, ExecutingTools)
            | (CheckingPolicy, TaskFailed)
            | (WaitingForApproval, ExecutingTools)
            | (ExecutingTools, TaskRunning)
            | (ExecutingTools, TaskFailed)
            | (TaskCompleted, Idle)
            | (TaskFailed, Idle)
            | (TaskCancelled, Idle)
    )
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SessionMachine {
    status: SessionStatus,
}

impl SessionMachine {
    pub fn new() -> Self {
        Self {
            status: SessionStatus::SessionCreated,
        }
    }

    pub fn status(&self) -> SessionStatus {
        self.status
    }

    pub fn transition(&mut self, to: SessionStatus) -> Result<(), IllegalTransition> {
        if session_transition_allowed(self.status, to) {
            self.status = to;
            Ok(())
        } else {
            Err(IllegalTransition {
                level: "session",
                from: format!("{:?}", self.status),
                to: format!("{to:?}"),
            })
        }
    }
}

impl Default for SessionMachine {
    fn default() -> Self {
        Self::new()
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TaskMachine {
    status: TaskStatus,
}

impl TaskMachine {
    pub fn new() -> Self {
        Self {
            status: TaskStatus::Idle,
        }
    }

    pub fn status(&self) -> TaskStatus {
        self.status
    }

    pub fn transition(&mut self, to: TaskStatus) -> Result<(), IllegalTransition> {
        if task_transition_allowed(self.status, to) {
            self.status = to;
            Ok(())
        } else {
            Err(IllegalTransition {
                level: "task",
                from: format!("{:?}", self.status),
                to: format!("{to:?}"),
            })
        }
    }
}

impl Default for TaskMachine {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use TaskStatus::*;

    #[test]
    fn the_happy_path_of_a_task_is_legal() {
        let mut task = TaskMachine::new();
        for to in [
            TaskRunning,
            WaitingForLlm,
            ProcessingResponse,
            CheckingPolicy,
            WaitingForApproval,
            ExecutingTools,
            TaskRunning,
            WaitingForLlm,
            ProcessingResponse,
            TaskCompleted,
            Idle,
        ] {
            task.transition(to).unwrap();
        }
    }

    #[test]
    fn arrows_outside_the_table_are_refused() {
        let mut task = TaskMachine::new();
        assert!(task.transition(ExecutingTools).is_err());
        assert_eq!(task.status(), Idle, "a refused transition changes nothing");
        let mut session = SessionMachine::new();
        assert!(session.transition(SessionStatus::SessionPaused).is_err());
        session.transition(SessionStatus::SessionRunning).unwrap();
        session.transition(SessionStatus::SessionCompleted).unwrap();
        assert!(session.transition(SessionStatus::SessionRunning).is_err());
    }
}
