//! Steps for the state machines, cancellation, event replay and the Workspace Service warning
//! (local-agent-host.md §3.3, §3.4, §12).

use agent_mocks::FaultControl as _;
use anyhow::Context;
use cucumber::then;
use serde_json::{Value, json};

use super::common::this_task_events;
use super::lifecycle::{messages, of_type, only_terminal, task_requests, u64_at};
use super::task::wait_task_end;
use super::{
    StepResult, TASK_TERMINAL_EVENTS, event_types, expect_result, show, str_at, task_events,
};
use crate::driver::ReceivedEvent;
use crate::world::ConformanceWorld;

// ---- Then: the state machines ------------------------------------------------------------------

#[then(expr = "the session state shows the task as {word}")]
async fn state_task_is(world: &mut ConformanceWorld, status: String) -> StepResult {
    let task_id = world.task()?.task_id.clone();
    let response = world.last_response()?;
    let result = expect_result(response, "GetSessionState")?;
    super::common::require_nested_task(result)?;
    check!(
        str_at(result, &["task", "status"]) == Some(status.as_str()),
        "GetSessionState task.status must be {status:?}: {}",
        show(result)
    );
    check!(
        str_at(result, &["task", "taskId"]).is_none_or(|id| id == task_id),
        "GetSessionState names task {:?}, the task is {task_id:?}",
        str_at(result, &["task", "taskId"])
    );
    let current = str_at(result, &["currentTaskId"]);
    // What the flat currentTaskId names once the task has ended is the reference's reading.
    if status == "IDLE" && !super::errors::declares_reference(world)? {
        return Ok(());
    }
    if status == "IDLE" {
        check!(
            current.is_none(),
            "an IDLE session has no currentTaskId, got {current:?}"
        );
    } else {
        check!(
            current == Some(task_id.as_str()),
            "while the task runs, currentTaskId must name it: {}",
            show(result)
        );
    }
    Ok(())
}

#[then(expr = "the task ended with {word}")]
async fn ended_with(world: &mut ConformanceWorld, kind: String) -> StepResult {
    only_terminal(world, &kind).await?;
    Ok(())
}

// ---- Then: cancellation ------------------------------------------------------------------------

#[then("the cancellation is acknowledged as cancelling the task")]
async fn cancel_ack(world: &mut ConformanceWorld) -> StepResult {
    let task_id = world.task()?.task_id.clone();
    let response = world.last_response()?;
    let result = expect_result(response, "CancelTask")?;
    // The documents give CancelTask's result no shape: a prompt success is what they ask
    // (local-agent-host.md §4.5); {taskId, status: "cancelling"} is the reference runtime's.
    if !super::errors::declares_reference(world)? {
        return Ok(());
    }
    check!(
        str_at(result, &["taskId"]) == Some(task_id.as_str())
            && str_at(result, &["status"]) == Some("cancelling"),
        "CancelTask must answer {{taskId: {task_id:?}, status: \"cancelling\"}}: {}",
        show(result)
    );
    Ok(())
}

#[then("the task ends with task_cancelled as its only terminal event")]
async fn only_cancelled(world: &mut ConformanceWorld) -> StepResult {
    only_terminal(world, "task_cancelled").await?;
    Ok(())
}

#[then("the runtime reports llm_response_discarded before task_cancelled")]
async fn discarded_reported(world: &mut ConformanceWorld) -> StepResult {
    let end = only_terminal(world, "task_cancelled").await?;
    let events = this_task_events(world)?;
    let discarded = of_type(&events, "llm_response_discarded");
    let first = discarded.first().with_context(|| {
        format!(
            "text had been streamed as text_chunk, but no llm_response_discarded tells the app to drop it; the task's events: {}",
            event_types(&events)
        )
    })?;
    check!(
        first.seq < end.seq,
        "llm_response_discarded must come before task_cancelled"
    );
    Ok(())
}

#[then("no model request of the new task contains the text streamed before the cancellation")]
async fn partial_not_kept(world: &mut ConformanceWorld) -> StepResult {
    wait_task_end(world).await?;
    let task_id = world.task()?.task_id.clone();
    let streamed: String = world
        .started_runtime()?
        .events()
        .iter()
        .filter(|e| {
            e.event_type() == "text_chunk" && e.str_field("taskId") != Some(task_id.as_str())
        })
        .map(|e| str_at(e.payload(), &["text"]).unwrap_or("").to_owned())
        .collect();
    let streamed = streamed.trim().to_owned();
    check!(
        !streamed.is_empty(),
        "the cancelled task streamed no text, so nothing can be checked"
    );
    let requests = task_requests(world).await?;
    check!(!requests.is_empty(), "the new task made no model request");
    for (index, body) in requests.iter().enumerate() {
        for message in messages(body)? {
            let content = str_at(message, &["content"]).unwrap_or("");
            check!(
                !content.contains(&streamed),
                "model request {} of the new task carries the discarded partial answer {streamed:?} in a {} message",
                index + 1,
                str_at(message, &["role"]).unwrap_or("?")
            );
        }
    }
    Ok(())
}

#[then(expr = "the task_cancelled event and the task record give the reason {string}")]
async fn cancelled_reason(world: &mut ConformanceWorld, reason: String) -> StepResult {
    let timeout = world.timeout();
    let task_id = world.task()?.task_id.clone();
    let session_id = world.session()?.session_id.clone();
    let cancelled = world
        .started_runtime()?
        .wait_for_event("task_cancelled", timeout, |e| {
            e.event_type() == "task_cancelled" && e.str_field("taskId") == Some(task_id.as_str())
        })
        .await?;
    let said = cancelled
        .params
        .pointer("/payload/reason")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    check!(
        said == reason,
        "task_cancelled gives the reason {said:?}, not {reason:?}"
    );
    let fakes = world.fakes().await?;
    let completed = format!("/sessions/{session_id}/tasks/{task_id}/complete");
    super::eventually(timeout, "the task record must be completed", || async {
        let requests = fakes.session.requests().await;
        let body = requests
            .iter()
            .find(|r| r.method == "POST" && r.path == completed)
            .map(|r| r.body.clone())
            .ok_or("no POST /sessions/{id}/tasks/{taskId}/complete")?;
        match str_at(&body, &["completionReason"]) {
            Some(given) if given == reason => Ok(()),
            given => Err(format!(
                "the task record's completionReason is {given:?}, not {reason:?}"
            )),
        }
    })
    .await?;
    Ok(())
}

#[then("the runtime reports task_cancelled and then session_cancelled")]
async fn cancelled_then_session(world: &mut ConformanceWorld) -> StepResult {
    let timeout = world.timeout();
    let task_id = world.task()?.task_id.clone();
    let runtime = world.started_runtime()?;
    let session_end = runtime
        .wait_for_event("the session's end", timeout, |e| {
            matches!(
                e.event_type(),
                "session_cancelled" | "session_completed" | "session_failed"
            )
        })
        .await?;
    if super::errors::declares_reference(world)? {
        check!(
            session_end.event_type() == "session_cancelled",
            "a Shutdown during a running task ends the session with session_cancelled, got {}",
            session_end.event_type()
        );
    }
    let events = task_events(&runtime.events(), &task_id);
    let terminals: Vec<&ReceivedEvent> = events
        .iter()
        .filter(|e| TASK_TERMINAL_EVENTS.contains(&e.event_type()))
        .collect();
    check!(
        terminals.len() == 1 && terminals[0].event_type() == "task_cancelled",
        "the running task must end with exactly one task_cancelled; it had: {}",
        event_types(&events)
    );
    check!(
        terminals[0].seq < session_end.seq,
        "task_cancelled must come before session_cancelled"
    );
    if !super::errors::declares_reference(world)? {
        super::session::session_cancelled_at_service(world).await?;
    }
    Ok(())
}

// ---- Then: events replay -----------------------------------------------------------------------

#[then("the replay holds every later event in order, up to the latest id, with no gap")]
async fn replay_complete(world: &mut ConformanceWorld) -> StepResult {
    let since = world.marks.get("events since").copied().unwrap_or(0) as u64;
    let response = world.last_response()?.clone();
    let result = expect_result(&response, "GetEvents")?;
    let seen: Vec<u64> = world
        .started_runtime()?
        .events()
        .iter()
        .filter_map(|e| e.params.get("eventId").and_then(Value::as_u64))
        .filter(|id| *id > since)
        .collect();
    let replayed: Vec<u64> = result
        .get("events")
        .and_then(Value::as_array)
        .map(|events| {
            events
                .iter()
                .filter_map(|e| e.get("eventId").and_then(Value::as_u64))
                .collect()
        })
        .unwrap_or_default();
    check!(
        replayed == seen,
        "GetEvents since {since} replayed eventIds {replayed:?}, the runtime sent {seen:?} after it"
    );
    check!(
        result.get("gapDetected") == Some(&json!(false)),
        "gapDetected must be false when nothing was lost: {}",
        show(result)
    );
    let latest = seen.last().copied().unwrap_or(since);
    check!(
        u64_at(result, "latestId") == Some(latest),
        "latestId must be the last eventId sent ({latest}): {}",
        show(result)
    );
    Ok(())
}

#[then("the replay reports a gap")]
async fn replay_gap(world: &mut ConformanceWorld) -> StepResult {
    let response = world.last_response()?.clone();
    let result = expect_result(&response, "GetEvents")?;
    check!(
        result.get("gapDetected") == Some(&json!(true)),
        "older events fell out of the ring, so gapDetected must be true: {}",
        show(result)
    );
    let latest = world
        .started_runtime()?
        .events()
        .iter()
        .filter_map(|e| e.params.get("eventId").and_then(Value::as_u64))
        .max();
    check!(
        u64_at(result, "latestId") == latest,
        "latestId must be the last eventId sent ({latest:?}): {}",
        show(result)
    );
    Ok(())
}

// ---- Then: the Workspace Service ---------------------------------------------------------------

#[then(expr = "a warning with code {string} precedes task_completed")]
async fn warning_precedes(world: &mut ConformanceWorld, code: String) -> StepResult {
    let end = only_terminal(world, "task_completed").await?;
    // The documents say "warn the Desktop App" (local-agent-host.md §11) but give the warning
    // no form on the wire: the `warning` event is the reference runtime's, judged only for a
    // runtime that claims that profile; for others the task completing is what is judged.
    if !super::errors::declares_reference(world)? {
        return Ok(());
    }
    let events = world.started_runtime()?.events();
    let warning = events
        .iter()
        .find(|e| {
            e.event_type() == "warning" && str_at(e.payload(), &["code"]) == Some(code.as_str())
        })
        .with_context(|| {
            format!(
                "the Desktop App must be warned with a warning {code:?}; events: {}",
                event_types(&events)
            )
        })?;
    check!(
        warning.seq < end.seq,
        "the warning must come before task_completed"
    );
    Ok(())
}
