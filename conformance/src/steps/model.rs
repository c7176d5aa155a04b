//! What the services observed while a task ran: the requests the model (LLM Gateway fake)
//! received, and the session history the Workspace Service was given.

use agent_mocks::FaultControl;
use anyhow::{Context, anyhow};
use cucumber::then;
use serde_json::{Value, json};

use super::task::{READ_CALL_ID, wait_task_end};
use super::{StepResult, at, eventually, model_requests, show, str_at};
use crate::env::GATEWAY_TOKEN;
use crate::world::ConformanceWorld;

// ---- Then: what the model (gateway) received ---------------------------------------------------

async fn nth_model_request(world: &ConformanceWorld, n: usize) -> anyhow::Result<Value> {
    let requests = model_requests(world.started_fakes()?).await;
    requests.get(n).map(|r| r.body.clone()).ok_or_else(|| {
        anyhow!(
            "the model received {} request(s), expected at least {}",
            requests.len(),
            n + 1
        )
    })
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

// ---- Then: what the Workspace Service received ----------------------------------------------------

#[then(
    expr = "the Workspace Service receives a session_history holding the prompt and the answer {string}"
)]
async fn history_uploaded(world: &mut ConformanceWorld, answer: String) -> StepResult {
    wait_task_end(world).await?;
    let session = world.session()?.clone();
    let prompt = world.task()?.prompt.clone();
    let path = format!("/workspaces/{}/artifacts", session.workspace_id);
    let fakes = world.started_fakes()?;
    let upload = eventually(world.timeout(), "no fitting session_history upload", || async {
        let requests = fakes.workspace.requests().await;
        let histories: Vec<_> = requests
            .iter()
            .filter(|r| r.method == "POST" && r.path == path && str_at(&r.body, &["artifactType"]) == Some("session_history"))
            .collect();
        let fitting = histories.iter().rev().find(|r| {
            let messages = r.body.get("messages").and_then(Value::as_array);
            let has = |role: &str, text: &str| {
                messages.is_some_and(|ms| {
                    ms.iter().any(|m| str_at(m, &["role"]) == Some(role) && str_at(m, &["content"]).is_some_and(|c| c.contains(text)))
                })
            };
            has("user", &prompt) && has("assistant", &answer)
        });
        match fitting {
            Some(request) => Ok(request.body.clone()),
            None => Err(format!(
                "{} session_history upload(s) to POST {path}; none holds the user prompt and the assistant answer{}",
                histories.len(),
                histories.last().map(|r| format!(" (last: {})", show(&r.body))).unwrap_or_default()
            )),
        }
    })
    .await?;
    super::check_service_body(
        "services/workspace/ArtifactUploadRequest",
        &upload,
        "the session_history upload",
    )?;
    for (index, message) in upload
        .get("messages")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .enumerate()
    {
        super::check_service_body(
            "message/ConversationMessage",
            message,
            &format!("session_history message {index}"),
        )?;
    }
    check!(
        str_at(&upload, &["sessionId"]) == Some(session.session_id.as_str()),
        "the session_history upload names session {:?}, expected {:?}",
        str_at(&upload, &["sessionId"]),
        session.session_id
    );
    Ok(())
}
