//! Steps for the OS sandbox around commands (area HARD): what a command
//! the policy allows may still not do, judged from outside the runtime — a file outside the
//! workspace (`${OUTSIDE}`: the scenario's home folder) that must not appear, a workspace
//! file that must stay unchanged, a loopback listener (`${LISTENER_PORT}`) that must not be
//! connected to.

use std::{net::TcpListener, sync::Mutex};

use agent_mocks::GatewayReply;
use anyhow::Context as _;
use cucumber::{given, then};
use serde_json::json;

use crate::steps::session::session_state;
use crate::steps::support::model::push_model_reply;
use crate::steps::support::policy::grant;
use crate::steps::support::{StepResult, show};
use crate::steps::task::wait_task_end;
use crate::steps::tools::{SCRIPTED_CALLS, call_id, expand};
use crate::world::ConformanceWorld;

/// The `marks` key of this scenario's listener: its index in [`LISTENERS`], plus one.
const LISTENER: &str = "hardening.listener";

/// Listeners of running scenarios, taken out (and closed) by the step that judges them. A
/// scenario that fails before leaves its socket open until the kit exits.
static LISTENERS: Mutex<Vec<Option<TcpListener>>> = Mutex::new(Vec::new());

pub(crate) fn listener_port(world: &ConformanceWorld) -> anyhow::Result<u16> {
    let index = world
        .marks
        .get(LISTENER)
        .context("no listener in this scenario (\"a TCP listener on loopback\")")?;
    let listeners = LISTENERS
        .lock()
        .map_err(|_| anyhow::anyhow!("the listener registry is poisoned"))?;
    let listener = listeners
        .get(index - 1)
        .and_then(Option::as_ref)
        .context("the scenario's listener was already judged")?;
    Ok(listener.local_addr()?.port())
}

#[given(expr = "the policy grants Shell.Exec for the command {string} only")]
async fn shell_for_only(world: &mut ConformanceWorld, command: String) -> StepResult {
    grant(world, "Shell.Exec", json!({"allowedCommands": [command]})).await?;
    Ok(())
}

#[given("a TCP listener on loopback")]
async fn tcp_listener(world: &mut ConformanceWorld) -> StepResult {
    let listener = TcpListener::bind("127.0.0.1:0").context("cannot listen on loopback")?;
    // Judged without waiting: a connection made before the task ended is already queued.
    listener.set_nonblocking(true)?;
    let mut listeners = LISTENERS
        .lock()
        .map_err(|_| anyhow::anyhow!("the listener registry is poisoned"))?;
    listeners.push(Some(listener));
    world.marks.insert(LISTENER, listeners.len());
    Ok(())
}

/// The command as a doc string: quotes of both kinds, as written, with the placeholders of
/// [`model_runs`].
#[given("the model will run this shell command:")]
async fn model_runs_text(
    world: &mut ConformanceWorld,
    step: &cucumber::gherkin::Step,
) -> StepResult {
    let command = step
        .docstring
        .as_deref()
        .context("the step needs the command as a doc string")?
        .trim()
        .to_owned();
    model_runs(world, command).await
}

#[given(expr = "the model will run the shell command {string}")]
async fn model_runs(world: &mut ConformanceWorld, command: String) -> StepResult {
    world.require_scenario_shell()?;
    let mut command = expand(world, &command).await?;
    let outside = world.dirs()?.home.display().to_string();
    command = command.replace("${OUTSIDE}", &outside);
    if command.contains("${LISTENER_PORT}") {
        command = command.replace("${LISTENER_PORT}", &listener_port(world)?.to_string());
    }
    #[cfg(target_os = "linux")]
    let command = super::escapes::expand(world, &command)?;
    let n = world.marks.get(SCRIPTED_CALLS).copied().unwrap_or(0) + 1;
    world.marks.insert(SCRIPTED_CALLS, n);
    let arguments = json!({ "command": command }).to_string();
    push_model_reply(
        world.fakes().await?,
        GatewayReply::tool_call(call_id(n), "RunCommand", arguments),
    );
    Ok(())
}

#[then(expr = "the file {string} outside the workspace does not exist")]
async fn outside_absent(world: &mut ConformanceWorld, name: String) -> StepResult {
    wait_task_end(world).await?;
    let path = world.dirs()?.home.join(&name);
    check!(
        !path.exists(),
        "a command wrote {} outside the workspace (it holds {:?})",
        path.display(),
        std::fs::read_to_string(&path).unwrap_or_default()
    );
    Ok(())
}

#[then(expr = "the workspace file {string} still reads {string}")]
async fn still_reads(world: &mut ConformanceWorld, name: String, want: String) -> StepResult {
    wait_task_end(world).await?;
    let path = world.dirs()?.workspace.join(&name);
    let now = std::fs::read_to_string(&path)
        .with_context(|| format!("cannot read {}", path.display()))?;
    check!(
        now == want,
        "a command changed {}: it now reads {now:?}, not {want:?}",
        path.display()
    );
    Ok(())
}

/// The scenario's loopback listener, taken out of the registry to be judged once.
fn take_listener(world: &ConformanceWorld) -> anyhow::Result<TcpListener> {
    let index = *world
        .marks
        .get(LISTENER)
        .context("no listener in this scenario (\"a TCP listener on loopback\")")?;
    LISTENERS
        .lock()
        .map_err(|_| anyhow::anyhow!("the listener registry is poisoned"))?
        .get_mut(index - 1)
        .and_then(Option::take)
        .context("the scenario's listener was already judged")
}

#[then("the loopback listener was never connected to")]
async fn never_connected(world: &mut ConformanceWorld) -> StepResult {
    wait_task_end(world).await?;
    let listener = take_listener(world)?;
    match listener.accept() {
        Ok((_, peer)) => fail!("a command connected to the loopback listener (from {peer})"),
        Err(error) if error.kind() == std::io::ErrorKind::WouldBlock => Ok(()),
        Err(error) => Err(anyhow::anyhow!("the listener failed: {error}").into()),
    }
}

/// The request line of each connection the listener took in, read from what is already
/// queued (the task has ended, so whatever reached the listener is there).
#[then(expr = "the loopback listener received one request, for {string}")]
async fn one_request_for(world: &mut ConformanceWorld, path: String) -> StepResult {
    use std::io::Read as _;
    wait_task_end(world).await?;
    let listener = take_listener(world)?;
    let mut lines = Vec::new();
    loop {
        let mut stream = match listener.accept() {
            Ok((stream, _)) => stream,
            Err(error) if error.kind() == std::io::ErrorKind::WouldBlock => break,
            Err(error) => return Err(anyhow::anyhow!("the listener failed: {error}").into()),
        };
        stream.set_nonblocking(false)?;
        stream.set_read_timeout(Some(world.timeout()))?;
        let mut head = Vec::new();
        let mut byte = [0u8; 1];
        while !head.ends_with(b"\r\n") && matches!(stream.read(&mut byte), Ok(1)) {
            head.push(byte[0]);
        }
        lines.push(String::from_utf8_lossy(&head).trim().to_owned());
    }
    let wanted = format!("GET {path} ");
    check!(
        lines.len() == 1 && lines[0].starts_with(&wanted),
        "the listener received {} request(s) {lines:?}; expected only `GET {path}`",
        lines.len()
    );
    Ok(())
}

#[then(expr = "the runtime warned at session start that {string}")]
async fn warned_at_start(world: &mut ConformanceWorld, says: String) -> StepResult {
    let events = world.started_runtime()?.events();
    let warned = events.iter().any(|event| {
        event.event_type() == "warning"
            && event
                .payload()
                .get("message")
                .and_then(serde_json::Value::as_str)
                .is_some_and(|message| message.contains(&says))
    });
    check!(
        warned,
        "no warning event says {says:?}; events: {}",
        events
            .iter()
            .map(|event| event.event_type().to_owned())
            .collect::<Vec<_>>()
            .join(", ")
    );
    Ok(())
}

#[then("GetSessionState reports that commands are sandboxed")]
async fn state_reports_sandbox(world: &mut ConformanceWorld) -> StepResult {
    let response = session_state(world).await?;
    let sandbox = &response["result"]["sandbox"];
    check!(
        sandbox.is_object(),
        "GetSessionState's result carries no `sandbox` object: {}",
        show(&response)
    );
    check!(
        sandbox["enforced"] == json!(true),
        "commands are not sandboxed: {}",
        show(sandbox)
    );
    Ok(())
}
