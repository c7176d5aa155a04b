//! The agent loop (local-agent-host.md §4): one background task per StartTask that runs
//! steps — an LLM call, then the tool calls it asked for — until the model answers with
//! text only, the step limit is reached, the task is cancelled, or something fails. Every
//! way out goes through [`finish`], which emits exactly one terminal event.

mod observer;
mod persist;
mod prompt;
mod request;
mod step;
mod tools;

use std::sync::Arc;

use agent_protocol::events::{
    Empty, EventBody, SessionPaused, TaskCancelled, TaskCompleted, TaskFailed, TaskStarted,
};
use agent_protocol::methods::TaskOptions;
use agent_protocol::state::{SessionStatus, TaskStatus};
use agent_protocol::{ErrorCode, ToolRouter};
use tokio_util::sync::CancellationToken;

pub(crate) use crate::backends::Backends;
pub(crate) use crate::session::checkpoint;
pub(crate) use persist::upload_history;
pub(crate) use prompt::system_prompt;
use step::{AfterAnswer, Progress};

use crate::config::HostConfig;
use crate::events::Scope;
use crate::llm::LlmError;
use crate::session::Session;
use crate::thread::Origin;

/// Everything one task run needs.
pub(crate) struct TaskRun {
    pub session: Arc<Session>,
    pub backends: Arc<Backends>,
    pub tools: Arc<dyn ToolRouter>,
    pub config: Arc<HostConfig>,
    pub task_id: String,
    pub prompt: String,
    pub max_steps: u32,
    pub options: TaskOptions,
    pub cancel: CancellationToken,
}

/// Why a task failed: the `reason` of `task_failed` and the task record's
/// `completionReason`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FailureReason {
    MaxStepsExceeded,
    CapabilityDenied,
    RequestUnserialisable,
    BudgetExceeded,
    GuardrailBlocked,
    MaxContinuationsExceeded,
    Unauthorized,
    LlmRejected,
    LlmUnavailable,
    PolicyExpired,
    InternalError,
}

impl FailureReason {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Self::MaxStepsExceeded => "max_steps_exceeded",
            Self::CapabilityDenied => "capability_denied",
            Self::RequestUnserialisable => "request_unserialisable",
            Self::BudgetExceeded => "budget_exceeded",
            Self::GuardrailBlocked => "guardrail_blocked",
            Self::MaxContinuationsExceeded => "max_continuations_exceeded",
            Self::Unauthorized => "unauthorized",
            Self::LlmRejected => "llm_rejected",
            Self::LlmUnavailable => "llm_unavailable",
            Self::PolicyExpired => "policy_expired",
            Self::InternalError => "internal_error",
        }
    }
}

/// How a task ended.
#[derive(Debug, Clone)]
pub(crate) enum Ending {
    Completed {
        result: String,
    },
    Failed {
        reason: FailureReason,
        code: ErrorCode,
        message: String,
        recoverable: bool,
    },
    Cancelled,
}

impl Ending {
    fn failed(
        reason: FailureReason,
        code: ErrorCode,
        message: impl Into<String>,
        recoverable: bool,
    ) -> Self {
        Ending::Failed {
            reason,
            code,
            message: message.into(),
            recoverable,
        }
    }
}

/// Runs the task to its end. The steps run in their own tokio task so that even an
/// unexpected panic still ends the task with a terminal event.
pub(crate) async fn run(run: TaskRun) {
    let run = Arc::new(run);
    let steps = tokio::spawn({
        let run = Arc::clone(&run);
        async move { run.steps().await }
    });
    let ending = match steps.await {
        Ok(ending) => ending,
        Err(error) => Ending::failed(
            FailureReason::InternalError,
            ErrorCode::InternalError,
            format!("The task stopped because of an internal error in the runtime: {error}"),
            false,
        ),
    };
    run.finish(ending).await;
}

pub(crate) use crate::time::millis;

/// The step after which `step_limit_approaching` is emitted: 80% of maxSteps, rounded
/// down, when that is at least 1 and below maxSteps (so never for maxSteps = 1).
pub(crate) fn step_limit_warning_at(max_steps: u32) -> Option<u32> {
    let at = max_steps.saturating_mul(4) / 5;
    (at >= 1 && at < max_steps).then_some(at)
}

impl TaskRun {
    fn emit(&self, scope: Scope, body: EventBody) {
        self.session.events.emit(scope, body);
    }

    fn transition(&self, to: TaskStatus) {
        // Only the loop moves its task's machine, and its arrows are all in the table: a
        // refusal (logged by the session) is a gap in the table, which tests must see.
        let moved = self.session.task_transition(to);
        debug_assert!(moved.is_ok(), "the agent loop's own arrow: {moved:?}");
    }

    fn step_count(&self) -> u32 {
        self.session.step_count()
    }

    /// The steps until the task stops: each opened, its request written, the model
    /// called, then the task ended on the answer or the step's tools run (§4.2).
    async fn steps(&self) -> Ending {
        self.emit(
            Scope::task(&self.task_id),
            EventBody::TaskStarted(TaskStarted {
                prompt: self.prompt.clone(),
                max_steps: self.max_steps,
            }),
        );
        let mut progress = Progress {
            step_number: self.step_count().max(self.session.cursor_number()),
            continuations: 0,
            wires: crate::llm::request::WireCache::default(),
            system_prompt: system_prompt(&self.session.identity),
        };
        loop {
            if let Err(ending) = self.step(&mut progress).await {
                return ending;
            }
        }
    }

    /// One step; `Err` is the task's end.
    async fn step(&self, progress: &mut Progress) -> Result<(), Ending> {
        let step = self.open_step(progress)?;
        let request = self.write_request(&step, progress)?;
        let response = self.call_model(&step, request).await?;
        if response.tool_calls.is_empty() {
            return match self.answered(step, response, progress) {
                AfterAnswer::Continue => Ok(()),
                AfterAnswer::End(ending) => Err(ending),
            };
        }
        progress.continuations = 0;
        self.run_step_tools(step, &response).await;
        Ok(())
    }

    async fn llm_failure(&self, error: LlmError, step_id: &str) -> Ending {
        match error {
            LlmError::Cancelled => Ending::Cancelled,
            LlmError::Guardrail(message) => {
                self.session.add_system_note(
                    &format!("The previous request was blocked by the LLM Gateway's guardrails: {message}"),
                    Origin {
                        task_id: &self.task_id,
                        step_id: Some(step_id),
                    },
                );
                Ending::failed(
                    FailureReason::GuardrailBlocked,
                    ErrorCode::LlmGuardrailBlocked,
                    format!("The LLM Gateway blocked the request: {message}"),
                    false,
                )
            }
            LlmError::Unauthorized { .. } => Ending::failed(
                FailureReason::Unauthorized,
                ErrorCode::Unauthorized,
                error.to_string(),
                false,
            ),
            LlmError::Rejected { .. } => Ending::failed(
                FailureReason::LlmRejected,
                ErrorCode::InvalidRequest,
                error.to_string(),
                false,
            ),
            LlmError::Retryable { reason, .. } => {
                self.checkpoint().await;
                let message = format!(
                    "The LLM Gateway kept failing after {} retries ({reason}); the session is paused and can be resumed.",
                    self.backends.llm.max_retries()
                );
                self.pause("llm_unavailable", &message);
                Ending::failed(
                    FailureReason::LlmUnavailable,
                    ErrorCode::LlmUnavailable,
                    message,
                    true,
                )
            }
        }
    }

    /// The session PAUSED, announced with `session_paused` (once: a session already
    /// paused stays as it is).
    fn pause(&self, reason: &str, message: &str) {
        if self
            .session
            .transition(SessionStatus::SessionPaused)
            .is_ok()
        {
            self.emit(
                Scope::task(&self.task_id),
                EventBody::SessionPaused(SessionPaused {
                    reason: reason.to_owned(),
                    message: message.to_owned(),
                }),
            );
        }
    }

    /// §8.6: the policy expired (seen before an LLM call or a tool call): `policy_expired`,
    /// the session PAUSED (announced with `session_paused`), and the task ends recoverably so
    /// that ResumeSession (a fresh bundle) and StartTask with the same taskId continue it.
    fn policy_expired(&self, scope: &Scope) -> Ending {
        let message = "The session's policy has expired; resume the session to get a fresh policy.";
        self.emit(scope.clone(), EventBody::PolicyExpired(Empty {}));
        self.pause("policy_expired", message);
        Ending::failed(
            FailureReason::PolicyExpired,
            ErrorCode::PolicyExpired,
            message,
            true,
        )
    }

    /// Ends the task: terminal state, checkpoint, history upload, then exactly one
    /// terminal event, then back to IDLE.
    async fn finish(&self, ending: Ending) {
        let step_count = self.step_count();
        let terminal = match &ending {
            Ending::Completed { .. } => TaskStatus::TaskCompleted,
            Ending::Failed { .. } => TaskStatus::TaskFailed,
            Ending::Cancelled => TaskStatus::TaskCancelled,
        };
        let recoverable = matches!(
            ending,
            Ending::Failed {
                recoverable: true,
                ..
            }
        );
        self.session.end_task(terminal, recoverable);
        self.checkpoint().await;
        upload_history(
            &self.session,
            &self.backends,
            Some(&self.task_id),
            Some(&self.task_id),
        )
        .await;
        let cancel_reason = self.session.cancel_reason();
        let (status, reason) = match &ending {
            Ending::Completed { .. } => ("completed", "completed"),
            // A recoverable failure ends the task too (INTEROP.md §8: every task's end is
            // recorded); continuing it with the same taskId records it again.
            Ending::Failed { reason, .. } => ("failed", reason.as_str()),
            Ending::Cancelled => ("cancelled", cancel_reason.as_str()),
        };
        self.session.records.task_ended(
            Arc::clone(&self.backends),
            self.session.id(),
            &self.task_id,
            crate::session::records::Completion {
                status,
                step_count,
                completion_reason: Some(reason.to_owned()),
            },
        );
        let scope = Scope::task(&self.task_id);
        let body = match ending {
            Ending::Completed { result } => {
                EventBody::TaskCompleted(TaskCompleted { step_count, result })
            }
            Ending::Failed {
                reason,
                code,
                message,
                recoverable,
            } => EventBody::TaskFailed(TaskFailed {
                reason: reason.as_str().to_owned(),
                message,
                error_code: code,
                is_recoverable: recoverable,
                step_count,
            }),
            Ending::Cancelled => EventBody::TaskCancelled(TaskCancelled {
                step_count,
                reason: cancel_reason.clone(),
            }),
        };
        self.session.announce_end(|| self.emit(scope, body));
    }

    async fn checkpoint(&self) {
        checkpoint(&self.session, &self.backends.checkpoints).await;
    }
}

#[cfg(test)]
mod tests {
    use super::step_limit_warning_at;

    #[test]
    fn the_step_limit_warning_rule_covers_small_limits() {
        assert_eq!(step_limit_warning_at(1), None);
        assert_eq!(step_limit_warning_at(2), Some(1));
        assert_eq!(step_limit_warning_at(3), Some(2));
        assert_eq!(step_limit_warning_at(5), Some(4));
        assert_eq!(step_limit_warning_at(10), Some(8));
        assert_eq!(step_limit_warning_at(40), Some(32));
    }
}
