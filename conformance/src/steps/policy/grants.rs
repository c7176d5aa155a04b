//! The policy a scenario starts from: which capabilities are granted, under which paths and
//! limits, and which need approval.

use agent_mocks::policy::{capability_entry, remove_capability, set_capability};
use anyhow::Context;
use cucumber::given;
use serde_json::{Value, json};

use crate::steps::support::StepResult;
use crate::steps::support::policy::{edit_policy, grant, workspace_path};
use crate::world::ConformanceWorld;

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

#[given(expr = "the policy allows Shell.Exec in {string} but blocks {string}")]
async fn shell_paths(world: &mut ConformanceWorld, allowed: String, blocked: String) -> StepResult {
    let scope = json!({"allowedPaths": [allowed], "blockedPaths": [blocked]});
    grant(world, "Shell.Exec", scope).await?;
    Ok(())
}

#[given(expr = "the policy limits answers to {int} output tokens")]
async fn max_output_tokens(world: &mut ConformanceWorld, tokens: u64) -> StepResult {
    world
        .fakes()
        .await?
        .session
        .update_policy(|bundle| bundle["llmPolicy"]["maxOutputTokens"] = json!(tokens));
    Ok(())
}

/// A capability scoped by one path list alone (`allowedPaths` or `blockedPaths`), no
/// approval: a scope check must not wait for both lists.
#[given(expr = "the policy grants {word} with {word} {string} only")]
async fn grants_one_path_list(
    world: &mut ConformanceWorld,
    capability: String,
    field: String,
    path: String,
) -> StepResult {
    check!(
        field == "allowedPaths" || field == "blockedPaths",
        "a path list is allowedPaths or blockedPaths, not {field}"
    );
    let mut scope = serde_json::Map::new();
    scope.insert(field, json!([path]));
    edit_policy(world, |bundle| {
        agent_mocks::policy::set_capability(
            bundle,
            agent_mocks::policy::capability_entry(&capability, scope.into()),
        );
    })
    .await?;
    Ok(())
}

/// A file capability scoped by one allowed and one blocked path, no approval.
#[given(expr = "the policy grants {word} under {string} but blocks {string}")]
async fn grants_scoped(
    world: &mut ConformanceWorld,
    capability: String,
    allowed: String,
    blocked: String,
) -> StepResult {
    edit_policy(world, |bundle| {
        agent_mocks::policy::set_capability(
            bundle,
            agent_mocks::policy::capability_entry(
                &capability,
                json!({"allowedPaths": [allowed], "blockedPaths": [blocked]}),
            ),
        );
    })
    .await?;
    Ok(())
}
