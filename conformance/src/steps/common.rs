//! Helpers shared by the step files of several areas (policy, tools, approvals, the loop):
//! one definition each, so the areas agree on what "this task's events" or "shaping the
//! policy" mean.

use agent_mocks::policy::{capability_entry, set_capability};
use anyhow::Context;
use serde_json::{Value, json};

use super::{event_types, str_at, task_events};
use crate::driver::ReceivedEvent;
use crate::world::ConformanceWorld;

/// The absolute path of a workspace file, as a model would name it (ReadFile takes absolute
/// paths, local-tool-runtime.md §4.1).
pub(super) fn workspace_path(world: &mut ConformanceWorld, name: &str) -> anyhow::Result<String> {
    Ok(world.dirs()?.workspace.join(name).display().to_string())
}

/// Edits the Session Service fake's bundle template: only before the session exists, since
/// CreateSession fetches the bundle.
pub(super) async fn edit_policy(
    world: &mut ConformanceWorld,
    edit: impl FnOnce(&mut Value),
) -> anyhow::Result<()> {
    check!(
        world.session.is_none(),
        "the policy must be shaped before the session is created (put this step before \"a running session\")"
    );
    world.fakes().await?.session.update_policy(edit);
    Ok(())
}

/// Sets the bundle's entry for `capability` to `scope` (replacing any entry it had); like
/// [`edit_policy`], only before the session exists.
pub(super) async fn grant(
    world: &mut ConformanceWorld,
    capability: &str,
    scope: Value,
) -> anyhow::Result<()> {
    edit_policy(world, |bundle| {
        set_capability(bundle, capability_entry(capability, scope));
    })
    .await
}

/// Sends `method` for this task (`{sessionId, taskId}`) and returns the whole response.
pub(super) async fn task_request(
    world: &mut ConformanceWorld,
    method: &str,
) -> anyhow::Result<Value> {
    let session_id = world.session()?.session_id.clone();
    let task_id = world.task()?.task_id.clone();
    let params = json!({"sessionId": session_id, "taskId": task_id});
    world.runtime().await?.request(method, Some(params)).await
}

/// This task's events so far.
pub(super) fn this_task_events(world: &ConformanceWorld) -> anyhow::Result<Vec<ReceivedEvent>> {
    let task_id = world.task()?.task_id.clone();
    Ok(task_events(&world.started_runtime()?.events(), &task_id))
}

/// Waits (bounded) for an event of this task.
pub(super) async fn wait_task_event(
    world: &ConformanceWorld,
    what: &str,
    predicate: impl Fn(&ReceivedEvent) -> bool,
) -> anyhow::Result<ReceivedEvent> {
    let task_id = world.task()?.task_id.clone();
    let after = world.task()?.response_seq;
    let runtime = world.started_runtime()?;
    // As in `task_events`: an event without a taskId after StartTask's answer is the task's.
    runtime
        .wait_for_event(what, world.timeout(), |e| {
            let ours = e.str_field("taskId") == Some(task_id.as_str())
                || (e.params.get("taskId").is_none_or(Value::is_null)
                    && e.seq > after
                    && !e.event_type().starts_with("session_"));
            ours && predicate(e)
        })
        .await
        .with_context(|| {
            format!(
                "the task's events so far: {}",
                event_types(&task_events(&runtime.events(), &task_id))
            )
        })
}

/// The tool_completed event of one call (waits for it).
pub(super) async fn tool_completed(
    world: &ConformanceWorld,
    call_id: &str,
) -> anyhow::Result<Value> {
    let event = wait_task_event(world, &format!("tool_completed for {call_id}"), |e| {
        e.event_type() == "tool_completed" && str_at(e.payload(), &["toolCallId"]) == Some(call_id)
    })
    .await?;
    Ok(event.payload().clone())
}

/// Waits (bounded) until the session is in `status` (local-agent-host.md §3.3), as any
/// runtime shows it: by GetSessionState's `sessionStatus` (INTEROP.md §1), or by `event`, the
/// reference runtime's extension event for that transition. A runtime that claims the
/// `reference` profile must send the event. A runtime whose GetSessionState names no
/// `sessionStatus` cannot show the transition: the scenario is not judged (REQ-SES-018).
pub(super) async fn session_reaches(
    world: &mut ConformanceWorld,
    status: &str,
    event: &str,
) -> anyhow::Result<()> {
    let timeout = world.timeout();
    if super::errors::declares_reference(world)? {
        world
            .started_runtime()?
            .wait_for_event(event, timeout, |e| e.event_type() == event)
            .await?;
        return Ok(());
    }
    let session_id = world.session()?.session_id.clone();
    let deadline = tokio::time::Instant::now() + timeout;
    let mut pause = std::time::Duration::from_millis(5);
    loop {
        if world
            .started_runtime()?
            .events()
            .iter()
            .any(|e| e.event_type() == event)
        {
            return Ok(());
        }
        let response = world
            .runtime()
            .await?
            .request("GetSessionState", Some(json!({"sessionId": session_id})))
            .await?;
        let reported = response
            .get("result")
            .and_then(|r| str_at(r, &["sessionStatus"]))
            .map(str::to_owned);
        if reported.as_deref() == Some(status) {
            return Ok(());
        }
        if tokio::time::Instant::now() >= deadline {
            let Some(reported) = reported else {
                anyhow::bail!(
                    "{} GetSessionState names no sessionStatus and no {event} event came, so the kit cannot see the session reach {status}; that is REQ-SES-018's finding: {}",
                    crate::report::NOT_JUDGED,
                    super::show(&response)
                );
            };
            anyhow::bail!(
                "after {timeout:?} the session is {reported}, expected {status} (no {event} event either)"
            );
        }
        tokio::time::sleep(pause).await;
        pause = (pause * 2).min(std::time::Duration::from_millis(100));
    }
}

/// Fails the step as not judged when a GetSessionState result has no `task` member at all:
/// the task's state (local-agent-host.md §3.3, both levels; INTEROP.md §1 nested `task`)
/// cannot be read, and that missing member is REQ-MSG-005's finding. A `task: null` (no
/// task) is an answer and is judged.
pub(super) fn require_nested_task(result: &Value) -> anyhow::Result<()> {
    if result.get("task").is_none() {
        anyhow::bail!(
            "{} GetSessionState has no nested task to read the task's state from; that is REQ-MSG-005's finding: {}",
            crate::report::NOT_JUDGED,
            super::show(result)
        );
    }
    Ok(())
}

/// The arguments local-tool-runtime.md §4 marks required, per built-in tool.
const SPEC_REQUIRED_ARGUMENTS: &[(&str, &[&str])] = &[
    ("ReadFile", &["path"]),
    ("WriteFile", &["path", "content"]),
    ("DeleteFile", &["path"]),
    ("RunCommand", &["command"]),
    ("HttpRequest", &["url"]),
];

/// Why a call of the built-in `tool` could not be judged, if it could not: the runtime
/// offered the tool with an input schema that requires arguments §4 does not require, so the
/// kit's call (made with the spec's arguments) never ran. That defect is REQ-TOOL-208's; the
/// scenario that needed the call is "not judged" instead of failing in its place.
pub(super) async fn unusable_tool(
    world: &mut ConformanceWorld,
    tool: &str,
) -> anyhow::Result<Option<String>> {
    let Some((_, required_by_spec)) = SPEC_REQUIRED_ARGUMENTS.iter().find(|(t, _)| *t == tool)
    else {
        return Ok(None);
    };
    let requests = super::model_requests(world.fakes().await?).await;
    let offered = requests.iter().rev().find_map(|request| {
        request
            .body
            .get("tools")?
            .as_array()?
            .iter()
            .find(|t| str_at(t, &["function", "name"]) == Some(tool))
            .cloned()
    });
    let extra: Vec<String> = offered
        .as_ref()
        .and_then(|t| super::at(t, &["function", "parameters", "required"]))
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .filter(|name| !required_by_spec.contains(name))
        .map(str::to_owned)
        .collect();
    Ok((!extra.is_empty()).then(|| {
        format!(
            "{} the runtime offers {tool} with required argument(s) {} that local-tool-runtime.md §4 does not require, so the kit's {tool} call (made with the spec's arguments) could not run; that is REQ-TOOL-208's finding",
            crate::report::NOT_JUDGED,
            extra.join(", ")
        )
    }))
}

/// Fails with [`unusable_tool`]'s reason when there is one, else with `failure`.
pub(super) async fn explain_tool_failure(
    world: &mut ConformanceWorld,
    tool: &str,
    failure: anyhow::Error,
) -> anyhow::Error {
    match unusable_tool(world, tool).await {
        Ok(Some(reason)) => anyhow::anyhow!("{reason}\n{failure:#}"),
        _ => failure,
    }
}

/// The system prompt of a model request: the content of its first message when that
/// message is the system's (INTEROP.md §2), else empty.
pub fn system_prompt(body: &Value) -> String {
    body.get("messages")
        .and_then(Value::as_array)
        .and_then(|messages| messages.first())
        .filter(|m| str_at(m, &["role"]) == Some("system"))
        .and_then(|m| str_at(m, &["content"]))
        .unwrap_or_default()
        .to_owned()
}
