//! The SessionEvent envelope, checked over every event of the scenario: ids, payloads, the
//! ID chain, timestamps — what the desktop app relies on to file each event in the right
//! bubble (INTEROP.md §1).

use anyhow::Context;
use cucumber::{then, when};
use serde_json::{Value, json};

use crate::driver::ReceivedEvent;
use crate::steps::support::model::model_requests;
use crate::steps::support::task::{
    barrier, event_types, only_terminal, task_events, this_task_events,
};
use crate::steps::support::{StepResult, declares_reference, expect_result, show, str_at, u64_at};
use crate::world::ConformanceWorld;

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

#[then(expr = "a warning with code {string} precedes task_completed")]
async fn warning_precedes(world: &mut ConformanceWorld, code: String) -> StepResult {
    let end = only_terminal(world, "task_completed").await?;
    // The documents say "warn the Desktop App" (local-agent-host.md §11) but give the warning
    // no form on the wire: the `warning` event is the reference runtime's, judged only for a
    // runtime that claims that profile; for others the task completing is what is judged.
    if !declares_reference(world)? {
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

/// Events that belong to a task and must carry its `taskId`.
fn is_task_scoped(event_type: &str) -> bool {
    event_type.starts_with("task_")
        || event_type.starts_with("step_")
        || event_type.starts_with("llm_")
        || event_type.starts_with("tool_")
        || event_type.starts_with("approval_")
        || event_type == "text_chunk"
}

/// Events that happen inside one step and must carry its `stepId`.
fn is_step_scoped(event_type: &str) -> bool {
    matches!(
        event_type,
        "step_started"
            | "step_completed"
            | "text_chunk"
            | "llm_request_started"
            | "llm_request_completed"
            | "llm_retry"
            | "llm_response_discarded"
            | "tool_requested"
            | "tool_completed"
    )
}

/// All events, after a round trip that guarantees everything written so far was read.
async fn settled_events(world: &mut ConformanceWorld) -> anyhow::Result<Vec<ReceivedEvent>> {
    barrier(world).await?;
    let events = world.started_runtime()?.events();
    check!(
        !events.is_empty(),
        "the runtime sent no SessionEvent at all"
    );
    Ok(events)
}

#[then("every line the runtime wrote is a valid JSON-RPC message")]
async fn every_line_valid(world: &mut ConformanceWorld) -> StepResult {
    barrier(world).await?;
    // The framing only: the response envelope, events and each message's members are judged
    // on every message by the requirements about them (the ledger charges them there), so a
    // response without "jsonrpc" fails REQ-RPC-002 once and not this step as well.
    let violations: Vec<_> = world
        .started_runtime()?
        .violations()
        .into_iter()
        .filter(|v| v.judged == crate::validation::judged::FRAMING)
        .collect();
    check!(
        violations.is_empty(),
        "the runtime wrote {} line(s) that break the protocol:\n{}",
        violations.len(),
        violations
            .iter()
            .map(|v| format!("  - {v}"))
            .collect::<Vec<_>>()
            .join("\n")
    );
    Ok(())
}

#[then("every event is a SessionEvent notification valid against its schema")]
async fn every_event_valid(world: &mut ConformanceWorld) -> StepResult {
    settled_events(world).await?;
    let broken: Vec<_> = world
        .started_runtime()?
        .violations()
        .into_iter()
        .filter(|v| v.in_event && v.judged == crate::validation::judged::EVENT)
        .collect();
    check!(
        broken.is_empty(),
        "{} event(s) break the SessionEvent schema:\n{}",
        broken.len(),
        broken
            .iter()
            .map(|v| format!("  - {v}"))
            .collect::<Vec<_>>()
            .join("\n")
    );
    Ok(())
}

#[then("every event has an integer eventId greater than the one before")]
async fn event_ids_monotonic(world: &mut ConformanceWorld) -> StepResult {
    let events = settled_events(world).await?;
    let mut previous: Option<u64> = None;
    for event in &events {
        let id = event.params.get("eventId").cloned().unwrap_or(Value::Null);
        let Some(number) = id.as_u64() else {
            fail!(
                "eventId must be a non-negative integer, the {} event has {}",
                event.event_type(),
                show(&id)
            );
        };
        if let Some(before) = previous {
            check!(
                number > before,
                "eventId {number} ({}) does not follow {before}: ids must increase with every event",
                event.event_type()
            );
        }
        previous = Some(number);
    }
    Ok(())
}

#[then("every event payload is an object")]
async fn payloads_are_objects(world: &mut ConformanceWorld) -> StepResult {
    let events = settled_events(world).await?;
    for event in &events {
        check!(
            event.params.get("payload").is_some_and(Value::is_object),
            "the {} event's payload must be an object ({{}} at least): {}",
            event.event_type(),
            show(&event.params)
        );
    }
    Ok(())
}

#[then("every event carries the session's ID chain")]
async fn id_chain(world: &mut ConformanceWorld) -> StepResult {
    let events = settled_events(world).await?;
    let session = world.session()?.clone();
    let task_id = world.task.as_ref().map(|t| t.task_id.clone());
    for event in &events {
        let kind = event.event_type();
        let where_ = || {
            format!(
                "the {kind} event (eventId {})",
                show(event.params.get("eventId").unwrap_or(&Value::Null))
            )
        };
        check!(
            event.str_field("sessionId") == Some(session.session_id.as_str()),
            "{} carries sessionId {:?}, expected {:?}",
            where_(),
            event.str_field("sessionId"),
            session.session_id
        );
        check!(
            event.str_field("workspaceId") == Some(session.workspace_id.as_str()),
            "{} carries workspaceId {:?}, expected {:?}",
            where_(),
            event.str_field("workspaceId"),
            session.workspace_id
        );
        if is_task_scoped(kind)
            && let Some(task_id) = &task_id
        {
            check!(
                event.str_field("taskId") == Some(task_id.as_str()),
                "{} carries taskId {:?}, expected the task's {task_id:?}",
                where_(),
                event.str_field("taskId")
            );
        }
        if is_step_scoped(kind) {
            let step = event.str_field("stepId").unwrap_or("");
            check!(
                !step.trim().is_empty(),
                "{} carries no stepId: {}",
                where_(),
                show(&event.params)
            );
        }
    }
    Ok(())
}

#[then("every event carries an RFC 3339 timestamp")]
async fn timestamps(world: &mut ConformanceWorld) -> StepResult {
    let events = settled_events(world).await?;
    for event in &events {
        let stamp = event.str_field("timestamp").unwrap_or("");
        check!(
            time::OffsetDateTime::parse(stamp, &time::format_description::well_known::Rfc3339)
                .is_ok(),
            "the {} event's timestamp {stamp:?} is not RFC 3339",
            event.event_type()
        );
    }
    Ok(())
}

#[then("every step begins with step_started")]
async fn steps_begin(world: &mut ConformanceWorld) -> StepResult {
    settled_events(world).await?;
    let task_id = world.task()?.task_id.clone();
    let events = task_events(&world.started_runtime()?.events(), &task_id);
    let mut started: Vec<String> = Vec::new();
    for event in &events {
        let kind = event.event_type();
        let step = event.str_field("stepId").unwrap_or("").to_owned();
        if kind == "step_started" {
            let payload = event.payload();
            // A payload without stepId is REQ-MSG-111's finding; one that names another step
            // is this one's.
            check!(
                str_at(payload, &["stepId"]).is_none_or(|id| id == step),
                "step_started.payload.stepId must equal the envelope's stepId {step:?}: {}",
                show(payload)
            );
            let number = payload.get("stepNumber").and_then(Value::as_u64);
            check!(
                number == Some(started.len() as u64 + 1),
                "step_started.payload.stepNumber is {number:?}, expected {} (1-based, in order)",
                started.len() + 1
            );
            check!(!started.contains(&step), "stepId {step:?} is started twice");
            started.push(step);
        } else if is_step_scoped(kind) && !step.is_empty() {
            // An event without its stepId is REQ-EVT-004's finding.
            check!(
                started.contains(&step),
                "the {kind} event belongs to step {step:?}, which no step_started announced before it"
            );
        }
    }
    check!(!started.is_empty(), "the task has no step_started event");
    Ok(())
}

#[then("every model call is reported by llm_request_started and llm_request_completed")]
async fn llm_calls_reported(world: &mut ConformanceWorld) -> StepResult {
    settled_events(world).await?;
    let task_id = world.task()?.task_id.clone();
    let events = task_events(&world.started_runtime()?.events(), &task_id);
    let calls = model_requests(world.started_fakes()?).await.len();
    let started: Vec<&ReceivedEvent> = events
        .iter()
        .filter(|e| e.event_type() == "llm_request_started")
        .collect();
    let completed: Vec<&ReceivedEvent> = events
        .iter()
        .filter(|e| e.event_type() == "llm_request_completed")
        .collect();
    check!(
        started.len() == calls && completed.len() == calls,
        "the model was called {calls} time(s), the runtime reported {} llm_request_started and {} llm_request_completed",
        started.len(),
        completed.len()
    );
    for done in &completed {
        let step = done.str_field("stepId");
        let begun = started
            .iter()
            .find(|s| s.str_field("stepId") == step)
            .with_context(|| {
                format!("llm_request_completed for step {step:?} has no llm_request_started")
            })?;
        check!(
            begun.seq < done.seq,
            "llm_request_completed for step {step:?} came before its llm_request_started"
        );
    }
    Ok(())
}

#[when("the client asks for the events since the task started")]
async fn events_since_task(world: &mut ConformanceWorld) -> StepResult {
    let started = this_task_events(world)?
        .into_iter()
        .find(|e| e.event_type() == "task_started")
        .context("the task has no task_started event to count from")?;
    let since = started
        .params
        .get("eventId")
        .and_then(Value::as_u64)
        .with_context(|| {
            format!(
                "{} task_started has no integer eventId to ask GetEvents from; that is REQ-EVT-002's finding",
                crate::contract::NOT_JUDGED
            )
        })?;
    ask_events(world, since).await?;
    world.marks.insert("events since", since as usize);
    Ok(())
}

#[when(expr = "the client asks for the events since eventId {int}")]
async fn events_since(world: &mut ConformanceWorld, since: u64) -> StepResult {
    ask_events(world, since).await?;
    world.marks.insert("events since", since as usize);
    Ok(())
}

async fn ask_events(world: &mut ConformanceWorld, since: u64) -> anyhow::Result<()> {
    barrier(world).await?;
    let response = world
        .runtime()
        .await?
        .request("GetEvents", Some(json!({"sinceId": since})))
        .await?;
    world.last_response = Some(response);
    world.last_method = Some("GetEvents".to_owned());
    Ok(())
}
