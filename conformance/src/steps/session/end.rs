//! How a session ends (local-agent-host.md §3.3; system-design.md §8a): Shutdown, end of stdin,
//! the cancel the Session Service receives, the history uploaded last, and session_completed.

use agent_mocks::FaultControl;
use cucumber::{then, when};
use serde_json::Value;

use crate::steps::session::create_session_params;
use crate::steps::support::{
    StepResult, check_service_body, declares_reference, eventually, expect_result, show, str_at,
};
use crate::world::{ConformanceWorld, SessionInfo};

pub(crate) const UPLOADS_AT_SHUTDOWN: &str = "uploads at shutdown";

async fn remember_uploads(world: &mut ConformanceWorld) -> anyhow::Result<()> {
    let count = world.fakes().await?.workspace.uploads().await.len();
    world.marks.insert(UPLOADS_AT_SHUTDOWN, count);
    Ok(())
}

#[when("the client sends Shutdown without params")]
async fn sends_shutdown(world: &mut ConformanceWorld) -> StepResult {
    remember_uploads(world).await?;
    // The desktop app sends Shutdown with no params member at all (INTEROP.md §1).
    let runtime = world.runtime().await?;
    let id = runtime.fresh_id();
    runtime.send_request(id.clone(), "Shutdown", None).await?;
    let response = runtime.wait_response(&id, "Shutdown").await?;
    world.last_response = Some(response);
    world.last_method = Some("Shutdown".to_owned());
    Ok(())
}

#[when("the client closes the runtime's stdin")]
async fn closes_stdin(world: &mut ConformanceWorld) -> StepResult {
    remember_uploads(world).await?;
    world.runtime().await?.close_stdin().await?;
    Ok(())
}

#[then("the runtime answers Shutdown with a success result")]
async fn shutdown_answered(world: &mut ConformanceWorld) -> StepResult {
    let response = world.last_response()?;
    expect_result(response, "Shutdown")?;
    Ok(())
}

#[then(expr = "the runtime exits with code {int}")]
async fn exits_with(world: &mut ConformanceWorld, code: i32) -> StepResult {
    let timeout = world.timeout();
    let status = world.started_runtime()?.wait_exit(timeout).await?;
    check!(
        status.code() == Some(code),
        "the runtime exited with {status}, expected exit code {code}"
    );
    Ok(())
}

/// Waits (bounded) for the process to end, so that everything it does on the way out has
/// reached the fakes; a runtime that never exits fails its own step, not this one.
async fn after_exit(world: &ConformanceWorld) -> anyhow::Result<()> {
    let _ = world.started_runtime()?.wait_exit(world.timeout()).await;
    Ok(())
}

#[then("the Session Service receives a cancel for the session with a reason")]
async fn cancel_received(world: &mut ConformanceWorld) -> StepResult {
    session_cancelled_at_service(world).await?;
    Ok(())
}

/// The session ended SESSION_CANCELLED as the documents let anyone see it: the Session
/// Service received `POST /sessions/{id}/cancel` with a reason (local-agent-host.md §3.4,
/// INTEROP.md §8). The `session_cancelled` event is the reference runtime's.
pub(crate) async fn session_cancelled_at_service(
    world: &mut ConformanceWorld,
) -> anyhow::Result<()> {
    after_exit(world).await?;
    let session_id = world.session()?.session_id.clone();
    let path = format!("/sessions/{session_id}/cancel");
    let fakes = world.started_fakes()?;
    let found = eventually(
        world.timeout(),
        &format!("the Session Service saw no POST {path}"),
        || async {
            let requests = fakes.session.requests().await;
            requests
                .into_iter()
                .find(|r| r.method == "POST" && r.path == path)
                .ok_or_else(|| "no such request yet".to_owned())
        },
    )
    .await?;
    check_service_body(
        "services/session/CancelSessionRequest",
        &found.body,
        &format!("POST {path}"),
    )?;
    check!(
        found
            .body
            .get("reason")
            .and_then(Value::as_str)
            .is_some_and(|r| !r.trim().is_empty()),
        "POST {path} must carry a reason: {}",
        found.body_text()
    );
    Ok(())
}

/// The last session_history of the current session uploaded since Shutdown was sent,
/// waited for once the runtime has exited (everything it did on its way out has then
/// reached the fakes).
pub(crate) async fn shutdown_history(world: &ConformanceWorld) -> anyhow::Result<Value> {
    after_exit(world).await?;
    let before = world.marks.get(UPLOADS_AT_SHUTDOWN).copied().unwrap_or(0);
    let session_id = world.session()?.session_id.clone();
    let fakes = world.started_fakes()?;
    eventually(
        world.timeout(),
        "no session_history was uploaded after Shutdown",
        || async {
            let uploads = fakes.workspace.uploads().await;
            uploads
                .iter()
                .skip(before)
                .rfind(|u| {
                    str_at(u, &["artifactType"]) == Some("session_history")
                        && str_at(u, &["sessionId"]) == Some(session_id.as_str())
                })
                .cloned()
                .ok_or_else(|| {
                    format!(
                        "{} upload(s) since Shutdown, none a session_history of this session",
                        uploads.len().saturating_sub(before)
                    )
                })
        },
    )
    .await
}

#[then("the Workspace Service receives a session_history upload made after Shutdown")]
async fn history_after_shutdown(world: &mut ConformanceWorld) -> StepResult {
    let upload = shutdown_history(world).await?;
    // The upload is the §8a body, checked against its schema like every message.
    if let Err(error) = agent_schemas::validate("artifacts/SessionHistory", &upload) {
        return Err(anyhow::anyhow!(
            "the session_history uploaded at Shutdown breaks artifacts/SessionHistory: {error}"
        )
        .into());
    }
    Ok(())
}

#[then("the runtime reports session_completed for the session")]
async fn reports_session_completed(world: &mut ConformanceWorld) -> StepResult {
    let session_id = world.session()?.session_id.clone();
    let timeout = world.timeout();
    let event = world
        .started_runtime()?
        .wait_for_event("session_completed", timeout, |e| {
            e.event_type() == "session_completed" || e.event_type() == "session_cancelled"
        })
        .await?;
    check!(
        event.event_type() == "session_completed",
        "an idle session ends with session_completed, the runtime reported {}",
        event.event_type()
    );
    check!(
        event.str_field("sessionId") == Some(session_id.as_str()),
        "session_completed names session {:?}, expected {session_id:?}",
        event.str_field("sessionId")
    );
    Ok(())
}

/// A general chat: the desktop app sends no `workspaceHint` (INTEROP.md §1).
#[when("the client creates a session without a project folder")]
async fn create_without_folder(world: &mut ConformanceWorld) -> StepResult {
    let workspace = world.dirs()?.workspace.clone();
    let mut params = create_session_params(&workspace, world.runtime_os());
    if let Some(object) = params.as_object_mut() {
        object.remove("workspaceHint");
    }
    let response = world
        .runtime()
        .await?
        .request("CreateSession", Some(params))
        .await?;
    let result = expect_result(&response, "CreateSession without a workspaceHint")?.clone();
    world.session = Some(SessionInfo::from_result(result));
    world.last_response = Some(response);
    world.last_method = Some("CreateSession".to_owned());
    Ok(())
}

/// The session's end event, whichever it is (waits for it).
async fn session_end(world: &ConformanceWorld) -> anyhow::Result<crate::driver::ReceivedEvent> {
    let session_id = world.session()?.session_id.clone();
    let runtime = world.started_runtime()?;
    let event = runtime
        .wait_for_event("the session's end", world.timeout(), |e| {
            matches!(
                e.event_type(),
                "session_completed" | "session_cancelled" | "session_failed"
            ) && e.str_field("sessionId") == Some(session_id.as_str())
        })
        .await?;
    Ok(event)
}

#[then("the runtime reports session_cancelled for the session")]
async fn reports_session_cancelled(world: &mut ConformanceWorld) -> StepResult {
    let event = session_end(world).await?;
    // The documents name no event for SESSION_CANCELLED and INTEROP.md §8 asks for no
    // Session Service cancel without a running task: for another runtime the session's end
    // is all there is to see; `session_cancelled` is the reference runtime's.
    if !declares_reference(world)? {
        return Ok(());
    }
    check!(
        event.event_type() == "session_cancelled",
        "a paused session that is shut down ends SESSION_CANCELLED (local-agent-host.md §3.3: PAUSED → CANCELLED); the runtime reported {}",
        event.event_type()
    );
    Ok(())
}

#[then(expr = "session_completed counts {int} task(s) and {int} tokens")]
async fn session_completed_counts(
    world: &mut ConformanceWorld,
    tasks: u64,
    tokens: u64,
) -> StepResult {
    let event = session_end(world).await?;
    check!(
        event.event_type() == "session_completed",
        "an idle session ends with session_completed, the runtime reported {}",
        event.event_type()
    );
    let payload = event.payload();
    let number = |field: &str| payload.get(field).and_then(Value::as_u64);
    // A payload without the members is REQ-MSG-102's finding; the counts are this one's.
    if ["taskCount", "totalTokens"]
        .iter()
        .any(|m| payload.get(*m).is_none())
    {
        fail!(
            "{} session_completed carries no taskCount/totalTokens to count with; that is REQ-MSG-102's finding: {}",
            crate::contract::NOT_JUDGED,
            show(payload)
        );
    }
    check!(
        number("taskCount") == Some(tasks),
        "session_completed.taskCount is {:?}, expected {tasks}: {}",
        number("taskCount"),
        show(payload)
    );
    check!(
        number("totalTokens") == Some(tokens),
        "session_completed.totalTokens is {:?}, expected {tokens} (the gateway's usage, input plus output): {}",
        number("totalTokens"),
        show(payload)
    );
    Ok(())
}

#[then(expr = "the session state reports {int} session tokens used of {int}")]
async fn state_tokens(world: &mut ConformanceWorld, used: u64, max: u64) -> StepResult {
    let result = expect_result(world.last_response()?, "GetSessionState")?;
    let number = |field: &str| result.get(field).and_then(Value::as_u64);
    check!(
        number("sessionTokensUsed") == Some(used),
        "GetSessionState sessionTokensUsed is {:?}, expected {used} (the gateway's usage, input plus output): {}",
        number("sessionTokensUsed"),
        show(result)
    );
    check!(
        number("maxSessionTokens") == Some(max),
        "GetSessionState maxSessionTokens is {:?}, expected the policy's {max}: {}",
        number("maxSessionTokens"),
        show(result)
    );
    Ok(())
}
