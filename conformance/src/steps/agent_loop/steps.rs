//! Steps, limits and refusals of the loop (local-agent-host.md §4): how each step is reported,
//! the step limit and its warning, completion detection, and a task refused while another runs.

use anyhow::Context;
use cucumber::then;
use serde_json::json;

use crate::steps::errors::{judges_code, last_error};
use crate::steps::support::task::{
    TASK_TERMINAL_EVENTS, barrier, event_types, only_terminal, this_task_events,
};
use crate::steps::support::{StepResult, declares_reference, of_type, show, str_at, u64_at};
use crate::steps::task::{READ_CALL_ID, wait_task_end};
use crate::world::ConformanceWorld;

#[then("the error message names the running task")]
async fn message_names_running(world: &mut ConformanceWorld) -> StepResult {
    let task_id = world.task()?.task_id.clone();
    let error = last_error(world)?;
    let message = str_at(error, &["message"]).unwrap_or("");
    // Naming the running task is the reference runtime's wording.
    check!(
        message.contains(&task_id) || !declares_reference(world)?,
        "error.message {message:?} must name the running task {task_id:?}"
    );
    Ok(())
}

#[then("the task goes on to complete")]
async fn goes_on(world: &mut ConformanceWorld) -> StepResult {
    only_terminal(world, "task_completed").await?;
    Ok(())
}

#[then("every step is reported by step_started and then step_completed, counting the steps done")]
async fn steps_bracketed(world: &mut ConformanceWorld) -> StepResult {
    wait_task_end(world).await?;
    let events = this_task_events(world)?;
    // What stepCount counts is the reference runtime's reading (the documents name the member
    // only); a step's id may ride on the envelope when the payload lacks it (REQ-MSG-111).
    let counts = declares_reference(world)?;
    let step_id = |event: &crate::driver::ReceivedEvent| {
        str_at(event.payload(), &["stepId"])
            .or_else(|| event.str_field("stepId"))
            .unwrap_or("")
            .to_owned()
    };
    let mut done = 0u64;
    let mut open: Option<String> = None;
    let mut ids: Vec<String> = Vec::new();
    for event in &events {
        let payload = event.payload();
        match event.event_type() {
            "step_started" => {
                let id = step_id(event);
                check!(
                    open.is_none(),
                    "step {id:?} started before step {open:?} was reported completed"
                );
                check!(
                    !ids.contains(&id),
                    "stepId {id:?} is used twice in one task"
                );
                check!(
                    u64_at(payload, "stepNumber") == Some(done + 1)
                        && (!counts || u64_at(payload, "stepCount") == Some(done)),
                    "step_started {} must carry stepNumber {} and stepCount {done} (the steps completed before it)",
                    show(payload),
                    done + 1
                );
                ids.push(id.clone());
                open = Some(id);
            }
            "step_completed" => {
                let id = step_id(event);
                check!(
                    open.as_deref() == Some(id.as_str()),
                    "step_completed {} does not close the open step {open:?}",
                    show(payload)
                );
                done += 1;
                check!(
                    !counts || u64_at(payload, "stepCount") == Some(done),
                    "step_completed {} must carry stepCount {done} (this step included)",
                    show(payload)
                );
                open = None;
            }
            kind if TASK_TERMINAL_EVENTS.contains(&kind) => {
                check!(
                    open.is_none(),
                    "the task ended ({kind}) while step {open:?} was never reported completed"
                );
            }
            _ => {}
        }
    }
    check!(
        done > 0,
        "the task reported no step; its events: {}",
        event_types(&events)
    );
    Ok(())
}

#[then(expr = "the task completes reporting stepCount {int}")]
async fn completes_with_steps(world: &mut ConformanceWorld, steps: u64) -> StepResult {
    let end = only_terminal(world, "task_completed").await?;
    let got = u64_at(end.payload(), "stepCount");
    check!(
        got == Some(steps),
        "task_completed.stepCount is {got:?}, expected {steps}: {}",
        show(end.payload())
    );
    Ok(())
}

#[then(expr = "the task fails with error code {string} and reason {string}")]
async fn fails_with(world: &mut ConformanceWorld, code: String, reason: String) -> StepResult {
    let end = only_terminal(world, "task_failed").await?;
    let payload = end.payload();
    check!(
        !judges_code(world, &code)? || str_at(payload, &["errorCode"]) == Some(code.as_str()),
        "task_failed.errorCode must be {code:?}: {}",
        show(payload)
    );
    check!(
        str_at(payload, &["reason"]) == Some(reason.as_str()),
        "task_failed.reason must be {reason:?}: {}",
        show(payload)
    );
    Ok(())
}

#[then("the failure is not recoverable")]
async fn not_recoverable(world: &mut ConformanceWorld) -> StepResult {
    let end = only_terminal(world, "task_failed").await?;
    check!(
        end.payload().get("isRecoverable") == Some(&json!(false)),
        "task_failed.isRecoverable must be false: {}",
        show(end.payload())
    );
    Ok(())
}

#[then(regex = r"^step_limit_approaching is reported once, after step (\d+) of (\d+)$")]
async fn limit_once(world: &mut ConformanceWorld, after: u64, max: u64) -> StepResult {
    wait_task_end(world).await?;
    barrier(world).await?;
    let events = this_task_events(world)?;
    let warnings = of_type(&events, "step_limit_approaching");
    let [warning] = warnings.as_slice() else {
        fail!(
            "step_limit_approaching must be reported exactly once, it came {} time(s); the task's events: {}",
            warnings.len(),
            event_types(&events)
        );
    };
    let payload = warning.payload();
    // Which of the two counters a payload carries is REQ-MSG-113's; the value is this one's.
    let counters = ["currentStep", "stepCount"].map(|m| payload.get(m).map(|_| u64_at(payload, m)));
    check!(
        counters.iter().any(Option::is_some)
            && counters.iter().flatten().all(|v| *v == Some(after))
            && u64_at(payload, "maxSteps") == Some(max),
        "step_limit_approaching must carry currentStep {after}, stepCount {after}, maxSteps {max}: {}",
        show(payload)
    );
    let completed = of_type(&events, "step_completed")
        .into_iter()
        .nth(after.saturating_sub(1) as usize)
        .with_context(|| format!("no step_completed for step {after}"))?;
    check!(
        completed.seq < warning.seq,
        "step_limit_approaching must follow the step_completed that brings stepCount to {after}"
    );
    if let Some(next) = of_type(&events, "step_started")
        .into_iter()
        .find(|e| u64_at(e.payload(), "stepNumber") == Some(after + 1))
    {
        check!(
            warning.seq < next.seq,
            "step_limit_approaching must come before step {} starts",
            after + 1
        );
    }
    Ok(())
}

#[then("step_limit_approaching is never reported")]
async fn limit_never(world: &mut ConformanceWorld) -> StepResult {
    wait_task_end(world).await?;
    barrier(world).await?;
    let events = this_task_events(world)?;
    let warnings = of_type(&events, "step_limit_approaching");
    check!(
        warnings.is_empty(),
        "step_limit_approaching was reported although 80% of maxSteps is no step before the last: {}",
        show(warnings[0].payload())
    );
    Ok(())
}

#[then(regex = r"^the ReadFile call (runs|does not run)$")]
async fn read_runs(world: &mut ConformanceWorld, runs: String) -> StepResult {
    wait_task_end(world).await?;
    let events = this_task_events(world)?;
    let completed = of_type(&events, "tool_completed");
    if runs == "runs" {
        let done = completed
            .iter()
            .find(|e| str_at(e.payload(), &["toolCallId"]) == Some(READ_CALL_ID))
            .with_context(|| {
                format!(
                    "the model's ReadFile call was not run; the task's events: {}",
                    event_types(&events)
                )
            })?;
        check!(
            str_at(done.payload(), &["status"]) == Some("succeeded"),
            "the ReadFile call must succeed: {}",
            show(done.payload())
        );
    } else {
        check!(
            completed.is_empty(),
            "no tool was called, yet the runtime reported tool_completed: {}",
            show(completed[0].payload())
        );
    }
    Ok(())
}

/// For every tool call: the step in progress when it was requested (the last step_started
/// before its tool_requested) is closed by step_completed only after its tool_completed.
#[then("every step's step_completed comes after the tool_completed of each tool call of that step")]
async fn step_closes_after_tools(world: &mut ConformanceWorld) -> StepResult {
    wait_task_end(world).await?;
    let events = this_task_events(world)?;
    let mut current_step: Option<String> = None;
    let mut checked = 0;
    for (index, event) in events.iter().enumerate() {
        match event.event_type() {
            "step_started" => {
                current_step = event
                    .str_field("stepId")
                    .or_else(|| str_at(event.payload(), &["stepId"]))
                    .map(str::to_owned);
            }
            "tool_requested" => {
                let call = str_at(event.payload(), &["toolCallId"]).unwrap_or_default();
                let step = current_step.clone().with_context(|| {
                    format!(
                        "tool_requested for {call} came before any step_started: {}",
                        event_types(&events)
                    )
                })?;
                let later = &events[index..];
                let step_done = later.iter().position(|e| {
                    e.event_type() == "step_completed"
                        && (e.str_field("stepId") == Some(step.as_str())
                            || str_at(e.payload(), &["stepId"]) == Some(step.as_str()))
                });
                let tool_done = later.iter().position(|e| {
                    e.event_type() == "tool_completed"
                        && str_at(e.payload(), &["toolCallId"]) == Some(call)
                });
                match (tool_done, step_done) {
                    (Some(tool), Some(step_end)) => check!(
                        tool < step_end,
                        "step {step} was reported completed before its tool call {call} completed (local-agent-host.md §12: step_completed comes after all tool results are collected): {}",
                        event_types(&events)
                    ),
                    (None, _) => fail!(
                        "the tool call {call} never completed: {}",
                        event_types(&events)
                    ),
                    (Some(_), None) => {
                        // step_completed sent before tool_requested is caught here too: the
                        // step's close must follow its tools, not precede them.
                        let closed_before = events[..index].iter().any(|e| {
                            e.event_type() == "step_completed"
                                && (e.str_field("stepId") == Some(step.as_str())
                                    || str_at(e.payload(), &["stepId"]) == Some(step.as_str()))
                        });
                        check!(
                            !closed_before,
                            "step {step} was reported completed before its tool call {call} was even requested: {}",
                            event_types(&events)
                        );
                        fail!(
                            "step {step} ran the tool call {call} but was never reported by step_completed: {}",
                            event_types(&events)
                        );
                    }
                }
                checked += 1;
            }
            _ => {}
        }
    }
    check!(
        checked > 0,
        "the task requested no tool, so nothing was checked: {}",
        event_types(&events)
    );
    Ok(())
}
