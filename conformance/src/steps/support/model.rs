//! The model's side (the LLM Gateway fake): scripting replies and reading the requests it
//! received. Scenarios talk to the streaming gateway: it sends each SSE event as its own
//! write, which is how a real gateway behaves and what "text_chunk as each delta arrives" is
//! about, and it can hold a stream mid-way (to observe a task while the model is still
//! answering).

use agent_mocks::{
    Fakes, GatewayReply, RecordedRequest, ScriptedToolCall, StreamStep, Usage, sse::DEFAULT_MODEL,
};
use anyhow::{Context, anyhow};
use serde_json::{Value, json};

use crate::steps::support::policy::workspace_path;
use crate::steps::support::{at, show, str_at};
use crate::world::ConformanceWorld;

/// The arguments local-tool-runtime.md §4 marks required, per built-in tool.
const SPEC_REQUIRED_ARGUMENTS: &[(&str, &[&str])] = &[
    ("ReadFile", &["path"]),
    ("WriteFile", &["path", "content"]),
    ("DeleteFile", &["path"]),
    ("RunCommand", &["command"]),
    ("HttpRequest", &["url"]),
];

/// Why a call of the built-in `tool` could not be judged, if it could not: the runtime
/// offered the tool with an input schema that requires arguments §4 does not require, so the
/// kit's call (made with the spec's arguments) never ran. That defect is REQ-TOOL-208's; the
/// scenario that needed the call is "not judged" instead of failing in its place.
pub(crate) async fn unusable_tool(
    world: &mut ConformanceWorld,
    tool: &str,
) -> anyhow::Result<Option<String>> {
    let Some((_, required_by_spec)) = SPEC_REQUIRED_ARGUMENTS.iter().find(|(t, _)| *t == tool)
    else {
        return Ok(None);
    };
    let requests = model_requests(world.fakes().await?).await;
    let offered = requests.iter().rev().find_map(|request| {
        request
            .body
            .get("tools")?
            .as_array()?
            .iter()
            .find(|t| str_at(t, &["function", "name"]) == Some(tool))
            .cloned()
    });
    let extra: Vec<String> = offered
        .as_ref()
        .and_then(|t| at(t, &["function", "parameters", "required"]))
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .filter(|name| !required_by_spec.contains(name))
        .map(str::to_owned)
        .collect();
    Ok((!extra.is_empty()).then(|| {
        format!(
            "{} the runtime offers {tool} with required argument(s) {} that local-tool-runtime.md §4 does not require, so the kit's {tool} call (made with the spec's arguments) could not run; that is REQ-TOOL-208's finding",
            crate::contract::NOT_JUDGED,
            extra.join(", ")
        )
    }))
}

/// Fails with [`unusable_tool`]'s reason when there is one, else with `failure`.
pub(crate) async fn explain_tool_failure(
    world: &mut ConformanceWorld,
    tool: &str,
    failure: anyhow::Error,
) -> anyhow::Error {
    match unusable_tool(world, tool).await {
        Ok(Some(reason)) => anyhow::anyhow!("{reason}\n{failure:#}"),
        _ => failure,
    }
}

/// The system prompt of a model request: the content of its first message when that
/// message is the system's (INTEROP.md §2), else empty.
pub(crate) fn system_prompt(body: &Value) -> String {
    body.get("messages")
        .and_then(Value::as_array)
        .and_then(|messages| messages.first())
        .filter(|m| str_at(m, &["role"]) == Some("system"))
        .and_then(|m| str_at(m, &["content"]))
        .unwrap_or_default()
        .to_owned()
}

/// The ids of the two calls of a parallel answer.
pub(crate) const READ_A_CALL_ID: &str = "call_read_a";

pub(crate) const READ_B_CALL_ID: &str = "call_read_b";

/// The id of the WriteFile call scripted next to a ReadFile call.
pub(crate) const WRITE_CALL_ID: &str = "call_write_1";

/// Every request body the model received.
pub(crate) async fn model_bodies(world: &ConformanceWorld) -> anyhow::Result<Vec<Value>> {
    Ok(model_requests(world.started_fakes()?)
        .await
        .into_iter()
        .map(|r| r.body)
        .collect())
}

pub(crate) fn messages(body: &Value) -> &[Value] {
    body.get("messages")
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

/// The `{role: "tool"}` message answering `call_id` in the last request that has one.
pub(crate) async fn tool_message(world: &ConformanceWorld, call_id: &str) -> anyhow::Result<Value> {
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

/// Pushes `count` plain HTTP answers with `status` on the model.
pub(crate) async fn push_status(
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
pub(crate) fn delta_chunk(delta: Value, finish_reason: Option<&str>) -> String {
    json!({
        "id": "chatcmpl-conformance",
        "object": "chat.completion.chunk",
        "created": 1_700_000_000,
        "model": "gpt-test-1",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
    })
    .to_string()
}

pub(crate) fn text_chunks(text: &str) -> Vec<String> {
    agent_mocks::sse::split_text(text)
        .into_iter()
        .map(|piece| delta_chunk(json!({"content": piece}), None))
        .collect()
}

/// The id of the call the "every answer" model makes.
pub(crate) const EVERY_CALL_ID: &str = "call_again";

/// Writes a workspace file unless the scenario already wrote it.
pub(crate) fn ensure_workspace_file(
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
pub(crate) fn with_finish_reason(
    payloads: Vec<String>,
    finish_reason: &str,
) -> anyhow::Result<Vec<String>> {
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
pub(crate) fn rendered(reply: &GatewayReply) -> anyhow::Result<Vec<String>> {
    match agent_mocks::sse::render_reply(reply, DEFAULT_MODEL, Some(Usage::default())) {
        agent_mocks::sse::RenderedReply::Stream(payloads) => Ok(payloads),
        agent_mocks::sse::RenderedReply::Status { .. } => {
            Err(anyhow!("a status reply is not a stream"))
        }
    }
}

/// A ReadFile call on a workspace file.
pub(crate) fn read_call(
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

/// The messages of a recorded model request.
pub(crate) fn request_messages(body: &Value) -> anyhow::Result<&Vec<Value>> {
    body.get("messages")
        .and_then(Value::as_array)
        .with_context(|| format!("the model request has no messages array: {}", show(body)))
}

/// Bodies of the model requests made for the scenario's (current) task.
pub(crate) async fn task_requests(world: &ConformanceWorld) -> anyhow::Result<Vec<Value>> {
    Ok(recorded_task_requests(world)
        .await?
        .into_iter()
        .map(|r| r.body)
        .collect())
}

/// The model requests made for the scenario's (current) task: those the gateway received
/// after StartTask was sent (a runtime need not send the reference's `X-Task-Id` header).
pub(crate) async fn recorded_task_requests(
    world: &ConformanceWorld,
) -> anyhow::Result<Vec<agent_mocks::RecordedRequest>> {
    let before = world.task()?.requests_before;
    Ok(model_requests(world.started_fakes()?)
        .await
        .into_iter()
        .skip(before)
        .collect())
}

pub(crate) fn multi_call_id(index: usize) -> String {
    format!("call_multi_{}", index + 1)
}

/// Appends a scripted model reply.
pub(crate) fn push_model_reply(fakes: &Fakes, reply: GatewayReply) {
    fakes.streaming_gateway.push_reply(reply);
}

/// Appends an exact stream (for stalls).
pub(crate) fn push_model_stream(fakes: &Fakes, steps: Vec<StreamStep>) {
    fakes.streaming_gateway.push_stream(steps);
}

/// Lets a stalled model stream go on.
pub(crate) fn release_model(fakes: &Fakes) {
    fakes.streaming_gateway.release();
}

/// Every chat-completions request the model received, in order.
pub(crate) async fn model_requests(fakes: &Fakes) -> Vec<RecordedRequest> {
    fakes.streaming_gateway.requests().await
}

pub(crate) async fn nth_model_request(world: &ConformanceWorld, n: usize) -> anyhow::Result<Value> {
    let requests = model_requests(world.started_fakes()?).await;
    requests.get(n).map(|r| r.body.clone()).ok_or_else(|| {
        anyhow!(
            "the model received {} request(s), expected at least {}",
            requests.len(),
            n + 1
        )
    })
}
