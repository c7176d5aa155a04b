//! Steps added by the walk of local-tool-runtime.md (features/tools/walk_tools.feature,
//! features/extensions/walk_mcp.feature): the tool descriptions the model is offered (§5),
//! paths the tool runtime must refuse or expand (§6.1, §8.1), and what an MCP server fake
//! was sent (§9.3).

use agent_mocks::GatewayReply;
use anyhow::Context as _;
use cucumber::{given, then};
use serde_json::json;

use super::task::wait_task_end;
use super::tools::{SCRIPTED_CALLS, call_id};
use super::{StepResult, event_types, model_requests, push_model_reply, str_at};
use crate::world::ConformanceWorld;

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

#[given(expr = "the model will call ReadFile on a path of {int} characters in the workspace")]
async fn model_reads_long_path(world: &mut ConformanceWorld, length: usize) -> StepResult {
    let workspace = world.dirs()?.workspace.display().to_string();
    // Folders of 100 characters: every component stays under NAME_MAX, only the whole is long.
    let mut path = workspace;
    while path.len() < length {
        path.push('/');
        path.push_str(&"d".repeat(100));
    }
    path.truncate(length);
    let n = world.marks.get(SCRIPTED_CALLS).copied().unwrap_or(0) + 1;
    world.marks.insert(SCRIPTED_CALLS, n);
    let arguments = json!({ "path": path }).to_string();
    push_model_reply(
        world.fakes().await?,
        GatewayReply::tool_call(call_id(n), "ReadFile", arguments),
    );
    Ok(())
}

#[given(expr = "the file {string} in the home folder contains {string}")]
async fn home_file(world: &mut ConformanceWorld, name: String, content: String) -> StepResult {
    let path = world.dirs()?.home.join(&name);
    std::fs::write(&path, format!("{content}\n"))
        .with_context(|| format!("cannot write {}", path.display()))?;
    Ok(())
}

#[then(expr = "there is no file {string} beside the workspace")]
async fn no_file_beside(world: &mut ConformanceWorld, name: String) -> StepResult {
    wait_task_end(world).await?;
    let workspace = world.dirs()?.workspace.clone();
    let path = workspace
        .parent()
        .context("the workspace has no parent directory")?
        .join(&name);
    check!(
        !path.exists(),
        "{} exists: the tool wrote outside the workspace",
        path.display()
    );
    Ok(())
}

#[then(expr = "the MCP server {string} received no request at all")]
async fn mcp_untouched(world: &mut ConformanceWorld, name: String) -> StepResult {
    wait_task_end(world).await?;
    super::barrier(world).await?;
    let fake = super::extensions::mcp_server(world, &name)?;
    let count = fake.request_count();
    check!(
        count == 0,
        "the MCP server {name} must never be contacted; it received {count} HTTP request(s)"
    );
    Ok(())
}

#[then(expr = "the runtime reported a warning naming the MCP tool {string}")]
async fn warned_about_tool(world: &mut ConformanceWorld, tool: String) -> StepResult {
    let events = world.started_runtime()?.events();
    check!(
        events.iter().any(|e| e.event_type() == "warning"
            && str_at(e.payload(), &["message"]).is_some_and(|message| message.contains(&tool))),
        "no warning event names the MCP tool {tool}; events: {}",
        event_types(&events)
    );
    Ok(())
}

#[given(
    expr = "an MCP server {string} the policy allows with only the tool {string}, approved under the rule {string}"
)]
async fn mcp_server_with_approval(
    world: &mut ConformanceWorld,
    name: String,
    tool: String,
    title: String,
) -> StepResult {
    check!(
        world.session.is_none(),
        "the policy must be shaped before the session is created (put this step before \"a running session\")"
    );
    let fake = agent_mocks::McpServerFake::start().await?;
    let rule_id = format!("approval_conformance_mcp_{name}_{tool}");
    // local-tool-runtime.md §9.4: approvalRules can name individual MCP tools; the bundle's
    // McpServer carries them as toolApprovalRules {tool: ruleId} (schemas/policy).
    let server = json!({
        "name": name, "endpoint": fake.url(), "bearerToken": "mcp-walk-token",
        "allowedTools": [tool], "toolApprovalRules": {tool.clone(): rule_id},
    });
    let rule = json!({
        "approvalRuleId": rule_id, "title": title,
        "description": format!("The user approves every call of the MCP tool {name}/{tool}"),
    });
    world.mcp_servers.push((name, fake));
    world.fakes().await?.session.update_policy(|bundle| {
        let entry =
            agent_mocks::policy::capability_entry("Mcp.Invoke", json!({"mcpServers": [server]}));
        match bundle
            .get_mut("capabilities")
            .and_then(|v| v.as_array_mut())
        {
            Some(capabilities) => capabilities.push(entry),
            None => bundle["capabilities"] = json!([entry]),
        }
        match bundle
            .get_mut("approvalRules")
            .and_then(|v| v.as_array_mut())
        {
            Some(rules) => rules.push(rule),
            None => bundle["approvalRules"] = json!([rule]),
        }
    });
    Ok(())
}

#[then(expr = "the MCP server {string} has received no tool call yet")]
async fn mcp_no_call_yet(world: &mut ConformanceWorld, name: String) -> StepResult {
    super::barrier(world).await?;
    let fake = super::extensions::mcp_server(world, &name)?;
    let calls = fake.calls();
    check!(
        calls.is_empty(),
        "the MCP server {name} was called before the approval: {calls:?}"
    );
    Ok(())
}
