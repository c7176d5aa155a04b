//! What the model (the LLM Gateway fake) received and what the runtime reported about
//! streaming and usage (local-agent-host.md §6; INTEROP.md §2).

use anyhow::Context;
use cucumber::{then, when};
use serde_json::{Value, json};

use crate::env::GATEWAY_TOKEN;
use crate::steps::support::model::{
    READ_A_CALL_ID, READ_B_CALL_ID, messages, model_bodies, model_requests, nth_model_request,
    request_messages, task_requests, tool_message,
};
use crate::steps::support::policy::workspace_path;
use crate::steps::support::task::{
    barrier, event_types, only_terminal, task_events, this_task_events, tool_completed,
    wait_task_event,
};
use crate::steps::support::{StepResult, at, declares_reference, eventually, show, str_at};
use crate::steps::task::{READ_CALL_ID, wait_task_end};
use crate::world::ConformanceWorld;

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

#[then(expr = "the second model request continues after the answer {string}")]
async fn continues_after(world: &mut ConformanceWorld, partial: String) -> StepResult {
    wait_task_end(world).await?;
    let requests = task_requests(world).await?;
    let second = requests
        .get(1)
        .with_context(|| format!("the model received {} request(s)", requests.len()))?;
    let found = request_messages(second)?.iter().any(|m| {
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

#[when("the model has received the task's request")]
pub(crate) async fn model_received(world: &mut ConformanceWorld) -> StepResult {
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

#[then(expr = "the second model request carries {string} as the result of the ReadFile call")]
async fn second_request_has_result(world: &mut ConformanceWorld, content: String) -> StepResult {
    let body = nth_model_request(world, 1).await?;
    let messages = body
        .get("messages")
        .and_then(Value::as_array)
        .context("the request has no messages array")?;
    let tool = messages
        .iter()
        .find(|m| str_at(m, &["role"]) == Some("tool") && str_at(m, &["tool_call_id"]) == Some(READ_CALL_ID))
        .with_context(|| format!("no {{role: \"tool\", tool_call_id: {READ_CALL_ID:?}}} message in the second model request: {}", show(&body)))?;
    check!(
        str_at(tool, &["content"]).is_some_and(|c| c.contains(&content)),
        "the tool message must carry the file's content {content:?} as a string: {}",
        show(tool)
    );
    Ok(())
}

#[then("the second model request replays the ReadFile call before its result")]
async fn second_request_replays_call(world: &mut ConformanceWorld) -> StepResult {
    let body = nth_model_request(world, 1).await?;
    let messages = body
        .get("messages")
        .and_then(Value::as_array)
        .context("the request has no messages array")?;
    let call_at = messages.iter().position(|m| {
        str_at(m, &["role"]) == Some("assistant")
            && m.get("tool_calls")
                .and_then(Value::as_array)
                .is_some_and(|calls| {
                    calls.iter().any(|c| {
                        str_at(c, &["id"]) == Some(READ_CALL_ID)
                            && str_at(c, &["type"]) == Some("function")
                            && str_at(c, &["function", "name"]) == Some("ReadFile")
                            && at(c, &["function", "arguments"]).is_some_and(Value::is_string)
                    })
                })
    });
    let result_at = messages.iter().position(|m| {
        str_at(m, &["role"]) == Some("tool") && str_at(m, &["tool_call_id"]) == Some(READ_CALL_ID)
    });
    match (call_at, result_at) {
        (Some(call), Some(result)) if call < result => Ok(()),
        (None, _) => fail!(
            "no assistant message with tool_calls [{{id: {READ_CALL_ID:?}, type: \"function\", function: {{name: \"ReadFile\", arguments: <string>}}}}] in the second model request: {}",
            show(&body)
        ),
        _ => fail!(
            "the assistant's tool call must come before its tool result: {}",
            show(&body)
        ),
    }
}

#[then(
    "every model request is a streaming chat completion with the bearer token and the policy's model"
)]
async fn model_requests_shape(world: &mut ConformanceWorld) -> StepResult {
    let fakes = world.started_fakes()?;
    let policy = fakes.session.policy();
    // The policy's first allowed model (local-agent-host.md §6.2).
    let model = at(&policy, &["llmPolicy", "allowedModels"])
        .and_then(|models| models.get(0))
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let max_tokens = at(&policy, &["llmPolicy", "maxOutputTokens"]).cloned();
    let requests = fakes.streaming_gateway.all_requests().await;
    check!(!requests.is_empty(), "the model received no request");
    for (index, request) in requests.iter().enumerate() {
        let n = index + 1;
        check!(
            request.method == "POST" && request.path == "/v1/chat/completions",
            "model request {n} went to {} {}, expected POST {{LLM_GATEWAY_ENDPOINT}}/chat/completions",
            request.method,
            request.path
        );
        let auth = request.header("authorization").unwrap_or("");
        check!(
            auth == format!("Bearer {GATEWAY_TOKEN}"),
            "model request {n} carries Authorization {auth:?}, expected the bearer token from LLM_GATEWAY_AUTH_TOKEN"
        );
        let body = &request.body;
        check!(
            body.get("stream") == Some(&json!(true)),
            "model request {n} must ask for stream: true: {}",
            show(body)
        );
        check!(
            str_at(body, &["model"]) == Some(model.as_str()),
            "model request {n} names model {:?}, the policy's first allowed model is {model:?}",
            str_at(body, &["model"])
        );
        if let Some(max) = &max_tokens {
            check!(
                body.get("max_tokens") == Some(max),
                "model request {n} max_tokens is {:?}, the policy's maxOutputTokens is {max}",
                body.get("max_tokens")
            );
        }
        check!(
            body.get("messages")
                .and_then(Value::as_array)
                .is_some_and(|m| !m.is_empty()),
            "model request {n} must carry the messages: {}",
            show(body)
        );
    }
    Ok(())
}

#[then("every model request names the session, the task and the step in its headers")]
async fn model_request_headers(world: &mut ConformanceWorld) -> StepResult {
    let session_id = world.session()?.session_id.clone();
    let task_id = world.task()?.task_id.clone();
    let requests = model_requests(world.started_fakes()?).await;
    check!(!requests.is_empty(), "the model received no request");
    for (index, request) in requests.iter().enumerate() {
        let n = index + 1;
        for (header, want) in [
            ("x-session-id", Some(session_id.as_str())),
            ("x-task-id", Some(task_id.as_str())),
        ] {
            check!(
                request.header(header) == want,
                "model request {n} header {header} is {:?}, expected {want:?}",
                request.header(header)
            );
        }
        check!(
            request
                .header("x-step-id")
                .is_some_and(|s| !s.trim().is_empty()),
            "model request {n} must carry the step id in X-Step-Id"
        );
    }
    Ok(())
}

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
    let wording = declares_reference(world)?;
    check!(
        !content.trim().is_empty()
            && (!wording || content.to_lowercase().contains(&needle.to_lowercase())),
        "the tool result the model received does not name {needle:?}: {}",
        show(&message)
    );
    Ok(())
}

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

#[then("the model was never called")]
async fn model_never_called(world: &mut ConformanceWorld) -> StepResult {
    barrier(world).await?;
    let got = model_requests(world.started_fakes()?).await.len();
    check!(
        got == 0,
        "the gateway received {got} request(s) for a session that never started"
    );
    Ok(())
}

#[then(expr = "every model request asks for at most {int} output tokens")]
async fn max_tokens(world: &mut ConformanceWorld, limit: u64) -> StepResult {
    let requests = model_requests(world.started_fakes()?).await;
    check!(!requests.is_empty(), "the model received no request");
    for request in &requests {
        let got = request.body.get("max_tokens").and_then(Value::as_u64);
        check!(
            got == Some(limit),
            "a model request has max_tokens {got:?}, expected llmPolicy.maxOutputTokens {limit}: {}",
            show(&request.body)
        );
    }
    Ok(())
}

/// §6.4: after a 400 the thread gets a note, so the model knows on the next attempt.
#[then("the new task's first model request tells the model the earlier request was blocked")]
async fn guardrail_note(world: &mut ConformanceWorld) -> StepResult {
    wait_task_end(world).await?;
    let requests = task_requests(world).await?;
    let first = requests
        .first()
        .ok_or_else(|| anyhow::anyhow!("the new task made no model request"))?;
    let all = request_messages(first)?;
    let noted = all.iter().skip(1).any(|m| {
        str_at(m, &["content"]).is_some_and(|c| {
            let c = c.to_lowercase();
            c.contains("blocked") || c.contains("guardrail")
        })
    });
    check!(
        noted,
        "no message of the new task's first model request tells the model that the earlier request was blocked: {}",
        show(first)
    );
    Ok(())
}

/// §6.3: tool calls are dispatched only after the full response is received — every
/// tool_requested of a step comes after that step's llm_request_completed.
#[then("every tool call of the task is requested only after the model's answer is complete")]
async fn tools_after_answer(world: &mut ConformanceWorld) -> StepResult {
    wait_task_end(world).await?;
    let task_id = world.task()?.task_id.clone();
    let events = task_events(&world.started_runtime()?.events(), &task_id);
    if !events
        .iter()
        .any(|e| e.event_type() == "llm_request_completed")
    {
        fail!(
            "{} the runtime reports no llm_request_completed, so the end of the model's answer cannot be seen; that is REQ-TASK-013's finding",
            crate::contract::NOT_JUDGED
        );
    }
    let mut requested = 0;
    for (index, event) in events.iter().enumerate() {
        if event.event_type() != "tool_requested" {
            continue;
        }
        requested += 1;
        let step = event.str_field("stepId");
        let answered = events[..index]
            .iter()
            .any(|e| e.event_type() == "llm_request_completed" && e.str_field("stepId") == step);
        check!(
            answered,
            "tool_requested of step {step:?} came before the step's llm_request_completed: {}",
            event_types(&events)
        );
    }
    check!(
        requested > 0,
        "the task requested no tool: {}",
        event_types(&events)
    );
    Ok(())
}
