//! One step of the agent loop (local-agent-host.md §4.2), in its phases: open the step,
//! write the model request within the policy, call the model, then either end the task
//! on its answer or run the tools it asked for. Each phase returns the task's [`Ending`]
//! when the task stops there, so the loop reads as the spec's algorithm.

use std::time::Instant;

use agent_protocol::ErrorCode;
use agent_protocol::events::{
    ContextCompacted, EventBody, LlmRequestCompleted, LlmRequestStarted, StepCompleted,
    StepLimitApproaching, StepStarted,
};
use agent_protocol::state::TaskStatus;

use super::observer::EventObserver;
use super::{Ending, FailureReason, TaskRun, millis, step_limit_warning_at};
use crate::events::Scope;
use crate::llm::LlmResponse;
use crate::llm::client::CallIds;
use crate::llm::request::{RequestBody, WireCache};
use crate::llm::{LlmError, StopReason, StreamObserver as _};
use crate::policy::LlmDenial;
use crate::thread::{Origin, estimate_tokens};

/// The step under way.
pub(super) struct Step {
    pub id: String,
    pub scope: Scope,
    /// Steps completed before this one.
    pub completed_before: u32,
}

/// What the loop carries from one step to the next.
pub(super) struct Progress {
    /// The last step number used: step ids stay unique within the task when it is
    /// continued (also after a restart, where only the cursor tells how far it went).
    pub step_number: u32,
    /// Answers cut off by the output token limit in a row.
    pub continuations: u32,
    pub wires: WireCache,
    pub system_prompt: String,
}

/// A request ready to send.
pub(super) struct Request {
    body: RequestBody,
    estimated: u64,
    model: String,
}

/// Where a model answer without tool calls leads.
pub(super) enum AfterAnswer {
    /// Cut off by the output token limit: ask again in a new step.
    Continue,
    End(Ending),
}

impl TaskRun {
    /// Opens the next step (`step_started`, WAITING_FOR_LLM), unless the task was
    /// cancelled or has used up its steps.
    pub(super) fn open_step(&self, progress: &mut Progress) -> Result<Step, Ending> {
        if self.cancel.is_cancelled() {
            return Err(Ending::Cancelled);
        }
        let completed_before = self.step_count();
        if completed_before >= self.max_steps {
            return Err(Ending::failed(
                FailureReason::MaxStepsExceeded,
                ErrorCode::MaxStepsExceeded,
                format!(
                    "The task reached its limit of {} steps without finishing.",
                    self.max_steps
                ),
                false,
            ));
        }
        progress.step_number += 1;
        let step_number = progress.step_number;
        let id = format!("step_{step_number:03}");
        let scope = Scope::step(&self.task_id, &id);
        self.emit(
            scope.clone(),
            EventBody::StepStarted(StepStarted {
                step_id: id.clone(),
                step_number,
                step_count: completed_before,
            }),
        );
        self.transition(TaskStatus::WaitingForLlm);
        Ok(Step {
            id,
            scope,
            completed_before,
        })
    }

    /// The model request of `step`: the policy must grant the call (§8.6), the tools the
    /// policy and the task's options offer, the thread within the context limits and the
    /// session's token budget. Announced with `llm_request_started`.
    pub(super) fn write_request(
        &self,
        step: &Step,
        progress: &mut Progress,
    ) -> Result<Request, Ending> {
        let policy = self.session.policy();
        match policy.check_llm_call() {
            Ok(()) => {}
            Err(LlmDenial::Expired) => return Err(self.policy_expired(&step.scope)),
            Err(LlmDenial::NotGranted) => {
                return Err(Ending::failed(
                    FailureReason::CapabilityDenied,
                    ErrorCode::CapabilityDenied,
                    "The session's policy does not grant LLM.Call, so the model cannot be asked.",
                    false,
                ));
            }
        }
        let mut offered = crate::routing::offered_tools(self.tools.available_tools(), &policy);
        offered.retain(|tool| {
            crate::routing::capability_in(&tool.tool_name, &policy).is_none_or(|capability| {
                crate::policy::task_options::offers(&self.options, capability)
            })
        });
        let llm_policy = &policy.bundle().llm_policy;
        let (body, estimated, dropped) = self
            .build_request(
                &mut progress.wires,
                &progress.system_prompt,
                &offered,
                llm_policy,
            )
            .map_err(|error| {
                Ending::failed(
                    FailureReason::RequestUnserialisable,
                    ErrorCode::InternalError,
                    format!("The request to the model could not be written: {error}"),
                    false,
                )
            })?;
        if let Some(dropped) = dropped {
            self.emit(
                step.scope.clone(),
                EventBody::ContextCompacted(ContextCompacted {
                    messages_dropped: dropped as u64,
                }),
            );
        }
        let used = self.session.tokens_used();
        if let Some(budget) = llm_policy.max_session_tokens
            && used.saturating_add(estimated) > budget
        {
            return Err(Ending::failed(
                FailureReason::BudgetExceeded,
                ErrorCode::LlmBudgetExceeded,
                format!(
                    "The session's token budget is used up ({used} of {budget} tokens; the next request needs about {estimated})."
                ),
                false,
            ));
        }
        let model = llm_policy
            .allowed_models
            .first()
            .cloned()
            .unwrap_or_default();
        self.emit(
            step.scope.clone(),
            EventBody::LlmRequestStarted(LlmRequestStarted {
                model: model.clone(),
                estimated_input_tokens: estimated,
            }),
        );
        Ok(Request {
            body,
            estimated,
            model,
        })
    }

    /// Streams the model's answer (text forwarded as it comes, §6.3) and records it in the
    /// thread with the tokens it cost; `llm_request_completed`, then PROCESSING_RESPONSE.
    pub(super) async fn call_model(
        &self,
        step: &Step,
        request: Request,
    ) -> Result<LlmResponse, Ending> {
        let started = Instant::now();
        let mut observer = EventObserver {
            session: &self.session,
            scope: step.scope.clone(),
            streamed_chars: 0,
        };
        let ids = CallIds {
            session_id: self.session.id(),
            task_id: &self.task_id,
            step_id: &step.id,
            redaction_applied: request.body.redaction_applied,
        };
        let response = match self
            .backends
            .llm
            .complete(&request.body.json, ids, &mut observer, &self.cancel)
            .await
        {
            Ok(response) => response,
            Err(LlmError::Cancelled) => {
                // The partial answer never enters the thread; tell the app to drop it.
                if observer.streamed_chars > 0 {
                    let chars = observer.streamed_chars;
                    observer.discarded("the task was cancelled", chars);
                }
                return Err(Ending::Cancelled);
            }
            Err(error) => return Err(self.llm_failure(error, &step.id).await),
        };
        let usage = response.usage;
        let input_tokens = usage.map_or(request.estimated, |usage| usage.input_tokens);
        let output_tokens = usage.map_or_else(
            || estimate_tokens(&response.text),
            |usage| usage.output_tokens,
        );
        self.emit(
            step.scope.clone(),
            EventBody::LlmRequestCompleted(LlmRequestCompleted {
                model: request.model,
                input_tokens,
                output_tokens,
                latency_ms: millis(started.elapsed()),
                stop_reason: response.stop_reason.as_str().to_owned(),
            }),
        );
        self.transition(TaskStatus::ProcessingResponse);
        self.session.record_answer(
            &response,
            input_tokens + output_tokens,
            self.origin(&step.id),
        );
        Ok(response)
    }

    /// An answer without tool calls: the task's end, unless the output token limit cut
    /// it off and the task may ask again.
    pub(super) fn answered(
        &self,
        step: Step,
        response: LlmResponse,
        progress: &mut Progress,
    ) -> AfterAnswer {
        match response.stop_reason {
            StopReason::Guardrail => {
                self.session.add_system_note(
                    "The previous answer was withheld by the LLM Gateway's content filter.",
                    self.origin(&step.id),
                );
                AfterAnswer::End(Ending::failed(
                    FailureReason::GuardrailBlocked,
                    ErrorCode::LlmGuardrailBlocked,
                    "The LLM Gateway's content filter withheld the model's answer.",
                    false,
                ))
            }
            StopReason::MaxTokens => {
                progress.continuations += 1;
                self.emit(
                    step.scope,
                    EventBody::StepCompleted(StepCompleted {
                        step_id: step.id,
                        step_count: step.completed_before,
                    }),
                );
                if progress.continuations > self.config.agent_loop.max_continuations {
                    return AfterAnswer::End(Ending::failed(
                        FailureReason::MaxContinuationsExceeded,
                        ErrorCode::LlmOutputTruncated,
                        format!(
                            "The model's answer was cut off by the output token limit {} times in a row.",
                            progress.continuations
                        ),
                        false,
                    ));
                }
                self.transition(TaskStatus::TaskRunning);
                AfterAnswer::Continue
            }
            StopReason::EndTurn | StopReason::ToolUse => {
                // The answering step is a completed step too: a one-step task reports
                // stepCount 1.
                let step_count = self.session.complete_step(&step.id);
                self.emit(
                    step.scope,
                    EventBody::StepCompleted(StepCompleted {
                        step_id: step.id,
                        step_count,
                    }),
                );
                AfterAnswer::End(Ending::Completed {
                    result: response.text,
                })
            }
        }
    }

    /// The tools the model asked for, their results into the thread, then the step is
    /// completed and checkpointed before `step_completed` (§4.2, §9.2).
    pub(super) async fn run_step_tools(&self, step: Step, response: &LlmResponse) {
        self.transition(TaskStatus::CheckingPolicy);
        let results = self.run_tools(&step.id, &response.tool_calls).await;
        self.session
            .record_tool_results(&response.tool_calls, results, self.origin(&step.id));
        let step_count = self.session.complete_step(&step.id);
        self.checkpoint().await;
        self.emit(
            step.scope.clone(),
            EventBody::StepCompleted(StepCompleted {
                step_id: step.id,
                step_count,
            }),
        );
        if step_limit_warning_at(self.max_steps) == Some(step_count) {
            self.emit(
                step.scope,
                EventBody::StepLimitApproaching(StepLimitApproaching {
                    current_step: step_count,
                    step_count,
                    max_steps: self.max_steps,
                }),
            );
        }
        self.transition(TaskStatus::TaskRunning);
    }

    fn origin<'a>(&'a self, step_id: &'a str) -> Origin<'a> {
        Origin {
            task_id: &self.task_id,
            step_id: Some(step_id),
        }
    }
}
