//! Steps for the LLM Gateway client, the policy enforcer and approvals
//! (local-agent-host.md §6, §8, §10; INTEROP.md §1, §2, §5).
//!
//! The policy steps edit the Session Service fake's bundle template, so they must come
//! before "a running session" (the bundle is fetched by CreateSession). The gateway steps
//! script the streaming gateway fake; its replies are consumed in order.

use agent_mocks::GatewayReply;
use agent_mocks::policy::{capability_entry, remove_capability, set_capability};
use anyhow::{Context, anyhow};
use cucumber::{given, then};
use serde_json::{Value, json};

use super::common::{edit_policy, grant, tool_completed, wait_task_event, workspace_path};
use super::task::{READ_CALL_ID, wait_task_end};
use super::{StepResult, model_requests, push_model_reply, show, str_at};
use crate::world::ConformanceWorld;

/// The ids of the two calls of a parallel answer.
pub(super) const READ_A_CALL_ID: &str = "call_read_a";
pub(super) const READ_B_CALL_ID: &str = "call_read_b";
/// The id of the WriteFile call scripted next to a ReadFile call.
pub(super) const WRITE_CALL_ID: &str = "call_write_1";

// ---- helpers -----------------------------------------------------------------------------------

/// The task's terminal event, which must be task_failed.
pub(super) async fn task_failure(world: &mut ConformanceWorld) -> anyhow::Result<Value> {
    let end = wait_task_end(world).await?;
    check!(
        end.event_type() == "task_failed",
        "the task should have failed but ended with {}: {}",
        end.event_type(),
        show(end.payload())
    );
    Ok(end.payload().clone())
}

/// Every request body the model received.
pub(super) async fn model_bodies(world: &ConformanceWorld) -> anyhow::Result<Vec<Value>> {
    Ok(model_requests(world.started_fakes()?)
        .await
        .into_iter()
        .map(|r| r.body)
        .collect())
}

pub(super) fn messages(body: &Value) -> &[Value] {
    body.get("messages")
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

/// The `{role: "tool"}` message answering `call_id` in the last request that has one.
pub(super) async fn tool_message(world: &ConformanceWorld, call_id: &str) -> anyhow::Result<Value> {
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
pub(super) async fn approval_request(world: &ConformanceWorld) -> anyhow::Result<Value> {
    let event = wait_task_event(world, "approval_requested", |e| {
        e.event_type() == "approval_requested"
    })
    .await?;
    Ok(event.payload().clone())
}

pub(super) async fn approval_id(world: &ConformanceWorld) -> anyhow::Result<String> {
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
pub(super) async fn approve_action(
    world: &mut ConformanceWorld,
    params: Value,
) -> anyhow::Result<()> {
    let response = world
        .runtime()
        .await?
        .request("ApproveAction", Some(params))
        .await?;
    world.last_response = Some(response);
    world.last_method = Some("ApproveAction".to_owned());
    Ok(())
}

pub(super) async fn decide(
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
pub(super) async fn push_status(
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
pub(super) fn delta_chunk(delta: Value, finish_reason: Option<&str>) -> String {
    json!({
        "id": "chatcmpl-conformance",
        "object": "chat.completion.chunk",
        "created": 1_700_000_000,
        "model": "gpt-test-1",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
    })
    .to_string()
}

pub(super) fn text_chunks(text: &str) -> Vec<String> {
    agent_mocks::sse::split_text(text)
        .into_iter()
        .map(|piece| delta_chunk(json!({"content": piece}), None))
        .collect()
}

pub(super) fn parse_rfc3339(stamp: &str) -> Option<time::OffsetDateTime> {
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
    grant(world, "File.Read", json!({"allowedPaths": ["."]})).await?;
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
    grant(
        world,
        "File.Read",
        json!({"allowedPaths": [allowed], "blockedPaths": [blocked]}),
    )
    .await?;
    Ok(())
}

#[given(expr = "the policy allows File.Read only in the workspace folder {string}")]
async fn allows_only_folder(world: &mut ConformanceWorld, folder: String) -> StepResult {
    // An absolute entry without a trailing slash, like "/Users/me/proj".
    let absolute = workspace_path(world, &folder)?;
    std::fs::create_dir_all(&absolute).with_context(|| format!("cannot create {absolute}"))?;
    grant(world, "File.Read", json!({"allowedPaths": [absolute]})).await?;
    Ok(())
}

#[given(expr = "the policy limits File.Read to files of at most {int} bytes")]
async fn limits_size(world: &mut ConformanceWorld, bytes: u64) -> StepResult {
    grant(
        world,
        "File.Read",
        json!({"allowedPaths": ["."], "maxFileSizeBytes": bytes}),
    )
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

// ---- Then: tool calls under the policy ------------------------------------------------------------

#[then(expr = "the ReadFile call is denied with error code {string}")]
async fn read_denied(world: &mut ConformanceWorld, code: String) -> StepResult {
    let payload = tool_completed(world, READ_CALL_ID).await?;
    check!(
        str_at(&payload, &["status"]) == Some("denied")
            && super::optional_code(&payload, "errorCode", &code),
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
