//! Steps for behaviours a lax kit would let through: a request with a
//! null id, a step closed before its tools ran, a Retry-After cut short, RunCommand's working
//! directory outside the policy, a slow Session Service call holding up other requests.
//!
//! Each judges what a client or a backend sees: the order of the lines on stdout, the files
//! in CHECKPOINT_DIR and the workspace, the times at which the fake gateway received requests.

use std::path::PathBuf;
use std::time::Duration;

use agent_mocks::FaultControl;
use agent_mocks::GatewayReply;
use agent_mocks::ScriptedToolCall;
use anyhow::Context;
use cucumber::{given, then, when};
use serde_json::{Value, json};

use super::common::{grant, this_task_events, wait_task_event};
use super::rpc::send_line;
use super::session::create_session_params;
use super::task::wait_task_end;
use super::tools::expand;
use super::{StepResult, event_types, eventually, push_model_reply, show, str_at};
use crate::world::ConformanceWorld;

/// The id policy.rs gives the RunCommand call, so that its "the RunCommand call is denied"
/// and "… runs" judge the call scripted here too.
const RUN_CALL_ID: &str = "call_run_1";
/// The id of the CreateSession sent without waiting (a string: no clash with the driver's
/// numeric ids).
const PENDING_CREATE_ID: &str = "create-pending-1";

// ---- JSON-RPC ids ----------------------------------------------------------------------------

/// GetSessionState for the running session, sent as a raw line with `id` as written (any JSON
/// value, `null` included); the answer is read by the next `Then` step.
#[when(regex = r"^the client asks for the session state with id (.+)$")]
async fn state_with_id(world: &mut ConformanceWorld, id: String) -> StepResult {
    let id: Value = serde_json::from_str(&id)
        .with_context(|| format!("the id {id} in the scenario is not a JSON value"))?;
    let session_id = world.session()?.session_id.clone();
    let line = serde_json::to_vec(&json!({
        "jsonrpc": "2.0", "id": id, "method": "GetSessionState",
        "params": {"sessionId": session_id},
    }))?;
    send_line(world, &line).await?;
    Ok(())
}

// ---- a step and its tools ----------------------------------------------------------------------

/// For every tool call: the step in progress when it was requested (the last step_started
/// before its tool_requested) is closed by step_completed only after its tool_completed.
#[then("every step's step_completed comes after the tool_completed of each tool call of that step")]
async fn step_closes_after_tools(world: &mut ConformanceWorld) -> StepResult {
    wait_task_end(world).await?;
    let events = this_task_events(world)?;
    let mut current_step: Option<String> = None;
    let mut checked = 0;
    for (index, event) in events.iter().enumerate() {
        match event.event_type() {
            "step_started" => {
                current_step = event
                    .str_field("stepId")
                    .or_else(|| str_at(event.payload(), &["stepId"]))
                    .map(str::to_owned);
            }
            "tool_requested" => {
                let call = str_at(event.payload(), &["toolCallId"]).unwrap_or_default();
                let step = current_step.clone().with_context(|| {
                    format!(
                        "tool_requested for {call} came before any step_started: {}",
                        event_types(&events)
                    )
                })?;
                let later = &events[index..];
                let step_done = later.iter().position(|e| {
                    e.event_type() == "step_completed"
                        && (e.str_field("stepId") == Some(step.as_str())
                            || str_at(e.payload(), &["stepId"]) == Some(step.as_str()))
                });
                let tool_done = later.iter().position(|e| {
                    e.event_type() == "tool_completed"
                        && str_at(e.payload(), &["toolCallId"]) == Some(call)
                });
                match (tool_done, step_done) {
                    (Some(tool), Some(step_end)) => check!(
                        tool < step_end,
                        "step {step} was reported completed before its tool call {call} completed (local-agent-host.md §12: step_completed comes after all tool results are collected): {}",
                        event_types(&events)
                    ),
                    (None, _) => fail!(
                        "the tool call {call} never completed: {}",
                        event_types(&events)
                    ),
                    (Some(_), None) => {
                        // step_completed sent before tool_requested is caught here too: the
                        // step's close must follow its tools, not precede them.
                        let closed_before = events[..index].iter().any(|e| {
                            e.event_type() == "step_completed"
                                && (e.str_field("stepId") == Some(step.as_str())
                                    || str_at(e.payload(), &["stepId"]) == Some(step.as_str()))
                        });
                        check!(
                            !closed_before,
                            "step {step} was reported completed before its tool call {call} was even requested: {}",
                            event_types(&events)
                        );
                        fail!(
                            "step {step} ran the tool call {call} but was never reported by step_completed: {}",
                            event_types(&events)
                        );
                    }
                }
                checked += 1;
            }
            _ => {}
        }
    }
    check!(
        checked > 0,
        "the task requested no tool, so nothing was checked: {}",
        event_types(&events)
    );
    Ok(())
}

/// The session's checkpoint file: `{sessionId}.json` in CHECKPOINT_DIR, or the only JSON file
/// there (one session per process, local-agent-host.md §9.4).
fn checkpoint_file(world: &mut ConformanceWorld) -> anyhow::Result<PathBuf> {
    let session_id = world.session()?.session_id.clone();
    let dir = world.dirs()?.checkpoints.clone();
    let named = dir.join(format!("{session_id}.json"));
    if named.exists() {
        return Ok(named);
    }
    let files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .with_context(|| format!("cannot list CHECKPOINT_DIR {}", dir.display()))?
        .filter_map(|entry| entry.ok().map(|entry| entry.path()))
        .filter(|path| path.extension().is_some_and(|ext| ext == "json"))
        .collect();
    match files.as_slice() {
        [only] => Ok(only.clone()),
        _ => anyhow::bail!(
            "no checkpoint file of the session in CHECKPOINT_DIR {} (local-agent-host.md §9.3–§9.4)",
            dir.display()
        ),
    }
}

/// Read at the moment the kit sees the first step_completed: the spec writes the checkpoint
/// before that event, so it must already hold what the step's tools returned. The next
/// step's model answer is held back by the scenario, so no later checkpoint can stand in.
#[then(
    expr = "when the first step_completed is reported, the checkpoint of the session holds {string}"
)]
async fn checkpoint_at_step_completed(world: &mut ConformanceWorld, needle: String) -> StepResult {
    let completed = wait_task_event(world, "the first step_completed", |e| {
        e.event_type() == "step_completed"
    })
    .await?;
    // A step_completed sent before its tools ran is REQ-LOOP-030's finding; what the
    // checkpoint holds at a step_completed is this one's.
    let tools_done = super::common::this_task_events(world)?
        .iter()
        .any(|e| e.event_type() == "tool_completed" && e.seq < completed.seq);
    if !tools_done {
        fail!(
            "{} the first step_completed came before any tool_completed of its step; that is REQ-LOOP-030's finding",
            crate::report::NOT_JUDGED
        );
    }
    let path = checkpoint_file(world)?;
    let text = std::fs::read_to_string(&path)
        .with_context(|| format!("cannot read the checkpoint {}", path.display()))?;
    let value: Value = serde_json::from_str(&text)
        .with_context(|| format!("the checkpoint {} is not JSON", path.display()))?;
    // Compared on the JSON text of the thread (or the whole checkpoint without one), so the
    // tool message's shape is the runtime's to choose.
    let thread = value.get("thread").unwrap_or(&value).to_string();
    check!(
        thread.contains(&needle),
        "when step_completed was reported, the checkpoint's thread did not hold the step's tool result {needle:?} (local-agent-host.md §9.3: written after the tool results are added): {}",
        crate::driver::excerpt(&thread)
    );
    Ok(())
}

// ---- Retry-After ------------------------------------------------------------------------------

/// Measured between the arrivals of the first two model requests at the fake gateway (which
/// answered the first one with the 429 at once), so no runtime event or clock is trusted.
#[then(
    expr = "the gateway received the retry at least {int} second(s) after the rate-limited request"
)]
async fn retry_gap(world: &mut ConformanceWorld, seconds: u64) -> StepResult {
    let fakes = world.started_fakes()?;
    // Bounded by the kit's timeout on top of the delay asked for.
    let budget = world.timeout() + Duration::from_secs(seconds);
    let arrivals = eventually(budget, "the gateway waited for the retry", || async {
        let arrivals = fakes.streaming_gateway.request_arrivals();
        if arrivals.len() >= 2 {
            Ok(arrivals)
        } else {
            Err(format!("{} model request(s) so far", arrivals.len()))
        }
    })
    .await?;
    let gap = arrivals[1].saturating_duration_since(arrivals[0]);
    check!(
        gap >= Duration::from_secs(seconds),
        "the retry reached the gateway {:.3}s after the rate-limited request, but Retry-After asked for {seconds}s",
        gap.as_secs_f64()
    );
    Ok(())
}

// ---- RunCommand's working directory ----------------------------------------------------------

/// `text` with the placeholders of [`expand`] and `${HOME}` (the runtime's fresh HOME, a
/// folder beside the workspace) replaced.
async fn expand_path(world: &mut ConformanceWorld, text: &str) -> anyhow::Result<String> {
    let home = world.dirs()?.home.display().to_string();
    Ok(expand(world, text).await?.replace("${HOME}", &home))
}

#[given(expr = "the policy allows Shell.Exec in {string} but blocks {string}")]
async fn shell_paths(world: &mut ConformanceWorld, allowed: String, blocked: String) -> StepResult {
    let scope = json!({"allowedPaths": [allowed], "blockedPaths": [blocked]});
    grant(world, "Shell.Exec", scope).await?;
    Ok(())
}

#[given(expr = "the model will run {string} with the working directory {string}")]
async fn run_in(world: &mut ConformanceWorld, command: String, cwd: String) -> StepResult {
    let cwd = expand_path(world, &cwd).await?;
    let arguments = json!({"command": command, "cwd": cwd}).to_string();
    push_model_reply(
        world.fakes().await?,
        GatewayReply::ToolCalls {
            text: None,
            calls: vec![ScriptedToolCall::new(RUN_CALL_ID, "RunCommand", arguments)],
        },
    );
    Ok(())
}

/// `folder` relative to the workspace, or absolute after `${HOME}` / `${WORKSPACE}`.
#[then(expr = "no file {string} was made in the folder {string}")]
async fn no_file_made(world: &mut ConformanceWorld, name: String, folder: String) -> StepResult {
    wait_task_end(world).await?;
    let folder = expand_path(world, &folder).await?;
    let path = world.dirs()?.workspace.join(folder).join(&name);
    check!(
        !path.exists(),
        "the denied command ran anyway: it made {}",
        path.display()
    );
    Ok(())
}

// ---- a slow Session Service ------------------------------------------------------------------

/// Sends CreateSession and returns once the Session Service fake has the request, so the
/// runtime is known to be waiting on the service.
#[when("the client creates a session without waiting for the answer")]
async fn create_pending(world: &mut ConformanceWorld) -> StepResult {
    let workspace = world.dirs()?.workspace.clone();
    let params = create_session_params(&workspace);
    world
        .runtime()
        .await?
        .send_request(json!(PENDING_CREATE_ID), "CreateSession", Some(params))
        .await?;
    let timeout = world.timeout();
    let session = &world.started_fakes()?.session;
    eventually(
        timeout,
        "the Session Service got the session creation",
        || async {
            let asked = session
                .requests()
                .await
                .iter()
                .any(|r| r.method == "POST" && r.path == "/sessions");
            if asked {
                Ok(())
            } else {
                Err("no POST /sessions yet".to_owned())
            }
        },
    )
    .await?;
    Ok(())
}

/// GetSessionState is answered first; then CreateSession, whatever its outcome, is waited for
/// (bounded) to compare the two answers' places on stdout.
#[then("the runtime answers GetSessionState before it answers that CreateSession")]
async fn state_before_create(world: &mut ConformanceWorld) -> StepResult {
    let runtime = world.runtime().await?;
    let probe = runtime.fresh_id();
    let state = runtime
        .request_with_id(probe, "GetSessionState", Some(json!({})))
        .await
        .context(
            "GetSessionState was not answered while CreateSession waited for the Session Service",
        )?;
    check!(
        state.get("result").is_some() || state.get("error").is_some(),
        "GetSessionState got neither a result nor an error: {}",
        show(&state)
    );
    let state_seq = runtime.last_response_seq();
    let create = runtime
        .wait_response(&json!(PENDING_CREATE_ID), "CreateSession")
        .await?;
    let create_seq = runtime.last_response_seq();
    check!(
        state_seq < create_seq,
        "GetSessionState was answered only after CreateSession ({}): one slow Session Service call held up every other request",
        show(&create)
    );
    Ok(())
}

// ---- HttpRequest refusals ----------------------------------------------------------------------

/// Refused by the tool's URL validation (INVALID_REQUEST) or by the policy enforcer
/// (CAPABILITY_DENIED): either way never attempted; the message is not judged.
#[then("the HttpRequest call is refused")]
async fn http_refused(world: &mut ConformanceWorld) -> StepResult {
    wait_task_end(world).await?;
    let events = this_task_events(world)?;
    let done = events
        .iter()
        .find(|e| e.event_type() == "tool_completed")
        .with_context(|| {
            format!(
                "no tool_completed; the task's events: {}",
                event_types(&events)
            )
        })?;
    let payload = done.payload();
    let status = str_at(payload, &["status"]).unwrap_or("");
    // errorCode is optional (INTEROP.md §1 lists status and error); when sent it must say why.
    let code = str_at(payload, &["errorCode"]).unwrap_or("INVALID_REQUEST");
    check!(
        matches!(status, "failed" | "denied")
            && matches!(code, "INVALID_REQUEST" | "CAPABILITY_DENIED"),
        "a request to a local address must be refused before it is sent (status failed or denied, errorCode INVALID_REQUEST or CAPABILITY_DENIED): {}",
        show(payload)
    );
    Ok(())
}
