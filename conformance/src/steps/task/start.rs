//! Starting tasks the runtime must refuse or limit: taskOptions.maxSteps, a task in another
//! session, a second task while one runs, a reused taskId.

use cucumber::{given, when};
use serde_json::{Value, json};

use crate::steps::support::{StepResult, expect_result};
use crate::steps::task::{Remember, app_task_id, send_start_task, start_task};
use crate::world::ConformanceWorld;

/// Sends StartTask with extra params; remembers the task only when the runtime accepted it,
/// so a refused StartTask leaves the running task as the scenario's task.
async fn try_start(
    world: &mut ConformanceWorld,
    prompt: &str,
    extra: Value,
) -> anyhow::Result<Value> {
    send_start_task(world, prompt, extra, Remember::IfAccepted).await
}

#[when(expr = "the client starts the task {string} with taskOptions.maxSteps {int}")]
async fn starts_with_max_steps(
    world: &mut ConformanceWorld,
    prompt: String,
    max_steps: i64,
) -> StepResult {
    let response = try_start(
        world,
        &prompt,
        json!({"taskOptions": {"maxSteps": max_steps}}),
    )
    .await?;
    expect_result(&response, "StartTask")?;
    Ok(())
}

#[when(expr = "the client tries to start the task {string} with taskOptions.maxSteps {int}")]
async fn tries_with_max_steps(
    world: &mut ConformanceWorld,
    prompt: String,
    max_steps: i64,
) -> StepResult {
    try_start(
        world,
        &prompt,
        json!({"taskOptions": {"maxSteps": max_steps}}),
    )
    .await?;
    Ok(())
}

#[when(expr = "the client tries to start the task {string}")]
async fn tries_to_start(world: &mut ConformanceWorld, prompt: String) -> StepResult {
    try_start(world, &prompt, json!({})).await?;
    Ok(())
}

#[when(expr = "the client tries to start the task {string} in the session {string}")]
async fn tries_in_session(
    world: &mut ConformanceWorld,
    prompt: String,
    session_id: String,
) -> StepResult {
    let runtime = world.runtime().await?;
    let response = runtime
        .request(
            "StartTask",
            Some(json!({
                "sessionId": session_id,
                "taskId": app_task_id(),
                "prompt": prompt,
            })),
        )
        .await?;
    world.last_response = Some(response);
    world.last_method = Some("StartTask".to_owned());
    Ok(())
}

#[when(expr = "the client tries to start the task {string} with the finished task's taskId")]
async fn tries_same_task_id(world: &mut ConformanceWorld, prompt: String) -> StepResult {
    let task_id = world.task()?.task_id.clone();
    try_start(world, &prompt, json!({"taskId": task_id})).await?;
    Ok(())
}

/// A second task in the same session, started the way the happy path starts one.
#[when(expr = "the client starts another task {string}")]
async fn starts_another(world: &mut ConformanceWorld, prompt: String) -> StepResult {
    let response = start_task(world, &prompt).await?;
    expect_result(&response, "StartTask")?;
    Ok(())
}

#[given(expr = "the client has started the task {string}")]
async fn has_started(world: &mut ConformanceWorld, prompt: String) -> StepResult {
    let response = start_task(world, &prompt).await?;
    expect_result(&response, "StartTask")?;
    Ok(())
}
