//! Steps for the agent loop, both state machines, cancellation and the thread
//! (local-agent-host.md §3–§5).
//!
//! Everything here is observed from outside: responses, events, the requests the model (the
//! gateway fake) received and what the Workspace Service was sent. States the runtime passes
//! through without waiting (PROCESSING_RESPONSE, CHECKING_POLICY) leave no trace but the
//! events around them; the steps say so where it matters.

use agent_mocks::sse::{DEFAULT_MODEL, text_stream};
use agent_mocks::{GatewayReply, ScriptedToolCall, StreamStep, Usage};
use anyhow::{Context, anyhow};
use cucumber::{given, when};
use serde_json::{Value, json};

use super::common::{this_task_events, workspace_path};
use super::task::{start_task, wait_task_end};
use super::{
    StepResult, TASK_TERMINAL_EVENTS, barrier, eventually, expect_result, model_requests,
    push_model_reply, push_model_stream, show, str_at,
};
use crate::driver::ReceivedEvent;
use crate::world::{ConformanceWorld, TaskInfo};

/// The id of the call the "every answer" model makes.
const EVERY_CALL_ID: &str = "call_again";

// ---- helpers ---------------------------------------------------------------------------------

/// Writes a workspace file unless the scenario already wrote it.
fn ensure_workspace_file(
    world: &mut ConformanceWorld,
    name: &str,
    content: &str,
) -> anyhow::Result<()> {
    let path = world.dirs()?.workspace.join(name);
    if !path.exists() {
        std::fs::write(&path, content)
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    Ok(())
}

/// Puts `finish_reason` on the finishing chunk of a rendered stream.
fn with_finish_reason(payloads: Vec<String>, finish_reason: &str) -> anyhow::Result<Vec<String>> {
    payloads
        .into_iter()
        .map(|payload| {
            if payload == "[DONE]" {
                return Ok(payload);
            }
            let mut chunk: Value = serde_json::from_str(&payload)
                .with_context(|| format!("the fake's chunk {payload} is not JSON"))?;
            if let Some(choice) = chunk
                .get_mut("choices")
                .and_then(|c| c.get_mut(0))
                .filter(|c| c.get("finish_reason").is_some_and(|f| !f.is_null()))
            {
                choice["finish_reason"] = json!(finish_reason);
            }
            Ok(chunk.to_string())
        })
        .collect()
}

/// The chunks of a reply, as the streaming gateway would send them.
fn rendered(reply: &GatewayReply) -> anyhow::Result<Vec<String>> {
    match agent_mocks::sse::render_reply(reply, DEFAULT_MODEL, Some(Usage::default())) {
        agent_mocks::sse::RenderedReply::Stream(payloads) => Ok(payloads),
        agent_mocks::sse::RenderedReply::Status { .. } => {
            Err(anyhow!("a status reply is not a stream"))
        }
    }
}

/// A ReadFile call on a workspace file.
pub(super) fn read_call(
    world: &mut ConformanceWorld,
    id: &str,
    name: &str,
) -> anyhow::Result<ScriptedToolCall> {
    let path = workspace_path(world, name)?;
    Ok(ScriptedToolCall::new(
        id,
        "ReadFile",
        json!({"path": path}).to_string(),
    ))
}

/// Sends StartTask with extra params; remembers the task only when the runtime accepted it,
/// so a refused StartTask leaves the running task as the scenario's task.
async fn try_start(
    world: &mut ConformanceWorld,
    prompt: &str,
    extra: Value,
) -> anyhow::Result<Value> {
    let session_id = world
        .session
        .as_ref()
        .map(|s| s.session_id.clone())
        .unwrap_or_else(|| "sess_never_created".to_owned());
    // The real app names every task (`task-<epoch ms>`, INTEROP.md §1).
    let asked = super::task::app_task_id();
    let mut params = json!({"sessionId": session_id, "taskId": asked, "prompt": prompt});
    if let (Value::Object(params), Value::Object(extra)) = (&mut params, extra) {
        params.extend(extra);
    }
    let asked = str_at(&params, &["taskId"]).unwrap_or_default().to_owned();
    let requests_before = model_requests(world.fakes().await?).await.len();
    let runtime = world.runtime().await?;
    let response = runtime.request("StartTask", Some(params)).await?;
    let response_seq = runtime.last_response_seq();
    if response.get("result").is_some() {
        world.task = Some(TaskInfo {
            task_id: super::task::task_id_of(&response, &asked),
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

pub(super) fn of_type<'a>(events: &'a [ReceivedEvent], kind: &str) -> Vec<&'a ReceivedEvent> {
    events.iter().filter(|e| e.event_type() == kind).collect()
}

pub(super) fn u64_at(value: &Value, field: &str) -> Option<u64> {
    value.get(field).and_then(Value::as_u64)
}

/// Waits for the end of the task and checks it is the only terminal event, of `kind`.
pub(super) async fn only_terminal(
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
            "a task ends with exactly one terminal event, here {kind}; this one had: {names} ({})",
            terminals
                .iter()
                .map(|e| show(e.payload()))
                .collect::<Vec<_>>()
                .join("; ")
        )),
    }
}

/// The messages of a recorded model request.
pub(super) fn messages(body: &Value) -> anyhow::Result<&Vec<Value>> {
    body.get("messages")
        .and_then(Value::as_array)
        .with_context(|| format!("the model request has no messages array: {}", show(body)))
}

/// Bodies of the model requests made for the scenario's (current) task.
pub(super) async fn task_requests(world: &ConformanceWorld) -> anyhow::Result<Vec<Value>> {
    Ok(recorded_task_requests(world)
        .await?
        .into_iter()
        .map(|r| r.body)
        .collect())
}

/// The model requests made for the scenario's (current) task: those the gateway received
/// after StartTask was sent (a runtime need not send the reference's `X-Task-Id` header).
pub(super) async fn recorded_task_requests(
    world: &ConformanceWorld,
) -> anyhow::Result<Vec<agent_mocks::RecordedRequest>> {
    let before = world.task()?.requests_before;
    Ok(model_requests(world.started_fakes()?)
        .await
        .into_iter()
        .skip(before)
        .collect())
}

// ---- Given: the runtime and the services ------------------------------------------------------

// ---- Given: the model --------------------------------------------------------------------------

#[given(expr = "the model will call ReadFile on {string} in every answer")]
async fn model_reads_forever(world: &mut ConformanceWorld, name: String) -> StepResult {
    ensure_workspace_file(world, &name, "Nothing new in here.")?;
    let call = read_call(world, EVERY_CALL_ID, &name)?;
    world
        .fakes()
        .await?
        .streaming_gateway
        .set_fallback_reply(Some(GatewayReply::ToolCalls {
            text: None,
            calls: vec![call],
        }));
    Ok(())
}

#[given(expr = "the model will call ReadFile on {string} {int} times, then answer {string}")]
pub(super) async fn model_reads_n_times(
    world: &mut ConformanceWorld,
    name: String,
    times: usize,
    answer: String,
) -> StepResult {
    ensure_workspace_file(world, &name, "Line one.\nLine two.\n")?;
    for n in 1..=times {
        let call = read_call(world, &format!("call_read_{n:02}"), &name)?;
        push_model_reply(
            world.fakes().await?,
            GatewayReply::ToolCalls {
                text: None,
                calls: vec![call],
            },
        );
    }
    push_model_reply(world.fakes().await?, GatewayReply::text(answer));
    Ok(())
}

#[given(expr = "the model will stop with finish reason {string} after answering {string}")]
async fn model_answers_with(
    world: &mut ConformanceWorld,
    finish_reason: String,
    answer: String,
) -> StepResult {
    let payloads = text_stream(
        &answer,
        &finish_reason,
        DEFAULT_MODEL,
        Some(Usage::default()),
    );
    push_model_reply(world.fakes().await?, GatewayReply::RawSse(payloads));
    Ok(())
}

#[given(
    expr = "the model will stop with finish reason {string} after answering {string}, {int} times in a row"
)]
async fn model_answers_with_n(
    world: &mut ConformanceWorld,
    finish_reason: String,
    answer: String,
    times: usize,
) -> StepResult {
    for _ in 0..times {
        model_answers_with(world, finish_reason.clone(), answer.clone()).await?;
    }
    Ok(())
}

#[given(expr = "the model will call ReadFile on {string} with finish reason {string}")]
async fn model_reads_with(
    world: &mut ConformanceWorld,
    name: String,
    finish_reason: String,
) -> StepResult {
    ensure_workspace_file(world, &name, "Line one.\nLine two.\n")?;
    let call = read_call(world, super::task::READ_CALL_ID, &name)?;
    let reply = GatewayReply::ToolCalls {
        text: None,
        calls: vec![call],
    };
    let payloads = with_finish_reason(rendered(&reply)?, &finish_reason)?;
    push_model_reply(world.fakes().await?, GatewayReply::RawSse(payloads));
    Ok(())
}

#[given(expr = "the model will call the tool {string} with the arguments {string}")]
async fn model_calls_tool(
    world: &mut ConformanceWorld,
    tool: String,
    arguments: String,
) -> StepResult {
    push_model_reply(
        world.fakes().await?,
        GatewayReply::tool_call("call_tool_1", tool, arguments),
    );
    Ok(())
}

/// `"a.txt", "b.txt" and "c.txt"` → the names.
pub(super) fn quoted_names(list: &str) -> Vec<String> {
    list.split('"')
        .skip(1)
        .step_by(2)
        .map(str::to_owned)
        .collect()
}

pub(super) fn multi_call_id(index: usize) -> String {
    format!("call_multi_{}", index + 1)
}

#[given(regex = r#"^the model will read (".+") in one answer$"#)]
async fn model_reads_several(world: &mut ConformanceWorld, list: String) -> StepResult {
    let mut calls = Vec::new();
    for (index, name) in quoted_names(&list).iter().enumerate() {
        calls.push(read_call(world, &multi_call_id(index), name)?);
    }
    check!(calls.len() > 1, "name at least two files: {list}");
    push_model_reply(
        world.fakes().await?,
        GatewayReply::ToolCalls { text: None, calls },
    );
    Ok(())
}

#[given("the model will wait before answering")]
async fn model_waits(world: &mut ConformanceWorld) -> StepResult {
    let mut steps = vec![StreamStep::StallUntilReleased];
    steps.extend(
        StreamStep::from_reply(
            &GatewayReply::text("Sorry for the wait, here I am."),
            Some(Usage::default()),
        )
        .context("a text reply is a stream")?,
    );
    push_model_stream(world.fakes().await?, steps);
    Ok(())
}

// ---- When: tasks -------------------------------------------------------------------------------

#[when(expr = "the client starts the task {string} with taskOptions.maxSteps {int}")]
async fn starts_with_max_steps(
    world: &mut ConformanceWorld,
    prompt: String,
    max_steps: i64,
) -> StepResult {
    let response = try_start(
        world,
        &prompt,
        json!({"taskOptions": {"maxSteps": max_steps}}),
    )
    .await?;
    expect_result(&response, "StartTask")?;
    Ok(())
}

#[when(expr = "the client tries to start the task {string} with taskOptions.maxSteps {int}")]
async fn tries_with_max_steps(
    world: &mut ConformanceWorld,
    prompt: String,
    max_steps: i64,
) -> StepResult {
    try_start(
        world,
        &prompt,
        json!({"taskOptions": {"maxSteps": max_steps}}),
    )
    .await?;
    Ok(())
}

#[when(expr = "the client tries to start the task {string}")]
async fn tries_to_start(world: &mut ConformanceWorld, prompt: String) -> StepResult {
    try_start(world, &prompt, json!({})).await?;
    Ok(())
}

#[when(expr = "the client tries to start the task {string} in the session {string}")]
async fn tries_in_session(
    world: &mut ConformanceWorld,
    prompt: String,
    session_id: String,
) -> StepResult {
    let runtime = world.runtime().await?;
    let response = runtime
        .request(
            "StartTask",
            Some(json!({
                "sessionId": session_id,
                "taskId": super::task::app_task_id(),
                "prompt": prompt,
            })),
        )
        .await?;
    world.last_response = Some(response);
    world.last_method = Some("StartTask".to_owned());
    Ok(())
}

#[when(expr = "the client tries to start the task {string} with the finished task's taskId")]
async fn tries_same_task_id(world: &mut ConformanceWorld, prompt: String) -> StepResult {
    let task_id = world.task()?.task_id.clone();
    try_start(world, &prompt, json!({"taskId": task_id})).await?;
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

#[when("the model has received the task's request")]
async fn model_received(world: &mut ConformanceWorld) -> StepResult {
    let before = world.task()?.requests_before;
    let timeout = world.timeout();
    let fakes = world.started_fakes()?;
    eventually(
        timeout,
        "the model never received the task's request",
        || async move {
            let requests = fakes.streaming_gateway.requests().await;
            (requests.len() > before)
                .then_some(())
                .ok_or_else(|| format!("{} model request(s), none for the task", requests.len()))
        },
    )
    .await?;
    Ok(())
}

#[when("the client cancels the task once the model has received its request")]
async fn cancels_when_asked(world: &mut ConformanceWorld) -> StepResult {
    model_received(world).await?;
    cancels(world).await?;
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
                crate::report::NOT_JUDGED
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

/// A second task in the same session, started the way the happy path starts one.
#[when(expr = "the client starts another task {string}")]
async fn starts_another(world: &mut ConformanceWorld, prompt: String) -> StepResult {
    let response = start_task(world, &prompt).await?;
    expect_result(&response, "StartTask")?;
    Ok(())
}

#[given(expr = "the client has started the task {string}")]
async fn has_started(world: &mut ConformanceWorld, prompt: String) -> StepResult {
    let response = start_task(world, &prompt).await?;
    expect_result(&response, "StartTask")?;
    Ok(())
}
