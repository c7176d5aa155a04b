//! Steps for the Local Tool Runtime (local-tool-runtime.md §3–§8; local-agent-host.md §7.4,
//! §7.5): the model calls any tool with JSON arguments, and the steps look at what the runtime
//! reported (tool_completed), what the model was told and which tools it was offered.

pub(crate) mod artifacts;
pub(crate) mod coding;
pub(crate) mod coding_exec;
pub(crate) mod everyday;
pub(crate) mod files;
pub(crate) mod git;
pub(crate) mod http;
pub(crate) mod shell;

use agent_mocks::GatewayReply;
use anyhow::Context;
use cucumber::{gherkin::Step, given, then};
use serde_json::{Value, json};

use crate::contract::{CMD_SHELL_TAG, POSIX_SHELL_TAG};
use crate::steps::errors::unreadable_reasons;
use crate::steps::support::model::{
    explain_tool_failure, model_requests, push_model_reply, request_messages, task_requests,
};
use crate::steps::support::os::as_written_on;
use crate::steps::support::policy::grant;
use crate::steps::support::task::{event_types, first_of_type, optional_code, this_task_events};
use crate::steps::support::{StepResult, show, str_at};
use crate::steps::task::wait_task_end;
use crate::steps::tools::shell::{CommandForm, command_for_os};
use crate::world::ConformanceWorld;

#[then(expr = "the tool call fails with errorCode {string}")]
async fn tool_fails(world: &mut ConformanceWorld, code: String) -> StepResult {
    wait_task_end(world).await?;
    let events = this_task_events(world)?;
    let done = first_of_type(&events, "tool_completed")?;
    let payload = done.payload();
    check!(
        str_at(payload, &["toolCallId"]) == Some("call_tool_1")
            && str_at(payload, &["status"]) == Some("failed")
            && optional_code(payload, "errorCode", &code),
        "tool_completed must report toolCallId \"call_tool_1\", status \"failed\" and errorCode {code:?}: {}",
        show(payload)
    );
    Ok(())
}

#[then(expr = "the next model request answers the call with a tool message naming {string}")]
async fn tool_message_names(world: &mut ConformanceWorld, needle: String) -> StepResult {
    wait_task_end(world).await?;
    let requests = task_requests(world).await?;
    let second = requests.get(1).with_context(|| {
        format!(
            "the model was not asked again after the failed call ({} request(s))",
            requests.len()
        )
    })?;
    let tool = request_messages(second)?
        .iter()
        .find(|m| {
            str_at(m, &["role"]) == Some("tool")
                && str_at(m, &["tool_call_id"]) == Some("call_tool_1")
        })
        .with_context(|| {
            format!(
                "no tool message answers call_tool_1 in the next request: {}",
                show(second)
            )
        })?;
    check!(
        str_at(tool, &["content"]).is_some_and(|c| c.contains(&needle)),
        "the tool message must tell the model the error ({needle}): {}",
        show(tool)
    );
    Ok(())
}

/// The `marks` key counting the tool calls scripted so far.
pub(crate) const SCRIPTED_CALLS: &str = "tools.scripted_calls";

/// The id of the `n`th scripted call (1-based).
pub(crate) fn call_id(n: usize) -> String {
    format!("call_tool_{n}")
}

/// `text` with `${WORKSPACE}`, `${WORKSPACE_SERVICE}` and `${WEB}` replaced.
pub(crate) async fn expand(world: &mut ConformanceWorld, text: &str) -> anyhow::Result<String> {
    let workspace = world.dirs()?.workspace.display().to_string();
    let mut expanded = text.replace("${WORKSPACE}", &workspace);
    if expanded.contains("${WORKSPACE_SERVICE}") {
        let url = world.fakes().await?.workspace.url();
        expanded = expanded.replace("${WORKSPACE_SERVICE}", &url);
    }
    if expanded.contains("${WEB}") {
        let url = world
            .web
            .as_ref()
            .map(agent_mocks::WebFake::url)
            .context("${WEB} needs the step \"a web server on loopback\" first")?;
        expanded = expanded.replace("${WEB}", &url);
    }
    Ok(expanded)
}

/// `\n` in an expected text written in a feature file is a newline.
pub(crate) fn unescape(text: &str) -> String {
    text.replace("\\n", "\n")
}

/// The tool_completed event of the `n`th call, once the task has ended.
pub(crate) async fn completed(world: &mut ConformanceWorld, n: usize) -> anyhow::Result<Value> {
    wait_task_end(world).await?;
    let id = call_id(n);
    let events = this_task_events(world)?;
    events
        .iter()
        .find(|e| {
            e.event_type() == "tool_completed"
                && str_at(e.payload(), &["toolCallId"]) == Some(id.as_str())
        })
        .map(|e| e.payload().clone())
        .with_context(|| {
            format!(
                "no tool_completed for {id}; the task's events: {}",
                event_types(&events)
            )
        })
}

/// The text the runtime reported as the call's result (`tool_completed.result`), which must
/// have succeeded.
pub(crate) async fn succeeded_result(world: &mut ConformanceWorld) -> anyhow::Result<String> {
    let payload = completed(world, 1).await?;
    if str_at(&payload, &["status"]) != Some("succeeded") {
        let failure = anyhow::anyhow!("the tool call should have succeeded: {}", show(&payload));
        let tool = str_at(&payload, &["toolName"])
            .unwrap_or_default()
            .to_owned();
        return Err(explain_tool_failure(world, &tool, failure).await);
    }
    str_at(&payload, &["result"])
        .map(str::to_owned)
        .with_context(|| format!("tool_completed carries no result text: {}", show(&payload)))
}

#[given(expr = "the policy also grants {word}")]
async fn also_grants(world: &mut ConformanceWorld, capability: String) -> StepResult {
    let scope = if capability.starts_with("File.") || capability.starts_with("Git.") {
        json!({"allowedPaths": ["."]})
    } else {
        json!({})
    };
    grant(world, &capability, scope).await?;
    Ok(())
}

/// Scripted JSON arguments, expanded, with the `command` form for the runtime's OS (see
/// [`command_for_os`]); a POSIX-only command of a `@posix-shell` scenario is not applicable
/// on Windows.
pub(crate) async fn arguments_for_os(
    world: &mut ConformanceWorld,
    raw: &str,
) -> anyhow::Result<String> {
    if world.scenario.tags.iter().any(|tag| tag == CMD_SHELL_TAG) {
        world.require_scenario_shell()?;
    }
    let arguments = expand(world, raw).await?;
    let mut parsed = serde_json::from_str::<Value>(&arguments)
        .with_context(|| format!("the scripted arguments are not JSON: {arguments}"))?;
    let posix_only = world.scenario.tags.iter().any(|tag| tag == POSIX_SHELL_TAG);
    Ok(match command_for_os(&mut parsed, world.runtime_os()) {
        CommandForm::Unchanged => arguments,
        CommandForm::Chosen => parsed.to_string(),
        CommandForm::PosixOnly if posix_only => anyhow::bail!(
            "{} the scenario's command is POSIX sh (@{POSIX_SHELL_TAG}) and gives no `command@windows` form for cmd.exe",
            crate::runtime_manifest::NOT_APPLICABLE
        ),
        CommandForm::PosixOnly => parsed.to_string(),
    })
}

#[given(expr = "the model will call {word} with:")]
async fn model_calls_with(world: &mut ConformanceWorld, tool: String, step: &Step) -> StepResult {
    let raw = step
        .docstring
        .as_deref()
        .context("the step needs the JSON arguments as a doc string")?;
    let arguments = arguments_for_os(world, raw.trim()).await?;
    let n = world.marks.get(SCRIPTED_CALLS).copied().unwrap_or(0) + 1;
    world.marks.insert(SCRIPTED_CALLS, n);
    push_model_reply(
        world.fakes().await?,
        GatewayReply::tool_call(call_id(n), tool, arguments),
    );
    Ok(())
}

#[then(expr = "the tool call succeeds with a result containing {string}")]
async fn succeeds_containing(world: &mut ConformanceWorld, written: String) -> StepResult {
    let needle = unescape(&expand(world, &written).await?);
    let result = as_written_on(
        world.runtime_os(),
        &written,
        &succeeded_result(world).await?,
    );
    check!(
        result.contains(&needle),
        "the result must contain {needle:?}: {result:?}"
    );
    Ok(())
}

#[then("the tool call result is exactly:")]
async fn result_exactly(world: &mut ConformanceWorld, step: &Step) -> StepResult {
    let want = step
        .docstring
        .as_deref()
        .context("the step needs the expected result as a doc string")?;
    // A doc string ends without the final newline; results of line-based output end with one.
    let want_written = want.trim_matches('\n');
    let want = format!("{}\n", expand(world, want_written).await?);
    let result = as_written_on(
        world.runtime_os(),
        want_written,
        &succeeded_result(world).await?,
    );
    check!(
        result == want,
        "the result must be exactly {want:?}, got {result:?}"
    );
    Ok(())
}

#[then(expr = "the tool call result does not contain {string}")]
async fn result_lacks(world: &mut ConformanceWorld, needle: String) -> StepResult {
    let result = succeeded_result(world).await?;
    check!(
        !result.contains(&needle),
        "the result must not contain {needle:?}: {result:?}"
    );
    Ok(())
}

/// Judges an error message by meaning: for any runtime it must be readable (a person reads
/// it); that it names what the scenario names (a file, a field, a number, the reference
/// runtime's words) is checked only for a runtime that claims the `reference` profile — the
/// documents leave the wording free.
fn message_says(world: &ConformanceWorld, message: &str, needle: &str) -> anyhow::Result<()> {
    let reasons = unreadable_reasons(message);
    anyhow::ensure!(
        reasons.is_empty(),
        "the error message is not readable ({}): {message:?}",
        reasons.join("; ")
    );
    let reference = world
        .config()?
        .manifest
        .declares(crate::catalogue::Profile::Reference);
    anyhow::ensure!(
        !reference || message.contains(needle),
        "the error message must contain {needle:?}: {message:?}"
    );
    Ok(())
}

#[then(expr = "the tool call fails with errorCode {string} and a message containing {string}")]
async fn fails_with_message(
    world: &mut ConformanceWorld,
    code: String,
    needle: String,
) -> StepResult {
    let written = needle;
    let needle = unescape(&expand(world, &written).await?);
    let payload = completed(world, 1).await?;
    check!(
        str_at(&payload, &["status"]) == Some("failed")
            && optional_code(&payload, "errorCode", &code),
        "tool_completed must report status \"failed\" and errorCode {code:?}: {}",
        show(&payload)
    );
    let message = as_written_on(
        world.runtime_os(),
        &written,
        str_at(&payload, &["error"]).unwrap_or_default(),
    );
    message_says(world, &message, &needle)?;
    Ok(())
}

#[then(expr = "the tool call is refused with a message containing {string}")]
async fn refused_with_message(world: &mut ConformanceWorld, needle: String) -> StepResult {
    // Refused by the policy enforcer (CAPABILITY_DENIED) or by the tool's own validation
    // (INVALID_REQUEST, local-tool-runtime.md §8 — defense in depth): either way never run.
    let payload = completed(world, 1).await?;
    let code = str_at(&payload, &["errorCode"]);
    check!(
        matches!(str_at(&payload, &["status"]), Some("failed" | "denied"))
            && matches!(code, None | Some("INVALID_REQUEST" | "CAPABILITY_DENIED")),
        "tool_completed must report a refusal (INVALID_REQUEST or CAPABILITY_DENIED): {}",
        show(&payload)
    );
    let message = str_at(&payload, &["error"]).unwrap_or_default();
    message_says(world, message, &needle)?;
    Ok(())
}

#[then("every tool call of the task succeeds")]
async fn every_call_succeeds(world: &mut ConformanceWorld) -> StepResult {
    wait_task_end(world).await?;
    let scripted = world.marks.get(SCRIPTED_CALLS).copied().unwrap_or(0);
    check!(scripted > 0, "no tool call was scripted");
    for n in 1..=scripted {
        let payload = completed(world, n).await?;
        check!(
            str_at(&payload, &["status"]) == Some("succeeded"),
            "tool call {n} should have succeeded: {}",
            show(&payload)
        );
    }
    Ok(())
}

#[then(expr = "the model is offered {word} described as {string}")]
async fn offered_with_description(
    world: &mut ConformanceWorld,
    tool: String,
    description: String,
) -> StepResult {
    wait_task_end(world).await?;
    let requests = model_requests(world.started_fakes()?).await;
    check!(!requests.is_empty(), "the model was never asked");
    for (index, request) in requests.iter().enumerate() {
        let offered = request.body["tools"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let function = offered
            .iter()
            .find(|t| t["function"]["name"] == json!(tool))
            .with_context(|| format!("model request {} does not offer {tool}", index + 1))?;
        let got = function["function"]["description"].as_str();
        check!(
            got == Some(description.as_str()),
            "model request {} describes {tool} as {got:?}; local-tool-runtime.md §5 says {description:?}",
            index + 1
        );
    }
    Ok(())
}

#[then(expr = "the model is offered {word} requiring no argument but {string}")]
async fn offered_requiring(
    world: &mut ConformanceWorld,
    tool: String,
    spec_required: String,
) -> StepResult {
    wait_task_end(world).await?;
    let requests = model_requests(world.started_fakes()?).await;
    let request = requests.first().context("the model was never asked")?;
    let function = request.body["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|t| t["function"]["name"] == json!(tool))
        .with_context(|| format!("the first model request does not offer {tool}"))?;
    let allowed: Vec<&str> = spec_required.split(", ").collect();
    let extra: Vec<&str> = function["function"]["parameters"]["required"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|name| name.as_str())
        .filter(|name| !allowed.contains(name))
        .collect();
    check!(
        extra.is_empty(),
        "{tool} is offered requiring {extra:?}, which local-tool-runtime.md §4 does not require (only {spec_required}): a model calling it as the spec describes fails"
    );
    Ok(())
}
