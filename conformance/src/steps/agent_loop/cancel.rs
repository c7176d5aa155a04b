//! Cancelling a task (local-agent-host.md §3.4, §4.5): before, during and after a model call
//! or a tool call (cooperative, then forced), and what the thread keeps of a stopped call.

use agent_mocks::FaultControl;
use anyhow::Context;
use cucumber::{then, when};
use serde_json::{Value, json};

use crate::driver::ReceivedEvent;
use crate::steps::llm::requests::model_received;
use crate::steps::session::end::session_cancelled_at_service;
use crate::steps::support::model::{
    explain_tool_failure, recorded_task_requests, request_messages, task_requests,
};
use crate::steps::support::task::{
    TASK_TERMINAL_EVENTS, barrier, completed_event, event_types, only_terminal, task_events,
    this_task_events,
};
use crate::steps::support::{
    StepResult, declares_reference, eventually, expect_result, of_type, show, str_at,
};
use crate::steps::task::wait_task_end;
use crate::steps::tools::call_id;
use crate::world::ConformanceWorld;

#[then("the cancellation is acknowledged as cancelling the task")]
async fn cancel_ack(world: &mut ConformanceWorld) -> StepResult {
    let task_id = world.task()?.task_id.clone();
    let response = world.last_response()?;
    let result = expect_result(response, "CancelTask")?;
    // The documents give CancelTask's result no shape: a prompt success is what they ask
    // (local-agent-host.md §4.5); {taskId, status: "cancelling"} is the reference runtime's.
    if !declares_reference(world)? {
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
        for message in request_messages(body)? {
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
    eventually(timeout, "the task record must be completed", || async {
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
    if declares_reference(world)? {
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
        "the running task must end with exactly one task_cancelled; it had: {} {}",
        event_types(&events),
        crate::report::attribution::awaited(&["task_cancelled"])
    );
    check!(
        terminals[0].seq < session_end.seq,
        "task_cancelled must come before session_cancelled"
    );
    if !declares_reference(world)? {
        session_cancelled_at_service(world).await?;
    }
    Ok(())
}

async fn send_cancel(world: &mut ConformanceWorld, params: Value) -> anyhow::Result<()> {
    let response = world
        .runtime()
        .await?
        .request("CancelTask", Some(params))
        .await?;
    world.last_response = Some(response);
    world.last_method = Some("CancelTask".to_owned());
    Ok(())
}

#[when("the client cancels the task")]
async fn cancels(world: &mut ConformanceWorld) -> StepResult {
    let session_id = world.session()?.session_id.clone();
    let mut params = json!({"sessionId": session_id});
    if let Some(task) = &world.task {
        params["taskId"] = json!(task.task_id);
    }
    send_cancel(world, params).await?;
    Ok(())
}

#[when(expr = "the client cancels the task {string}")]
async fn cancels_other(world: &mut ConformanceWorld, task_id: String) -> StepResult {
    let session_id = world.session()?.session_id.clone();
    send_cancel(world, json!({"sessionId": session_id, "taskId": task_id})).await?;
    Ok(())
}

#[when(expr = "the client cancels a task in the session {string}")]
async fn cancels_in_session(world: &mut ConformanceWorld, session_id: String) -> StepResult {
    send_cancel(world, json!({"sessionId": session_id})).await?;
    Ok(())
}

#[when("the client cancels the task once the model has received its request")]
async fn cancels_when_asked(world: &mut ConformanceWorld) -> StepResult {
    model_received(world).await?;
    cancels(world).await?;
    Ok(())
}

/// Waits (bounded) until a command of the task has written `name` into the workspace: the
/// tool is then running, whatever the runtime reported so far.
#[when(expr = "the command has written the workspace file {string}")]
async fn command_wrote(world: &mut ConformanceWorld, name: String) -> StepResult {
    let path = world.dirs()?.workspace.join(&name);
    let timeout = world.timeout();
    let written = eventually(timeout, &format!("the command to write {name}"), || {
        let path = path.clone();
        async move {
            if path.exists() {
                Ok(())
            } else {
                Err(format!("{} does not exist", path.display()))
            }
        }
    })
    .await;
    match written {
        Ok(()) => Ok(()),
        Err(failure) => Err(explain_tool_failure(world, "RunCommand", failure)
            .await
            .into()),
    }
}

/// Creates `name` in the workspace (a command waiting for it goes on).
#[when(expr = "the user creates the workspace file {string}")]
async fn user_creates(world: &mut ConformanceWorld, name: String) -> StepResult {
    let path = world.dirs()?.workspace.join(&name);
    std::fs::write(&path, "go\n").with_context(|| format!("cannot write {}", path.display()))?;
    Ok(())
}

#[then("the task has not ended yet")]
async fn not_ended(world: &mut ConformanceWorld) -> StepResult {
    barrier(world).await?;
    let events = this_task_events(world)?;
    check!(
        !events
            .iter()
            .any(|e| TASK_TERMINAL_EVENTS.contains(&e.event_type())),
        "the task must wait for its running tool before ending; its events: {}",
        event_types(&events)
    );
    Ok(())
}

#[then(expr = "the tool call completes with status {string} before task_cancelled")]
async fn completes_before_cancelled(world: &mut ConformanceWorld, status: String) -> StepResult {
    let end = wait_task_end(world).await?;
    check!(
        end.event_type() == "task_cancelled",
        "the task must end cancelled, not with {}",
        end.event_type()
    );
    let events = this_task_events(world)?;
    let done = completed_event(&events, &call_id(1)).with_context(|| {
        format!(
            "the running tool must be reported by tool_completed before the task ends; events: {}",
            event_types(&events)
        )
    })?;
    check!(
        str_at(done.payload(), &["status"]) == Some(status.as_str()),
        "the tool call must have status {status:?}: {}",
        show(done.payload())
    );
    check!(
        done.seq < end.seq,
        "tool_completed must come before task_cancelled"
    );
    Ok(())
}

#[then("a warning between the cancellation and task_cancelled says the tool was stopped")]
async fn force_cancel_warning(world: &mut ConformanceWorld) -> StepResult {
    let end = wait_task_end(world).await?;
    let events = this_task_events(world)?;
    let warning = events
        .iter()
        .find(|e| e.event_type() == "warning")
        .with_context(|| {
            format!(
                "a force-cancelled tool must be reported by a warning; events: {}",
                event_types(&events)
            )
        })?;
    let message = str_at(warning.payload(), &["message"]).unwrap_or_default();
    check!(
        message.contains("RunCommand"),
        "the warning must name the stopped tool: {}",
        show(warning.payload())
    );
    check!(
        warning.seq < end.seq,
        "the warning must come before task_cancelled"
    );
    Ok(())
}

/// The thread keeps the stopped call answered: the next task's first model request carries a
/// tool message for it (an orphan call would make a real gateway reject the request).
#[then(expr = "the next task's first model request answers the stopped call with {string}")]
async fn thread_records_stop(world: &mut ConformanceWorld, needle: String) -> StepResult {
    wait_task_end(world).await?;
    let requests = recorded_task_requests(world).await?;
    let first = requests
        .first()
        .context("the new task made no model request")?;
    let id = call_id(1);
    let messages = first
        .body
        .get("messages")
        .and_then(Value::as_array)
        .context("the model request has no messages")?;
    let answer = messages
        .iter()
        .find(|m| str_at(m, &["role"]) == Some("tool") && str_at(m, &["tool_call_id"]) == Some(&id))
        .with_context(|| format!("no tool message answers {id}: {}", show(&first.body)))?;
    let content = str_at(answer, &["content"]).unwrap_or_default();
    check!(
        content.contains(&needle),
        "the tool message for {id} must say {needle:?}: {content:?}"
    );
    Ok(())
}
