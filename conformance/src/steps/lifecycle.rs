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
use cucumber::{given, then, when};
use serde_json::{Value, json};

use super::task::{start_task, wait_task_end};
use super::{
    StepResult, TASK_TERMINAL_EVENTS, at, barrier, event_types, eventually, expect_result,
    model_requests, push_model_reply, push_model_stream, show, str_at, task_events,
};
use crate::driver::ReceivedEvent;
use crate::world::{ConformanceWorld, TaskInfo};

/// The id of the call the "every answer" model makes.
const EVERY_CALL_ID: &str = "call_again";

// ---- helpers ---------------------------------------------------------------------------------

/// Absolute path of a workspace file (ReadFile takes absolute paths).
fn workspace_path(world: &mut ConformanceWorld, name: &str) -> anyhow::Result<String> {
    Ok(world.dirs()?.workspace.join(name).display().to_string())
}

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
fn read_call(
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
    let mut params = json!({"sessionId": session_id, "prompt": prompt});
    if let (Value::Object(params), Value::Object(extra)) = (&mut params, extra) {
        params.extend(extra);
    }
    let runtime = world.runtime().await?;
    let response = runtime.request("StartTask", Some(params)).await?;
    let response_seq = runtime.last_response_seq();
    if let Some(task_id) = response.get("result").and_then(|r| str_at(r, &["taskId"])) {
        world.task = Some(TaskInfo {
            task_id: task_id.to_owned(),
            prompt: prompt.to_owned(),
            response: response.clone(),
            response_seq,
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

fn this_task_events(world: &ConformanceWorld) -> anyhow::Result<Vec<ReceivedEvent>> {
    let task_id = world.task()?.task_id.clone();
    Ok(task_events(&world.started_runtime()?.events(), &task_id))
}

fn of_type<'a>(events: &'a [ReceivedEvent], kind: &str) -> Vec<&'a ReceivedEvent> {
    events.iter().filter(|e| e.event_type() == kind).collect()
}

fn u64_at(value: &Value, field: &str) -> Option<u64> {
    value.get(field).and_then(Value::as_u64)
}

/// Waits for the end of the task and checks it is the only terminal event, of `kind`.
async fn only_terminal(world: &mut ConformanceWorld, kind: &str) -> anyhow::Result<ReceivedEvent> {
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
fn messages(body: &Value) -> anyhow::Result<&Vec<Value>> {
    body.get("messages")
        .and_then(Value::as_array)
        .with_context(|| format!("the model request has no messages array: {}", show(body)))
}

/// Bodies of the model requests made for the scenario's (current) task.
async fn task_requests(world: &ConformanceWorld) -> anyhow::Result<Vec<Value>> {
    let task_id = world.task()?.task_id.clone();
    Ok(model_requests(world.started_fakes()?)
        .await
        .into_iter()
        .filter(|r| r.header("x-task-id") == Some(task_id.as_str()))
        .map(|r| r.body)
        .collect())
}

// ---- Given: the runtime and the services ------------------------------------------------------

#[given("the Workspace Service cannot be reached")]
async fn workspace_down(world: &mut ConformanceWorld) -> StepResult {
    world.fakes().await?.workspace.go_down().await;
    Ok(())
}

#[given(expr = "the Workspace Service answers every upload with status {int}")]
async fn workspace_fails(world: &mut ConformanceWorld, status: u16) -> StepResult {
    let body =
        json!({"code": "INTERNAL_ERROR", "message": "Internal server error", "retryable": true});
    world.fakes().await?.workspace.fail_next(50, status, body);
    Ok(())
}

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
async fn model_reads_n_times(
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
fn quoted_names(list: &str) -> Vec<String> {
    list.split('"')
        .skip(1)
        .step_by(2)
        .map(str::to_owned)
        .collect()
}

fn multi_call_id(index: usize) -> String {
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
            Some(json!({"sessionId": session_id, "prompt": prompt})),
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
    let task_id = world.task()?.task_id.clone();
    let timeout = world.timeout();
    world
        .started_runtime()?
        .wait_for_event("llm_request_started for the task", timeout, |e| {
            e.event_type() == "llm_request_started"
                && e.str_field("taskId") == Some(task_id.as_str())
        })
        .await?;
    let fakes = world.started_fakes()?;
    eventually(
        timeout,
        "the model never received the task's request",
        || {
            let task_id = task_id.clone();
            async move {
                let requests = fakes.streaming_gateway.requests().await;
                requests
                    .iter()
                    .any(|r| r.header("x-task-id") == Some(task_id.as_str()))
                    .then_some(())
                    .ok_or_else(|| {
                        format!("{} model request(s), none for the task", requests.len())
                    })
            }
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
        .context("task_started has no integer eventId")?;
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

// ---- Then: refusals ----------------------------------------------------------------------------

#[then("the error message names the running task")]
async fn message_names_running(world: &mut ConformanceWorld) -> StepResult {
    let task_id = world.task()?.task_id.clone();
    let error = super::errors::last_error(world)?;
    let message = str_at(error, &["message"]).unwrap_or("");
    check!(
        message.contains(&task_id),
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
    let mut done = 0u64;
    let mut open: Option<String> = None;
    let mut ids: Vec<String> = Vec::new();
    for event in &events {
        let payload = event.payload();
        match event.event_type() {
            "step_started" => {
                let id = str_at(payload, &["stepId"]).unwrap_or("").to_owned();
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
                        && u64_at(payload, "stepCount") == Some(done),
                    "step_started {} must carry stepNumber {} and stepCount {done} (the steps completed before it)",
                    show(payload),
                    done + 1
                );
                ids.push(id.clone());
                open = Some(id);
            }
            "step_completed" => {
                let id = str_at(payload, &["stepId"]).unwrap_or("");
                check!(
                    open.as_deref() == Some(id),
                    "step_completed {} does not close the open step {open:?}",
                    show(payload)
                );
                done += 1;
                check!(
                    u64_at(payload, "stepCount") == Some(done),
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
        str_at(payload, &["errorCode"]) == Some(code.as_str()),
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
    check!(
        u64_at(payload, "currentStep") == Some(after)
            && u64_at(payload, "stepCount") == Some(after)
            && u64_at(payload, "maxSteps") == Some(max),
        "step_limit_approaching must carry currentStep {after}, stepCount {after}, maxSteps {max}: {}",
        show(payload)
    );
    let completed = of_type(&events, "step_completed")
        .into_iter()
        .find(|e| u64_at(e.payload(), "stepCount") == Some(after))
        .with_context(|| format!("no step_completed with stepCount {after}"))?;
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
            && str_at(payload, &["errorCode"]) == Some(code.as_str()),
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

// ---- Then: the state machines ------------------------------------------------------------------

#[then(expr = "the session state shows the task as {word}")]
async fn state_task_is(world: &mut ConformanceWorld, status: String) -> StepResult {
    let task_id = world.task()?.task_id.clone();
    let response = world.last_response()?;
    let result = expect_result(response, "GetSessionState")?;
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
    check!(
        session_end.event_type() == "session_cancelled",
        "a Shutdown during a running task ends the session with session_cancelled, got {}",
        session_end.event_type()
    );
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
    Ok(())
}

// ---- Then: the thread --------------------------------------------------------------------------

#[then(
    expr = "the first model request of the new task carries the earlier prompt {string} and answer {string}"
)]
async fn earlier_turns(world: &mut ConformanceWorld, prompt: String, answer: String) -> StepResult {
    wait_task_end(world).await?;
    let new_prompt = world.task()?.prompt.clone();
    let requests = task_requests(world).await?;
    let first = requests
        .first()
        .context("the new task made no model request")?;
    let all = messages(first)?;
    let find = |role: &str, text: &str| {
        all.iter().position(|m| {
            str_at(m, &["role"]) == Some(role) && str_at(m, &["content"]) == Some(text)
        })
    };
    let (Some(p), Some(a), Some(n)) = (
        find("user", &prompt),
        find("assistant", &answer),
        find("user", &new_prompt),
    ) else {
        fail!(
            "the request must carry the earlier user prompt, the earlier answer and the new prompt: {}",
            show(first)
        );
    };
    check!(
        p < a && a < n,
        "the earlier prompt, its answer and the new prompt must come in that order: {}",
        show(first)
    );
    Ok(())
}

/// Messages of the last model request of the task.
async fn last_request(world: &ConformanceWorld) -> anyhow::Result<Value> {
    task_requests(world)
        .await?
        .pop()
        .context("the task made no model request")
}

#[then(
    regex = r"^the last model request replaces (\d+) earlier messages with the truncation marker$"
)]
async fn marker_present(world: &mut ConformanceWorld, dropped: usize) -> StepResult {
    wait_task_end(world).await?;
    let body = last_request(world).await?;
    let marker = format!("[Earlier conversation truncated — {dropped} messages removed]");
    let found = messages(&body)?
        .iter()
        .any(|m| str_at(m, &["content"]).is_some_and(|c| c.contains(&marker)));
    check!(
        found,
        "no message {marker:?} in the last request: {}",
        show(&body)
    );
    Ok(())
}

#[then("the last model request still starts the conversation with the task's prompt")]
async fn first_user_kept(world: &mut ConformanceWorld) -> StepResult {
    let prompt = world.task()?.prompt.clone();
    let body = last_request(world).await?;
    let first_user = messages(&body)?
        .iter()
        .find(|m| str_at(m, &["role"]) == Some("user"));
    check!(
        first_user.and_then(|m| str_at(m, &["content"])) == Some(prompt.as_str()),
        "the first user message of the last request must be the opening prompt {prompt:?}: {}",
        show(&body)
    );
    Ok(())
}

#[then(expr = "the last model request ends with the latest tool call and its result")]
async fn latest_kept(world: &mut ConformanceWorld) -> StepResult {
    let body = last_request(world).await?;
    let all = messages(&body)?;
    let n = all.len();
    check!(n >= 2, "the last request is too short: {}", show(&body));
    let call = &all[n - 2];
    let result = &all[n - 1];
    let id = str_at(result, &["tool_call_id"]).unwrap_or("");
    check!(
        str_at(result, &["role"]) == Some("tool")
            && at(call, &["tool_calls"])
                .and_then(Value::as_array)
                .is_some_and(|calls| calls.iter().any(|c| str_at(c, &["id"]) == Some(id))),
        "the last request must end with the latest assistant tool call and its tool result: {}",
        show(&body)
    );
    Ok(())
}

#[then(expr = "the runtime reports context_compacted with messagesDropped {int}")]
async fn compacted(world: &mut ConformanceWorld, dropped: u64) -> StepResult {
    wait_task_end(world).await?;
    let events = this_task_events(world)?;
    let compactions = of_type(&events, "context_compacted");
    check!(
        compactions
            .iter()
            .any(|e| u64_at(e.payload(), "messagesDropped") == Some(dropped)),
        "no context_compacted with messagesDropped {dropped}; reported: {}",
        if compactions.is_empty() {
            "none".to_owned()
        } else {
            compactions
                .iter()
                .map(|e| show(e.payload()))
                .collect::<Vec<_>>()
                .join(", ")
        }
    );
    Ok(())
}

#[then("no model request carries a tool result without the tool call it answers")]
async fn no_orphans(world: &mut ConformanceWorld) -> StepResult {
    wait_task_end(world).await?;
    let requests = model_requests(world.started_fakes()?).await;
    check!(!requests.is_empty(), "the model received no request");
    for (index, request) in requests.iter().enumerate() {
        let all = messages(&request.body)?;
        for (at_index, message) in all.iter().enumerate() {
            if str_at(message, &["role"]) != Some("tool") {
                continue;
            }
            let id = str_at(message, &["tool_call_id"]).unwrap_or("");
            let answered = all[..at_index].iter().any(|m| {
                str_at(m, &["role"]) == Some("assistant")
                    && m.get("tool_calls")
                        .and_then(Value::as_array)
                        .is_some_and(|calls| calls.iter().any(|c| str_at(c, &["id"]) == Some(id)))
            });
            check!(
                answered,
                "model request {} carries a tool result for {id:?} with no assistant tool call before it: {}",
                index + 1,
                show(&request.body)
            );
        }
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

#[then(expr = "no model request carries more than {int} messages")]
async fn at_most_messages(world: &mut ConformanceWorld, limit: usize) -> StepResult {
    wait_task_end(world).await?;
    let requests = model_requests(world.started_fakes()?).await;
    check!(!requests.is_empty(), "the model received no request");
    for (index, request) in requests.iter().enumerate() {
        let count = messages(&request.body)?.len();
        check!(
            count <= limit,
            "model request {} carries {count} messages; the gateway rejects more than {limit}",
            index + 1
        );
    }
    Ok(())
}

#[given(expr = "the policy allows requests of at most {int} input tokens")]
async fn max_input_tokens(world: &mut ConformanceWorld, tokens: u64) -> StepResult {
    world
        .fakes()
        .await?
        .session
        .update_policy(|bundle| bundle["llmPolicy"]["maxInputTokens"] = json!(tokens));
    Ok(())
}

#[given(expr = "the workspace file {string} holds {int} distinct words")]
async fn big_file(world: &mut ConformanceWorld, name: String, words: usize) -> StepResult {
    let text: Vec<String> = (0..words).map(|i| format!("marker{i:05}")).collect();
    let path = world.dirs()?.workspace.join(&name);
    std::fs::write(&path, text.join(" "))
        .with_context(|| format!("cannot write {}", path.display()))?;
    Ok(())
}

#[given(
    expr = "the model will call ReadFile on {string} once, then on {string} {int} times, then answer {string}"
)]
async fn model_reads_big_then_small(
    world: &mut ConformanceWorld,
    first: String,
    then: String,
    times: usize,
    answer: String,
) -> StepResult {
    let call = read_call(world, "call_read_first", &first)?;
    push_model_reply(
        world.fakes().await?,
        GatewayReply::ToolCalls {
            text: None,
            calls: vec![call],
        },
    );
    model_reads_n_times(world, then, times, answer).await
}

#[then("the last model request carries a truncation marker where messages were dropped")]
async fn some_marker(world: &mut ConformanceWorld) -> StepResult {
    wait_task_end(world).await?;
    let body = last_request(world).await?;
    let found = messages(&body)?.iter().any(|m| {
        str_at(m, &["content"]).is_some_and(|c| {
            c.split("[Earlier conversation truncated — ")
                .nth(1)
                .and_then(|rest| rest.split(' ').next())
                .is_some_and(|n| n.parse::<u64>().is_ok_and(|n| n > 0))
                && c.contains(" messages removed]")
        })
    });
    check!(
        found,
        "no \"[Earlier conversation truncated — N messages removed]\" marker in the last request: {}",
        show(&body)
    );
    Ok(())
}

#[then(expr = "the last model request no longer carries the content of {string}")]
async fn content_dropped(world: &mut ConformanceWorld, name: String) -> StepResult {
    wait_task_end(world).await?;
    let path = world.dirs()?.workspace.join(&name);
    let content = std::fs::read_to_string(&path)
        .with_context(|| format!("cannot read {}", path.display()))?;
    let probe: String = content.chars().take(40).collect();
    let body = last_request(world).await?;
    let carried = messages(&body)?
        .iter()
        .any(|m| str_at(m, &["content"]).is_some_and(|c| c.contains(&probe)));
    check!(
        !carried,
        "the last request still carries {name}, which cannot fit within llmPolicy.maxInputTokens"
    );
    Ok(())
}
