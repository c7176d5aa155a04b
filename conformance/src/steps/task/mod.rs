//! Task steps: starting a task, and what the client, the gateway and the Workspace Service
//! observe while it runs and after it ends.

pub(crate) mod options;
pub(crate) mod start;

use agent_mocks::{GatewayReply, ScriptedToolCall, StreamStep, Usage};
use anyhow::Context;
use cucumber::{given, then, when};
use serde_json::{Value, json};

use crate::driver::ReceivedEvent;
use crate::steps::support::model::{
    model_requests, push_model_reply, push_model_stream, release_model,
};
use crate::steps::support::task::{
    TASK_TERMINAL_EVENTS, barrier, event_types, first_of_type, only_terminal, require_nested_task,
    task_answer, task_events, this_task_events, wait_task_event,
};
use crate::steps::support::{StepResult, at, declares_reference, expect_result, show, str_at};
use crate::world::{ConformanceWorld, TaskInfo};

#[then(expr = "the session state shows the task as {word}")]
async fn state_task_is(world: &mut ConformanceWorld, status: String) -> StepResult {
    let task_id = world.task()?.task_id.clone();
    let response = world.last_response()?;
    let result = expect_result(response, "GetSessionState")?;
    require_nested_task(result)?;
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
    if status == "IDLE" && !declares_reference(world)? {
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

/// The id the scripted ReadFile call carries, so its events and tool message can be found.
pub(crate) const READ_CALL_ID: &str = "call_read_1";

/// Sends StartTask and remembers the task (whatever the answer, for the `Then` steps).
pub(crate) async fn start_task(
    world: &mut ConformanceWorld,
    prompt: &str,
) -> anyhow::Result<Value> {
    world.session()?;
    send_start_task(world, prompt, json!({}), Remember::Always).await
}

/// Which StartTask answers make the task sent the scenario's task.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Remember {
    Always,
    /// Only an accepted one: a refused StartTask leaves the running task the scenario's.
    IfAccepted,
}

/// Sends StartTask for `prompt` with `extra` params (`taskOptions`, another `sessionId` or
/// `taskId`) in this session, or in none when there is none, and records the task.
pub(crate) async fn send_start_task(
    world: &mut ConformanceWorld,
    prompt: &str,
    extra: Value,
    remember: Remember,
) -> anyhow::Result<Value> {
    let session_id = world
        .session
        .as_ref()
        .map(|s| s.session_id.clone())
        .unwrap_or_else(|| "sess_never_created".to_owned());
    // The real app names its tasks (`task-<epoch ms>`, INTEROP.md §1); the runtime answers
    // with the id it uses, which the kit follows (a missing one is REQ-MSG-003's finding,
    // and the kit goes on with the id it asked for).
    let mut params = json!({"sessionId": session_id, "taskId": app_task_id(), "prompt": prompt});
    if let (Value::Object(params), Value::Object(extra)) = (&mut params, extra) {
        params.extend(extra);
    }
    let asked = str_at(&params, &["taskId"]).unwrap_or_default().to_owned();
    let requests_before = model_requests(world.fakes().await?).await.len();
    let runtime = world.runtime().await?;
    let response = runtime.request("StartTask", Some(params)).await?;
    let response_seq = runtime.last_response_seq();
    if remember == Remember::Always || response.get("result").is_some() {
        world.task = Some(TaskInfo {
            task_id: task_id_of(&response, &asked),
            prompt: prompt.to_owned(),
            response: response.clone(),
            response_seq,
            requests_before,
        });
    }
    world.last_response = Some(response.clone());
    world.last_method = Some("StartTask".to_owned());
    Ok(response)
}

/// A task id as the desktop app makes them, `task-<epoch ms>`, never the same twice in a
/// run (two tasks may start within a millisecond).
/// The task id a StartTask answer gives the kit to follow: the one the runtime answered with,
/// else (a result without one is REQ-MSG-003's finding) the id the kit asked for; empty when
/// StartTask was refused.
pub(crate) fn task_id_of(response: &Value, asked: &str) -> String {
    let Some(result) = response.get("result") else {
        return String::new();
    };
    str_at(result, &["taskId"])
        .filter(|id| !id.is_empty())
        .unwrap_or(asked)
        .to_owned()
}

pub(crate) fn app_task_id() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static LAST: AtomicU64 = AtomicU64::new(0);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64);
    let mut id = now;
    let _ = LAST.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |last| {
        id = now.max(last + 1);
        Some(id)
    });
    format!("task-{id}")
}

/// Waits for the task's terminal event.
pub(crate) async fn wait_task_end(world: &mut ConformanceWorld) -> anyhow::Result<ReceivedEvent> {
    let task = world.task()?.clone();
    check!(
        !task.task_id.is_empty(),
        "StartTask gave no taskId to wait for: {}",
        show(&task.response)
    );
    let timeout = world.timeout();
    let runtime = world.started_runtime()?;
    runtime
        .wait_for_event("the task's terminal event", timeout, |e| {
            e.str_field("taskId") == Some(task.task_id.as_str())
                && TASK_TERMINAL_EVENTS.contains(&e.event_type())
        })
        .await
        .with_context(|| {
            format!(
                "the task never ended; its events so far: {} {}",
                event_types(&task_events(&runtime.events(), &task.task_id)),
                crate::report::attribution::awaited(TASK_TERMINAL_EVENTS)
            )
        })
}

#[given(expr = "the workspace file {string} contains {string}")]
async fn workspace_file(world: &mut ConformanceWorld, name: String, content: String) -> StepResult {
    let path = world.dirs()?.workspace.join(&name);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    std::fs::write(&path, content).with_context(|| format!("cannot write {}", path.display()))?;
    Ok(())
}

#[given(regex = r#"^the model will call (ReadFile|DeleteFile) on "([^"]+)"$"#)]
async fn model_reads(world: &mut ConformanceWorld, tool: String, name: String) -> StepResult {
    // The file tools take an absolute path (local-tool-runtime.md §4.1, §4.3).
    let path = world.dirs()?.workspace.join(&name).display().to_string();
    let arguments = json!({"path": path}).to_string();
    push_model_reply(
        world.fakes().await?,
        GatewayReply::ToolCalls {
            text: None,
            calls: vec![ScriptedToolCall::new(READ_CALL_ID, &tool, arguments)],
        },
    );
    Ok(())
}

#[given(regex = r#"^the model will (?:then )?answer "(.*)"$"#)]
async fn model_answers(world: &mut ConformanceWorld, answer: String) -> StepResult {
    push_model_reply(world.fakes().await?, GatewayReply::text(answer));
    Ok(())
}

#[given(expr = "the model will begin answering {string} and then pause")]
async fn model_pauses(world: &mut ConformanceWorld, answer: String) -> StepResult {
    let mut steps = StreamStep::from_reply(&GatewayReply::text(answer), Some(Usage::default()))
        .context("a text reply is a stream")?;
    // Hold the stream after its first text delta until a step releases it.
    let at_pause = steps.len().min(1);
    steps.insert(at_pause, StreamStep::StallUntilReleased);
    push_model_stream(world.fakes().await?, steps);
    Ok(())
}

#[when(expr = "the client starts the task {string}")]
async fn client_starts(world: &mut ConformanceWorld, prompt: String) -> StepResult {
    start_task(world, &prompt).await?;
    Ok(())
}

#[when("the client starts a task whose prompt is 10 MB long")]
async fn client_starts_huge(world: &mut ConformanceWorld) -> StepResult {
    const SIZE: usize = 10 * 1024 * 1024;
    let sentence = "Please summarise this very long document carefully. ";
    let prompt: String = sentence
        .repeat(SIZE / sentence.len() + 1)
        .chars()
        .take(SIZE)
        .collect();
    start_task(world, &prompt).await?;
    Ok(())
}

#[given(expr = "the client has run the task {string} to its end")]
async fn ran_task(world: &mut ConformanceWorld, prompt: String) -> StepResult {
    start_task(world, &prompt).await?;
    wait_task_end(world).await?;
    Ok(())
}

#[when("the task finishes")]
async fn task_finishes(world: &mut ConformanceWorld) -> StepResult {
    wait_task_end(world).await?;
    Ok(())
}

#[when("the model has begun streaming its answer")]
async fn model_began(world: &mut ConformanceWorld) -> StepResult {
    wait_task_event(world, "the first text_chunk of the task", |e| {
        e.event_type() == "text_chunk"
    })
    .await?;
    Ok(())
}

#[then("the first words of the answer arrive while the model is still answering")]
async fn first_words_early(world: &mut ConformanceWorld) -> StepResult {
    // The stream is held after its first delta: a text_chunk now can only have been
    // forwarded as it arrived, not after the whole response was read.
    model_began(world).await?;
    let task_id = world.task()?.task_id.clone();
    let ended = this_task_events(world)?.into_iter().find(|e| {
        e.str_field("taskId") == Some(task_id.as_str())
            && TASK_TERMINAL_EVENTS.contains(&e.event_type())
    });
    check!(
        ended.is_none(),
        "the task ended although the model's stream is still held open"
    );
    release_model(world.started_fakes()?);
    Ok(())
}

#[when("the model finishes its answer")]
async fn model_finishes(world: &mut ConformanceWorld) -> StepResult {
    release_model(world.started_fakes()?);
    Ok(())
}

#[then("the task is acknowledged as running")]
async fn acknowledged(world: &mut ConformanceWorld) -> StepResult {
    let task = world.task()?.clone();
    let result = expect_result(&task.response, "StartTask")?;
    check!(
        str_at(result, &["taskId"]).is_some_and(|t| !t.trim().is_empty()),
        "StartTask must answer with the taskId: {}",
        show(result)
    );
    check!(
        str_at(result, &["status"]) == Some("running"),
        "StartTask must answer status \"running\" at once (the task goes on in the background): {}",
        show(result)
    );
    let events = this_task_events(world)?;
    if let Some(end) = events
        .iter()
        .find(|e| TASK_TERMINAL_EVENTS.contains(&e.event_type()))
    {
        check!(
            end.seq > task.response_seq,
            "StartTask was answered only after the task ended ({}): it must be acknowledged at once",
            end.event_type()
        );
    }
    Ok(())
}

#[then("the runtime reports task_started with the prompt")]
async fn reports_task_started(world: &mut ConformanceWorld) -> StepResult {
    let task = world.task()?.clone();
    let events = this_task_events(world)?;
    let started = events
        .iter()
        .find(|e| e.event_type() == "task_started")
        .with_context(|| {
            format!(
                "no task_started for the task; its events: {}",
                event_types(&events)
            )
        })?;
    check!(
        // Event types the documents do not define are allowed anywhere (INTEROP.md: accept
        // liberally); among the ones they define, task_started comes first.
        events
            .iter()
            .map(ReceivedEvent::event_type)
            .find(|t| crate::validation::is_known_event_type(t))
            == Some("task_started"),
        "task_started must be the task's first event; the task's events: {}",
        event_types(&events)
    );
    check!(
        str_at(started.payload(), &["prompt"]) == Some(task.prompt.as_str()),
        "task_started.payload.prompt is {}, expected the prompt {:?}",
        show(started.payload().get("prompt").unwrap_or(&Value::Null)),
        task.prompt
    );
    Ok(())
}

#[then(expr = "the text_chunk events of the task spell {string}")]
async fn chunks_spell(world: &mut ConformanceWorld, expected: String) -> StepResult {
    // A chunk written after the terminal event is read before the barrier's answer.
    barrier(world).await?;
    let events = this_task_events(world)?;
    let chunks: Vec<&str> = events
        .iter()
        .filter(|e| e.event_type() == "text_chunk")
        .map(|e| str_at(e.payload(), &["text"]).unwrap_or(""))
        .collect();
    let spelled: String = chunks.concat();
    check!(
        spelled == expected,
        "the task's {} text_chunk event(s) spell {spelled:?}, the model streamed {expected:?}",
        chunks.len()
    );
    check!(
        chunks.len() > 1,
        "the model streamed its answer in several deltas but the runtime sent {} text_chunk event(s): text must be forwarded as it arrives",
        chunks.len()
    );
    Ok(())
}

#[then(expr = "the runtime reports tool_requested for ReadFile on {string}")]
async fn reports_tool_requested(world: &mut ConformanceWorld, name: String) -> StepResult {
    let path = world.dirs()?.workspace.join(&name).display().to_string();
    let events = this_task_events(world)?;
    let requested = events
        .iter()
        .find(|e| e.event_type() == "tool_requested")
        .with_context(|| {
            format!(
                "no tool_requested; the task's events: {}",
                event_types(&events)
            )
        })?;
    let payload = requested.payload();
    let checks = [
        ("toolCallId", json!(READ_CALL_ID)),
        ("toolName", json!("ReadFile")),
        ("capability", json!("File.Read")),
    ];
    for (field, want) in checks {
        check!(
            payload.get(field) == Some(&want),
            "tool_requested.payload.{field} is {}, expected {want}: {}",
            show(payload.get(field).unwrap_or(&Value::Null)),
            show(payload)
        );
    }
    check!(
        at(payload, &["arguments", "path"]).and_then(Value::as_str) == Some(path.as_str()),
        "tool_requested.payload.arguments must be the call's arguments {{\"path\": {path:?}}}: {}",
        show(payload)
    );
    let completed_first = events
        .iter()
        .find(|e| e.event_type() == "tool_completed")
        .is_some_and(|c| c.seq < requested.seq);
    check!(
        !completed_first,
        "tool_completed arrived before tool_requested"
    );
    Ok(())
}

#[then(expr = "the runtime reports tool_completed for ReadFile with a result containing {string}")]
async fn reports_tool_completed(world: &mut ConformanceWorld, content: String) -> StepResult {
    let events = this_task_events(world)?;
    let completed = first_of_type(&events, "tool_completed")?;
    let payload = completed.payload();
    for (field, want) in [
        ("toolCallId", json!(READ_CALL_ID)),
        ("toolName", json!("ReadFile")),
        ("status", json!("succeeded")),
    ] {
        check!(
            payload.get(field) == Some(&want),
            "tool_completed.payload.{field} is {}, expected {want}: {}",
            show(payload.get(field).unwrap_or(&Value::Null)),
            show(payload)
        );
    }
    // The payload's other members (latencyMs, …) are REQ-MSG-120's, judged on every message.
    check!(
        str_at(payload, &["result"]).is_some_and(|r| r.contains(&content)),
        "tool_completed.payload.result must show the file's content {content:?}: {}",
        show(payload)
    );
    Ok(())
}

#[then("the task ends with exactly one task_completed event")]
async fn exactly_one_completed(world: &mut ConformanceWorld) -> StepResult {
    only_terminal(world, "task_completed").await?;
    Ok(())
}

#[then(expr = "the task_completed result is {string}")]
async fn completed_result(world: &mut ConformanceWorld, answer: String) -> StepResult {
    let end = wait_task_end(world).await?;
    check!(
        end.event_type() == "task_completed",
        "the task ended with {}",
        end.event_type()
    );
    let events = world.started_runtime()?.events();
    let got = task_answer(&end, &events);
    check!(
        got == answer,
        "the task answered {got:?} (task_completed.result, else its text_chunks), the model answered {answer:?}"
    );
    Ok(())
}

#[then("the session state names the task as still running")]
async fn state_task_running(world: &mut ConformanceWorld) -> StepResult {
    let task_id = world.task()?.task_id.clone();
    let response = world.last_response()?;
    let result = expect_result(response, "GetSessionState")?;
    require_nested_task(result)?;
    check!(
        str_at(result, &["task", "taskId"]) == Some(task_id.as_str()),
        "GetSessionState task.taskId must name the running task {task_id:?}: {}",
        show(result)
    );
    let status = str_at(result, &["task", "status"]).unwrap_or("");
    check!(
        !matches!(
            status,
            "" | "IDLE" | "TASK_COMPLETED" | "TASK_FAILED" | "TASK_CANCELLED"
        ),
        "while the model is still answering, task.status must be an active state, got {status:?}: {}",
        show(result)
    );
    check!(
        str_at(result, &["currentTaskId"]) == Some(task_id.as_str()),
        "GetSessionState currentTaskId must name the running task {task_id:?}: {}",
        show(result)
    );
    Ok(())
}

/// Task states in which the task still occupies the session.
fn is_active_task_status(status: &str) -> bool {
    !matches!(
        status,
        "" | "IDLE" | "TASK_COMPLETED" | "TASK_FAILED" | "TASK_CANCELLED"
    )
}

#[then("the session state shows the task is no longer running")]
async fn state_task_ended(world: &mut ConformanceWorld) -> StepResult {
    let task_id = world.task()?.task_id.clone();
    let response = world.last_response()?;
    let result = expect_result(response, "GetSessionState")?;
    require_nested_task(result)?;
    // local-agent-host.md §3.3: TASK_COMPLETED, then IDLE once the history is uploaded.
    if let Some(task) = result.get("task").filter(|t| !t.is_null()) {
        let status = str_at(task, &["status"]).unwrap_or("");
        check!(
            matches!(status, "TASK_COMPLETED" | "IDLE"),
            "after the task completed, task.status must be TASK_COMPLETED or IDLE, got {status:?}: {}",
            show(result)
        );
        if let Some(id) = str_at(task, &["taskId"]) {
            check!(
                id == task_id,
                "task.taskId names {id:?}, but the only task was {task_id:?}: {}",
                show(result)
            );
        }
    }
    check!(
        str_at(result, &["currentTaskId"]).is_none_or(|current| current != task_id
            || str_at(result, &["task", "status"]).is_some_and(|s| !is_active_task_status(s))),
        "GetSessionState still names the finished task as current and running: {}",
        show(result)
    );
    Ok(())
}
