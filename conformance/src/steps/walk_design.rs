//! Steps for statements of system-design.md found by its line-by-line walk
//! (`features/walk/system-design.toml`): the handshake request, a session that must not
//! start, `llmPolicy.maxOutputTokens`, and the `session_history` snapshot fields.

use agent_mocks::FaultControl;
use anyhow::Context;
use cucumber::{given, then, when};
use serde_json::{Value, json};

use super::{StepResult, barrier, model_requests, show, str_at};
use crate::world::ConformanceWorld;

#[given(expr = "the policy limits answers to {int} output tokens")]
async fn max_output_tokens(world: &mut ConformanceWorld, tokens: u64) -> StepResult {
    world
        .fakes()
        .await?
        .session
        .update_policy(|bundle| bundle["llmPolicy"]["maxOutputTokens"] = json!(tokens));
    Ok(())
}

#[then(expr = "every model request asks for at most {int} output tokens")]
async fn every_request_max_tokens(world: &mut ConformanceWorld, tokens: u64) -> StepResult {
    let requests = model_requests(world.started_fakes()?).await;
    check!(!requests.is_empty(), "the model received no request");
    for (n, request) in requests.iter().enumerate() {
        let got = request.body.get("max_tokens");
        check!(
            got.and_then(Value::as_u64) == Some(tokens),
            "model request {} carries max_tokens {}, the policy's llmPolicy.maxOutputTokens is {tokens}",
            n + 1,
            show(got.unwrap_or(&Value::Null))
        );
    }
    Ok(())
}

#[then("the runtime reported no session_started")]
async fn no_session_started(world: &mut ConformanceWorld) -> StepResult {
    barrier(world).await?;
    let events = world.started_runtime()?.events();
    let started: Vec<_> = events
        .iter()
        .filter(|e| e.event_type() == "session_started")
        .collect();
    check!(
        started.is_empty(),
        "a session whose policy bundle failed validation must not start, yet the runtime reported session_started for {:?}",
        started.first().and_then(|e| e.str_field("sessionId"))
    );
    Ok(())
}

#[when("the client tries to start a task in the session the Session Service created")]
async fn start_in_created_session(world: &mut ConformanceWorld) -> StepResult {
    let session_id = world
        .started_fakes()?
        .session
        .session_ids()
        .last()
        .cloned()
        .context("the Session Service created no session")?;
    let response = world
        .runtime()
        .await?
        .request(
            "StartTask",
            Some(json!({"sessionId": session_id, "prompt": "Say hello."})),
        )
        .await?;
    world.last_response = Some(response);
    world.last_method = Some("StartTask".to_owned());
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

#[then("the Session Service was told the execution environment and the runtime's tools")]
async fn handshake_environment_and_tools(world: &mut ConformanceWorld) -> StepResult {
    let requests = world.started_fakes()?.session.requests().await;
    let create = requests
        .iter()
        .find(|r| r.method == "POST" && r.path == "/sessions")
        .context("the Session Service received no POST /sessions")?;
    let body = &create.body;
    check!(
        str_at(body, &["executionEnvironment"]) == Some("desktop"),
        "POST /sessions must carry the executionEnvironment the client sent (\"desktop\"), got {}",
        show(body.get("executionEnvironment").unwrap_or(&Value::Null))
    );
    let tools: Vec<&str> = body
        .get("supportedTools")
        .and_then(Value::as_array)
        .map(|tools| tools.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    for tool in ["ReadFile", "WriteFile"] {
        check!(
            tools.contains(&tool),
            "POST /sessions must list the runtime's tools in supportedTools (system-design.md §6, §12.1); {tool} is missing: {}",
            show(body.get("supportedTools").unwrap_or(&Value::Null))
        );
    }
    Ok(())
}

#[then("every session_history upload names the task it follows and when it was taken")]
async fn history_snapshot_fields(world: &mut ConformanceWorld) -> StepResult {
    let latest = world.task()?.task_id.clone();
    let mut tasks: Vec<String> = Vec::new();
    for event in world.started_runtime()?.events() {
        if event.event_type() == "task_started"
            && let Some(id) = event.str_field("taskId")
            && !tasks.iter().any(|t| t == id)
        {
            tasks.push(id.to_owned());
        }
    }
    let uploads: Vec<Value> = world
        .started_fakes()?
        .workspace
        .uploads()
        .await
        .into_iter()
        .filter(|u| str_at(u, &["artifactType"]) == Some("session_history"))
        .collect();
    check!(
        uploads.len() >= tasks.len() && !tasks.is_empty(),
        "expected a session_history upload after each of the {} task(s), got {}",
        tasks.len(),
        uploads.len()
    );
    let mut named = Vec::new();
    for upload in &uploads {
        let after = str_at(upload, &["snapshotAfterTaskId"]);
        check!(
            after.is_some_and(|id| tasks.iter().any(|t| t == id)),
            "a session_history upload must name the task it follows as snapshotAfterTaskId (one of {tasks:?}), got {:?}",
            after
        );
        let at = str_at(upload, &["snapshotAt"]).unwrap_or_default();
        check!(
            super::governance::parse_rfc3339(at).is_some(),
            "a session_history upload must carry snapshotAt as an RFC 3339 time, got {at:?}"
        );
        named.extend(after.map(str::to_owned));
    }
    for task in &tasks {
        check!(
            named.contains(task),
            "no session_history upload follows task {task}: {named:?}"
        );
    }
    check!(
        named.last() == Some(&latest),
        "the latest session_history must follow the latest task {latest}, it follows {:?}",
        named.last()
    );
    Ok(())
}
