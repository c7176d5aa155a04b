//! Session steps: creation against the Session Service fake (compatible, refused, broken
//! bundles, outages), the session state, and teardown (Shutdown, end of stdin).

use agent_mocks::FaultControl;
use std::path::Path;

use agent_mocks::GatewayReply;
use anyhow::Context;
use cucumber::{given, then, when};
use serde_json::{Value, json};

use super::{StepResult, at, eventually, expect_result, show, str_at};
use crate::world::{ConformanceWorld, SessionInfo};

pub const USER_ID: &str = "user_conformance";
pub const TENANT_ID: &str = "tenant_conformance";
/// What the real desktop app lists (cowork-desktop-app `ipc-handlers.ts`, CreateSession).
pub const CAPABILITIES: &[&str] = &[
    "File.Read",
    "File.Write",
    "File.Delete",
    "Shell.Exec",
    "Network.Http",
    "LLM.Call",
];

/// CreateSession params as the desktop app sends them (architecture.md §6.1).
pub fn create_session_params(workspace: &Path) -> Value {
    json!({
        "userId": USER_ID,
        "tenantId": TENANT_ID,
        "executionEnvironment": "desktop",
        "workspaceHint": {"localPaths": [workspace.display().to_string()]},
        "clientInfo": {
            "desktopAppVersion": "1.0.0",
            "localAgentHostVersion": "1.0.0",
            "osFamily": std::env::consts::OS,
            "osVersion": "conformance",
        },
        "supportedCapabilities": CAPABILITIES,
    })
}

/// Sends CreateSession and keeps the response; remembers the session when it succeeded.
async fn create_session(world: &mut ConformanceWorld) -> anyhow::Result<Value> {
    let workspace = world.dirs()?.workspace.clone();
    let params = create_session_params(&workspace);
    let response = world
        .runtime()
        .await?
        .request("CreateSession", Some(params))
        .await?;
    if let Some(result) = response.get("result") {
        world.session = Some(SessionInfo::from_result(result.clone()));
    }
    world.last_response = Some(response.clone());
    world.last_method = Some("CreateSession".to_owned());
    Ok(response)
}

#[given("a running session")]
async fn running_session(world: &mut ConformanceWorld) -> StepResult {
    let response = create_session(world).await?;
    let result = expect_result(&response, "CreateSession")?;
    check!(
        str_at(result, &["sessionId"]).is_some_and(|s| !s.is_empty()),
        "CreateSession answered without a sessionId: {}",
        show(result)
    );
    Ok(())
}

#[given("a running session that has completed a task")]
async fn session_with_completed_task(world: &mut ConformanceWorld) -> StepResult {
    running_session(world).await?;
    super::push_model_reply(world.fakes().await?, GatewayReply::text("All done here."));
    super::task::start_task(world, "Say that you are done.").await?;
    let event = super::task::wait_task_end(world).await?;
    check!(
        event.event_type() == "task_completed",
        "the preparatory task ended with {} instead of task_completed: {}",
        event.event_type(),
        show(&event.params)
    );
    Ok(())
}

#[when("the client creates a session")]
async fn client_creates_session(world: &mut ConformanceWorld) -> StepResult {
    create_session(world).await?;
    Ok(())
}

/// The real services differ in how they write what is unset (INTEROP.md §3, §5): the fakes
/// can answer as served, with every optional member `null`, or with no `null` anywhere.
#[given(regex = r"^the services write unset members (as-served|verbose|omitted)$")]
async fn services_nulls(world: &mut ConformanceWorld, style: String) -> StepResult {
    let nulls: agent_mocks::Nulls = style.parse().map_err(|e: String| anyhow::anyhow!(e))?;
    let fakes = world.fakes().await?;
    fakes.session.set_nulls(nulls);
    fakes.workspace.set_nulls(nulls);
    Ok(())
}

#[given(expr = "the Session Service answers incompatible because {string}")]
async fn incompatible(world: &mut ConformanceWorld, reason: String) -> StepResult {
    world.fakes().await?.session.answer_incompatible(&reason);
    Ok(())
}

#[given("the Session Service issues a policy bundle that expired an hour ago")]
async fn expired_bundle(world: &mut ConformanceWorld) -> StepResult {
    let past = time::OffsetDateTime::now_utc() - time::Duration::HOUR;
    let past = agent_mocks::rfc3339_micros(past);
    world
        .fakes()
        .await?
        .session
        .update_policy(|bundle| bundle["expiresAt"] = json!(past));
    Ok(())
}

#[given("the Session Service issues a policy bundle for another session")]
async fn foreign_bundle(world: &mut ConformanceWorld) -> StepResult {
    world
        .fakes()
        .await?
        .session
        .update_policy(|bundle| bundle["sessionId"] = json!("sess_somebody_else"));
    Ok(())
}

#[given(expr = "the Session Service issues a policy bundle with schemaVersion {string}")]
async fn bundle_schema_version(world: &mut ConformanceWorld, version: String) -> StepResult {
    world
        .fakes()
        .await?
        .session
        .update_policy(|bundle| bundle["schemaVersion"] = json!(version));
    Ok(())
}

#[given(expr = "the Session Service issues policy bundle version {string}")]
async fn bundle_version(world: &mut ConformanceWorld, version: String) -> StepResult {
    world
        .fakes()
        .await?
        .session
        .update_policy(|bundle| bundle["policyBundleVersion"] = json!(version));
    Ok(())
}

#[given(expr = "the Session Service turns on the feature flag {string}")]
async fn feature_flag(world: &mut ConformanceWorld, flag: String) -> StepResult {
    world
        .fakes()
        .await?
        .session
        .set_feature_flag(&flag, json!(true));
    Ok(())
}

// The real service's resume answer has no featureFlags; the spec's "session metadata"
// (local-agent-host.md §9.5) allows them, so a scenario asks for them.
#[given("the Policy Service grants only the capabilities the runtime asks for")]
async fn grant_only_requested(world: &mut ConformanceWorld) -> StepResult {
    world.fakes().await?.session.set_grant_only_requested(true);
    Ok(())
}

#[given("the Session Service judges the client's versions as the real one does")]
async fn version_gate(world: &mut ConformanceWorld) -> StepResult {
    world.fakes().await?.session.set_version_gate(true);
    Ok(())
}

#[given("the Session Service's resume answers carry its feature flags")]
async fn resume_feature_flags(world: &mut ConformanceWorld) -> StepResult {
    world.fakes().await?.session.set_resume_feature_flags(true);
    Ok(())
}

#[then("the Session Service received the client's identity, capabilities and workspace")]
async fn session_request_forwarded(world: &mut ConformanceWorld) -> StepResult {
    forwarded(world, false).await
}

/// The app sends these only at CreateSession; a session that continues an ended one after
/// a restart must present them again (INTEROP.md §3, §8).
#[then("the new session was created with the client's identity, capabilities and workspace")]
async fn new_session_request_forwarded(world: &mut ConformanceWorld) -> StepResult {
    forwarded(world, true).await
}

/// Checks the first (or the `last`) POST /sessions against what the client sent.
async fn forwarded(world: &mut ConformanceWorld, last: bool) -> StepResult {
    let workspace = world.dirs()?.workspace.display().to_string();
    let requests = world.started_fakes()?.session.requests().await;
    let is_create = |r: &&agent_mocks::RecordedRequest| r.method == "POST" && r.path == "/sessions";
    let create = if last {
        requests.iter().rev().find(is_create)
    } else {
        requests.iter().find(is_create)
    };
    let create = create.with_context(|| {
        format!(
            "the Session Service received no POST /sessions (it saw: {})",
            requests
                .iter()
                .map(|r| format!("{} {}", r.method, r.path))
                .collect::<Vec<_>>()
                .join(", ")
        )
    })?;
    let body = &create.body;
    super::check_service_body(
        "services/session/CreateSessionRequest",
        body,
        "POST /sessions",
    )?;
    let expected = create_session_params(Path::new(&workspace));
    for field in ["tenantId", "userId"] {
        check!(
            body.get(field) == expected.get(field),
            "POST /sessions carries {field} {}, the client sent {}",
            show(body.get(field).unwrap_or(&Value::Null)),
            show(&expected[field])
        );
    }
    for field in ["desktopAppVersion", "localAgentHostVersion", "osFamily"] {
        check!(
            at(body, &["clientInfo", field]) == at(&expected, &["clientInfo", field]),
            "POST /sessions clientInfo.{field} is {}, the client sent {}",
            show(at(body, &["clientInfo", field]).unwrap_or(&Value::Null)),
            show(&expected["clientInfo"][field])
        );
    }
    let sent: Vec<&str> = body
        .get("supportedCapabilities")
        .and_then(Value::as_array)
        .map(|caps| caps.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    for capability in CAPABILITIES {
        check!(
            sent.contains(capability),
            "POST /sessions supportedCapabilities {sent:?} lacks {capability}, which the client supports"
        );
    }
    let paths = at(body, &["workspaceHint", "localPaths"])
        .cloned()
        .unwrap_or(Value::Null);
    check!(
        paths.get(0).and_then(Value::as_str) == Some(workspace.as_str()),
        "POST /sessions workspaceHint.localPaths is {}, the client sent [{workspace:?}]",
        show(&paths)
    );
    Ok(())
}

#[then("the session is running with the ids the Session Service issued")]
async fn session_running(world: &mut ConformanceWorld) -> StepResult {
    let response = world.last_response()?.clone();
    let result = expect_result(&response, "CreateSession")?;
    let fakes = world.started_fakes()?;
    let issued = fakes
        .session
        .session_ids()
        .last()
        .cloned()
        .context("the Session Service never created a session")?;
    let issued_workspace = fakes.session.workspace_id(&issued).unwrap_or_default();
    let expect = |field: &str, want: &str| -> anyhow::Result<()> {
        let got = str_at(result, &[field]);
        check!(
            got == Some(want),
            "CreateSession result {field} is {got:?}, expected {want:?}: {}",
            show(result)
        );
        Ok(())
    };
    expect("sessionId", &issued)?;
    expect("workspaceId", &issued_workspace)?;
    // INTEROP.md §1 names `status` without its values: SESSION_RUNNING is the reference's.
    if super::errors::declares_reference(world)? {
        expect("status", "SESSION_RUNNING")?;
    } else {
        check!(
            str_at(result, &["status"]).is_some_and(|s| !s.is_empty()),
            "CreateSession result carries no status: {}",
            show(result)
        );
    }
    expect("compatibilityStatus", "compatible")?;
    check!(
        result.get("featureFlags").is_some_and(Value::is_object),
        "CreateSession result featureFlags must be an object: {}",
        show(result)
    );
    Ok(())
}

#[then(expr = "the session reports policy bundle version {string}")]
async fn reports_bundle_version(world: &mut ConformanceWorld, version: String) -> StepResult {
    let response = world.last_response()?;
    let result = expect_result(response, "CreateSession")?;
    let got = str_at(result, &["policyBundleVersion"]);
    check!(
        got == Some(version.as_str()),
        "policyBundleVersion is {got:?}, the Session Service issued {version:?}"
    );
    Ok(())
}

#[then(expr = "the session reports the feature flag {string} turned on")]
async fn reports_feature_flag(world: &mut ConformanceWorld, flag: String) -> StepResult {
    let response = world.last_response()?;
    let result = expect_result(response, "CreateSession")?;
    let got = at(result, &["featureFlags", &flag]);
    check!(
        got == Some(&json!(true)),
        "featureFlags.{flag} is {got:?}, the Session Service sent true: {}",
        show(result)
    );
    Ok(())
}

#[then("the runtime reports session_started for the new session")]
async fn reports_session_started(world: &mut ConformanceWorld) -> StepResult {
    let session = world.session()?.clone();
    let timeout = world.timeout();
    let runtime = world.started_runtime()?;
    runtime
        .wait_for_event("session_started for the new session", timeout, |e| {
            e.event_type() == "session_started"
                && e.str_field("sessionId") == Some(session.session_id.as_str())
        })
        .await?;
    Ok(())
}

#[when("the client asks for the session state")]
async fn asks_state(world: &mut ConformanceWorld) -> StepResult {
    let session_id = world.session()?.session_id.clone();
    let response = world
        .runtime()
        .await?
        .request("GetSessionState", Some(json!({"sessionId": session_id})))
        .await?;
    world.last_response = Some(response);
    world.last_method = Some("GetSessionState".to_owned());
    Ok(())
}

#[then(expr = "the session state reports the session as {word}")]
async fn state_session_status(world: &mut ConformanceWorld, status: String) -> StepResult {
    let response = world.last_response()?;
    let result = expect_result(response, "GetSessionState")?;
    for field in ["sessionStatus", "status"] {
        let got = str_at(result, &[field]);
        check!(
            got == Some(status.as_str()),
            "GetSessionState {field} is {got:?}, expected {status:?}: {}",
            show(result)
        );
    }
    Ok(())
}

// ---- teardown --------------------------------------------------------------------------------

pub(super) const UPLOADS_AT_SHUTDOWN: &str = "uploads at shutdown";

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
pub(super) async fn session_cancelled_at_service(
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
    super::check_service_body(
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
pub(super) async fn shutdown_history(world: &ConformanceWorld) -> anyhow::Result<Value> {
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
