//! Steps about what the model (the LLM Gateway fake) received and what the runtime reported
//! about streaming and usage (local-agent-host.md §6; INTEROP.md §2).
use anyhow::Context;
use cucumber::then;
use serde_json::{Value, json};

use super::common::{this_task_events, tool_completed, wait_task_event, workspace_path};
use super::governance::{READ_A_CALL_ID, READ_B_CALL_ID, messages, model_bodies, tool_message};
use super::task::{READ_CALL_ID, wait_task_end};
use super::{StepResult, at, event_types, model_requests, show, str_at};
use crate::world::ConformanceWorld;

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
    // That the model learns of the denial is the documents' (local-agent-host.md §11); the
    // words it reads are the runtime's, judged only for the reference runtime.
    let wording = super::errors::declares_reference(world)?;
    check!(
        !content.trim().is_empty()
            && (!wording || content.to_lowercase().contains(&needle.to_lowercase())),
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
