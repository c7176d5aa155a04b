//! The sandbox's lifecycle edges with the real Session Service and its connection budget
//! (INTEROP.md §9, §10): a task record the web app made before StartTask is completed, not
//! made a second time; connections past the sandbox's cap are closed at once.

use std::time::Duration;

use agent_mocks::FaultControl as _;
use anyhow::Context;
use cucumber::{then, when};
use serde_json::{Value, json};
use tokio::io::AsyncReadExt as _;
use tokio::net::TcpStream;

use crate::steps::sandbox_host::{client, endpoint, sandbox_only};
use crate::steps::support::{StepResult, str_at};
use crate::steps::task::app_task_id;
use crate::world::{ConformanceWorld, TaskInfo};

#[when(
    expr = "the web app records the task {string} at the Session Service and starts it without a sessionId"
)]
async fn recorded_then_started(world: &mut ConformanceWorld, prompt: String) -> StepResult {
    let session_id = world.session()?.session_id.clone();
    let task_id = app_task_id();
    // What the browser does before StartTask (the real service's create route).
    let service = world.fakes().await?.session.url();
    let created = client()?
        .post(format!("{service}/sessions/{session_id}/tasks"))
        .json(&json!({"taskId": task_id, "prompt": prompt, "maxSteps": 50}))
        .send()
        .await
        .context("the web app's task record could not be created")?;
    check!(
        created.status().is_success(),
        "the Session Service refused the web app's task record: HTTP {}",
        created.status()
    );
    let runtime = world.started_runtime_mut()?;
    let response = runtime
        .request(
            "StartTask",
            Some(json!({"taskId": task_id, "prompt": prompt})),
        )
        .await?;
    let response_seq = runtime.last_response_seq();
    let answered = response
        .pointer("/result/taskId")
        .and_then(Value::as_str)
        .unwrap_or(task_id.as_str())
        .to_owned();
    world.task = Some(TaskInfo {
        task_id: answered,
        prompt,
        response: response.clone(),
        response_seq,
        requests_before: 0,
    });
    world.last_response = Some(response);
    world.last_method = Some("StartTask".to_owned());
    Ok(())
}

/// Judged once the record is completed (the step before waits for that): the sandbox's
/// calls of one task reach the service in order, so a second create would have come first.
#[then("the Session Service was asked to create the task only once")]
async fn created_once(world: &mut ConformanceWorld) -> StepResult {
    let session_id = world.session()?.session_id.clone();
    let task_id = world.task()?.task_id.clone();
    let path = format!("/sessions/{session_id}/tasks");
    let creates = world
        .fakes()
        .await?
        .session
        .requests()
        .await
        .into_iter()
        .filter(|r| {
            r.method == "POST" && r.path == path && str_at(&r.body, &["taskId"]) == Some(&task_id)
        })
        .count();
    check!(
        creates == 1,
        "the task record {task_id} the web app made was created {creates} times; the sandbox must complete it, not create it again"
    );
    Ok(())
}

#[when(expr = "{int} clients open connections to the sandbox and send nothing")]
async fn idle_connections(world: &mut ConformanceWorld, count: usize) -> StepResult {
    sandbox_only(world)?;
    let endpoint = endpoint(world)?;
    let authority = endpoint
        .strip_prefix("http://")
        .context("the sandbox's endpoint is not http://")?
        .trim_end_matches('/')
        .to_owned();
    for _ in 0..count {
        let stream = TcpStream::connect(&authority)
            .await
            .with_context(|| format!("cannot connect to {authority}"))?;
        world.sandbox.held.push(stream);
    }
    Ok(())
}

#[then(expr = "the sandbox closes all but {int} of those connections within {int} seconds")]
async fn all_but_closed(world: &mut ConformanceWorld, kept: usize, seconds: u64) -> StepResult {
    let held = std::mem::take(&mut world.sandbox.held);
    let opened = held.len();
    let waits = held.into_iter().map(|mut stream| async move {
        let mut sink = [0u8; 256];
        let closed = async {
            loop {
                match stream.read(&mut sink).await {
                    Ok(0) | Err(_) => return,
                    Ok(_) => {}
                }
            }
        };
        let ended = tokio::time::timeout(Duration::from_secs(seconds), closed)
            .await
            .is_ok();
        (ended, stream)
    });
    let outcomes = futures::future::join_all(waits).await;
    let closed = outcomes.iter().filter(|(ended, _)| *ended).count();
    // The connections still open are let go: the cap must not keep the scenario's own
    // requests (Shutdown) out.
    drop(outcomes);
    check!(
        closed + kept >= opened,
        "of {opened} idle connections the sandbox closed {closed} within {seconds} s; all but {kept} (its connection cap) must be closed at once"
    );
    Ok(())
}
