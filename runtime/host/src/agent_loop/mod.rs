//! The agent loop (local-agent-host.md §4): one background task per StartTask that runs
//! steps — an LLM call, then the tool calls it asked for — until the model answers with
//! text only, the step limit is reached, the task is cancelled, or something fails. Every
//! way out goes through [`finish`], which emits exactly one terminal event.

mod backends;
mod observer;
mod persist;
mod prompt;
mod request;
mod tools;

use std::sync::Arc;
use std::time::{Duration, Instant};

use agent_protocol::events::*;
use agent_protocol::message::MessageToolCall;
use agent_protocol::methods::TaskOptions;
use agent_protocol::state::{SessionStatus, TaskStatus};
use agent_protocol::{ErrorCode, ToolRouter};
use tokio_util::sync::CancellationToken;

pub use backends::Backends;
use observer::EventObserver;
pub use persist::{checkpoint, upload_history};
pub use prompt::system_prompt;

use crate::config::HostConfig;
use crate::events::Scope;
use crate::llm::client::CallIds;
use crate::llm::{LlmError, StopReason, StreamObserver as _};
use crate::policy::LlmDenial;
use crate::session::Session;
use crate::thread::{Origin, estimate_tokens};

/// Everything one task run needs.
pub struct TaskRun {
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

/// How a task ended.
#[derive(Debug, Clone)]
pub enum Ending {
    Completed {
        result: String,
    },
    Failed {
        reason: &'static str,
        code: ErrorCode,
        message: String,
        recoverable: bool,
    },
    Cancelled,
}

impl Ending {
    fn failed(
        reason: &'static str,
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
pub async fn run(run: TaskRun) {
    let run = Arc::new(run);
    let steps = tokio::spawn({
        let run = Arc::clone(&run);
        async move { run.steps().await }
    });
    let ending = match steps.await {
        Ok(ending) => ending,
        Err(error) => Ending::failed(
            "internal_error",
            ErrorCode::InternalError,
            format!("The task stopped because of an internal error in the runtime: {error}"),
            false,
        ),
    };
    run.finish(ending).await;
}

pub(crate) fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

/// The step after which `step_limit_approaching` is emitted: 80% of maxSteps, rounded
/// down, when that is at least 1 and below maxSteps (so never for maxSteps = 1).
pub fn step_limit_warning_at(max_steps: u32) -> Option<u32> {
    let at = max_steps.saturating_mul(4) / 5;
    (at >= 1 && at < max_steps).then_some(at)
}

impl TaskRun {
    fn emit(&self, scope: Scope, body: EventBody) {
        self.session.events.emit(scope, body);
    }

    fn transition(&self, to: TaskStatus) {
        // Refusals are logged by the session; the loop's own arrows are all in the table.
        let _ = self.session.task_transition(to);
    }

    /// Counts a step as completed and makes it the resume cursor.
    fn complete_step(&self, step_id: &str) -> u32 {
        let mut inner = self.session.lock();
        inner.task.as_mut().map_or(0, |task| {
            task.step_count += 1;
            task.step_cursor = Some(step_id.to_owned());
            task.step_count
        })
    }

    /// The number in the step cursor `step_NNN`, 0 when there is none.
    fn cursor_number(&self) -> u32 {
        self.session
            .lock()
            .task
            .as_ref()
            .and_then(|task| {
                task.step_cursor
                    .as_deref()?
                    .strip_prefix("step_")?
                    .parse()
                    .ok()
            })
            .unwrap_or(0)
    }

    fn step_count(&self) -> u32 {
        self.session
            .lock()
            .task
            .as_ref()
            .map_or(0, |task| task.step_count)
    }

    async fn steps(&self) -> Ending {
        let task_scope = Scope::task(&self.task_id);
        self.emit(
            task_scope.clone(),
            EventBody::TaskStarted(TaskStarted {
                prompt: self.prompt.clone(),
                max_steps: self.max_steps,
            }),
        );
        let system_prompt = system_prompt(&self.session.identity);
        // Step ids stay unique within the task when it is continued (also after a
        // restart, where only the cursor tells how far the numbering went).
        let mut step_number = self.step_count().max(self.cursor_number());
        let mut continuations = 0u32;
        let mut wires = crate::llm::request::WireCache::default();
        loop {
            if self.cancel.is_cancelled() {
                return Ending::Cancelled;
            }
            let step_count = self.step_count();
            if step_count >= self.max_steps {
                return Ending::failed(
                    "max_steps_exceeded",
                    ErrorCode::MaxStepsExceeded,
                    format!(
                        "The task reached its limit of {} steps without finishing.",
                        self.max_steps
                    ),
                    false,
                );
            }
            step_number += 1;
            let step_id = format!("step_{step_number:03}");
            let scope = Scope::step(&self.task_id, &step_id);
            self.emit(
                scope.clone(),
                EventBody::StepStarted(StepStarted {
                    step_id: step_id.clone(),
                    step_number,
                    step_count,
                }),
            );
            self.transition(TaskStatus::WaitingForLlm);
            let policy = self.session.policy();
            match policy.check_llm_call() {
                Ok(()) => {}
                Err(LlmDenial::Expired) => return self.policy_expired(&scope),
                Err(LlmDenial::NotGranted) => {
                    return Ending::failed(
                        "capability_denied",
                        ErrorCode::CapabilityDenied,
                        "The session's policy does not grant LLM.Call, so the model cannot be asked.",
                        false,
                    );
                }
            }
            let mut offered = crate::routing::offered_tools(self.tools.available_tools(), &policy);
            offered.retain(|tool| {
                crate::routing::capability_for(&tool.tool_name).is_none_or(|capability| {
                    crate::policy::task_options::offers(&self.options, capability)
                })
            });
            let llm_policy = &policy.bundle().llm_policy;
            let (body, estimated, dropped) =
                match self.build_request(&mut wires, &system_prompt, &offered, llm_policy) {
                    Ok(request) => request,
                    Err(error) => {
                        return Ending::failed(
                            "request_unserialisable",
                            ErrorCode::InternalError,
                            format!("The request to the model could not be written: {error}"),
                            false,
                        );
                    }
                };
            if let Some(dropped) = dropped {
                self.emit(
                    scope.clone(),
                    EventBody::ContextCompacted(ContextCompacted {
                        messages_dropped: dropped as u64,
                    }),
                );
            }
            let used = self.session.lock().tokens_used;
            if let Some(budget) = llm_policy.max_session_tokens
                && used.saturating_add(estimated) > budget
            {
                return Ending::failed(
                    "budget_exceeded",
                    ErrorCode::LlmBudgetExceeded,
                    format!(
                        "The session's token budget is used up ({used} of {budget} tokens; the next request needs about {estimated})."
                    ),
                    false,
                );
            }
            let model = llm_policy
                .allowed_models
                .first()
                .cloned()
                .unwrap_or_default();
            self.emit(
                scope.clone(),
                EventBody::LlmRequestStarted(LlmRequestStarted {
                    model: model.clone(),
                    estimated_input_tokens: estimated,
                }),
            );
            let started = Instant::now();
            let mut observer = EventObserver {
                session: &self.session,
                scope: scope.clone(),
                streamed_chars: 0,
            };
            let ids = CallIds {
                session_id: self.session.id(),
                task_id: &self.task_id,
                step_id: &step_id,
                redaction_applied: body.redaction_applied,
            };
            let response = match self
                .backends
                .llm
                .complete(&body.json, ids, &mut observer, &self.cancel)
                .await
            {
                Ok(response) => response,
                Err(LlmError::Cancelled) => {
                    // The partial answer never enters the thread; tell the app to drop it.
                    if observer.streamed_chars > 0 {
                        let chars = observer.streamed_chars;
                        observer.discarded("the task was cancelled", chars);
                    }
                    return Ending::Cancelled;
                }
                Err(error) => return self.llm_failure(error, &step_id).await,
            };
            let usage = response.usage;
            let input_tokens = usage.map_or(estimated, |usage| usage.input_tokens);
            let output_tokens = usage.map_or_else(
                || estimate_tokens(&response.text),
                |usage| usage.output_tokens,
            );
            self.emit(
                scope.clone(),
                EventBody::LlmRequestCompleted(LlmRequestCompleted {
                    model,
                    input_tokens,
                    output_tokens,
                    latency_ms: millis(started.elapsed()),
                    stop_reason: response.stop_reason.as_str().to_owned(),
                }),
            );
            self.transition(TaskStatus::ProcessingResponse);
            let origin = Origin {
                task_id: &self.task_id,
                step_id: Some(&step_id),
            };
            {
                let mut inner = self.session.lock();
                let calls = response
                    .tool_calls
                    .iter()
                    .map(|call| MessageToolCall {
                        id: call.id.clone(),
                        name: call.name.clone(),
                        arguments: call.arguments.clone(),
                    })
                    .collect();
                inner.thread.add_assistant(
                    &response.text,
                    calls,
                    usage.map(|u| u.output_tokens),
                    origin,
                );
                inner.tokens_used = inner
                    .tokens_used
                    .saturating_add(input_tokens + output_tokens);
            }
            if response.tool_calls.is_empty() {
                match response.stop_reason {
                    StopReason::Guardrail => {
                        self.session.lock().thread.add_system_note(
                            "The previous answer was withheld by the LLM Gateway's content filter.",
                            origin,
                        );
                        return Ending::failed(
                            "guardrail_blocked",
                            ErrorCode::LlmGuardrailBlocked,
                            "The LLM Gateway's content filter withheld the model's answer.",
                            false,
                        );
                    }
                    StopReason::MaxTokens => {
                        continuations += 1;
                        self.emit(
                            scope.clone(),
                            EventBody::StepCompleted(StepCompleted {
                                step_id,
                                step_count,
                            }),
                        );
                        if continuations > self.config.max_continuations {
                            return Ending::failed(
                                "max_continuations_exceeded",
                                ErrorCode::LlmOutputTruncated,
                                format!(
                                    "The model's answer was cut off by the output token limit {} times in a row.",
                                    continuations
                                ),
                                false,
                            );
                        }
                        self.transition(TaskStatus::TaskRunning);
                        continue;
                    }
                    StopReason::EndTurn | StopReason::ToolUse => {
                        // The answering step is a completed step too: a one-step task
                        // reports stepCount 1.
                        let step_count = self.complete_step(&step_id);
                        self.emit(
                            scope,
                            EventBody::StepCompleted(StepCompleted {
                                step_id,
                                step_count,
                            }),
                        );
                        return Ending::Completed {
                            result: response.text,
                        };
                    }
                }
            }
            continuations = 0;
            self.transition(TaskStatus::CheckingPolicy);
            let results = self.run_tools(&step_id, &response.tool_calls).await;
            {
                let mut inner = self.session.lock();
                for (call, text) in response.tool_calls.iter().zip(results) {
                    inner
                        .thread
                        .add_tool_result(&call.id, &call.name, text, origin);
                }
            }
            let step_count = self.complete_step(&step_id);
            self.checkpoint().await;
            self.emit(
                scope.clone(),
                EventBody::StepCompleted(StepCompleted {
                    step_id: step_id.clone(),
                    step_count,
                }),
            );
            if step_limit_warning_at(self.max_steps) == Some(step_count) {
                self.emit(
                    scope,
                    EventBody::StepLimitApproaching(StepLimitApproaching {
                        current_step: step_count,
                        step_count,
                        max_steps: self.max_steps,
                    }),
                );
            }
            self.transition(TaskStatus::TaskRunning);
        }
    }

    async fn llm_failure(&self, error: LlmError, step_id: &str) -> Ending {
        match error {
            LlmError::Cancelled => Ending::Cancelled,
            LlmError::Guardrail(message) => {
                self.session.lock().thread.add_system_note(
                    &format!("The previous request was blocked by the LLM Gateway's guardrails: {message}"),
                    Origin {
                        task_id: &self.task_id,
                        step_id: Some(step_id),
                    },
                );
                Ending::failed(
                    "guardrail_blocked",
                    ErrorCode::LlmGuardrailBlocked,
                    format!("The LLM Gateway blocked the request: {message}"),
                    false,
                )
            }
            LlmError::Unauthorized { .. } => Ending::failed(
                "unauthorized",
                ErrorCode::Unauthorized,
                error.to_string(),
                false,
            ),
            LlmError::Rejected { .. } => Ending::failed(
                "llm_rejected",
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
                Ending::failed("llm_unavailable", ErrorCode::LlmUnavailable, message, true)
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
        Ending::failed("policy_expired", ErrorCode::PolicyExpired, message, true)
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
        if self.session.task_transition(terminal).is_err() {
            // From a state with no direct arrow (e.g. a panic mid-tools): force it, the task
            // must end whatever happened.
            if let Some(task) = self.session.lock().task.as_mut() {
                task.machine = crate::session::machine::TaskMachine::new();
                let _ = task.machine.transition(TaskStatus::TaskRunning);
                let _ = task.machine.transition(terminal);
            }
        }
        if let Ending::Failed {
            recoverable: true, ..
        } = &ending
            && let Some(task) = self.session.lock().task.as_mut()
        {
            task.incomplete = true;
        }
        self.checkpoint().await;
        upload_history(
            &self.session,
            &self.backends,
            Some(&self.task_id),
            Some(&self.task_id),
        )
        .await;
        let (status, reason) = match &ending {
            Ending::Completed { .. } => ("completed", "completed"),
            // A recoverable failure ends the task too (INTEROP.md §8: every task's end is
            // recorded); continuing it with the same taskId records it again.
            Ending::Failed { reason, .. } => ("failed", *reason),
            Ending::Cancelled => ("cancelled", "cancelled_by_user"),
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
                reason: reason.to_owned(),
                message,
                error_code: code,
                is_recoverable: recoverable,
                step_count,
            }),
            Ending::Cancelled => EventBody::TaskCancelled(TaskCancelled {
                step_count,
                reason: "cancelled_by_user".to_owned(),
            }),
        };
        // The terminal event goes out and the task returns to IDLE under the session lock, so
        // GetSessionState sees the ended task either before its terminal event is out or
        // IDLE after it — never "event out, still TASK_COMPLETED" (REQ-LOOP-020).
        let mut inner = self.session.lock();
        self.emit(scope, body);
        if let Some(task) = inner.task.as_mut()
            && let Err(error) = task.machine.transition(TaskStatus::Idle)
        {
            tracing::error!(%error, "refused a task transition");
        }
    }

    async fn checkpoint(&self) {
        persist::checkpoint(&self.session, &self.backends.checkpoints).await;
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
