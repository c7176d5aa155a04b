//! Hardening steps of issue 19 (the policy analyser and secret hygiene): Network.Http
//! grants without approval, as the redirect-hop and IDNA scenarios need them. The rest of
//! `features/hardening/analyser.feature` reuses the policy, tools and redaction vocabulary.

use cucumber::given;
use serde_json::json;

use super::StepResult;
use super::common::grant;

fn list(text: &str) -> Vec<String> {
    text.split(',')
        .map(str::trim)
        .filter(|item| !item.is_empty())
        .map(str::to_owned)
        .collect()
}

#[given(expr = "the policy lets HttpRequest reach only {string}")]
async fn reach_only(world: &mut crate::world::ConformanceWorld, allowed: String) -> StepResult {
    grant(
        world,
        "Network.Http",
        json!({"allowedDomains": list(&allowed)}),
    )
    .await?;
    Ok(())
}

#[given(expr = "the policy never lets HttpRequest reach {string}")]
async fn never_reach(world: &mut crate::world::ConformanceWorld, blocked: String) -> StepResult {
    grant(
        world,
        "Network.Http",
        json!({"blockedDomains": list(&blocked)}),
    )
    .await?;
    Ok(())
}
