//! The two-level state machine (local-agent-host.md §3.3). Every transition goes through
//! `transition`, which checks it against the one table of allowed arrows per level; an
//! arrow not in the table is refused loudly instead of silently corrupting the state.

use agent_protocol::state::{SessionStatus, TaskStatus};

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("illegal {level} transition {from:?} -> {to:?}")]
pub(crate) struct IllegalTransition {
    pub level: &'static str,
    pub from: String,
    pub to: String,
}

/// The session-level arrows of the §3.3 table.
pub(crate) fn session_transition_allowed(from: SessionStatus, to: SessionStatus) -> bool {
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
pub(crate) fn task_transition_allowed(from: TaskStatus, to: TaskStatus) -> bool {
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

/// One level of the state machine: its states, its first state and its table of arrows.
pub(crate) trait Level: Copy + Eq + std::fmt::Debug {
    const NAME: &'static str;
    const INITIAL: Self;
    fn allowed(from: Self, to: Self) -> bool;
}

impl Level for SessionStatus {
    const NAME: &'static str = "session";
    const INITIAL: Self = SessionStatus::SessionCreated;
    fn allowed(from: Self, to: Self) -> bool {
        session_transition_allowed(from, to)
    }
}

impl Level for TaskStatus {
    const NAME: &'static str = "task";
    const INITIAL: Self = TaskStatus::Idle;
    fn allowed(from: Self, to: Self) -> bool {
        task_transition_allowed(from, to)
    }
}

/// A state that changes only along the arrows of its level's table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Machine<S: Level> {
    status: S,
}

pub(crate) type SessionMachine = Machine<SessionStatus>;
pub(crate) type TaskMachine = Machine<TaskStatus>;

impl<S: Level> Machine<S> {
    pub(crate) fn new() -> Self {
        Self { status: S::INITIAL }
    }

    pub(crate) fn status(&self) -> S {
        self.status
    }

    pub(crate) fn transition(&mut self, to: S) -> Result<(), IllegalTransition> {
        if S::allowed(self.status, to) {
            self.status = to;
            Ok(())
        } else {
            Err(IllegalTransition {
                level: S::NAME,
                from: format!("{:?}", self.status),
                to: format!("{to:?}"),
            })
        }
    }
}

impl<S: Level> Default for Machine<S> {
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
