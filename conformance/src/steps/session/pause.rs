//! Steps for pausing and resuming a session and continuing its incomplete task
//! (local-agent-host.md §3.3, §9).

use agent_mocks::FaultControl;
use anyhow::Context;
use cucumber::{given, then, when};
use serde_json::{Value, json};

use crate::steps::extensions::add_mcp_server;
use crate::steps::support::model::model_requests;
use crate::steps::support::task::{TASK_TERMINAL_EVENTS, session_reaches, task_answer};
use crate::steps::support::{StepResult, expect_result, show, str_at};
use crate::world::{ConformanceWorld, TaskInfo};

pub(crate) async fn resume_session(world: &mut ConformanceWorld) -> anyhow::Result<Value> {
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
    let requests_before = model_requests(world.fakes().await?).await.len();
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
        requests_before,
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
    let events = world.started_runtime()?.events();
    check!(
        end.event_type() == "task_completed" && task_answer(&end, &events) == answer,
        "the continued task should complete with {answer:?}, it ended with {}: {}",
        end.event_type(),
        show(end.payload())
    );
    Ok(())
}

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

#[then("the session runs again")]
async fn reports_resumed(world: &mut ConformanceWorld) -> StepResult {
    session_reaches(world, "SESSION_RUNNING", "session_resumed").await?;
    Ok(())
}

/// Unlike "an MCP server … the policy allows …", this comes after the session exists: only
/// a bundle fetched later (ResumeSession) lists the server.
#[given(
    expr = "the Session Service's fresh policy allows an MCP server {string} with only the tool {string}"
)]
async fn fresh_policy_mcp_server(
    world: &mut ConformanceWorld,
    name: String,
    tool: String,
) -> StepResult {
    add_mcp_server(world, name, tool).await?;
    Ok(())
}
