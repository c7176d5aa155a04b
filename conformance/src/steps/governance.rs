//! Steps for the LLM Gateway client, the policy enforcer and approvals
//! (local-agent-host.md §6, §8, §10; INTEROP.md §1, §2, §5).
//!
//! The policy steps edit the Session Service fake's bundle template, so they must come
//! before "a running session" (the bundle is fetched by CreateSession). The gateway steps
//! script the streaming gateway fake; its replies are consumed in order.

use agent_mocks::policy::{capability_entry, remove_capability, set_capability};
use agent_mocks::{GatewayReply, ScriptedToolCall, StreamStep};
use anyhow::{Context, anyhow};
use cucumber::{given, then, when};
use serde_json::{Value, json};

use super::task::{READ_CALL_ID, wait_task_end};
use super::{
    StepResult, TASK_TERMINAL_EVENTS, at, barrier, event_types, expect_result, model_requests,
    push_model_reply, push_model_stream, show, str_at, task_events,
};
use crate::driver::ReceivedEvent;
use crate::world::{ConformanceWorld, TaskInfo};

/// The ids of the two calls of a parallel answer.
const READ_A_CALL_ID: &str = "call_read_a";
const READ_B_CALL_ID: &str = "call_read_b";
/// The id of the WriteFile call scripted next to a ReadFile call.
const WRITE_CALL_ID: &str = "call_write_1";

// ---- helpers -----------------------------------------------------------------------------------

/// The absolute path of a workspace file, as a model would name it (ReadFile takes absolute
/// paths, local-tool-runtime.md §4.1).
fn workspace_path(world: &mut ConformanceWorld, name: &str) -> anyhow::Result<String> {
    Ok(world.dirs()?.workspace.join(name).display().to_string())
}

async fn edit_policy(
    world: &mut ConformanceWorld,
    edit: impl FnOnce(&mut Value),
) -> anyhow::Result<()> {
    check!(
        world.session.is_none(),
        "the policy must be shaped before the session is created (put this step before \"a running session\")"
    );
    world.fakes().await?.session.update_policy(edit);
    Ok(())
}

/// This task's events so far.
fn this_task_events(world: &ConformanceWorld) -> anyhow::Result<Vec<ReceivedEvent>> {
    let task_id = world.task()?.task_id.clone();
    Ok(task_events(&world.started_runtime()?.events(), &task_id))
}

/// Waits (bounded) for an event of this task.
async fn wait_task_event(
    world: &ConformanceWorld,
    what: &str,
    predicate: impl Fn(&ReceivedEvent) -> bool,
) -> anyhow::Result<ReceivedEvent> {
    let task_id = world.task()?.task_id.clone();
    let timeout = world.timeout();
    let runtime = world.started_runtime()?;
    runtime
        .wait_for_event(what, timeout, |e| {
            e.str_field("taskId") == Some(task_id.as_str()) && predicate(e)
        })
        .await
        .with_context(|| {
            format!(
                "the task's events so far: {}",
                event_types(&task_events(&runtime.events(), &task_id))
            )
        })
}

/// The task's terminal event, which must be task_failed.
async fn task_failure(world: &mut ConformanceWorld) -> anyhow::Result<Value> {
    let end = wait_task_end(world).await?;
    check!(
        end.event_type() == "task_failed",
        "the task should have failed but ended with {}: {}",
        end.event_type(),
        show(end.payload())
    );
    Ok(end.payload().clone())
}

/// The tool_completed event of one call.
async fn tool_completed(world: &ConformanceWorld, call_id: &str) -> anyhow::Result<Value> {
    let event = wait_task_event(world, &format!("tool_completed for {call_id}"), |e| {
        e.event_type() == "tool_completed" && str_at(e.payload(), &["toolCallId"]) == Some(call_id)
    })
    .await?;
    Ok(event.payload().clone())
}

/// Every request body the model received.
async fn model_bodies(world: &ConformanceWorld) -> anyhow::Result<Vec<Value>> {
    Ok(model_requests(world.started_fakes()?)
        .await
        .into_iter()
        .map(|r| r.body)
        .collect())
}

fn messages(body: &Value) -> &[Value] {
    body.get("messages")
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

/// The `{role: "tool"}` message answering `call_id` in the last request that has one.
async fn tool_message(world: &ConformanceWorld, call_id: &str) -> anyhow::Result<Value> {
    let bodies = model_bodies(world).await?;
    bodies
        .iter()
        .rev()
        .flat_map(|body| messages(body).iter())
        .find(|m| str_at(m, &["role"]) == Some("tool") && str_at(m, &["tool_call_id"]) == Some(call_id))
        .cloned()
        .ok_or_else(|| {
            anyhow!(
                "no model request carries a {{role: \"tool\", tool_call_id: {call_id:?}}} message ({} request(s); last: {})",
                bodies.len(),
                bodies.last().map(show).unwrap_or_default()
            )
        })
}

/// The approval_requested event of this task (waits for it).
async fn approval_request(world: &ConformanceWorld) -> anyhow::Result<Value> {
    let event = wait_task_event(world, "approval_requested", |e| {
        e.event_type() == "approval_requested"
    })
    .await?;
    Ok(event.payload().clone())
}

async fn approval_id(world: &ConformanceWorld) -> anyhow::Result<String> {
    let payload = approval_request(world).await?;
    str_at(&payload, &["approvalId"])
        .filter(|id| !id.trim().is_empty())
        .map(str::to_owned)
        .with_context(|| {
            format!(
                "approval_requested carries no approvalId in its payload: {}",
                show(&payload)
            )
        })
}

/// Sends ApproveAction and keeps its answer for the `Then` steps.
async fn approve_action(world: &mut ConformanceWorld, params: Value) -> anyhow::Result<()> {
    let response = world
        .runtime()
        .await?
        .request("ApproveAction", Some(params))
        .await?;
    world.last_response = Some(response);
    world.last_method = Some("ApproveAction".to_owned());
    Ok(())
}

async fn decide(
    world: &mut ConformanceWorld,
    decision: &str,
    reason: Option<&str>,
) -> anyhow::Result<()> {
    let id = approval_id(world).await?;
    let session_id = world.session()?.session_id.clone();
    let mut params = json!({"sessionId": session_id, "approvalId": id, "decision": decision});
    if let Some(reason) = reason {
        params["reason"] = json!(reason);
    }
    approve_action(world, params).await
}

/// Pushes `count` plain HTTP answers with `status` on the model.
async fn push_status(
    world: &mut ConformanceWorld,
    count: usize,
    status: u16,
    headers: Vec<(String, String)>,
    error: &str,
) -> anyhow::Result<()> {
    let fakes = world.fakes().await?;
    for _ in 0..count {
        push_model_reply(
            fakes,
            GatewayReply::Status {
                status,
                headers: headers.clone(),
                body: json!({ "error": error }).to_string(),
            },
        );
    }
    Ok(())
}

/// One OpenAI streaming chunk with a delta.
fn delta_chunk(delta: Value, finish_reason: Option<&str>) -> String {
    json!({
        "id": "chatcmpl-conformance",
        "object": "chat.completion.chunk",
        "created": 1_700_000_000,
        "model": "gpt-test-1",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
    })
    .to_string()
}

fn text_chunks(text: &str) -> Vec<String> {
    agent_mocks::sse::split_text(text)
        .into_iter()
        .map(|piece| delta_chunk(json!({"content": piece}), None))
        .collect()
}

fn parse_rfc3339(stamp: &str) -> Option<time::OffsetDateTime> {
    time::OffsetDateTime::parse(stamp, &time::format_description::well_known::Rfc3339).ok()
}

// ---- Given: the runtime's environment ------------------------------------------------------------

#[given(expr = "the runtime is started with {word} set to {string}")]
async fn runtime_env(world: &mut ConformanceWorld, name: String, value: String) -> StepResult {
    world.set_runtime_env(&name, &value)?;
    Ok(())
}

#[given(expr = "the runtime is started with the extra gateway header {string} set to {string}")]
async fn gateway_header(world: &mut ConformanceWorld, name: String, value: String) -> StepResult {
    let mut headers = serde_json::Map::new();
    headers.insert(name, json!(value));
    world.set_runtime_env("LLM_GATEWAY_HEADERS", &Value::Object(headers).to_string())?;
    Ok(())
}

// ---- Given: the policy ---------------------------------------------------------------------------

#[given("the policy grants File.Read")]
async fn grants_file_read(world: &mut ConformanceWorld) -> StepResult {
    edit_policy(world, |bundle| {
        set_capability(
            bundle,
            capability_entry("File.Read", json!({"allowedPaths": ["."]})),
        );
    })
    .await?;
    Ok(())
}

#[given(expr = "the policy does not grant {word}")]
async fn does_not_grant(world: &mut ConformanceWorld, capability: String) -> StepResult {
    edit_policy(world, |bundle| remove_capability(bundle, &capability)).await?;
    Ok(())
}

#[given(expr = "the policy allows File.Read under {string} and blocks {string}")]
async fn allows_and_blocks(
    world: &mut ConformanceWorld,
    allowed: String,
    blocked: String,
) -> StepResult {
    edit_policy(world, |bundle| {
        set_capability(
            bundle,
            capability_entry(
                "File.Read",
                json!({"allowedPaths": [allowed], "blockedPaths": [blocked]}),
            ),
        );
    })
    .await?;
    Ok(())
}

#[given(expr = "the policy allows File.Read only in the workspace folder {string}")]
async fn allows_only_folder(world: &mut ConformanceWorld, folder: String) -> StepResult {
    // An absolute entry without a trailing slash, like "/Users/me/proj".
    let absolute = workspace_path(world, &folder)?;
    std::fs::create_dir_all(&absolute).with_context(|| format!("cannot create {absolute}"))?;
    edit_policy(world, |bundle| {
        set_capability(
            bundle,
            capability_entry("File.Read", json!({"allowedPaths": [absolute]})),
        );
    })
    .await?;
    Ok(())
}

#[given(expr = "the policy limits File.Read to files of at most {int} bytes")]
async fn limits_size(world: &mut ConformanceWorld, bytes: u64) -> StepResult {
    edit_policy(world, |bundle| {
        set_capability(
            bundle,
            capability_entry(
                "File.Read",
                json!({"allowedPaths": ["."], "maxFileSizeBytes": bytes}),
            ),
        );
    })
    .await?;
    Ok(())
}

#[given(expr = "the policy requires approval for {word} under the rule {string}")]
async fn requires_approval(
    world: &mut ConformanceWorld,
    capability: String,
    title: String,
) -> StepResult {
    let rule_id = format!(
        "approval_conformance_{}",
        capability.to_lowercase().replace('.', "_")
    );
    edit_policy(world, |bundle| {
        set_capability(
            bundle,
            capability_entry(
                &capability,
                json!({"allowedPaths": ["."], "requiresApproval": true, "approvalRuleId": rule_id}),
            ),
        );
        let rule = json!({
            "approvalRuleId": rule_id,
            "title": title,
            "description": format!("The user approves every {capability} action"),
        });
        match bundle
            .get_mut("approvalRules")
            .and_then(Value::as_array_mut)
        {
            Some(rules) => rules.push(rule),
            None => bundle["approvalRules"] = json!([rule]),
        }
    })
    .await?;
    Ok(())
}

#[given(expr = "the policy allows a session budget of {int} tokens")]
async fn session_budget(world: &mut ConformanceWorld, tokens: u64) -> StepResult {
    edit_policy(world, |bundle| {
        bundle["llmPolicy"]["maxSessionTokens"] = json!(tokens);
    })
    .await?;
    Ok(())
}

// ---- Given: the workspace --------------------------------------------------------------------

#[given(expr = "the file {string} beside the workspace contains {string}")]
async fn file_beside_workspace(
    world: &mut ConformanceWorld,
    name: String,
    content: String,
) -> StepResult {
    let workspace = world.dirs()?.workspace.clone();
    let parent = workspace
        .parent()
        .context("the workspace has no parent directory")?;
    let path = parent.join(&name);
    std::fs::write(&path, content).with_context(|| format!("cannot write {}", path.display()))?;
    Ok(())
}

#[given(expr = "the workspace symlink {string} points to {string}")]
async fn workspace_symlink(
    world: &mut ConformanceWorld,
    link: String,
    target: String,
) -> StepResult {
    let link = world.dirs()?.workspace.join(link);
    #[cfg(unix)]
    {
        // A relative target, as a user would make it with `ln -s secrets link`.
        std::os::unix::fs::symlink(&target, &link)
            .with_context(|| format!("cannot create the symlink {}", link.display()))?;
        Ok(())
    }
    #[cfg(not(unix))]
    {
        fail!(
            "symlink {} -> {target}: this scenario needs a Unix file system",
            link.display()
        )
    }
}

// ---- Given: the model (gateway) ----------------------------------------------------------------

#[given(expr = "the gateway reports usage of {int} prompt tokens and {int} completion tokens")]
async fn gateway_usage(world: &mut ConformanceWorld, prompt: u64, completion: u64) -> StepResult {
    world
        .fakes()
        .await?
        .streaming_gateway
        .set_usage(prompt, completion);
    Ok(())
}

#[given("the gateway sends no usage")]
async fn gateway_no_usage(world: &mut ConformanceWorld) -> StepResult {
    world.fakes().await?.streaming_gateway.omit_usage();
    Ok(())
}

#[given(expr = "the gateway answers the next request with status {int}")]
async fn gateway_status(world: &mut ConformanceWorld, status: u16) -> StepResult {
    push_status(
        world,
        1,
        status,
        Vec::new(),
        "The gateway is having trouble",
    )
    .await?;
    Ok(())
}

#[given(expr = "the gateway answers the next {int} requests with status {int}")]
async fn gateway_statuses(world: &mut ConformanceWorld, count: usize, status: u16) -> StepResult {
    push_status(
        world,
        count,
        status,
        Vec::new(),
        "The gateway is having trouble",
    )
    .await?;
    Ok(())
}

#[given(expr = "the gateway answers the next request with status {int} and Retry-After {string}")]
async fn gateway_retry_after(
    world: &mut ConformanceWorld,
    status: u16,
    seconds: String,
) -> StepResult {
    let headers = vec![("Retry-After".to_owned(), seconds)];
    push_status(world, 1, status, headers, "Rate limit exceeded").await?;
    Ok(())
}

#[given(expr = "the gateway answers the next request with status {int} and the error {string}")]
async fn gateway_error(world: &mut ConformanceWorld, status: u16, error: String) -> StepResult {
    push_status(world, 1, status, Vec::new(), &error).await?;
    Ok(())
}

#[given(expr = "the model will call ReadFile on {string} and on {string} in one answer")]
async fn model_reads_two(
    world: &mut ConformanceWorld,
    first: String,
    second: String,
) -> StepResult {
    let a = json!({"path": workspace_path(world, &first)?}).to_string();
    let b = json!({"path": workspace_path(world, &second)?}).to_string();
    // Both calls announced, then their arguments in fragments interleaved by index, as a
    // gateway may send them: only accumulation by index gives whole calls.
    let (a1, a2) = a.split_at(a.len() / 2);
    let (b1, b2) = b.split_at(b.len() / 2);
    let call = |index: u64, id: Option<&str>, fragment: &str| {
        let mut entry = json!({"index": index, "function": {"arguments": fragment}});
        if let Some(id) = id {
            entry["id"] = json!(id);
            entry["type"] = json!("function");
            entry["function"]["name"] = json!("ReadFile");
        }
        delta_chunk(json!({"tool_calls": [entry]}), None)
    };
    let usage = json!({
        "id": "chatcmpl-conformance", "object": "chat.completion.chunk", "created": 1_700_000_000,
        "model": "gpt-test-1", "choices": [],
        "usage": {"prompt_tokens": 200, "completion_tokens": 40, "total_tokens": 240},
    });
    let payloads = vec![
        call(0, Some(READ_A_CALL_ID), ""),
        call(1, Some(READ_B_CALL_ID), ""),
        call(0, None, a1),
        call(1, None, b1),
        call(1, None, b2),
        call(0, None, a2),
        delta_chunk(json!({}), Some("tool_calls")),
        usage.to_string(),
        "[DONE]".to_owned(),
    ];
    push_model_reply(world.fakes().await?, GatewayReply::RawSse(payloads));
    Ok(())
}

#[given(
    regex = r#"^the model's first attempt streams "(.*)" and then (ends without \[DONE\]|sends an error event|disconnects)$"#
)]
async fn model_breaks(world: &mut ConformanceWorld, text: String, how: String) -> StepResult {
    let chunks = text_chunks(&text);
    let fakes = world.fakes().await?;
    match how.as_str() {
        "ends without [DONE]" => push_model_reply(fakes, GatewayReply::RawSse(chunks)),
        "sends an error event" => {
            let mut payloads = chunks;
            payloads.push(
                json!({"error": {"message": "Upstream model overloaded", "type": "server_error", "code": "overloaded"}})
                    .to_string(),
            );
            push_model_reply(fakes, GatewayReply::RawSse(payloads));
        }
        _ => {
            let mut steps: Vec<StreamStep> = chunks.into_iter().map(StreamStep::Chunk).collect();
            steps.push(StreamStep::Disconnect);
            push_model_stream(fakes, steps);
        }
    }
    Ok(())
}

#[given(expr = "the model will then call ReadFile on {string} saying {string}")]
async fn model_reads_saying(
    world: &mut ConformanceWorld,
    name: String,
    text: String,
) -> StepResult {
    let arguments = json!({"path": workspace_path(world, &name)?}).to_string();
    push_model_reply(
        world.fakes().await?,
        GatewayReply::ToolCalls {
            text: Some(text),
            calls: vec![ScriptedToolCall::new(READ_CALL_ID, "ReadFile", arguments)],
        },
    );
    Ok(())
}

#[given(expr = "the model will call ReadFile on {string} with a NUL byte appended")]
async fn model_reads_nul(world: &mut ConformanceWorld, name: String) -> StepResult {
    let path = format!("{}\u{0}", workspace_path(world, &name)?);
    let arguments = json!({ "path": path }).to_string();
    push_model_reply(
        world.fakes().await?,
        GatewayReply::tool_call(READ_CALL_ID, "ReadFile", arguments),
    );
    Ok(())
}

#[given(expr = "the model will write {string} and read {string} in one answer")]
async fn model_writes_and_reads(
    world: &mut ConformanceWorld,
    written: String,
    read: String,
) -> StepResult {
    let write =
        json!({"path": workspace_path(world, &written)?, "content": "A draft."}).to_string();
    let read = json!({"path": workspace_path(world, &read)?}).to_string();
    push_model_reply(
        world.fakes().await?,
        GatewayReply::ToolCalls {
            text: None,
            calls: vec![
                ScriptedToolCall::new(WRITE_CALL_ID, "WriteFile", write),
                ScriptedToolCall::new(READ_CALL_ID, "ReadFile", read),
            ],
        },
    );
    Ok(())
}

// ---- When: pausing and resuming --------------------------------------------------------------

async fn resume_session(world: &mut ConformanceWorld) -> anyhow::Result<Value> {
    let session_id = world.session()?.session_id.clone();
    let response = world
        .runtime()
        .await?
        .request("ResumeSession", Some(json!({"sessionId": session_id})))
        .await?;
    world.last_response = Some(response.clone());
    world.last_method = Some("ResumeSession".to_owned());
    Ok(response)
}

#[when("the client resumes the session")]
async fn client_resumes(world: &mut ConformanceWorld) -> StepResult {
    resume_session(world).await?;
    Ok(())
}

#[given("the client has resumed the session")]
async fn client_has_resumed(world: &mut ConformanceWorld) -> StepResult {
    let response = resume_session(world).await?;
    expect_result(&response, "ResumeSession")?;
    Ok(())
}

#[when("the client continues the incomplete task")]
async fn continue_task(world: &mut ConformanceWorld) -> StepResult {
    let task = world.task()?.clone();
    let session_id = world.session()?.session_id.clone();
    let runtime = world.runtime().await?;
    // Resuming = StartTask with the same taskId and prompt (INTEROP.md §1).
    let response = runtime
        .request(
            "StartTask",
            Some(json!({"sessionId": session_id, "taskId": task.task_id, "prompt": task.prompt})),
        )
        .await?;
    let response_seq = runtime.last_response_seq();
    expect_result(&response, "StartTask with the incomplete task's taskId")?;
    world.task = Some(TaskInfo {
        response: response.clone(),
        response_seq,
        ..task
    });
    world.last_response = Some(response);
    world.last_method = Some("StartTask".to_owned());
    Ok(())
}

#[then(expr = "the continued task completes with {string}")]
async fn continued_completes(world: &mut ConformanceWorld, answer: String) -> StepResult {
    let task = world.task()?.clone();
    let timeout = world.timeout();
    let end = world
        .started_runtime()?
        .wait_for_event("the continued task's terminal event", timeout, |e| {
            e.seq > task.response_seq
                && e.str_field("taskId") == Some(task.task_id.as_str())
                && TASK_TERMINAL_EVENTS.contains(&e.event_type())
        })
        .await?;
    check!(
        end.event_type() == "task_completed"
            && str_at(end.payload(), &["result"]) == Some(answer.as_str()),
        "the continued task should complete with {answer:?}, it ended with {}: {}",
        end.event_type(),
        show(end.payload())
    );
    Ok(())
}

// ---- When: approvals -------------------------------------------------------------------------

#[when("the runtime asks for approval")]
async fn asks_for_approval(world: &mut ConformanceWorld) -> StepResult {
    approval_request(world).await?;
    Ok(())
}

#[when("the user approves the action")]
async fn user_approves(world: &mut ConformanceWorld) -> StepResult {
    decide(world, "approved", None).await?;
    Ok(())
}

#[when(expr = "the user denies the action because {string}")]
async fn user_denies(world: &mut ConformanceWorld, reason: String) -> StepResult {
    decide(world, "denied", Some(&reason)).await?;
    Ok(())
}

#[when("the user approves the action twice")]
async fn user_approves_twice(world: &mut ConformanceWorld) -> StepResult {
    decide(world, "approved", None).await?;
    let first = world.last_response()?.clone();
    let status = at(&first, &["result", "status"]).cloned();
    check!(
        status == Some(json!("accepted")),
        "the first decision should have been accepted: {}",
        show(&first)
    );
    decide(world, "approved", None).await?;
    Ok(())
}

#[when("the user approves an approval id the runtime never issued")]
async fn user_approves_unknown(world: &mut ConformanceWorld) -> StepResult {
    approval_request(world).await?;
    let session_id = world.session()?.session_id.clone();
    approve_action(
        world,
        json!({"sessionId": session_id, "approvalId": "appr_never_issued", "decision": "approved"}),
    )
    .await?;
    Ok(())
}

#[when(expr = "the user answers the approval with the decision {string}")]
async fn user_answers_with(world: &mut ConformanceWorld, decision: String) -> StepResult {
    decide(world, &decision, None).await?;
    Ok(())
}

#[when("the approval times out")]
async fn approval_times_out(world: &mut ConformanceWorld) -> StepResult {
    let id = approval_id(world).await?;
    wait_task_event(world, "approval_timeout", |e| {
        e.event_type() == "approval_timeout" && str_at(e.payload(), &["approvalId"]) == Some(&id)
    })
    .await?;
    Ok(())
}

#[when("the client cancels the task while it waits for approval")]
async fn cancel_while_waiting(world: &mut ConformanceWorld) -> StepResult {
    approval_request(world).await?;
    let session_id = world.session()?.session_id.clone();
    let task_id = world.task()?.task_id.clone();
    let response = world
        .runtime()
        .await?
        .request(
            "CancelTask",
            Some(json!({"sessionId": session_id, "taskId": task_id})),
        )
        .await?;
    expect_result(&response, "CancelTask")?;
    Ok(())
}

// ---- Then: what the model (gateway) received ----------------------------------------------------

#[then("every model request asks for usage in the stream")]
async fn asks_for_usage(world: &mut ConformanceWorld) -> StepResult {
    let bodies = model_bodies(world).await?;
    check!(!bodies.is_empty(), "the model received no request");
    for (index, body) in bodies.iter().enumerate() {
        check!(
            at(body, &["stream_options", "include_usage"]) == Some(&json!(true)),
            "model request {} must carry stream_options.include_usage: true: {}",
            index + 1,
            show(body)
        );
    }
    Ok(())
}

#[then("every model request begins with a system message")]
async fn begins_with_system(world: &mut ConformanceWorld) -> StepResult {
    let bodies = model_bodies(world).await?;
    check!(!bodies.is_empty(), "the model received no request");
    for (index, body) in bodies.iter().enumerate() {
        let first = messages(body).first();
        check!(
            first.is_some_and(|m| str_at(m, &["role"]) == Some("system")
                && str_at(m, &["content"]).is_some_and(|c| !c.trim().is_empty())),
            "model request {} must begin with the system prompt ({{role: \"system\", content: <text>}}), its first message is {}",
            index + 1,
            first.map(show).unwrap_or_else(|| "missing".to_owned())
        );
    }
    Ok(())
}

#[then("every message of every model request has string content")]
async fn string_contents(world: &mut ConformanceWorld) -> StepResult {
    let bodies = model_bodies(world).await?;
    check!(!bodies.is_empty(), "the model received no request");
    for (index, body) in bodies.iter().enumerate() {
        for message in messages(body) {
            check!(
                message.get("content").is_some_and(Value::is_string),
                "in model request {}, a message's content is not a string (the gateway rejects it): {}",
                index + 1,
                show(message)
            );
        }
    }
    Ok(())
}

#[then(expr = "every model request carries the header {string} with {string}")]
async fn carries_header(world: &mut ConformanceWorld, name: String, value: String) -> StepResult {
    let requests = model_requests(world.started_fakes()?).await;
    check!(!requests.is_empty(), "the model received no request");
    for (index, request) in requests.iter().enumerate() {
        check!(
            request.header(&name) == Some(value.as_str()),
            "model request {} carries {name}: {:?}, LLM_GATEWAY_HEADERS asked for {value:?}",
            index + 1,
            request.header(&name)
        );
    }
    Ok(())
}

#[then(regex = r"^the model (is|is not) offered ReadFile as a function tool$")]
async fn offered_read_file(world: &mut ConformanceWorld, which: String) -> StepResult {
    let bodies = model_bodies(world).await?;
    let body = bodies.first().context("the model received no request")?;
    let tools: &[Value] = body
        .get("tools")
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice);
    let read = tools
        .iter()
        .find(|t| str_at(t, &["function", "name"]) == Some("ReadFile"));
    if which == "is" {
        let tool = read.with_context(|| {
            format!(
                "the policy grants File.Read but the request offers no ReadFile tool: tools = {}",
                show(body.get("tools").unwrap_or(&Value::Null))
            )
        })?;
        check!(
            str_at(tool, &["type"]) == Some("function")
                && str_at(tool, &["function", "description"]).is_some_and(|d| !d.trim().is_empty())
                && at(tool, &["function", "parameters"]).is_some_and(Value::is_object),
            "ReadFile must be offered as {{type: \"function\", function: {{name, description, parameters}}}}: {}",
            show(tool)
        );
    } else {
        check!(
            read.is_none(),
            "the policy does not grant File.Read, yet ReadFile is offered to the model: {}",
            show(body.get("tools").unwrap_or(&Value::Null))
        );
    }
    Ok(())
}

#[then(expr = "the gateway received exactly {int} request(s)")]
async fn gateway_received(world: &mut ConformanceWorld, count: usize) -> StepResult {
    wait_task_end(world).await?;
    let got = model_requests(world.started_fakes()?).await.len();
    check!(
        got == count,
        "the gateway received {got} chat-completions request(s), expected exactly {count}"
    );
    Ok(())
}

#[then("the gateway received no request")]
async fn gateway_received_none(world: &mut ConformanceWorld) -> StepResult {
    gateway_received(world, 0).await
}

#[then("the last model request carries the prompt exactly once")]
async fn prompt_once(world: &mut ConformanceWorld) -> StepResult {
    let prompt = world.task()?.prompt.clone();
    let bodies = model_bodies(world).await?;
    let body = bodies.last().context("the model received no request")?;
    let count = messages(body)
        .iter()
        .filter(|m| {
            str_at(m, &["role"]) == Some("user") && str_at(m, &["content"]) == Some(prompt.as_str())
        })
        .count();
    check!(
        count == 1,
        "the request made for the continued task carries the prompt {prompt:?} {count} time(s), expected once: {}",
        show(body)
    );
    Ok(())
}

#[then(expr = "the last model request carries the assistant text {string} exactly once")]
async fn assistant_text_once(world: &mut ConformanceWorld, text: String) -> StepResult {
    wait_task_end(world).await?;
    let bodies = model_bodies(world).await?;
    let body = bodies.last().context("the model received no request")?;
    let count = messages(body)
        .iter()
        .filter(|m| str_at(m, &["role"]) == Some("assistant"))
        .map(|m| {
            str_at(m, &["content"])
                .unwrap_or("")
                .matches(text.as_str())
                .count()
        })
        .sum::<usize>();
    check!(
        count == 1,
        "the thread sent to the model holds the assistant text {text:?} {count} time(s), expected exactly once (a partial stream must be discarded): {}",
        show(body)
    );
    Ok(())
}

#[then(expr = "no model request contains {string}")]
async fn no_request_contains(world: &mut ConformanceWorld, secret: String) -> StepResult {
    wait_task_end(world).await?;
    let requests = model_requests(world.started_fakes()?).await;
    for (index, request) in requests.iter().enumerate() {
        check!(
            !request.body_text().contains(&secret),
            "model request {} contains {secret:?}, which the policy should have kept from the model",
            index + 1
        );
    }
    Ok(())
}

#[then(expr = "the model is told the ReadFile call was denied because of {string}")]
async fn model_told_denied(world: &mut ConformanceWorld, needle: String) -> StepResult {
    wait_task_end(world).await?;
    let message = tool_message(world, READ_CALL_ID).await?;
    let content = str_at(&message, &["content"]).unwrap_or("");
    check!(
        content.to_lowercase().contains(&needle.to_lowercase()),
        "the tool result the model received does not name {needle:?}: {}",
        show(&message)
    );
    Ok(())
}

// ---- Then: streaming and usage ----------------------------------------------------------------

#[then(expr = "the runtime reports both ReadFile calls, on {string} and on {string}, whole")]
async fn both_calls_whole(
    world: &mut ConformanceWorld,
    first: String,
    second: String,
) -> StepResult {
    wait_task_end(world).await?;
    for (call_id, name) in [(READ_A_CALL_ID, first), (READ_B_CALL_ID, second)] {
        let path = workspace_path(world, &name)?;
        let events = this_task_events(world)?;
        let requested = events
            .iter()
            .find(|e| {
                e.event_type() == "tool_requested"
                    && str_at(e.payload(), &["toolCallId"]) == Some(call_id)
            })
            .with_context(|| {
                format!(
                    "no tool_requested for the call {call_id}; the task's events: {}",
                    event_types(&events)
                )
            })?;
        let payload = requested.payload();
        check!(
            str_at(payload, &["toolName"]) == Some("ReadFile")
                && at(payload, &["arguments", "path"]).and_then(Value::as_str)
                    == Some(path.as_str()),
            "the call {call_id} was streamed in fragments as ReadFile {{\"path\": {path:?}}}, the runtime assembled: {}",
            show(payload)
        );
        let completed = tool_completed(world, call_id).await?;
        check!(
            str_at(&completed, &["status"]) == Some("succeeded"),
            "the assembled call {call_id} should have run: {}",
            show(&completed)
        );
    }
    Ok(())
}

#[then(
    expr = "llm_request_completed reports the policy's model with {int} input tokens and {int} output tokens"
)]
async fn usage_reported(world: &mut ConformanceWorld, input: u64, output: u64) -> StepResult {
    let model = at(
        &world.started_fakes()?.session.policy(),
        &["llmPolicy", "allowedModels"],
    )
    .and_then(|m| m.get(0))
    .and_then(Value::as_str)
    .unwrap_or_default()
    .to_owned();
    let event = wait_task_event(world, "llm_request_completed", |e| {
        e.event_type() == "llm_request_completed"
    })
    .await?;
    let payload = event.payload();
    check!(
        str_at(payload, &["model"]) == Some(model.as_str())
            && payload.get("inputTokens") == Some(&json!(input))
            && payload.get("outputTokens") == Some(&json!(output))
            && payload.get("latencyMs").is_some_and(Value::is_u64),
        "llm_request_completed must report {{model: {model:?}, inputTokens: {input}, outputTokens: {output}, latencyMs: <integer>}} from the gateway's usage chunk: {}",
        show(payload)
    );
    Ok(())
}

#[then("llm_request_completed reports estimated token counts")]
async fn usage_estimated(world: &mut ConformanceWorld) -> StepResult {
    let event = wait_task_event(world, "llm_request_completed", |e| {
        e.event_type() == "llm_request_completed"
    })
    .await?;
    let payload = event.payload();
    for field in ["inputTokens", "outputTokens"] {
        check!(
            payload
                .get(field)
                .and_then(Value::as_u64)
                .is_some_and(|n| n > 0),
            "without a usage chunk, llm_request_completed.{field} must be the local estimate (a positive integer): {}",
            show(payload)
        );
    }
    Ok(())
}

// ---- Then: retries and failures ---------------------------------------------------------------

#[then("the runtime reports llm_retry for the first retry")]
async fn reports_retry(world: &mut ConformanceWorld) -> StepResult {
    let event = wait_task_event(world, "llm_retry", |e| e.event_type() == "llm_retry").await?;
    let payload = event.payload();
    let attempt = payload.get("attempt").and_then(Value::as_u64);
    let max = payload.get("maxRetries").and_then(Value::as_u64);
    check!(
        attempt == Some(1) && max.is_some_and(|m| m >= 1),
        "the first llm_retry must carry attempt 1 and maxRetries (at least 1): {}",
        show(payload)
    );
    Ok(())
}

#[then(expr = "the retry came at least {int} second(s) after the first attempt began")]
async fn retry_waited(world: &mut ConformanceWorld, seconds: u64) -> StepResult {
    wait_task_end(world).await?;
    let events = this_task_events(world)?;
    let started = events
        .iter()
        .find(|e| e.event_type() == "llm_request_started")
        .with_context(|| format!("no llm_request_started; events: {}", event_types(&events)))?;
    let first_text = events
        .iter()
        .find(|e| e.event_type() == "text_chunk")
        .with_context(|| {
            format!(
                "the retried request streamed no text; events: {}",
                event_types(&events)
            )
        })?;
    let (Some(from), Some(to)) = (
        started.str_field("timestamp").and_then(parse_rfc3339),
        first_text.str_field("timestamp").and_then(parse_rfc3339),
    ) else {
        fail!("the events' timestamps are not RFC 3339");
    };
    let waited = to - from;
    // A little slack for clocks that round to the millisecond.
    check!(
        waited >= time::Duration::seconds_f64(seconds as f64 - 0.05),
        "the retried answer began {:.3}s after the first attempt, but Retry-After asked for {seconds}s",
        waited.as_seconds_f64()
    );
    Ok(())
}

#[then("the runtime reports session_paused")]
async fn reports_paused(world: &mut ConformanceWorld) -> StepResult {
    let timeout = world.timeout();
    world
        .started_runtime()?
        .wait_for_event("session_paused", timeout, |e| {
            e.event_type() == "session_paused"
        })
        .await?;
    Ok(())
}

#[then(expr = "the task fails recoverably with error code {string}")]
async fn fails_recoverably(world: &mut ConformanceWorld, code: String) -> StepResult {
    let payload = task_failure(world).await?;
    check!(
        str_at(&payload, &["errorCode"]) == Some(code.as_str())
            && payload.get("isRecoverable") == Some(&json!(true)),
        "task_failed must carry errorCode {code:?} and isRecoverable true: {}",
        show(&payload)
    );
    Ok(())
}

#[then(expr = "the task fails with error code {string}")]
async fn task_fails_with(world: &mut ConformanceWorld, code: String) -> StepResult {
    let payload = task_failure(world).await?;
    check!(
        str_at(&payload, &["errorCode"]) == Some(code.as_str()),
        "task_failed.errorCode is {:?}, expected {code:?}: {}",
        str_at(&payload, &["errorCode"]),
        show(&payload)
    );
    Ok(())
}

#[then(expr = "the task_failed message names {string}")]
async fn failed_message_names(world: &mut ConformanceWorld, needle: String) -> StepResult {
    let payload = task_failure(world).await?;
    let message = str_at(&payload, &["message"]).unwrap_or("");
    check!(
        message.contains(&needle),
        "task_failed.message {message:?} does not name the gateway's reason {needle:?}"
    );
    Ok(())
}

#[then("the runtime reports llm_response_discarded before the retry")]
async fn reports_discarded(world: &mut ConformanceWorld) -> StepResult {
    wait_task_end(world).await?;
    let events = this_task_events(world)?;
    let position = |kind: &str| events.iter().position(|e| e.event_type() == kind);
    let discarded = position("llm_response_discarded").with_context(|| {
        format!(
            "text of the broken stream was forwarded, but no llm_response_discarded tells the app to drop it; events: {}",
            event_types(&events)
        )
    })?;
    let first_text = position("text_chunk").unwrap_or(usize::MAX);
    let last_text = events
        .iter()
        .rposition(|e| e.event_type() == "text_chunk")
        .unwrap_or(0);
    check!(
        first_text < discarded && discarded < last_text,
        "llm_response_discarded must come after the broken stream's text and before the retry's; events: {}",
        event_types(&events)
    );
    Ok(())
}

// ---- Then: the session after a pause ----------------------------------------------------------

#[then("the session state offers the task as incomplete with its prompt")]
async fn offers_incomplete(world: &mut ConformanceWorld) -> StepResult {
    let task = world.task()?.clone();
    let response = world.last_response()?;
    let result = expect_result(response, "GetSessionState")?;
    let incomplete = result
        .get("incompleteTask")
        .filter(|t| t.is_object())
        .with_context(|| format!("GetSessionState offers no incompleteTask: {}", show(result)))?;
    check!(
        str_at(incomplete, &["taskId"]) == Some(task.task_id.as_str())
            && str_at(incomplete, &["prompt"]) == Some(task.prompt.as_str())
            && incomplete.get("lastStep").is_some_and(Value::is_u64)
            && incomplete.get("maxSteps").is_some_and(Value::is_u64),
        "incompleteTask must be {{taskId: {:?}, prompt: {:?}, lastStep: <integer>, maxSteps: <integer>}}: {}",
        task.task_id,
        task.prompt,
        show(incomplete)
    );
    Ok(())
}

#[then("the Session Service received a resume for the session")]
async fn resume_received(world: &mut ConformanceWorld) -> StepResult {
    let session_id = world.session()?.session_id.clone();
    let path = format!("/sessions/{session_id}/resume");
    let requests = world.started_fakes()?.session.requests().await;
    check!(
        requests
            .iter()
            .any(|r| r.method == "POST" && r.path == path),
        "the Session Service saw no POST {path} (it saw: {})",
        requests
            .iter()
            .map(|r| format!("{} {}", r.method, r.path))
            .collect::<Vec<_>>()
            .join(", ")
    );
    Ok(())
}

#[then("the runtime reports session_resumed")]
async fn reports_resumed(world: &mut ConformanceWorld) -> StepResult {
    let timeout = world.timeout();
    world
        .started_runtime()?
        .wait_for_event("session_resumed", timeout, |e| {
            e.event_type() == "session_resumed"
        })
        .await?;
    Ok(())
}

// ---- Then: tool calls under the policy ------------------------------------------------------------

#[then(expr = "the ReadFile call is denied with error code {string}")]
async fn read_denied(world: &mut ConformanceWorld, code: String) -> StepResult {
    let payload = tool_completed(world, READ_CALL_ID).await?;
    check!(
        str_at(&payload, &["status"]) == Some("denied")
            && str_at(&payload, &["errorCode"]) == Some(code.as_str()),
        "the ReadFile call must end with tool_completed {{status: \"denied\", errorCode: {code:?}}}: {}",
        show(&payload)
    );
    check!(
        str_at(&payload, &["error"]).is_some_and(|e| !e.trim().is_empty()),
        "a denied call's tool_completed must say why in error: {}",
        show(&payload)
    );
    Ok(())
}

#[then(expr = "the ReadFile call runs and returns {string}")]
async fn read_runs(world: &mut ConformanceWorld, content: String) -> StepResult {
    let payload = tool_completed(world, READ_CALL_ID).await?;
    check!(
        str_at(&payload, &["status"]) == Some("succeeded")
            && str_at(&payload, &["result"]).is_some_and(|r| r.contains(&content)),
        "the ReadFile call should have run and shown {content:?}: {}",
        show(&payload)
    );
    Ok(())
}

#[then("the ReadFile call is rejected without reading anything")]
async fn read_rejected(world: &mut ConformanceWorld) -> StepResult {
    let payload = tool_completed(world, READ_CALL_ID).await?;
    let status = str_at(&payload, &["status"]).unwrap_or("");
    check!(
        matches!(status, "denied" | "failed") && payload.get("result").is_none_or(Value::is_null),
        "a path with a NUL byte must be rejected (tool_completed status denied or failed, no result): {}",
        show(&payload)
    );
    Ok(())
}

// ---- Then: approvals ----------------------------------------------------------------------------

#[then(expr = "the runtime asks for approval titled {string} to read {string}")]
async fn approval_payload(world: &mut ConformanceWorld, title: String, name: String) -> StepResult {
    let session_id = world.session()?.session_id.clone();
    let task_id = world.task()?.task_id.clone();
    let event = wait_task_event(world, "approval_requested", |e| {
        e.event_type() == "approval_requested"
    })
    .await?;
    let payload = event.payload();
    let text = |field: &str| str_at(payload, &[field]).unwrap_or("");
    check!(
        !text("approvalId").trim().is_empty(),
        "approval_requested.payload.approvalId is missing: {}",
        show(payload)
    );
    for (field, want) in [("sessionId", &session_id), ("taskId", &task_id)] {
        check!(
            text(field) == want,
            "approval_requested.payload.{field} is {:?}, expected {want:?}: {}",
            text(field),
            show(payload)
        );
    }
    check!(
        !text("stepId").is_empty() && event.str_field("stepId") == Some(text("stepId")),
        "approval_requested.payload.stepId must name the step asking (the envelope's stepId {:?}): {}",
        event.str_field("stepId"),
        show(payload)
    );
    check!(
        text("title") == title,
        "approval_requested.payload.title is {:?}, the policy's approval rule is titled {title:?}",
        text("title")
    );
    check!(
        text("actionSummary").contains(&name),
        "approval_requested.payload.actionSummary {:?} does not say which file is read ({name:?})",
        text("actionSummary")
    );
    check!(
        !text("riskLevel").is_empty() && payload.get("details").is_some_and(Value::is_object),
        "approval_requested.payload must carry riskLevel and a details object: {}",
        show(payload)
    );
    Ok(())
}

#[then(expr = "the approval request rates the risk {string}")]
async fn approval_risk(world: &mut ConformanceWorld, risk: String) -> StepResult {
    let payload = approval_request(world).await?;
    check!(
        str_at(&payload, &["riskLevel"]) == Some(risk.as_str()),
        "approval_requested.payload.riskLevel is {:?}, expected {risk:?}",
        str_at(&payload, &["riskLevel"])
    );
    Ok(())
}

#[then(expr = "ApproveAction answers {string} without an error")]
async fn approve_answers(world: &mut ConformanceWorld, status: String) -> StepResult {
    let response = world.last_response()?.clone();
    check!(
        response.get("error").is_none(),
        "ApproveAction must never answer with an error (the app's dialog would stay stuck), got: {}",
        show(&response)
    );
    let result = expect_result(&response, "ApproveAction")?;
    check!(
        str_at(result, &["status"]) == Some(status.as_str()),
        "ApproveAction result.status is {:?}, expected {status:?}: {}",
        str_at(result, &["status"]),
        show(result)
    );
    Ok(())
}

#[then(expr = "the runtime reports approval_resolved with decision {string}")]
async fn approval_resolved(world: &mut ConformanceWorld, decision: String) -> StepResult {
    let id = approval_id(world).await?;
    let event = wait_task_event(world, "approval_resolved", |e| {
        e.event_type() == "approval_resolved"
    })
    .await?;
    let payload = event.payload();
    check!(
        str_at(payload, &["approvalId"]) == Some(id.as_str())
            && str_at(payload, &["decision"]) == Some(decision.as_str())
            && payload.get("latencyMs").is_some_and(Value::is_u64),
        "approval_resolved must be {{approvalId: {id:?}, decision: {decision:?}, latencyMs: <integer>}}: {}",
        show(payload)
    );
    Ok(())
}

#[then("the runtime reports approval_timeout for the approval")]
async fn approval_timeout(world: &mut ConformanceWorld) -> StepResult {
    let id = approval_id(world).await?;
    wait_task_event(world, "approval_timeout for the approval", |e| {
        e.event_type() == "approval_timeout" && str_at(e.payload(), &["approvalId"]) == Some(&id)
    })
    .await?;
    Ok(())
}

#[then("the task ends cancelled")]
async fn task_ends_cancelled(world: &mut ConformanceWorld) -> StepResult {
    let end = wait_task_end(world).await?;
    check!(
        end.event_type() == "task_cancelled",
        "the cancelled task ended with {}: {}",
        end.event_type(),
        show(end.payload())
    );
    Ok(())
}

#[then("the ReadFile call completes while the WriteFile call waits for approval")]
async fn read_completes_first(world: &mut ConformanceWorld) -> StepResult {
    // No ApproveAction has been sent in this scenario: the write can only be waiting.
    let read = tool_completed(world, READ_CALL_ID).await?;
    check!(
        str_at(&read, &["status"]) == Some("succeeded"),
        "the ReadFile call needs no approval and should have run: {}",
        show(&read)
    );
    barrier(world).await?;
    let events = this_task_events(world)?;
    let write_done = events.iter().find(|e| {
        e.event_type() == "tool_completed"
            && str_at(e.payload(), &["toolCallId"]) == Some(WRITE_CALL_ID)
    });
    check!(
        write_done.is_none(),
        "the WriteFile call completed although nobody approved it: {}",
        write_done.map(|e| show(e.payload())).unwrap_or_default()
    );
    Ok(())
}
