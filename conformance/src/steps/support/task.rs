//! One task's events: which events belong to it, waiting for one of them, how it ended, and
//! the session states a step may wait for.

use anyhow::{Context, anyhow};
use serde_json::{Value, json};

use crate::driver::ReceivedEvent;
use crate::steps::support::{declares_reference, show, str_at};
use crate::steps::task::wait_task_end;
use crate::world::ConformanceWorld;

/// Sends `method` for this task (`{sessionId, taskId}`) and returns the whole response.
pub(crate) async fn task_request(
    world: &mut ConformanceWorld,
    method: &str,
) -> anyhow::Result<Value> {
    let session_id = world.session()?.session_id.clone();
    let task_id = world.task()?.task_id.clone();
    let params = json!({"sessionId": session_id, "taskId": task_id});
    world.runtime().await?.request(method, Some(params)).await
}

/// This task's events so far.
pub(crate) fn this_task_events(world: &ConformanceWorld) -> anyhow::Result<Vec<ReceivedEvent>> {
    let task_id = world.task()?.task_id.clone();
    Ok(task_events(&world.started_runtime()?.events(), &task_id))
}

/// Waits (bounded) for an event of this task.
pub(crate) async fn wait_task_event(
    world: &ConformanceWorld,
    what: &str,
    predicate: impl Fn(&ReceivedEvent) -> bool,
) -> anyhow::Result<ReceivedEvent> {
    let task_id = world.task()?.task_id.clone();
    let after = world.task()?.response_seq;
    let runtime = world.started_runtime()?;
    // As in `task_events`: an event without a taskId after StartTask's answer is the task's.
    runtime
        .wait_for_event(what, world.timeout(), |e| {
            let ours = e.str_field("taskId") == Some(task_id.as_str())
                || (e.params.get("taskId").is_none_or(Value::is_null)
                    && e.seq > after
                    && !e.event_type().starts_with("session_"));
            ours && predicate(e)
        })
        .await
        .with_context(|| {
            let awaited = crate::report::attribution::AWAITED_EVENTS
                .iter()
                .find(|(event, judged, _)| *event == what && judged.starts_with("events/"))
                .map(|(event, _, _)| crate::report::attribution::awaited(&[event]))
                .unwrap_or_default();
            format!(
                "the task's events so far: {} {awaited}",
                event_types(&task_events(&runtime.events(), &task_id))
            )
        })
}

/// The tool_completed event of one call (waits for it).
pub(crate) async fn tool_completed(
    world: &ConformanceWorld,
    call_id: &str,
) -> anyhow::Result<Value> {
    let event = wait_task_event(world, &format!("tool_completed for {call_id}"), |e| {
        e.event_type() == "tool_completed" && str_at(e.payload(), &["toolCallId"]) == Some(call_id)
    })
    .await?;
    Ok(event.payload().clone())
}

/// Waits (bounded) until the session is in `status` (local-agent-host.md §3.3), as any
/// runtime shows it: by GetSessionState's `sessionStatus` (INTEROP.md §1), or by `event`, the
/// reference runtime's extension event for that transition. A runtime that claims the
/// `reference` profile must send the event. A runtime whose GetSessionState names no
/// `sessionStatus` cannot show the transition: the scenario is not judged (REQ-SES-018).
pub(crate) async fn session_reaches(
    world: &mut ConformanceWorld,
    status: &str,
    event: &str,
) -> anyhow::Result<()> {
    let timeout = world.timeout();
    if declares_reference(world)? {
        world
            .started_runtime()?
            .wait_for_event(event, timeout, |e| e.event_type() == event)
            .await?;
        return Ok(());
    }
    let session_id = world.session()?.session_id.clone();
    let deadline = tokio::time::Instant::now() + timeout;
    let mut pause = std::time::Duration::from_millis(5);
    loop {
        if world
            .started_runtime()?
            .events()
            .iter()
            .any(|e| e.event_type() == event)
        {
            return Ok(());
        }
        let response = world
            .runtime()
            .await?
            .request("GetSessionState", Some(json!({"sessionId": session_id})))
            .await?;
        let reported = response
            .get("result")
            .and_then(|r| str_at(r, &["sessionStatus"]))
            .map(str::to_owned);
        if reported.as_deref() == Some(status) {
            return Ok(());
        }
        if tokio::time::Instant::now() >= deadline {
            let Some(reported) = reported else {
                anyhow::bail!(
                    "{} GetSessionState names no sessionStatus and no {event} event came, so the kit cannot see the session reach {status}; that is REQ-SES-018's finding: {}",
                    crate::contract::NOT_JUDGED,
                    show(&response)
                );
            };
            anyhow::bail!(
                "after {timeout:?} the session is {reported}, expected {status} (no {event} event either)"
            );
        }
        tokio::time::sleep(pause).await;
        pause = (pause * 2).min(std::time::Duration::from_millis(100));
    }
}

/// Fails the step as not judged when a GetSessionState result has no `task` member at all:
/// the task's state (local-agent-host.md §3.3, both levels; INTEROP.md §1 nested `task`)
/// cannot be read, and that missing member is REQ-MSG-005's finding. A `task: null` (no
/// task) is an answer and is judged.
pub(crate) fn require_nested_task(result: &Value) -> anyhow::Result<()> {
    if result.get("task").is_none() {
        anyhow::bail!(
            "{} GetSessionState has no nested task to read the task's state from; that is REQ-MSG-005's finding: {}",
            crate::contract::NOT_JUDGED,
            show(result)
        );
    }
    Ok(())
}

/// The task's terminal event, which must be task_failed.
pub(crate) async fn task_failure(world: &mut ConformanceWorld) -> anyhow::Result<Value> {
    let end = wait_task_end(world).await?;
    check!(
        end.event_type() == "task_failed",
        "the task should have failed but ended with {}: {} {}",
        end.event_type(),
        show(end.payload()),
        crate::report::attribution::awaited(&["task_failed"])
    );
    Ok(end.payload().clone())
}

/// Waits for the end of the task and checks it is the only terminal event, of `kind`.
pub(crate) async fn only_terminal(
    world: &mut ConformanceWorld,
    kind: &str,
) -> anyhow::Result<ReceivedEvent> {
    wait_task_end(world).await?;
    barrier(world).await?;
    let events = this_task_events(world)?;
    let terminals: Vec<&ReceivedEvent> = events
        .iter()
        .filter(|e| TASK_TERMINAL_EVENTS.contains(&e.event_type()))
        .collect();
    let names = terminals
        .iter()
        .map(|e| e.event_type())
        .collect::<Vec<_>>()
        .join(", ");
    match terminals.as_slice() {
        [only] if only.event_type() == kind => Ok((*only).clone()),
        _ => Err(anyhow!(
            "a task ends with exactly one terminal event, here {kind}; this one had: {names} ({}) {}",
            terminals
                .iter()
                .map(|e| show(e.payload()))
                .collect::<Vec<_>>()
                .join("; "),
            crate::report::attribution::awaited(&[kind])
        )),
    }
}

/// The first event of `event_type` among `events`, or a failure listing the events there are.
pub(crate) fn first_of_type<'a>(
    events: &'a [ReceivedEvent],
    event_type: &str,
) -> anyhow::Result<&'a ReceivedEvent> {
    events
        .iter()
        .find(|e| e.event_type() == event_type)
        .with_context(|| {
            format!(
                "no {event_type}; the task's events: {}",
                event_types(events)
            )
        })
}

/// The `tool_completed` event of one call among `events`, if it is there (no wait).
pub(crate) fn completed_event<'a>(
    events: &'a [ReceivedEvent],
    id: &str,
) -> Option<&'a ReceivedEvent> {
    events.iter().find(|e| {
        e.event_type() == "tool_completed" && str_at(e.payload(), &["toolCallId"]) == Some(id)
    })
}

/// Whether an optional error code matches: `tool_completed.errorCode` is the reference's
/// addition (INTEROP.md §1 lists `status` and `error` for the app), so a runtime may leave it
/// out; when it is there, it must be the expected one.
pub(crate) fn optional_code(payload: &Value, field: &str, expected: &str) -> bool {
    match payload.get(field) {
        None | Some(Value::Null) => true,
        Some(value) => value.as_str() == Some(expected),
    }
}

/// The answer a completed task gave: `task_completed.result` when the runtime sends it
/// (optional in the documents), else the text the task streamed as `text_chunk`s.
pub(crate) fn task_answer(end: &ReceivedEvent, events: &[ReceivedEvent]) -> String {
    if let Some(result) = str_at(end.payload(), &["result"]) {
        return result.to_owned();
    }
    // The text of the task's last model call: after its last step_started, llm_retry or
    // llm_request_started (a retried stream's partial text was never part of the answer).
    let task_id = end.str_field("taskId");
    let of_task: Vec<&ReceivedEvent> = events
        .iter()
        .filter(|e| e.str_field("taskId") == task_id && e.seq < end.seq)
        .collect();
    let last_attempt = of_task
        .iter()
        .rposition(|e| {
            matches!(
                e.event_type(),
                "step_started" | "llm_retry" | "llm_request_started"
            )
        })
        .map_or(0, |at| at + 1);
    of_task[last_attempt..]
        .iter()
        .filter(|e| e.event_type() == "text_chunk")
        .filter_map(|e| str_at(e.payload(), &["text"]))
        .collect()
}

/// Events of one task, in order.
pub(crate) fn task_events(events: &[ReceivedEvent], task_id: &str) -> Vec<ReceivedEvent> {
    // An event without a taskId between the task's first event and its end is the task's
    // too: its missing taskId is charged to REQ-EVT-004 alone, not to every behaviour that
    // needs the task's tool events (one defect, one verdict).
    let of_task = |e: &ReceivedEvent| e.str_field("taskId") == Some(task_id);
    let start = events.iter().find(|e| of_task(e)).map(|e| e.seq);
    let end = events
        .iter()
        .find(|e| of_task(e) && TASK_TERMINAL_EVENTS.contains(&e.event_type()))
        .map_or(u64::MAX, |e| e.seq);
    events
        .iter()
        .filter(|e| {
            of_task(e)
                || (e.params.get("taskId").is_none_or(Value::is_null)
                    && start.is_some_and(|start| e.seq > start && e.seq < end)
                    && !e.event_type().starts_with("session_"))
        })
        .cloned()
        .collect()
}

/// The event types that end a task (INTEROP.md §1: exactly one per task).
pub(crate) const TASK_TERMINAL_EVENTS: &[&str] =
    &["task_completed", "task_failed", "task_cancelled"];

/// A readable list of event types, for messages.
pub(crate) fn event_types(events: &[ReceivedEvent]) -> String {
    if events.is_empty() {
        return "(no events)".to_owned();
    }
    events
        .iter()
        .map(|e| e.event_type().to_owned())
        .collect::<Vec<_>>()
        .join(", ")
}

/// Sends a `GetSessionState` round trip so that everything the runtime wrote before answering
/// it has been read: a cheap barrier before asserting that something did *not* happen.
pub(crate) async fn barrier(world: &mut ConformanceWorld) -> anyhow::Result<()> {
    let params = match &world.session {
        Some(session) => serde_json::json!({"sessionId": session.session_id}),
        None => serde_json::json!({}),
    };
    world
        .runtime()
        .await?
        .request("GetSessionState", Some(params))
        .await?;
    Ok(())
}
