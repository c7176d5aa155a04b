//! Steps for the agent loop's remaining rules (local-agent-host.md §3.4, §4.2, §4.5, §11,
//! §12): cancelling a task while a tool runs (cooperative, then forced), parallel tool
//! results in call order whatever the completion order, SIGTERM, bounded retries against the
//! backend services, and the structured local event log.
//!
//! Tools that must be observed mid-run are shell commands coordinating through marker files
//! in the workspace: the kit waits for a file the command writes, and releases the command
//! by creating a file it waits for. No step waits on the clock.

use agent_mocks::FaultControl;
use std::path::Path;

use agent_mocks::{GatewayReply, ScriptedToolCall};
use anyhow::Context;
use cucumber::gherkin::Step;
use cucumber::{given, then, when};
use serde_json::Value;

use super::session::UPLOADS_AT_SHUTDOWN;
use super::task::wait_task_end;
use super::tools::{SCRIPTED_CALLS, call_id, expand};
use super::{
    StepResult, TASK_TERMINAL_EVENTS, barrier, event_types, eventually, push_model_reply, show,
    str_at, task_events,
};
use crate::driver::ReceivedEvent;
use crate::world::ConformanceWorld;

fn this_task_events(world: &ConformanceWorld) -> anyhow::Result<Vec<ReceivedEvent>> {
    let task_id = world.task()?.task_id.clone();
    Ok(task_events(&world.started_runtime()?.events(), &task_id))
}

fn tool_completed<'a>(events: &'a [ReceivedEvent], id: &str) -> Option<&'a ReceivedEvent> {
    events.iter().find(|e| {
        e.event_type() == "tool_completed" && str_at(e.payload(), &["toolCallId"]) == Some(id)
    })
}

// ---- Given -----------------------------------------------------------------------------------

/// One model answer with several tool calls, one per table row (`| tool | arguments |`), with
/// the ids `call_tool_n` continuing the numbering of `the model will call {word} with:`.
#[given("the model will call these tools in one answer:")]
async fn model_calls_several(world: &mut ConformanceWorld, step: &Step) -> StepResult {
    let table = step
        .table
        .as_ref()
        .context("the step needs a table | tool | arguments |")?;
    let mut calls = Vec::new();
    for row in table.rows.iter().skip(1) {
        let [tool, arguments] = row.as_slice() else {
            fail!("each row needs a tool and its JSON arguments: {row:?}");
        };
        let arguments = expand(world, arguments).await?;
        serde_json::from_str::<Value>(&arguments)
            .with_context(|| format!("the scripted arguments are not JSON: {arguments}"))?;
        let n = world.marks.get(SCRIPTED_CALLS).copied().unwrap_or(0) + 1;
        world.marks.insert(SCRIPTED_CALLS, n);
        calls.push(ScriptedToolCall::new(call_id(n), tool.clone(), arguments));
    }
    check!(calls.len() > 1, "list at least two calls");
    push_model_reply(
        world.fakes().await?,
        GatewayReply::ToolCalls { text: None, calls },
    );
    Ok(())
}

// ---- When ------------------------------------------------------------------------------------

/// Waits (bounded) until a command of the task has written `name` into the workspace: the
/// tool is then running, whatever the runtime reported so far.
#[when(expr = "the command has written the workspace file {string}")]
async fn command_wrote(world: &mut ConformanceWorld, name: String) -> StepResult {
    let path = world.dirs()?.workspace.join(&name);
    let timeout = world.timeout();
    let written = eventually(timeout, &format!("the command to write {name}"), || {
        let path = path.clone();
        async move {
            if path.exists() {
                Ok(())
            } else {
                Err(format!("{} does not exist", path.display()))
            }
        }
    })
    .await;
    match written {
        Ok(()) => Ok(()),
        Err(failure) => Err(
            super::common::explain_tool_failure(world, "RunCommand", failure)
                .await
                .into(),
        ),
    }
}

/// Creates `name` in the workspace (a command waiting for it goes on).
#[when(expr = "the user creates the workspace file {string}")]
async fn user_creates(world: &mut ConformanceWorld, name: String) -> StepResult {
    let path = world.dirs()?.workspace.join(&name);
    std::fs::write(&path, "go\n").with_context(|| format!("cannot write {}", path.display()))?;
    Ok(())
}

/// Waits for `tool_completed` of the `n`th scripted call (1-based).
#[when(expr = "the runtime has reported the result of call {int}")]
async fn call_reported(world: &mut ConformanceWorld, n: usize) -> StepResult {
    let id = call_id(n);
    let timeout = world.timeout();
    world
        .started_runtime()?
        .wait_for_event(&format!("tool_completed for {id}"), timeout, |e| {
            e.event_type() == "tool_completed"
                && str_at(e.payload(), &["toolCallId"]) == Some(id.as_str())
        })
        .await?;
    Ok(())
}

/// SIGTERM, as the OS sends at logout or when the app's process manager stops the runtime.
#[when("the runtime receives SIGTERM")]
async fn sigterm(world: &mut ConformanceWorld) -> StepResult {
    if world.runtime_os() == crate::runtime_manifest::RuntimeOs::Windows {
        Err(anyhow::anyhow!(
            "{} Windows has no SIGTERM: the desktop app ends the runtime with Shutdown, by closing stdin, or with TerminateProcess (scenarios for those run on every OS)",
            crate::runtime_manifest::NOT_APPLICABLE
        ))?;
    }
    // What was uploaded before, so a later step can find the upload teardown made.
    let uploaded = world.fakes().await?.workspace.uploads().await.len();
    world.marks.insert(UPLOADS_AT_SHUTDOWN, uploaded);
    let runtime = world.started_runtime()?;
    let pid = runtime.pid().context("the runtime's pid is unknown")?;
    let timeout = runtime.timeout();
    let kill = tokio::process::Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status();
    let status = tokio::time::timeout(timeout, kill)
        .await
        .context("kill did not return")?
        .context("cannot run kill")?;
    check!(status.success(), "kill -TERM {pid} failed: {status}");
    Ok(())
}

// ---- Then: cancellation mid-tool --------------------------------------------------------------

#[then("the task has not ended yet")]
async fn not_ended(world: &mut ConformanceWorld) -> StepResult {
    barrier(world).await?;
    let events = this_task_events(world)?;
    check!(
        !events
            .iter()
            .any(|e| TASK_TERMINAL_EVENTS.contains(&e.event_type())),
        "the task must wait for its running tool before ending; its events: {}",
        event_types(&events)
    );
    Ok(())
}

#[then(expr = "the tool call completes with status {string} before task_cancelled")]
async fn completes_before_cancelled(world: &mut ConformanceWorld, status: String) -> StepResult {
    let end = wait_task_end(world).await?;
    check!(
        end.event_type() == "task_cancelled",
        "the task must end cancelled, not with {}",
        end.event_type()
    );
    let events = this_task_events(world)?;
    let done = tool_completed(&events, &call_id(1)).with_context(|| {
        format!(
            "the running tool must be reported by tool_completed before the task ends; events: {}",
            event_types(&events)
        )
    })?;
    check!(
        str_at(done.payload(), &["status"]) == Some(status.as_str()),
        "the tool call must have status {status:?}: {}",
        show(done.payload())
    );
    check!(
        done.seq < end.seq,
        "tool_completed must come before task_cancelled"
    );
    Ok(())
}

#[then("a warning between the cancellation and task_cancelled says the tool was stopped")]
async fn force_cancel_warning(world: &mut ConformanceWorld) -> StepResult {
    let end = wait_task_end(world).await?;
    let events = this_task_events(world)?;
    let warning = events
        .iter()
        .find(|e| e.event_type() == "warning")
        .with_context(|| {
            format!(
                "a force-cancelled tool must be reported by a warning; events: {}",
                event_types(&events)
            )
        })?;
    let message = str_at(warning.payload(), &["message"]).unwrap_or_default();
    check!(
        message.contains("RunCommand"),
        "the warning must name the stopped tool: {}",
        show(warning.payload())
    );
    check!(
        warning.seq < end.seq,
        "the warning must come before task_cancelled"
    );
    Ok(())
}

/// The thread keeps the stopped call answered: the next task's first model request carries a
/// tool message for it (an orphan call would make a real gateway reject the request).
#[then(expr = "the next task's first model request answers the stopped call with {string}")]
async fn thread_records_stop(world: &mut ConformanceWorld, needle: String) -> StepResult {
    wait_task_end(world).await?;
    let requests = super::lifecycle::recorded_task_requests(world).await?;
    let first = requests
        .first()
        .context("the new task made no model request")?;
    let id = call_id(1);
    let messages = first
        .body
        .get("messages")
        .and_then(Value::as_array)
        .context("the model request has no messages")?;
    let answer = messages
        .iter()
        .find(|m| str_at(m, &["role"]) == Some("tool") && str_at(m, &["tool_call_id"]) == Some(&id))
        .with_context(|| format!("no tool message answers {id}: {}", show(&first.body)))?;
    let content = str_at(answer, &["content"]).unwrap_or_default();
    check!(
        content.contains(&needle),
        "the tool message for {id} must say {needle:?}: {content:?}"
    );
    Ok(())
}

// ---- Then: parallel tools --------------------------------------------------------------------

#[then("the tool calls complete in the reverse of the call order")]
async fn reverse_completion(world: &mut ConformanceWorld) -> StepResult {
    wait_task_end(world).await?;
    let events = this_task_events(world)?;
    let first = tool_completed(&events, &call_id(1));
    let second = tool_completed(&events, &call_id(2));
    let (Some(first), Some(second)) = (first, second) else {
        fail!(
            "both calls must be reported by tool_completed; events: {}",
            event_types(&events)
        );
    };
    check!(
        second.seq < first.seq,
        "the second call must finish first (the first waits for it)"
    );
    Ok(())
}

/// The tool messages of the task's second model request answer `call_tool_1`, `call_tool_2`
/// in that order, each with its own call's output (ids and contents both, so results paired
/// with the wrong call fail too).
#[then(
    expr = "the next model request carries the tool results {string} and {string} in the call order"
)]
async fn results_in_call_order(
    world: &mut ConformanceWorld,
    first: String,
    second: String,
) -> StepResult {
    wait_task_end(world).await?;
    let requests = super::lifecycle::task_requests(world).await?;
    let next = requests
        .get(1)
        .with_context(|| format!("the model received {} request(s)", requests.len()))?;
    let messages = next
        .get("messages")
        .and_then(Value::as_array)
        .context("the model request has no messages")?;
    let tools: Vec<(&str, &str)> = messages
        .iter()
        .filter(|m| str_at(m, &["role"]) == Some("tool"))
        .map(|m| {
            (
                str_at(m, &["tool_call_id"]).unwrap_or_default(),
                str_at(m, &["content"]).unwrap_or_default(),
            )
        })
        .collect();
    let ids: Vec<&str> = tools.iter().map(|(id, _)| *id).collect();
    let want = [call_id(1), call_id(2)];
    check!(
        ids == want,
        "the tool results must follow the call order {want:?}, got {ids:?}"
    );
    for ((id, content), needle) in tools.iter().zip([&first, &second]) {
        check!(
            content.contains(needle.as_str()),
            "the result of {id} must contain {needle:?}: {content:?}"
        );
    }
    Ok(())
}

// ---- Then: backend services ------------------------------------------------------------------

#[then(expr = "the Session Service received exactly {int} session creation requests")]
async fn creation_attempts(world: &mut ConformanceWorld, count: usize) -> StepResult {
    let requests = world.started_fakes()?.session.requests().await;
    let attempts = requests
        .iter()
        .filter(|r| r.method == "POST" && r.path == "/sessions")
        .count();
    check!(
        attempts == count,
        "expected {count} attempts at POST /sessions, the Session Service saw {attempts}"
    );
    Ok(())
}

#[then(expr = "the Workspace Service received {int} session_history upload attempts")]
async fn history_attempts(world: &mut ConformanceWorld, count: usize) -> StepResult {
    wait_task_end(world).await?;
    let fakes = world.started_fakes()?;
    let timeout = world.timeout();
    let attempts = || async {
        let seen = fakes
            .workspace
            .requests()
            .await
            .iter()
            .filter(|r| str_at(&r.body, &["artifactType"]) == Some("session_history"))
            .count();
        if seen >= count {
            Ok(seen)
        } else {
            Err(format!("{seen} so far"))
        }
    };
    let seen = eventually(timeout, "the history upload attempts", attempts).await?;
    check!(
        seen == count,
        "expected {count} session_history upload attempts, the Workspace Service saw {seen}"
    );
    Ok(())
}

#[then(regex = r#"^the session history saved last holds (".+") in order$"#)]
async fn history_holds(world: &mut ConformanceWorld, list: String) -> StepResult {
    wait_task_end(world).await?;
    let wanted: Vec<String> = list
        .split('"')
        .skip(1)
        .step_by(2)
        .map(str::to_owned)
        .collect();
    let session_id = world.session()?.session_id.clone();
    let fakes = world.started_fakes()?;
    let timeout = world.timeout();
    let last = wanted.last().cloned().unwrap_or_default();
    let history = eventually(timeout, "a history carrying the last message", || async {
        match fakes.workspace.history(&session_id).await {
            Some(messages) if serde_json::to_string(&messages).is_ok_and(|t| t.contains(&last)) => {
                Ok(messages)
            }
            other => Err(format!("the saved history: {other:?}")),
        }
    })
    .await?;
    let contents: Vec<String> = history
        .iter()
        .filter_map(|m| str_at(m, &["content"]).map(str::to_owned))
        .collect();
    let mut from = 0;
    for text in &wanted {
        let found = contents[from..]
            .iter()
            .position(|c| c.contains(text.as_str()));
        let Some(at) = found else {
            fail!("the saved history must hold {wanted:?} in order; it holds {contents:?}");
        };
        from += at + 1;
    }
    Ok(())
}

// ---- Then: the local event log -----------------------------------------------------------------

/// Lines of every file under `dir` that parse as JSON objects.
fn json_lines(dir: &Path) -> Vec<Value> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|entry| std::fs::read_to_string(entry.path()).ok())
        .flat_map(|text| {
            text.lines()
                .filter_map(|line| serde_json::from_str::<Value>(line).ok())
                .filter(Value::is_object)
                .collect::<Vec<_>>()
        })
        .collect()
}

#[then(expr = "the log directory holds {word} and {word} of the task as JSON lines")]
async fn logged_events(world: &mut ConformanceWorld, first: String, second: String) -> StepResult {
    wait_task_end(world).await?;
    let task_id = world.task()?.task_id.clone();
    let dir = world.dirs()?.logs.clone();
    let timeout = world.timeout();
    eventually(timeout, "the task's events in LOG_DIR", || {
        let dir = dir.clone();
        let task_id = task_id.clone();
        let wanted = [first.clone(), second.clone()];
        async move {
            let lines = json_lines(&dir);
            let missing: Vec<&String> = wanted
                .iter()
                .filter(|kind| {
                    !lines.iter().any(|line| {
                        let text = line.to_string();
                        text.contains(&task_id) && text.contains(kind.as_str())
                    })
                })
                .collect();
            if missing.is_empty() {
                Ok(())
            } else {
                Err(format!(
                    "{} JSON line(s) in {}, none with {missing:?} of {task_id}",
                    lines.len(),
                    dir.display()
                ))
            }
        }
    })
    .await?;
    Ok(())
}
