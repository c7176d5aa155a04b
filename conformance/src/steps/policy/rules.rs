//! Steps for the policy enforcer's rules and the attacks on them, and policy expiry
//! (local-agent-host.md §8; INTEROP.md §6).
//!
//! Policy steps edit the Session Service fake's bundle template, so they come before
//! "a running session". Calls the model makes here have fixed ids, one per tool, so a
//! `Then` step can name "the RunCommand call".

use std::time::Duration;

use agent_mocks::{GatewayReply, ScriptedToolCall, StreamStep, Usage};
use anyhow::{Context, anyhow};
use cucumber::{given, then, when};
use serde_json::{Value, json};

use crate::steps::support::model::{
    explain_tool_failure, model_requests, push_model_reply, push_model_stream,
};
use crate::steps::support::policy::{edit_policy, grant, workspace_path};
use crate::steps::support::task::{
    barrier, optional_code, task_events, tool_completed, wait_task_event,
};
use crate::steps::support::{StepResult, declares_reference, show, str_at};
use crate::steps::task::{READ_CALL_ID, wait_task_end};
use crate::world::ConformanceWorld;

const RUN_CALL_ID: &str = "call_run_1";

const FETCH_CALL_ID: &str = "call_fetch_1";

const WRITE_CALL_ID: &str = "call_write_p1";

const UNKNOWN_CALL_ID: &str = "call_unknown_1";

/// The approval rule the scoped-approval steps attach.
const RULE_ID: &str = "approval_conformance_policy";

fn call_id(tool: &str) -> anyhow::Result<&'static str> {
    Ok(match tool {
        "RunCommand" => RUN_CALL_ID,
        "HttpRequest" => FETCH_CALL_ID,
        "WriteFile" => WRITE_CALL_ID,
        "ReadFile" => READ_CALL_ID,
        other => return Err(anyhow!("no scripted call for the tool {other}")),
    })
}

/// `"a, b"` → `["a", "b"]`; an empty text → `null` (the entry is not set).
fn list(text: &str) -> Value {
    let items: Vec<&str> = text
        .split(',')
        .map(str::trim)
        .filter(|item| !item.is_empty())
        .collect();
    if items.is_empty() {
        Value::Null
    } else {
        json!(items)
    }
}

/// Grants `capability` with `scope` (a JSON object) behind the approval rule [`RULE_ID`],
/// titled `title`.
async fn grant_with_approval(
    world: &mut ConformanceWorld,
    capability: &str,
    mut scope: Value,
    title: &str,
) -> StepResult {
    check!(scope.is_object(), "the scope must be a JSON object");
    scope["requiresApproval"] = json!(true);
    scope["approvalRuleId"] = json!(RULE_ID);
    grant(world, capability, scope).await?;
    edit_policy(world, |bundle| add_rule(bundle, title)).await?;
    Ok(())
}

fn add_rule(bundle: &mut Value, title: &str) {
    let rule = json!({
        "approvalRuleId": RULE_ID,
        "title": title,
        "description": "The user approves these actions",
    });
    match bundle
        .get_mut("approvalRules")
        .and_then(Value::as_array_mut)
    {
        Some(rules) => rules.push(rule),
        None => bundle["approvalRules"] = json!([rule]),
    }
}

/// The `{role: "tool"}` message answering `id` in the model's requests (after the task ended).
pub(crate) async fn tool_message(world: &mut ConformanceWorld, id: &str) -> anyhow::Result<String> {
    wait_task_end(world).await?;
    let requests = model_requests(world.started_fakes()?).await;
    requests
        .iter()
        .rev()
        .filter_map(|r| r.body.get("messages").and_then(Value::as_array))
        .flatten()
        .find(|m| str_at(m, &["role"]) == Some("tool") && str_at(m, &["tool_call_id"]) == Some(id))
        .map(|m| str_at(m, &["content"]).unwrap_or("").to_owned())
        .ok_or_else(|| {
            anyhow!(
                "no model request carries the result of {id} ({} request(s))",
                requests.len()
            )
        })
}

async fn push_call(world: &mut ConformanceWorld, id: &str, tool: &str, args: Value) -> StepResult {
    push_model_reply(
        world.fakes().await?,
        GatewayReply::ToolCalls {
            text: None,
            calls: vec![ScriptedToolCall::new(id, tool, args.to_string())],
        },
    );
    Ok(())
}

#[given(expr = "the policy allows the commands {string} and blocks the commands {string}")]
async fn commands(world: &mut ConformanceWorld, allowed: String, blocked: String) -> StepResult {
    let scope = json!({"allowedCommands": list(&allowed), "blockedCommands": list(&blocked)});
    grant(world, "Shell.Exec", scope).await?;
    Ok(())
}

#[given(expr = "the policy lets HttpRequest reach {string} but never {string}, after approval")]
async fn domains(world: &mut ConformanceWorld, allowed: String, blocked: String) -> StepResult {
    let scope = json!({"allowedDomains": list(&allowed), "blockedDomains": list(&blocked)});
    grant_with_approval(world, "Network.Http", scope, "Network access").await
}

/// `scope` is the JSON of the entry's scope fields, e.g. `{"allowedCommands": ["ls"]}`.
#[given(expr = "the policy requires approval for {word} scoped by {string}")]
async fn approval_scoped(
    world: &mut ConformanceWorld,
    capability: String,
    scope: String,
) -> StepResult {
    let scope: Value =
        serde_json::from_str(&scope).with_context(|| format!("the scope {scope:?} is not JSON"))?;
    grant_with_approval(world, &capability, scope, "Check this action").await
}

#[given(expr = "the policy allows File.Write under {string} but blocks {string}")]
async fn write_scope(world: &mut ConformanceWorld, allowed: String, blocked: String) -> StepResult {
    let scope = json!({"allowedPaths": [allowed], "blockedPaths": [blocked]});
    grant(world, "File.Write", scope).await?;
    Ok(())
}

#[given(
    expr = "the Session Service serves policies that expire {float} seconds after they are served"
)]
async fn short_policies(world: &mut ConformanceWorld, seconds: f64) -> StepResult {
    let ttl = Duration::try_from_secs_f64(seconds).context("a lifetime in seconds")?;
    world.fakes().await?.session.set_bundle_ttl(ttl);
    Ok(())
}

#[when("the Session Service serves policies valid for an hour again")]
async fn long_policies(world: &mut ConformanceWorld) -> StepResult {
    world
        .fakes()
        .await?
        .session
        .set_bundle_ttl(Duration::from_secs(3600));
    Ok(())
}

#[given(expr = "the workspace folder {string} exists")]
async fn folder_exists(world: &mut ConformanceWorld, name: String) -> StepResult {
    let path = world.dirs()?.workspace.join(&name);
    std::fs::create_dir_all(&path).with_context(|| format!("cannot create {}", path.display()))?;
    Ok(())
}

// A regex, not `{string}`: command lines contain quotes of their own.
#[given(regex = r#"^the model will run the command "(.*)"$"#)]
async fn model_runs(world: &mut ConformanceWorld, command: String) -> StepResult {
    world.require_scenario_shell()?;
    push_call(
        world,
        RUN_CALL_ID,
        "RunCommand",
        json!({"command": command}),
    )
    .await
}

#[given(expr = "the model will fetch {string}")]
async fn model_fetches(world: &mut ConformanceWorld, url: String) -> StepResult {
    push_call(
        world,
        FETCH_CALL_ID,
        "HttpRequest",
        json!({"url": url, "method": "GET"}),
    )
    .await
}

/// `name` is joined to the workspace as it is, `..` included (the policy must resolve it).
#[given(expr = "the model will write {string} into the workspace file {string}")]
async fn model_writes(world: &mut ConformanceWorld, content: String, name: String) -> StepResult {
    let path = workspace_path(world, &name)?;
    push_call(
        world,
        WRITE_CALL_ID,
        "WriteFile",
        json!({"path": path, "content": content}),
    )
    .await
}

#[given(expr = "the model will call the unknown tool {string}")]
async fn model_calls_unknown(world: &mut ConformanceWorld, tool: String) -> StepResult {
    push_call(world, UNKNOWN_CALL_ID, &tool, json!({"target": "moon"})).await
}

/// The reply streams a first text delta, then holds until "the model finishes its answer",
/// then sends the call: the call reaches the runtime exactly when the scenario says.
#[given(expr = "the model will call ReadFile on {string} when released")]
async fn model_reads_held(world: &mut ConformanceWorld, name: String) -> StepResult {
    let path = workspace_path(world, &name)?;
    let reply = GatewayReply::ToolCalls {
        text: Some("Let me look.".to_owned()),
        calls: vec![ScriptedToolCall::new(
            READ_CALL_ID,
            "ReadFile",
            json!({"path": path}).to_string(),
        )],
    };
    let mut steps = StreamStep::from_reply(&reply, Some(Usage::default()))
        .context("a tool call reply is a stream")?;
    steps.insert(steps.len().min(1), StreamStep::StallUntilReleased);
    push_model_stream(world.fakes().await?, steps);
    Ok(())
}

/// A policy's expiry is a wall-clock instant, so the kit waits for exactly the `expiresAt`
/// the Session Service served last (a few hundred ms in the scenarios), never a guessed
/// duration. Bounded: an instant more than 10 s away is a scenario mistake.
#[when("the policy the session was served has expired")]
async fn served_policy_expired(world: &mut ConformanceWorld) -> StepResult {
    let expires_at = world
        .fakes()
        .await?
        .session
        .last_served_expiry()
        .context("the Session Service has served no policy yet")?;
    let left = expires_at - time::OffsetDateTime::now_utc();
    let wait = Duration::try_from(left).unwrap_or(Duration::ZERO);
    check!(
        wait <= Duration::from_secs(10),
        "the served policy expires in {wait:?}; waits longer than 10 s make slow scenarios"
    );
    // 5 ms past the instant: the runtime compares `expiresAt <= now` on the same clock.
    tokio::time::sleep(wait + Duration::from_millis(5)).await;
    Ok(())
}

#[then(
    regex = r"^the (RunCommand|HttpRequest|WriteFile) call (runs|is denied|waits for approval)$"
)]
async fn call_outcome(world: &mut ConformanceWorld, tool: String, outcome: String) -> StepResult {
    let id = call_id(&tool)?;
    if outcome == "waits for approval" {
        let event = wait_task_event(world, "approval_requested", |e| {
            e.event_type() == "approval_requested"
        })
        .await?;
        barrier(world).await?;
        let task_id = world.task()?.task_id.clone();
        let done = task_events(&world.started_runtime()?.events(), &task_id)
            .into_iter()
            .find(|e| {
                e.event_type() == "tool_completed"
                    && str_at(e.payload(), &["toolCallId"]) == Some(id)
            });
        check!(
            done.is_none(),
            "the {tool} call should wait for approval ({}), but it ended: {}",
            show(event.payload()),
            done.map(|e| show(e.payload())).unwrap_or_default()
        );
        return Ok(());
    }
    let payload = tool_completed(world, id).await?;
    let status = str_at(&payload, &["status"]).unwrap_or("");
    let failure = if outcome == "runs" {
        (status != "succeeded").then(|| {
            anyhow::anyhow!(
                "the policy admits this {tool} call, so it should have run: {}",
                show(&payload)
            )
        })
    } else {
        (status != "denied" || !optional_code(&payload, "errorCode", "CAPABILITY_DENIED"))
            .then(|| anyhow::anyhow!(
                "the policy must deny this {tool} call (tool_completed status denied, CAPABILITY_DENIED): {}",
                show(&payload)
            ))
    };
    match failure {
        Some(failure) if status == "failed" => {
            Err(explain_tool_failure(world, &tool, failure).await.into())
        }
        Some(failure) => Err(failure.into()),
        None => Ok(()),
    }
}

#[then(
    regex = r#"^the (RunCommand|HttpRequest|WriteFile) call is denied with error code "([A-Z_]+)"$"#
)]
async fn call_denied_code(world: &mut ConformanceWorld, tool: String, code: String) -> StepResult {
    let payload = tool_completed(world, call_id(&tool)?).await?;
    if !(str_at(&payload, &["status"]) == Some("denied")
        && optional_code(&payload, "errorCode", &code)
        && str_at(&payload, &["error"]).is_some_and(|e| !e.trim().is_empty()))
    {
        let failure = anyhow::anyhow!(
            "the {tool} call must end with tool_completed {{status: \"denied\", errorCode: {code:?}, error: <reason>}}: {}",
            show(&payload)
        );
        return Err(explain_tool_failure(world, &tool, failure).await.into());
    }
    Ok(())
}

#[then(
    regex = r#"^the model is told the (RunCommand|HttpRequest|WriteFile) call was denied because of "(.*)"$"#
)]
async fn model_told(world: &mut ConformanceWorld, tool: String, needle: String) -> StepResult {
    let content = tool_message(world, call_id(&tool)?).await?;
    // The model must learn of the denial (local-agent-host.md §11); what the message names
    // is its wording, judged only for the reference runtime.
    let wording = declares_reference(world)?;
    check!(
        !content.trim().is_empty() && (!wording || content.contains(&needle)),
        "the {tool} result the model received should name {needle:?}: {content:?}"
    );
    Ok(())
}

#[then(expr = "the call to the unknown tool fails with error code {string} and the model is told")]
async fn unknown_fails(world: &mut ConformanceWorld, code: String) -> StepResult {
    let payload = tool_completed(world, UNKNOWN_CALL_ID).await?;
    check!(
        str_at(&payload, &["status"]) == Some("failed")
            && optional_code(&payload, "errorCode", &code),
        "a call to a tool nobody offers must end with tool_completed {{status: \"failed\", errorCode: {code:?}}}: {}",
        show(&payload)
    );
    let content = tool_message(world, UNKNOWN_CALL_ID).await?;
    check!(
        content.contains(&code) || content.to_lowercase().contains("unknown"),
        "the model should learn the tool does not exist: {content:?}"
    );
    Ok(())
}

#[then(expr = "the workspace has no file {string}")]
async fn no_file(world: &mut ConformanceWorld, name: String) -> StepResult {
    wait_task_end(world).await?;
    let path = world.dirs()?.workspace.join(&name);
    check!(
        std::fs::symlink_metadata(&path).is_err(),
        "{} exists: a denied command or write was carried out",
        path.display()
    );
    Ok(())
}

#[then(expr = "the workspace folder {string} still exists")]
async fn folder_still_exists(world: &mut ConformanceWorld, name: String) -> StepResult {
    wait_task_end(world).await?;
    let path = world.dirs()?.workspace.join(&name);
    check!(
        path.is_dir(),
        "{} is gone: a denied command was carried out",
        path.display()
    );
    Ok(())
}

/// Whether the workspace's file system folds case (macOS and Windows defaults).
fn folds_case(world: &mut ConformanceWorld) -> anyhow::Result<bool> {
    // A Windows runtime sees the folder through Windows (NTFS, or Wine's emulation of it),
    // which ignores case whatever the kit's own file system does.
    if world.runtime_os() == crate::runtime_manifest::RuntimeOs::Windows {
        return Ok(true);
    }
    let probe = world.dirs()?.workspace.join(".case-probe");
    std::fs::write(&probe, "")?;
    let folded = world.dirs()?.workspace.join(".CASE-PROBE").exists();
    std::fs::remove_file(&probe)?;
    Ok(folded)
}

#[then(
    "the ReadFile call is denied where the file system ignores case, and finds no file where it does not"
)]
async fn case_variant_blocked(world: &mut ConformanceWorld) -> StepResult {
    let folded = folds_case(world)?;
    let payload = tool_completed(world, READ_CALL_ID).await?;
    let status = str_at(&payload, &["status"]).unwrap_or("");
    if folded {
        check!(
            status == "denied",
            "on this case-insensitive file system the case variant names the blocked file: {}",
            show(&payload)
        );
    } else {
        check!(
            status != "succeeded",
            "on this case-sensitive file system the case variant names no file, so nothing can be read: {}",
            show(&payload)
        );
    }
    Ok(())
}

#[then(
    expr = "the ReadFile call returns {string} where the file system tells case apart, and is denied where it does not"
)]
async fn case_variant_distinct(world: &mut ConformanceWorld, content: String) -> StepResult {
    let folded = folds_case(world)?;
    let payload = tool_completed(world, READ_CALL_ID).await?;
    let status = str_at(&payload, &["status"]).unwrap_or("");
    if folded {
        check!(
            status == "denied",
            "on this case-insensitive file system the folder is the blocked one: {}",
            show(&payload)
        );
    } else {
        check!(
            status == "succeeded"
                && str_at(&payload, &["result"]).is_some_and(|r| r.contains(&content)),
            "paths compare case-sensitively on this file system, so a folder that differs only in case is not blocked: {}",
            show(&payload)
        );
    }
    Ok(())
}

#[then("the runtime reports policy_expired")]
async fn reports_policy_expired(world: &mut ConformanceWorld) -> StepResult {
    wait_task_event(world, "policy_expired", |e| {
        e.event_type() == "policy_expired"
    })
    .await?;
    Ok(())
}
