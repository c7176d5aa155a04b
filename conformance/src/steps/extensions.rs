//! Steps of extension tools (local-tool-runtime.md §9): an MCP server fake on loopback that
//! the policy bundle's `Mcp.Invoke` entry points at (format: `schemas/policy/PolicyBundle.json`,
//! `McpServer`). The runtime must reach it over plain http on loopback, which needs its test
//! mode; the reference runtime's switch is `AGENT_RUNTIME_ALLOW_LOOPBACK_HTTP`.

use agent_mocks::{
    BackendToolReply, BackendToolServiceFake, McpServerFake, policy::capability_entry,
};
use anyhow::Context;
use cucumber::{given, then};
use serde_json::{Value, json};

use crate::steps::support::model::model_requests;
use crate::steps::support::task::{barrier, event_types, task_events};
use crate::steps::support::{StepResult, check_service_body, show, str_at};
use crate::steps::task::wait_task_end;
use crate::world::ConformanceWorld;

/// The bearer token the policy gives every MCP server fake.
const MCP_TOKEN: &str = "mcp-conformance-token";

pub(crate) fn mcp_server<'a>(
    world: &'a ConformanceWorld,
    name: &str,
) -> anyhow::Result<&'a McpServerFake> {
    world
        .mcp_servers
        .iter()
        .find(|(server, _)| server == name)
        .map(|(_, fake)| fake)
        .with_context(|| format!("no MCP server fake named {name:?} was started"))
}

#[given(expr = "an MCP server {string} the policy allows with only the tool {string}")]
async fn allowed_mcp_server(
    world: &mut ConformanceWorld,
    name: String,
    tool: String,
) -> StepResult {
    check!(
        world.session.is_none(),
        "the policy must be shaped before the session is created (put this step before \"a running session\")"
    );
    add_mcp_server(world, name, tool).await?;
    Ok(())
}

/// Starts an MCP server fake and lists it in the bundles the Session Service serves from now
/// on (creates and resumes).
pub(crate) async fn add_mcp_server(
    world: &mut ConformanceWorld,
    name: String,
    tool: String,
) -> anyhow::Result<()> {
    let fake = McpServerFake::start().await?;
    let server = json!({
        "name": name, "endpoint": fake.url(), "bearerToken": MCP_TOKEN,
        "allowedTools": [tool],
    });
    world.mcp_servers.push((name, fake));
    world.fakes().await?.session.update_policy(|bundle| {
        let entry = capability_entry("Mcp.Invoke", json!({"mcpServers": [server]}));
        match bundle.get_mut("capabilities").and_then(Value::as_array_mut) {
            Some(capabilities) => capabilities.push(entry),
            None => bundle["capabilities"] = json!([entry]),
        }
    });
    Ok(())
}

/// The tool_completed event of `tool` in this task.
async fn completed(world: &mut ConformanceWorld, tool: &str) -> anyhow::Result<Value> {
    wait_task_end(world).await?;
    let task_id = world.task()?.task_id.clone();
    let events = task_events(&world.started_runtime()?.events(), &task_id);
    events
        .iter()
        .find(|e| {
            e.event_type() == "tool_completed" && str_at(e.payload(), &["toolName"]) == Some(tool)
        })
        .map(|e| e.payload().clone())
        .with_context(|| {
            format!(
                "no tool_completed for {tool}; the task's events: {}",
                event_types(&events)
            )
        })
}

#[then(expr = "the runtime reports tool_completed for {string} with a result containing {string}")]
async fn mcp_completed(world: &mut ConformanceWorld, tool: String, content: String) -> StepResult {
    let payload = completed(world, &tool).await?;
    check!(
        str_at(&payload, &["status"]) == Some("succeeded")
            && str_at(&payload, &["result"]).is_some_and(|result| result.contains(&content)),
        "tool_completed for {tool} must have status \"succeeded\" and a result containing {content:?}: {}",
        show(&payload)
    );
    Ok(())
}

#[then(expr = "the call of {string} does not succeed")]
async fn mcp_refused(world: &mut ConformanceWorld, tool: String) -> StepResult {
    let payload = completed(world, &tool).await?;
    check!(
        matches!(str_at(&payload, &["status"]), Some("failed" | "denied"))
            && matches!(
                str_at(&payload, &["errorCode"]),
                None | Some("TOOL_NOT_FOUND" | "CAPABILITY_DENIED")
            ),
        "a tool the policy does not allow must end failed/denied with TOOL_NOT_FOUND or CAPABILITY_DENIED: {}",
        show(&payload)
    );
    Ok(())
}

/// Function names offered in the scenario's model requests.
async fn offered(world: &ConformanceWorld) -> anyhow::Result<Vec<String>> {
    let requests = model_requests(world.started_fakes()?).await;
    check!(!requests.is_empty(), "the model was never asked");
    Ok(requests
        .iter()
        .flat_map(|request| {
            request.body["tools"]
                .as_array()
                .cloned()
                .unwrap_or_default()
        })
        .filter_map(|tool| tool["function"]["name"].as_str().map(str::to_owned))
        .collect())
}

#[then(regex = r#"^the model (is|is not) offered the function "(.+)"$"#)]
async fn offered_function(world: &mut ConformanceWorld, is: String, name: String) -> StepResult {
    let names = offered(world).await?;
    let present = names.contains(&name);
    check!(
        present == (is == "is"),
        "the model {is} supposed to be offered {name:?}; it was offered {names:?}"
    );
    Ok(())
}

#[then(expr = "the MCP server {string} received only the call {string} with the text {string}")]
async fn received_call(
    world: &mut ConformanceWorld,
    name: String,
    tool: String,
    text: String,
) -> StepResult {
    let calls = mcp_server(world, &name)?.calls();
    check!(
        calls.len() == 1 && calls[0].0 == tool && calls[0].1["text"] == json!(text),
        "the MCP server {name} should have received one call of {tool} with text {text:?}; it received {calls:?}"
    );
    Ok(())
}

#[then(expr = "the MCP server {string} received no tool call")]
async fn received_no_call(world: &mut ConformanceWorld, name: String) -> StepResult {
    wait_task_end(world).await?;
    let calls = mcp_server(world, &name)?.calls();
    check!(
        calls.is_empty(),
        "the MCP server {name} received calls: {calls:?}"
    );
    Ok(())
}

#[then(expr = "the MCP server {string} was sent the bearer token from the policy")]
async fn received_token(world: &mut ConformanceWorld, name: String) -> StepResult {
    let seen = mcp_server(world, &name)?.authorizations();
    let expected = format!("Bearer {MCP_TOKEN}");
    check!(
        !seen.is_empty() && seen.iter().all(|value| *value == expected),
        "every request to the MCP server must carry {expected:?}; it saw {seen:?}"
    );
    Ok(())
}

#[given(expr = "an MCP server {string} the policy allows that cannot be reached")]
async fn unreachable_mcp_server(world: &mut ConformanceWorld, name: String) -> StepResult {
    check!(
        world.session.is_none(),
        "the policy must be shaped before the session is created (put this step before \"a running session\")"
    );
    // Port 1 (tcpmux) is not served on a test machine: the connection is refused.
    let server =
        json!({"name": name, "endpoint": "http://127.0.0.1:1/mcp", "allowedTools": ["echo"]});
    world.fakes().await?.session.update_policy(|bundle| {
        let entry = capability_entry("Mcp.Invoke", json!({"mcpServers": [server]}));
        match bundle.get_mut("capabilities").and_then(Value::as_array_mut) {
            Some(capabilities) => capabilities.push(entry),
            None => bundle["capabilities"] = json!([entry]),
        }
    });
    Ok(())
}

#[then(expr = "the runtime reported a warning naming the MCP server {string}")]
async fn warned(world: &mut ConformanceWorld, name: String) -> StepResult {
    let events = world.started_runtime()?.events();
    let quoted = format!("\"{name}\"");
    check!(
        events.iter().any(|e| e.event_type() == "warning"
            && str_at(e.payload(), &["message"]).is_some_and(|message| message.contains(&quoted))),
        "no warning event names the MCP server {name}; events: {}",
        event_types(&events)
    );
    Ok(())
}

#[given(
    expr = "the Backend Tool Service runs the tool {string} answering {string} and the policy allows only it"
)]
async fn backend_tool(world: &mut ConformanceWorld, tool: String, answer: String) -> StepResult {
    check!(
        world.session.is_none(),
        "the policy must be shaped before the session is created (put this step before \"a running session\")"
    );
    let fake = BackendToolServiceFake::start().await?;
    fake.script(&tool, BackendToolReply::Succeeded(answer));
    fake.script(
        "Summarize",
        BackendToolReply::Succeeded("a summary".to_owned()),
    );
    world.set_runtime_env("BACKEND_TOOL_SERVICE_URL", &fake.url())?;
    world.backend_tools = Some(fake);
    world.fakes().await?.session.update_policy(|bundle| {
        let entry = capability_entry("BackendTool.Invoke", json!({"allowedToolNames": [tool]}));
        match bundle.get_mut("capabilities").and_then(Value::as_array_mut) {
            Some(capabilities) => capabilities.push(entry),
            None => bundle["capabilities"] = json!([entry]),
        }
    });
    Ok(())
}

#[then(
    regex = r#"^the Backend Tool Service received (no invocation|only the invocation "(.+)" with the text "(.*)")$"#
)]
async fn backend_received(
    world: &mut ConformanceWorld,
    _what: String,
    tool: String,
    text: String,
) -> StepResult {
    wait_task_end(world).await?;
    let fake = world
        .backend_tools
        .as_ref()
        .context("no Backend Tool Service fake was started")?;
    let seen = fake.invocations().await;
    if tool.is_empty() {
        check!(
            seen.is_empty(),
            "the Backend Tool Service was invoked: {seen:?}"
        );
    } else {
        check!(
            seen.len() == 1
                && seen[0].0 == tool
                && seen[0].1["toolName"] == json!(tool)
                && seen[0].1["arguments"]["text"] == json!(text),
            "expected one invocation of {tool} with the ToolRequest's arguments.text {text:?}; got {seen:?}"
        );
    }
    Ok(())
}

#[then("the Backend Tool Service received a ToolRequest naming the session, the task and the step")]
async fn backend_tool_request_ids(world: &mut ConformanceWorld) -> StepResult {
    wait_task_end(world).await?;
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
    check_service_body("tool/ToolRequest", body, "the Backend Tool Service request")?;
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

#[then(expr = "the MCP server {string} received no request at all")]
async fn mcp_untouched(world: &mut ConformanceWorld, name: String) -> StepResult {
    wait_task_end(world).await?;
    barrier(world).await?;
    let fake = mcp_server(world, &name)?;
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
    barrier(world).await?;
    let fake = mcp_server(world, &name)?;
    let calls = fake.calls();
    check!(
        calls.is_empty(),
        "the MCP server {name} was called before the approval: {calls:?}"
    );
    Ok(())
}
