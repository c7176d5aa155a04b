//! Hardening steps for the policy analyser and secret hygiene: Network.Http
//! grants without approval, as the redirect-hop and IDNA scenarios need them, and the denial
//! of a call scripted with "the model will call … with:". The rest of
//! `features/hardening/analyser.feature` reuses the policy, tools and redaction vocabulary.

use anyhow::Context;
use cucumber::{given, then};
use serde_json::json;

use crate::steps::support::policy::grant;
use crate::steps::support::task::{optional_code, this_task_events};
use crate::steps::support::{StepResult, of_type, show, str_at};
use crate::steps::task::wait_task_end;
use crate::world::ConformanceWorld;

fn list(text: &str) -> Vec<String> {
    text.split(',')
        .map(str::trim)
        .filter(|item| !item.is_empty())
        .map(str::to_owned)
        .collect()
}

#[given(expr = "the policy lets HttpRequest reach only {string}")]
async fn reach_only(world: &mut ConformanceWorld, allowed: String) -> StepResult {
    grant(
        world,
        "Network.Http",
        json!({"allowedDomains": list(&allowed)}),
    )
    .await?;
    Ok(())
}

#[given(expr = "the policy never lets HttpRequest reach {string}")]
async fn never_reach(world: &mut ConformanceWorld, blocked: String) -> StepResult {
    grant(
        world,
        "Network.Http",
        json!({"blockedDomains": list(&blocked)}),
    )
    .await?;
    Ok(())
}

#[then("the scripted tool call is denied")]
async fn scripted_call_denied(world: &mut ConformanceWorld) -> StepResult {
    wait_task_end(world).await?;
    let events = this_task_events(world)?;
    let completed = of_type(&events, "tool_completed");
    let done = completed
        .first()
        .context("no tool_completed in this task")?;
    let payload = done.payload();
    check!(
        str_at(payload, &["status"]) == Some("denied")
            && optional_code(payload, "errorCode", "CAPABILITY_DENIED")
            && str_at(payload, &["error"]).is_some_and(|e| !e.trim().is_empty()),
        "the policy must deny this call (tool_completed status denied, a reason, and CAPABILITY_DENIED if it names a code): {}",
        show(payload)
    );
    Ok(())
}
