//! The runtime process itself: the environment it is started with, SIGTERM, and its structured
//! local event log (local-agent-host.md §11, §12).

use std::path::Path;

use anyhow::Context;
use cucumber::{given, then, when};
use serde_json::{Value, json};

use crate::steps::session::end::UPLOADS_AT_SHUTDOWN;
use crate::steps::support::{StepResult, eventually};
use crate::steps::task::wait_task_end;
use crate::world::ConformanceWorld;

#[given(expr = "the runtime is started with {word} set to {string}")]
async fn runtime_env(world: &mut ConformanceWorld, name: String, value: String) -> StepResult {
    world.set_runtime_env(&name, &value)?;
    Ok(())
}

#[given(expr = "the runtime is started with the extra gateway header {string} set to {string}")]
async fn gateway_header(world: &mut ConformanceWorld, name: String, value: String) -> StepResult {
    let mut headers = serde_json::Map::new();
    headers.insert(name, json!(value));
    world.set_runtime_env("LLM_GATEWAY_HEADERS", &Value::Object(headers).to_string())?;
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
