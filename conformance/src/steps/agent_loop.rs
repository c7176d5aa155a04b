//! Steps for the agent loop: refusals, step accounting, completion detection and tool calls
//! (local-agent-host.md §4).
use anyhow::Context;
use cucumber::then;
use serde_json::{Value, json};

use super::common::this_task_events;
use super::lifecycle::{
    messages, multi_call_id, of_type, only_terminal, quoted_names, task_requests, u64_at,
};
use super::task::wait_task_end;
use super::{StepResult, TASK_TERMINAL_EVENTS, barrier, event_types, show, str_at};
use crate::world::ConformanceWorld;

// ---- Then: refusals ----------------------------------------------------------------------------

#[then("the error message names the running task")]
async fn message_names_running(world: &mut ConformanceWorld) -> StepResult {
    let task_id = world.task()?.task_id.clone();
    let error = super::errors::last_error(world)?;
    let message = str_at(error, &["message"]).unwrap_or("");
    // Naming the running task is the reference runtime's wording.
    check!(
        message.contains(&task_id) || !super::errors::declares_reference(world)?,
        "error.message {message:?} must name the running task {task_id:?}"
    );
    Ok(())
}

#[then("the task goes on to complete")]
async fn goes_on(world: &mut ConformanceWorld) -> StepResult {
    only_terminal(world, "task_completed").await?;
    Ok(())
}

// ---- Then: steps -------------------------------------------------------------------------------

#[then("every step is reported by step_started and then step_completed, counting the steps done")]
async fn steps_bracketed(world: &mut ConformanceWorld) -> StepResult {
    wait_task_end(world).await?;
    let events = this_task_events(world)?;
    // What stepCount counts is the reference runtime's reading (the documents name the member
    // only); a step's id may ride on the envelope when the payload lacks it (REQ-MSG-111).
    let counts = super::errors::declares_reference(world)?;
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
        !super::errors::judges_code(world, &code)?
            || str_at(payload, &["errorCode"]) == Some(code.as_str()),
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

#[then(expr = "the model was asked {int} time(s)")]
async fn model_asked(world: &mut ConformanceWorld, times: usize) -> StepResult {
    wait_task_end(world).await?;
    let got = task_requests(world).await?.len();
    check!(
        got == times,
        "the model received {got} request(s) for the task, expected {times}"
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

// ---- Then: completion detection ----------------------------------------------------------------

#[then(expr = "the task completes after {int} model request(s)")]
async fn completes_after(world: &mut ConformanceWorld, requests: usize) -> StepResult {
    only_terminal(world, "task_completed").await?;
    let got = task_requests(world).await?.len();
    check!(
        got == requests,
        "the task completed after {got} model request(s), expected {requests}"
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
            .find(|e| str_at(e.payload(), &["toolCallId"]) == Some(super::task::READ_CALL_ID))
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

#[then(expr = "the second model request continues after the answer {string}")]
async fn continues_after(world: &mut ConformanceWorld, partial: String) -> StepResult {
    wait_task_end(world).await?;
    let requests = task_requests(world).await?;
    let second = requests
        .get(1)
        .with_context(|| format!("the model received {} request(s)", requests.len()))?;
    let found = messages(second)?.iter().any(|m| {
        str_at(m, &["role"]) == Some("assistant")
            && str_at(m, &["content"]).is_some_and(|c| c.contains(&partial))
    });
    check!(
        found,
        "the request after a cut-off answer must carry that answer so the model can go on: {}",
        show(second)
    );
    Ok(())
}

// ---- Then: tools -------------------------------------------------------------------------------

#[then(expr = "the tool call fails with errorCode {string}")]
async fn tool_fails(world: &mut ConformanceWorld, code: String) -> StepResult {
    wait_task_end(world).await?;
    let events = this_task_events(world)?;
    let completed = of_type(&events, "tool_completed");
    let done = completed.first().with_context(|| {
        format!(
            "no tool_completed; the task's events: {}",
            event_types(&events)
        )
    })?;
    let payload = done.payload();
    check!(
        str_at(payload, &["toolCallId"]) == Some("call_tool_1")
            && str_at(payload, &["status"]) == Some("failed")
            && super::optional_code(payload, "errorCode", &code),
        "tool_completed must report toolCallId \"call_tool_1\", status \"failed\" and errorCode {code:?}: {}",
        show(payload)
    );
    Ok(())
}

#[then(expr = "the next model request answers the call with a tool message naming {string}")]
async fn tool_message_names(world: &mut ConformanceWorld, needle: String) -> StepResult {
    wait_task_end(world).await?;
    let requests = task_requests(world).await?;
    let second = requests.get(1).with_context(|| {
        format!(
            "the model was not asked again after the failed call ({} request(s))",
            requests.len()
        )
    })?;
    let tool = messages(second)?
        .iter()
        .find(|m| {
            str_at(m, &["role"]) == Some("tool")
                && str_at(m, &["tool_call_id"]) == Some("call_tool_1")
        })
        .with_context(|| {
            format!(
                "no tool message answers call_tool_1 in the next request: {}",
                show(second)
            )
        })?;
    check!(
        str_at(tool, &["content"]).is_some_and(|c| c.contains(&needle)),
        "the tool message must tell the model the error ({needle}): {}",
        show(tool)
    );
    Ok(())
}

#[then(regex = r#"^the next model request carries the results of (".+") in the call order$"#)]
async fn results_in_order(world: &mut ConformanceWorld, list: String) -> StepResult {
    wait_task_end(world).await?;
    let names = quoted_names(&list);
    let mut contents = Vec::new();
    for name in &names {
        let path = world.dirs()?.workspace.join(name);
        contents.push(
            std::fs::read_to_string(&path)
                .with_context(|| format!("cannot read {}", path.display()))?,
        );
    }
    let requests = task_requests(world).await?;
    let second = requests
        .get(1)
        .with_context(|| format!("the model received {} request(s)", requests.len()))?;
    let all = messages(second)?;
    let call_at = all
        .iter()
        .position(|m| {
            m.get("tool_calls")
                .and_then(Value::as_array)
                .is_some_and(|c| c.len() == names.len())
        })
        .with_context(|| {
            format!(
                "no assistant message replays the {} calls: {}",
                names.len(),
                show(second)
            )
        })?;
    let tools: Vec<&Value> = all[call_at + 1..]
        .iter()
        .take_while(|m| str_at(m, &["role"]) == Some("tool"))
        .collect();
    let got: Vec<&str> = tools
        .iter()
        .map(|m| str_at(m, &["tool_call_id"]).unwrap_or(""))
        .collect();
    let want: Vec<String> = (0..names.len()).map(multi_call_id).collect();
    check!(
        got == want,
        "the tool messages after the calls answer {got:?}, expected {want:?} (the model's call order)"
    );
    for (index, tool) in tools.iter().enumerate() {
        let content = str_at(tool, &["content"]).unwrap_or("");
        check!(
            content.contains(contents[index].trim()),
            "the result for {} ({}) must carry that file's content {:?}, got {content:?}",
            want[index],
            names[index],
            contents[index]
        );
    }
    Ok(())
}
