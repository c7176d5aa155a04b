//! JSON-RPC framing steps: raw lines as the client writes them, and what comes back.
//!
//! A raw line is only *sent* by a `When` step; the first `Then` step that looks at the answer
//! reads it, so "the runtime does not answer it" can be asserted with the same `When`.

use anyhow::{Context, anyhow};
use cucumber::{given, then, when};
use serde_json::{Value, json};

use crate::driver::kind;
use crate::steps::support::{StepResult, expect_result, show};
use crate::world::ConformanceWorld;

/// The response the next `Then` step is about: the answer to the raw line just sent (read
/// now, once), or else the last response a request step received.
pub(crate) async fn current_response(world: &mut ConformanceWorld) -> anyhow::Result<Value> {
    if world.awaiting_raw_answer {
        world.awaiting_raw_answer = false;
        let response = world
            .runtime()
            .await?
            .read_next_response()
            .await
            .context("no answer to the line the client sent")?;
        world.last_response = Some(response);
        world.last_method = None;
    }
    Ok(world.last_response()?.clone())
}

/// Sends raw bytes as one line; the answer is read by the next `Then` step.
pub(crate) async fn send_line(world: &mut ConformanceWorld, bytes: &[u8]) -> anyhow::Result<()> {
    world.runtime().await?.send_raw_line(bytes).await?;
    world.awaiting_raw_answer = true;
    Ok(())
}

#[given("the desktop app has started the runtime")]
async fn runtime_started(world: &mut ConformanceWorld) -> StepResult {
    world.runtime().await?;
    Ok(())
}

#[when(regex = r"^the client sends the line '(.*)'$")]
async fn sends_line(world: &mut ConformanceWorld, line: String) -> StepResult {
    send_line(world, line.as_bytes()).await?;
    Ok(())
}

#[when("the client sends a line that is not valid UTF-8")]
async fn sends_invalid_utf8(world: &mut ConformanceWorld) -> StepResult {
    // A well-formed request except for two bytes that can never occur in UTF-8.
    let mut line =
        br#"{"jsonrpc":"2.0","id":1,"method":"GetSessionState","params":{"note":""#.to_vec();
    line.extend_from_slice(&[0xFF, 0xFE]);
    line.extend_from_slice(br#""}}"#);
    send_line(world, &line).await?;
    Ok(())
}

#[when(regex = r"^the client sends GetSessionState with id (.+)$")]
async fn sends_with_id(world: &mut ConformanceWorld, id: String) -> StepResult {
    let id: Value = serde_json::from_str(&id)
        .with_context(|| format!("the id {id} in the scenario is not a JSON value"))?;
    let line = serde_json::to_vec(&json!({
        "jsonrpc": "2.0", "id": id, "method": "GetSessionState", "params": {}
    }))?;
    send_line(world, &line).await?;
    Ok(())
}

#[then(regex = r"^the response carries the id (.+)$")]
async fn response_carries_id(world: &mut ConformanceWorld, id: String) -> StepResult {
    let expected: Value = serde_json::from_str(&id)
        .with_context(|| format!("the id {id} in the scenario is not a JSON value"))?;
    let response = current_response(world).await?;
    let got = response.get("id").cloned().unwrap_or(Value::Null);
    check!(
        got == expected,
        "the request id {expected} ({}) came back as {got} ({}): ids must be echoed with their JSON type",
        kind(&expected),
        kind(&got)
    );
    Ok(())
}

#[then("the runtime answers with a result")]
async fn answers_with_result(world: &mut ConformanceWorld) -> StepResult {
    let response = current_response(world).await?;
    expect_result(&response, "the request")?;
    Ok(())
}

#[then("the runtime does not answer it")]
async fn does_not_answer(world: &mut ConformanceWorld) -> StepResult {
    world.awaiting_raw_answer = false;
    let leftovers = world
        .runtime()
        .await?
        .unclaimed_responses_after_probe()
        .await?;
    check!(
        leftovers.is_empty(),
        "the runtime answered what needs no answer: {}",
        leftovers.iter().map(show).collect::<Vec<_>>().join(" | ")
    );
    Ok(())
}

#[then(expr = "the runtime answers with a batch of {int} responses")]
async fn answers_with_batch(world: &mut ConformanceWorld, count: usize) -> StepResult {
    let response = current_response(world).await?;
    let items = response.as_array().ok_or_else(|| {
        anyhow!(
            "a batch must be answered with one array, got {}: {}",
            kind(&response),
            show(&response)
        )
    })?;
    check!(
        items.len() == count,
        "the batch answer holds {} responses, expected {count} (one per request, none for notifications): {}",
        items.len(),
        show(&response)
    );
    Ok(())
}

/// The element of the batch answer carrying `id`.
fn batch_member(world: &ConformanceWorld, id: &Value) -> anyhow::Result<Value> {
    let response = world.last_response()?;
    let items = response
        .as_array()
        .with_context(|| format!("the last answer is not a batch: {}", show(response)))?;
    items
        .iter()
        .find(|item| item.get("id") == Some(id))
        .cloned()
        .with_context(|| {
            format!(
                "the batch answer has no response for id {id}: {}",
                show(response)
            )
        })
}

#[then(regex = r"^the batch answers id (\S+) with a result$")]
async fn batch_result(world: &mut ConformanceWorld, id: String) -> StepResult {
    let id: Value = serde_json::from_str(&id)?;
    let member = batch_member(world, &id)?;
    expect_result(&member, &format!("batch member {id}"))?;
    Ok(())
}

#[then(regex = r"^the batch answers id (\S+) with error (-?\d+)$")]
async fn batch_error(world: &mut ConformanceWorld, id: String, code: i64) -> StepResult {
    let id: Value = serde_json::from_str(&id)?;
    let member = batch_member(world, &id)?;
    let got = member
        .get("error")
        .and_then(|e| e.get("code"))
        .and_then(Value::as_i64);
    check!(
        got == Some(code),
        "batch member {id} should carry error {code}: {}",
        show(&member)
    );
    Ok(())
}

#[then("the runtime still answers GetSessionState")]
async fn still_answers(world: &mut ConformanceWorld) -> StepResult {
    world.awaiting_raw_answer = false;
    let params = match &world.session {
        Some(session) => json!({"sessionId": session.session_id}),
        None => json!({}),
    };
    let runtime = world.runtime().await?;
    if let Some(status) = runtime.exit_status() {
        return Err(anyhow!("the runtime has exited ({status}); it must stay alive").into());
    }
    let response = runtime
        .request("GetSessionState", Some(params))
        .await
        .context("the runtime stopped answering")?;
    check!(
        response.get("result").is_some() || response.get("error").is_some(),
        "GetSessionState got neither a result nor an error: {}",
        show(&response)
    );
    Ok(())
}

/// GetSessionState for the running session, sent as a raw line with `id` as written (any JSON
/// value, `null` included); the answer is read by the next `Then` step.
#[when(regex = r"^the client asks for the session state with id (.+)$")]
async fn state_with_id(world: &mut ConformanceWorld, id: String) -> StepResult {
    let id: Value = serde_json::from_str(&id)
        .with_context(|| format!("the id {id} in the scenario is not a JSON value"))?;
    let session_id = world.session()?.session_id.clone();
    let line = serde_json::to_vec(&json!({
        "jsonrpc": "2.0", "id": id, "method": "GetSessionState",
        "params": {"sessionId": session_id},
    }))?;
    send_line(world, &line).await?;
    Ok(())
}
