//! Session steps: creation against the Session Service fake (compatible, refused, broken
//! bundles, outages), what the service was told, and the session state.

pub(crate) mod continued;
pub(crate) mod end;
pub(crate) mod history;
pub(crate) mod pause;
pub(crate) mod restarts;

use std::path::Path;

use agent_mocks::{FaultControl, GatewayReply};
use anyhow::Context;
use cucumber::{given, then, when};
use serde_json::{Value, json};

use crate::steps::support::model::push_model_reply;
use crate::steps::support::task::barrier;
use crate::steps::support::{
    StepResult, at, check_service_body, declares_reference, eventually, expect_result, show, str_at,
};
use crate::steps::task::{app_task_id, start_task, wait_task_end};
use crate::world::{ConformanceWorld, SessionInfo};

use crate::contract::{TENANT_ID, USER_ID};

/// What the real desktop app lists (cowork-desktop-app `ipc-handlers.ts`, CreateSession).
pub(crate) const CAPABILITIES: &[&str] = &[
    "File.Read",
    "File.Write",
    "File.Delete",
    "Shell.Exec",
    "Network.Http",
    "LLM.Call",
];

/// CreateSession params as the desktop app sends them (architecture.md §6.1).
pub(crate) fn create_session_params(
    workspace: &Path,
    os: crate::runtime_manifest::RuntimeOs,
) -> Value {
    json!({
        "userId": USER_ID,
        "tenantId": TENANT_ID,
        "executionEnvironment": "desktop",
        "workspaceHint": {"localPaths": [workspace.display().to_string()]},
        "clientInfo": {
            "desktopAppVersion": "1.0.0",
            "localAgentHostVersion": "1.0.0",
            "osFamily": os.family(),
            "osVersion": "conformance",
        },
        "supportedCapabilities": CAPABILITIES,
    })
}

/// Sends CreateSession and keeps the response; remembers the session when it succeeded.
async fn create_session(world: &mut ConformanceWorld) -> anyhow::Result<Value> {
    let workspace = world.dirs()?.workspace.clone();
    let params = create_session_params(&workspace, world.runtime_os());
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
    push_model_reply(world.fakes().await?, GatewayReply::text("All done here."));
    start_task(world, "Say that you are done.").await?;
    let event = wait_task_end(world).await?;
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
    check_service_body(
        "services/session/CreateSessionRequest",
        body,
        "POST /sessions",
    )?;
    let expected = create_session_params(Path::new(&workspace), world.runtime_os());
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
    if declares_reference(world)? {
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
    let started = runtime
        .wait_for_event("session_started for the new session", timeout, |e| {
            e.event_type() == "session_started"
                && e.str_field("sessionId")
                    .is_none_or(|id| id == session.session_id)
        })
        .await?;
    // One defect, one verdict: a session_started without sessionId is the envelope's
    // defect (REQ-EVT-004 judges every event's ID chain), not a missing announcement.
    if started.str_field("sessionId").is_none() {
        return Err(anyhow::anyhow!(
            "{} the session_started event has no sessionId to tell which session it announces; that is REQ-EVT-004's finding",
            crate::contract::NOT_JUDGED
        )
        .into());
    }
    Ok(())
}

/// The whole response to GetSessionState for this session.
pub(crate) async fn session_state(world: &mut ConformanceWorld) -> anyhow::Result<Value> {
    let session_id = world.session()?.session_id.clone();
    world
        .runtime()
        .await?
        .request("GetSessionState", Some(json!({"sessionId": session_id})))
        .await
}

#[when("the client asks for the session state")]
async fn asks_state(world: &mut ConformanceWorld) -> StepResult {
    let response = session_state(world).await?;
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

/// The id of the CreateSession sent without waiting (a string: no clash with the driver's
/// numeric ids).
const PENDING_CREATE_ID: &str = "create-pending-1";

/// Sends CreateSession and returns once the Session Service fake has the request, so the
/// runtime is known to be waiting on the service.
#[when("the client creates a session without waiting for the answer")]
async fn create_pending(world: &mut ConformanceWorld) -> StepResult {
    let workspace = world.dirs()?.workspace.clone();
    let params = create_session_params(&workspace, world.runtime_os());
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

#[then("the runtime reported no session_started")]
async fn no_session_started(world: &mut ConformanceWorld) -> StepResult {
    barrier(world).await?;
    let events = world.started_runtime()?.events();
    let started: Vec<_> = events
        .iter()
        .filter(|e| e.event_type() == "session_started")
        .collect();
    check!(
        started.is_empty(),
        "a session whose policy bundle failed validation must not start, yet the runtime reported session_started for {:?}",
        started.first().and_then(|e| e.str_field("sessionId"))
    );
    Ok(())
}

#[when("the client tries to start a task in the session the Session Service created")]
async fn start_in_created_session(world: &mut ConformanceWorld) -> StepResult {
    let session_id = world
        .started_fakes()?
        .session
        .session_ids()
        .last()
        .cloned()
        .context("the Session Service created no session")?;
    let response = world
        .runtime()
        .await?
        .request(
            "StartTask",
            Some(json!({
                "sessionId": session_id,
                "taskId": app_task_id(),
                "prompt": "Say hello.",
            })),
        )
        .await?;
    world.last_response = Some(response);
    world.last_method = Some("StartTask".to_owned());
    Ok(())
}

#[then("the Session Service was told the execution environment and the runtime's tools")]
async fn handshake_environment_and_tools(world: &mut ConformanceWorld) -> StepResult {
    let requests = world.started_fakes()?.session.requests().await;
    let create = requests
        .iter()
        .find(|r| r.method == "POST" && r.path == "/sessions")
        .context("the Session Service received no POST /sessions")?;
    let body = &create.body;
    check!(
        str_at(body, &["executionEnvironment"]) == Some("desktop"),
        "POST /sessions must carry the executionEnvironment the client sent (\"desktop\"), got {}",
        show(body.get("executionEnvironment").unwrap_or(&Value::Null))
    );
    let tools: Vec<&str> = body
        .get("supportedTools")
        .and_then(Value::as_array)
        .map(|tools| tools.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    for tool in ["ReadFile", "WriteFile"] {
        check!(
            tools.contains(&tool),
            "POST /sessions must list the runtime's tools in supportedTools (system-design.md §6, §12.1); {tool} is missing: {}",
            show(body.get("supportedTools").unwrap_or(&Value::Null))
        );
    }
    Ok(())
}

#[given(expr = "a running session created on {string}")]
async fn session_on_os(world: &mut ConformanceWorld, os_family: String) -> StepResult {
    let workspace = world.dirs()?.workspace.clone();
    let mut params = create_session_params(&workspace, world.runtime_os());
    params["clientInfo"]["osFamily"] = json!(os_family);
    let response = world
        .runtime()
        .await?
        .request("CreateSession", Some(params))
        .await?;
    let result = expect_result(&response, "CreateSession")?.clone();
    world.session = Some(crate::world::SessionInfo::from_result(result));
    Ok(())
}
