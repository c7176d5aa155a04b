//! Steps for scripting the LLM Gateway and checking how the runtime handles its answers:
//! status codes, retries, malformed streams and failures (local-agent-host.md §6; INTEROP.md §2).

use std::time::Duration;

use agent_mocks::{GatewayReply, ScriptedToolCall, StreamStep, Usage};
use anyhow::Context;
use cucumber::{given, then};
use serde_json::{Value, json};

use crate::steps::errors::judges_code;
use crate::steps::support::model::{
    READ_A_CALL_ID, READ_B_CALL_ID, WRITE_CALL_ID, delta_chunk, push_model_reply,
    push_model_stream, push_status, text_chunks,
};
use crate::steps::support::policy::workspace_path;
use crate::steps::support::task::{
    event_types, session_reaches, task_failure, this_task_events, wait_task_event,
};
use crate::steps::support::{StepResult, declares_reference, eventually, show, str_at};
use crate::steps::task::{READ_CALL_ID, wait_task_end};
use crate::world::ConformanceWorld;

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

/// A slow but live stream: each event comes `ms` after the previous one, so the whole answer
/// takes longer than a short idle timeout while no single silence does.
#[given(expr = "the model will answer {string} with {int} ms between chunks")]
async fn model_answers_paced(world: &mut ConformanceWorld, text: String, ms: u64) -> StepResult {
    let steps = StreamStep::from_reply(&GatewayReply::text(text), Some(Usage::default()))
        .context("a text reply renders as a stream")?;
    let mut paced = Vec::with_capacity(steps.len() * 2);
    for step in steps {
        if !paced.is_empty() {
            paced.push(StreamStep::Delay(Duration::from_millis(ms)));
        }
        paced.push(step);
    }
    push_model_stream(world.fakes().await?, paced);
    Ok(())
}

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

#[then("the session is paused")]
async fn reports_paused(world: &mut ConformanceWorld) -> StepResult {
    session_reaches(world, "SESSION_PAUSED", "session_paused").await?;
    Ok(())
}

#[then(expr = "the task fails recoverably with error code {string}")]
async fn fails_recoverably(world: &mut ConformanceWorld, code: String) -> StepResult {
    let payload = task_failure(world).await?;
    let judged = judges_code(world, &code)?;
    check!(
        (!judged || str_at(&payload, &["errorCode"]) == Some(code.as_str()))
            && payload.get("isRecoverable") == Some(&json!(true)),
        "task_failed must carry errorCode {code:?} and isRecoverable true: {}",
        show(&payload)
    );
    Ok(())
}

#[then(expr = "the task fails with error code {string}")]
async fn task_fails_with(world: &mut ConformanceWorld, code: String) -> StepResult {
    let payload = task_failure(world).await?;
    let judged = judges_code(world, &code)?;
    check!(
        !judged || str_at(&payload, &["errorCode"]) == Some(code.as_str()),
        "task_failed.errorCode is {:?}, expected {code:?}: {}",
        str_at(&payload, &["errorCode"]),
        show(&payload)
    );
    Ok(())
}

/// For codes the documents give no trigger for (the gateway's 401/403 → UNAUTHORIZED is the
/// reference runtime's mapping): any runtime fails the task; the code is judged for the
/// reference runtime only.
#[then(expr = "the task fails, with error code {string} for the reference runtime")]
async fn task_fails_reference_code(world: &mut ConformanceWorld, code: String) -> StepResult {
    let payload = task_failure(world).await?;
    check!(
        !declares_reference(world)? || str_at(&payload, &["errorCode"]) == Some(code.as_str()),
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

/// Measured between the arrivals of the first two model requests at the fake gateway (which
/// answered the first one with the 429 at once), so no runtime event or clock is trusted.
#[then(
    expr = "the gateway received the retry at least {int} second(s) after the rate-limited request"
)]
async fn retry_gap(world: &mut ConformanceWorld, seconds: u64) -> StepResult {
    let fakes = world.started_fakes()?;
    // Bounded by the kit's timeout on top of the delay asked for.
    let budget = world.timeout() + Duration::from_secs(seconds);
    let arrivals = eventually(budget, "the gateway waited for the retry", || async {
        let arrivals = fakes.streaming_gateway.request_arrivals();
        if arrivals.len() >= 2 {
            Ok(arrivals)
        } else {
            Err(format!("{} model request(s) so far", arrivals.len()))
        }
    })
    .await?;
    let gap = arrivals[1].saturating_duration_since(arrivals[0]);
    check!(
        gap >= Duration::from_secs(seconds),
        "the retry reached the gateway {:.3}s after the rate-limited request, but Retry-After asked for {seconds}s",
        gap.as_secs_f64()
    );
    Ok(())
}

/// The shape upstream providers' errors reach the runtime in (INTEROP.md §2).
#[given(
    expr = "the gateway answers the next request with status {int} and the upstream error {string}"
)]
async fn upstream_error(world: &mut ConformanceWorld, status: u16, message: String) -> StepResult {
    let body =
        json!({"error": {"message": message, "type": "invalid_request_error", "code": "upstream"}});
    push_model_reply(
        world.fakes().await?,
        agent_mocks::GatewayReply::Status {
            status,
            headers: Vec::new(),
            body: body.to_string(),
        },
    );
    Ok(())
}
