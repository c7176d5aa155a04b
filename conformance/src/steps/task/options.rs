//! Steps for `StartTask.taskOptions.approvalMode` and `allowNetwork` (system-design.md
//! "Task"; architecture.md §6): options that can only tighten the policy.

use anyhow::Context;
use cucumber::{then, when};
use serde_json::{Value, json};

use crate::steps::support::model::model_requests;
use crate::steps::support::{StepResult, expect_result, show, str_at};
use crate::steps::task::{Remember, send_start_task};
use crate::world::ConformanceWorld;

/// `options` is the JSON of `taskOptions`, e.g. `{"approvalMode": "always"}`.
#[when(expr = "the client starts the task {string} with the task options {string}")]
async fn starts_with_options(
    world: &mut ConformanceWorld,
    prompt: String,
    options: String,
) -> StepResult {
    let options: Value = serde_json::from_str(&options)
        .with_context(|| format!("the task options {options:?} are not JSON"))?;
    let response = send_start_task(
        world,
        &prompt,
        json!({"taskOptions": options}),
        Remember::IfAccepted,
    )
    .await?;
    expect_result(&response, "StartTask")?;
    Ok(())
}

#[then(regex = r"^the model (is|is not) offered HttpRequest$")]
async fn offered_http(world: &mut ConformanceWorld, which: String) -> StepResult {
    let requests = model_requests(world.started_fakes()?).await;
    let body = &requests
        .first()
        .context("the model received no request")?
        .body;
    let offered = body
        .get("tools")
        .and_then(Value::as_array)
        .is_some_and(|tools| {
            tools
                .iter()
                .any(|t| str_at(t, &["function", "name"]) == Some("HttpRequest"))
        });
    check!(
        offered == (which == "is"),
        "HttpRequest should {}be offered to the model: tools = {}",
        if which == "is" { "" } else { "not " },
        show(body.get("tools").unwrap_or(&Value::Null))
    );
    Ok(())
}
