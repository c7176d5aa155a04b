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
