//! INTEROP.md §9, the Sandbox Agent Host behind the Session Service: registration, the one
//! session as default, the proxied CreateSession, the event stream's ids, replay, readers and
//! reconnects, health, files and `workspace.sync`. These steps need `--transport sandbox`
//! (the kit plays the Session Service); over another transport they are not applicable.

pub(crate) mod attacks;
pub(crate) mod files;
pub(crate) mod lifecycle;
pub(crate) mod slow;

use std::sync::Arc;

use agent_mocks::FaultControl;
use anyhow::Context;
use cucumber::{given, then, when};
use futures::StreamExt as _;
use serde_json::{Value, json};

use crate::contract::{TENANT_ID, USER_ID};
use crate::driver::Transport;
use crate::driver::sandbox::{Frame, FrameReader};
use crate::driver::sandbox_scratch::Reader;
use crate::runtime_manifest::NOT_APPLICABLE;
use crate::steps::support::StepResult;
use crate::steps::support::task::TASK_TERMINAL_EVENTS;
use crate::steps::task::{app_task_id, wait_task_end};
use crate::world::{ConformanceWorld, SessionInfo, TaskInfo};

pub(crate) fn sandbox_only(world: &ConformanceWorld) -> anyhow::Result<()> {
    if world.transport() != Some(Transport::Sandbox) {
        anyhow::bail!(
            "{NOT_APPLICABLE} this scenario certifies the sandbox contract (INTEROP.md §9) and runs over `--transport sandbox` only"
        );
    }
    Ok(())
}

fn launch(world: &ConformanceWorld) -> anyhow::Result<agent_mocks::SandboxLaunch> {
    world
        .sandbox_launch
        .clone()
        .context("no sandbox was launched in this scenario")
}

/// The endpoint the sandbox registered (the one the proxy talks to).
pub(crate) fn endpoint(world: &ConformanceWorld) -> anyhow::Result<String> {
    let launch = launch(world)?;
    let (endpoint, _) = world
        .started_fakes()?
        .session
        .sandbox_registration(&launch.session_id)
        .context("the sandbox has not registered")?;
    Ok(endpoint.trim_end_matches('/').to_owned())
}

pub(crate) fn client() -> anyhow::Result<reqwest::Client> {
    reqwest::Client::builder()
        .no_proxy()
        .build()
        .context("cannot build the HTTP client")
}

#[given("a sandbox registered with the Session Service")]
async fn registered(world: &mut ConformanceWorld) -> StepResult {
    sandbox_only(world)?;
    world.runtime().await?;
    let launch = launch(world)?;
    world.session = Some(SessionInfo {
        session_id: launch.session_id,
        workspace_id: launch.workspace_id,
        result: json!({}),
    });
    Ok(())
}

#[given("the sandbox is launched with a registration token the Session Service did not issue")]
async fn wrong_token(world: &mut ConformanceWorld) -> StepResult {
    sandbox_only(world)?;
    world.sandbox.token_override = Some("not-the-issued-token".to_owned());
    Ok(())
}

#[given(expr = "the Session Service answers the next {int} requests with HTTP 503")]
async fn service_unavailable(world: &mut ConformanceWorld, count: usize) -> StepResult {
    sandbox_only(world)?;
    world.fakes().await?.session.fail_next(
        count,
        503,
        json!({"code": "SERVICE_UNAVAILABLE", "message": "Service unavailable", "retryable": true}),
    );
    Ok(())
}

#[when("the sandbox starts")]
async fn sandbox_starts(world: &mut ConformanceWorld) -> StepResult {
    sandbox_only(world)?;
    if let Err(error) = world.runtime().await {
        world.sandbox.start_error = Some(format!("{error:#}"));
    }
    Ok(())
}

#[when(expr = "the web app starts the task {string} without a sessionId")]
async fn start_without_session(world: &mut ConformanceWorld, prompt: String) -> StepResult {
    let asked = app_task_id();
    let runtime = world.started_runtime_mut()?;
    let response = runtime
        .request(
            "StartTask",
            Some(json!({"taskId": asked, "prompt": prompt})),
        )
        .await?;
    let response_seq = runtime.last_response_seq();
    let task_id = response
        .pointer("/result/taskId")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    world.task = Some(TaskInfo {
        task_id,
        prompt,
        response: response.clone(),
        response_seq,
        requests_before: 0,
    });
    world.last_response = Some(response);
    world.last_method = Some("StartTask".to_owned());
    Ok(())
}

#[when("the web app sends CreateSession through the proxy")]
async fn proxied_create(world: &mut ConformanceWorld) -> StepResult {
    let response = world
        .started_runtime_mut()?
        .request(
            "CreateSession",
            Some(json!({
                "tenantId": TENANT_ID,
                "userId": USER_ID,
                "executionEnvironment": "cloud_sandbox",
            })),
        )
        .await?;
    world.last_response = Some(response);
    world.last_method = Some("CreateSession".to_owned());
    Ok(())
}

/// Opens a reader of `GET /events` (with `Last-Event-ID` when given) collecting its frames.
pub(crate) async fn open_reader(
    world: &mut ConformanceWorld,
    last_event_id: Option<u64>,
) -> anyhow::Result<Arc<Reader>> {
    let endpoint = endpoint(world)?;
    let mut request = client()?.get(format!("{endpoint}/events"));
    if let Some(id) = last_event_id {
        request = request.header("Last-Event-ID", id.to_string());
    }
    let response = request.send().await.context("GET /events failed")?;
    anyhow::ensure!(
        response.status().is_success(),
        "GET /events answered {}",
        response.status()
    );
    let frames: Arc<Reader> = Arc::default();
    let sink = Arc::clone(&frames);
    tokio::spawn(async move {
        let mut reader = FrameReader::default();
        let mut body = response.bytes_stream();
        while let Some(Ok(chunk)) = body.next().await {
            let done = reader.push(&chunk);
            if let Ok(mut frames) = sink.frames.lock() {
                frames.extend(done);
            }
            sink.changed.notify_waiters();
        }
    });
    world.sandbox.readers.push(Arc::clone(&frames));
    Ok(frames)
}

#[when("a second reader opens the event stream")]
async fn second_reader(world: &mut ConformanceWorld) -> StepResult {
    open_reader(world, None).await?;
    Ok(())
}

#[when("a reader opens the event stream and closes it")]
async fn reader_closes(world: &mut ConformanceWorld) -> StepResult {
    let endpoint = endpoint(world)?;
    let response = client()?
        .get(format!("{endpoint}/events"))
        .send()
        .await
        .context("GET /events failed")?;
    check!(
        response.status().is_success(),
        "GET /events answered {}",
        response.status()
    );
    drop(response);
    Ok(())
}

#[when("a reader reconnects with the Last-Event-ID of the task's first event")]
async fn reconnects(world: &mut ConformanceWorld) -> StepResult {
    let task_id = world.task()?.task_id.clone();
    let first = world
        .started_runtime()?
        .events()
        .into_iter()
        .filter(|e| e.str_field("taskId") == Some(task_id.as_str()))
        .filter_map(|e| e.params.get("eventId").and_then(Value::as_u64))
        .min()
        .context("the task has no events")?;
    world.sandbox.resumed_after = first;
    open_reader(world, Some(first)).await?;
    Ok(())
}

#[then("the sandbox registered its endpoint, its task and the registration token")]
async fn registration_seen(world: &mut ConformanceWorld) -> StepResult {
    let launch = launch(world)?;
    let fakes = world.started_fakes()?;
    let (endpoint, task_arn) = fakes
        .session
        .sandbox_registration(&launch.session_id)
        .context("no registration reached the Session Service")?;
    check!(
        endpoint.starts_with("http://") || endpoint.starts_with("https://"),
        "sandboxEndpoint {endpoint:?} is not an http(s) URL"
    );
    let pid = world.started_runtime()?.pid().unwrap_or_default();
    check!(
        task_arn == format!("local:{pid}"),
        "taskArn is {task_arn:?}; the local launcher knows the sandbox as local:{pid}"
    );
    let status = fakes.session.status(&launch.session_id);
    check!(
        status.as_deref() == Some("SANDBOX_READY"),
        "the session is {status:?} at the Session Service, not SANDBOX_READY"
    );
    Ok(())
}

#[then("GetSessionState without a sessionId names the registered session")]
async fn state_names_session(world: &mut ConformanceWorld) -> StepResult {
    let session_id = world.session()?.session_id.clone();
    let response = world
        .started_runtime_mut()?
        .request("GetSessionState", Some(json!({})))
        .await?;
    let named = response
        .pointer("/result/sessionId")
        .and_then(Value::as_str);
    check!(
        named == Some(session_id.as_str()),
        "GetSessionState named {named:?}, not the registered session {session_id}: {response}"
    );
    Ok(())
}

#[then("the Session Service holds no session but the provisioned one")]
async fn one_session(world: &mut ConformanceWorld) -> StepResult {
    let ids = world.started_fakes()?.session.session_ids();
    check!(
        ids.len() == 1,
        "the Session Service holds {} sessions ({ids:?}): the sandbox created one of its own",
        ids.len()
    );
    Ok(())
}

#[then("the CreateSession answer names the registered session or is a readable error")]
async fn create_answer(world: &mut ConformanceWorld) -> StepResult {
    let session_id = world.session()?.session_id.clone();
    let response = world.last_response()?.clone();
    if let Some(named) = response
        .pointer("/result/sessionId")
        .and_then(Value::as_str)
    {
        check!(
            named == session_id,
            "CreateSession answered session {named}, not the registered {session_id}"
        );
        return Ok(());
    }
    let message = response
        .pointer("/error/message")
        .and_then(Value::as_str)
        .unwrap_or_default();
    check!(
        message.split_whitespace().count() >= 3,
        "CreateSession answered neither the registered session nor a readable error: {response}"
    );
    Ok(())
}

#[then("the task ends with task_completed")]
async fn task_completed(world: &mut ConformanceWorld) -> StepResult {
    let task = world.task()?.clone();
    check!(
        !task.task_id.is_empty(),
        "StartTask without a sessionId was not accepted: {}",
        task.response
    );
    let end = wait_task_end(world).await?;
    check!(
        end.event_type() == "task_completed",
        "the task ended with {}",
        end.event_type()
    );
    Ok(())
}

/// Waits until every reader holds a frame with id `last` (bounded by the kit's timeout).
async fn readers_reach(world: &ConformanceWorld, last: u64) -> anyhow::Result<()> {
    let deadline = tokio::time::Instant::now() + world.timeout();
    for reader in &world.sandbox.readers {
        loop {
            let changed = reader.changed.notified();
            tokio::pin!(changed);
            changed.as_mut().enable();
            if reader.frames().iter().any(|f| frame_id(f) == Some(last)) {
                break;
            }
            tokio::select! {
                () = changed => {}
                () = tokio::time::sleep_until(deadline) => {
                    anyhow::bail!("a reader never received event {last}");
                }
            }
        }
    }
    Ok(())
}

pub(crate) fn frame_id(frame: &Frame) -> Option<u64> {
    frame.id.as_deref().and_then(|id| id.trim().parse().ok())
}

pub(crate) fn task_event_ids(world: &ConformanceWorld) -> anyhow::Result<Vec<u64>> {
    let task_id = world.task()?.task_id.clone();
    let mut ids: Vec<u64> = world
        .started_runtime()?
        .events()
        .into_iter()
        .filter(|e| e.str_field("taskId") == Some(task_id.as_str()))
        .filter_map(|e| e.params.get("eventId").and_then(Value::as_u64))
        .collect();
    ids.sort_unstable();
    Ok(ids)
}

#[then("every reader received every event of the task, framed with its id")]
async fn readers_saw_all(world: &mut ConformanceWorld) -> StepResult {
    wait_task_end(world).await?;
    let ids = task_event_ids(world)?;
    let last = *ids.last().context("the task has no events")?;
    readers_reach(world, last).await?;
    for reader in &world.sandbox.readers {
        let frames = reader.frames();
        for id in &ids {
            let frame = frames.iter().find(|f| frame_id(f) == Some(*id));
            let Some(frame) = frame else {
                fail!("a reader missed event {id}");
            };
            check!(
                frame.event.as_deref() == Some("session_event"),
                "event {id} came as `event: {:?}`",
                frame.event
            );
            let data: Value = serde_json::from_str(&frame.data.join("\n"))
                .with_context(|| format!("event {id}'s data is not JSON"))?;
            check!(
                data.get("id").and_then(Value::as_u64) == Some(*id)
                    && data.get("eventId").and_then(Value::as_u64) == Some(*id),
                "event {id}'s data does not carry id = eventId = {id}: {data}"
            );
        }
    }
    Ok(())
}

/// The reconnect point, the runtime's event ids after it, and the frames the reconnected
/// reader got once it reached the last of them.
async fn after_reconnect(world: &ConformanceWorld) -> anyhow::Result<(u64, Vec<u64>, Vec<Frame>)> {
    let after = world.sandbox.resumed_after;
    let all: Vec<u64> = world
        .started_runtime()?
        .events()
        .into_iter()
        .filter_map(|e| e.params.get("eventId").and_then(Value::as_u64))
        .filter(|id| *id > after)
        .collect();
    let last = *all
        .last()
        .context("no event followed the reconnect point")?;
    readers_reach(world, last).await?;
    let frames = world
        .sandbox
        .readers
        .last()
        .map(|reader| reader.frames())
        .unwrap_or_default();
    Ok((after, all, frames))
}

#[then("the reconnected reader received exactly the events after that id")]
async fn replayed(world: &mut ConformanceWorld) -> StepResult {
    let (after, all, frames) = after_reconnect(world).await?;
    let got: Vec<u64> = frames
        .iter()
        .filter(|f| f.event.as_deref() == Some("session_event"))
        .filter_map(frame_id)
        .collect();
    check!(
        got == all,
        "after Last-Event-ID {after} the reader got events {got:?}, expected {all:?}"
    );
    Ok(())
}

#[then("the reconnected reader is told that events were lost, then gets the events still kept")]
async fn replayed_after_gap(world: &mut ConformanceWorld) -> StepResult {
    let (_, all, frames) = after_reconnect(world).await?;
    let gap = frames
        .iter()
        .position(|f| f.event.as_deref() == Some("gap"))
        .context("the reader was sent no `event: gap` frame although the events after its Last-Event-ID had fallen out of the replay buffer")?;
    let first_event = frames
        .iter()
        .position(|f| f.event.as_deref() == Some("session_event"));
    check!(
        first_event.is_none_or(|first| gap < first),
        "the `event: gap` frame came after replayed events, not before them"
    );
    let got: Vec<u64> = frames
        .iter()
        .filter(|f| f.event.as_deref() == Some("session_event"))
        .filter_map(frame_id)
        .collect();
    check!(
        !got.is_empty() && got.windows(2).all(|pair| pair[0] < pair[1]) && all.ends_with(&got),
        "after the gap the reader got events {got:?}; expected the newest of {all:?} in order"
    );
    Ok(())
}

#[then("the sandbox stops with a readable registration failure")]
async fn registration_failed(world: &mut ConformanceWorld) -> StepResult {
    let error = world
        .sandbox
        .start_error
        .clone()
        .context("the sandbox started although its registration was refused")?;
    check!(
        error.contains("exited") && !error.contains("exit status: 0"),
        "the sandbox did not exit with a failure: {error}"
    );
    // The runtime's own words, not the kit's account of them.
    let last_words = error
        .split_once("last stderr:")
        .map_or("", |(_, stderr)| stderr)
        .to_ascii_lowercase();
    check!(
        last_words.contains("regist"),
        "the sandbox's last words do not say the registration failed: {error}"
    );
    Ok(())
}

#[then(expr = "the registration reached the Session Service at least {int} times")]
async fn registration_attempts(world: &mut ConformanceWorld, times: u32) -> StepResult {
    let launch = launch(world)?;
    let attempts = world
        .started_fakes()?
        .session
        .registration_attempts(&launch.session_id);
    let injected = world
        .started_fakes()?
        .session
        .requests()
        .await
        .iter()
        .filter(|r| r.path.ends_with("/register"))
        .count() as u32;
    check!(
        attempts.max(injected) >= times,
        "the registration was tried {} times, fewer than {times}",
        attempts.max(injected)
    );
    Ok(())
}

#[then("the task's terminal event arrives")]
async fn terminal(world: &mut ConformanceWorld) -> StepResult {
    let end = wait_task_end(world).await?;
    check!(
        TASK_TERMINAL_EVENTS.contains(&end.event_type()),
        "the task did not end"
    );
    Ok(())
}
