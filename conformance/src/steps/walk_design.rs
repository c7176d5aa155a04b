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
            Some(json!({
                "sessionId": session_id,
                "taskId": super::task::app_task_id(),
                "prompt": "Say hello.",
            })),
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

#[then("the resumed session has the name the Session Service gave it")]
async fn resumed_name(world: &mut ConformanceWorld) -> StepResult {
    let created = world.session()?.result.get("name").cloned();
    let created = created.context("CreateSession answered without a name to compare with")?;
    let response = world.last_response()?;
    let result = super::expect_result(response, "ResumeSession")?;
    check!(
        result.get("name") == Some(&created),
        "ResumeSession must report the session's name {} as CreateSession did: {}",
        show(&created),
        show(result)
    );
    Ok(())
}

#[given(expr = "a running session created on {string}")]
async fn session_on_os(world: &mut ConformanceWorld, os_family: String) -> StepResult {
    let workspace = world.dirs()?.workspace.clone();
    let mut params = super::session::create_session_params(&workspace);
    params["clientInfo"]["osFamily"] = json!(os_family);
    let response = world
        .runtime()
        .await?
        .request("CreateSession", Some(params))
        .await?;
    let result = super::expect_result(&response, "CreateSession")?.clone();
    world.session = Some(crate::world::SessionInfo::from_result(result));
    Ok(())
}

#[then(expr = "every model request carries the same system prompt, naming {string}")]
async fn same_system_prompt(world: &mut ConformanceWorld, os_family: String) -> StepResult {
    let requests = model_requests(world.started_fakes()?).await;
    check!(!requests.is_empty(), "the model received no request");
    let mut prompts: Vec<String> = Vec::new();
    for request in &requests {
        let system = super::common::system_prompt(&request.body);
        check!(
            system.to_lowercase().contains(&os_family.to_lowercase()),
            "the system prompt should name the OS family the desktop app reported ({os_family:?}): {}",
            show(&Value::String(system))
        );
        if !prompts.contains(&system) {
            prompts.push(system);
        }
    }
    check!(
        prompts.len() == 1,
        "a session keeps one system prompt, also across a crash and ResumeSession; the requests carry {}: {}",
        prompts.len(),
        prompts
            .iter()
            .map(|p| show(&Value::String(p.clone())))
            .collect::<Vec<_>>()
            .join(" / ")
    );
    Ok(())
}

#[then("the Backend Tool Service received a ToolRequest naming the session, the task and the step")]
async fn backend_tool_request_ids(world: &mut ConformanceWorld) -> StepResult {
    super::task::wait_task_end(world).await?;
    let session_id = world.session()?.session_id.clone();
    let task_id = world.task()?.task_id.clone();
    let step_id = world
        .started_runtime()?
        .events()
        .iter()
        .find(|e| e.event_type() == "tool_requested" && e.str_field("taskId") == Some(&task_id))
        .and_then(|e| e.str_field("stepId").map(str::to_owned))
        .context("the runtime reported no tool_requested with a stepId for the task")?;
    let fake = world
        .backend_tools
        .as_ref()
        .context("no Backend Tool Service fake was started")?;
    let seen = fake.invocations().await;
    let (_, body) = seen
        .first()
        .context("the Backend Tool Service received no invocation")?;
    super::check_service_body("tool/ToolRequest", body, "the Backend Tool Service request")?;
    for (field, want) in [
        ("sessionId", session_id.as_str()),
        ("taskId", task_id.as_str()),
        ("stepId", step_id.as_str()),
    ] {
        check!(
            str_at(body, &[field]) == Some(want),
            "the ToolRequest's {field} must be {want:?} (system-design.md §13.2), got {}",
            show(body.get(field).unwrap_or(&Value::Null))
        );
    }
    Ok(())
}
