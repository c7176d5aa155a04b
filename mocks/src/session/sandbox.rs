//! The sandbox side of the Session Service fake (INTEROP.md §9; the real service's
//! `create_session` for `cloud_sandbox` and `register_sandbox`): a session provisioned for a
//! sandbox waits in `SANDBOX_PROVISIONING` with a registration token until the sandbox
//! registers (`POST /sessions/{id}/register`), which answers with the session's policy
//! bundle and moves it to `SANDBOX_READY`.

use serde_json::{Value, json};
use time::OffsetDateTime;
use wiremock::{Request, ResponseTemplate};

use super::routes::{error, session_id_of, session_not_found};
use super::{DAY, SessionRecord, State};
use crate::fastapi::{Fields, object_body};
use crate::faults::json_template;
use crate::util::new_uuid;

/// What the service hands the sandbox it launches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxLaunch {
    pub session_id: String,
    pub workspace_id: String,
    pub registration_token: String,
}

/// What a sandbox registration left behind.
#[derive(Debug, Clone, Default)]
pub(crate) struct Registration {
    pub token: String,
    pub expected_task_arn: Option<String>,
    pub endpoint: Option<String>,
    pub task_arn: Option<String>,
    pub attempts: u32,
}

pub(super) fn provision(state: &mut State, tenant_id: &str, user_id: &str) -> SandboxLaunch {
    let now = OffsetDateTime::now_utc();
    let launch = SandboxLaunch {
        session_id: new_uuid(),
        workspace_id: new_uuid(),
        registration_token: new_uuid(),
    };
    state.sessions.push(SessionRecord {
        session_id: launch.session_id.clone(),
        workspace_id: launch.workspace_id.clone(),
        tenant_id: tenant_id.to_owned(),
        user_id: user_id.to_owned(),
        execution_environment: "cloud_sandbox".to_owned(),
        status: "SANDBOX_PROVISIONING".to_owned(),
        name: String::new(),
        auto_named: true,
        capabilities: Vec::new(),
        created_at: now,
        expires_at: now + time::Duration::try_from(DAY).unwrap_or(time::Duration::DAY),
    });
    state.registrations.insert(
        launch.session_id.clone(),
        Registration {
            token: launch.registration_token.clone(),
            ..Registration::default()
        },
    );
    launch
}

/// `409 SANDBOX_REGISTRATION_FAILED`, the real service's answer to every refusal.
fn refused(message: &str) -> ResponseTemplate {
    error(409, "SANDBOX_REGISTRATION_FAILED", message)
}

pub(super) fn register(state: &mut State, request: &Request) -> ResponseTemplate {
    let body = match object_body(request) {
        Ok(body) => body,
        Err(answer) => return *answer,
    };
    let mut fields = Fields::new(&body);
    let endpoint = fields.string("sandboxEndpoint", true, 1, None);
    let task_arn = fields.string("taskArn", true, 1, None);
    if let Err(answer) = fields.finish() {
        return *answer;
    }
    let token = body.get("registrationToken").and_then(Value::as_str);
    let (Some(endpoint), Some(task_arn)) = (endpoint, task_arn) else {
        return error(500, "INTERNAL_ERROR", "Internal server error");
    };
    if !(endpoint.starts_with("http://") || endpoint.starts_with("https://")) {
        return error(
            422,
            "VALIDATION_ERROR",
            "sandboxEndpoint must match ^https?://.+",
        );
    }
    let session_id = session_id_of(request);
    let Some(status) = state.session(&session_id).map(|s| s.status.clone()) else {
        return session_not_found(&session_id);
    };
    let Some(registration) = state.registrations.get_mut(&session_id) else {
        return refused("Cannot register sandbox: session is not a sandbox session");
    };
    registration.attempts += 1;
    if status != "SANDBOX_PROVISIONING" {
        return refused(&format!(
            "Cannot register sandbox: session is in {status} state, expected SANDBOX_PROVISIONING"
        ));
    }
    match token {
        None | Some("") => return refused("Registration token is required"),
        Some(token) if token != registration.token => {
            return refused("Registration token mismatch");
        }
        Some(_) => {}
    }
    if let Some(expected) = &registration.expected_task_arn
        && *expected != task_arn
    {
        return refused(&format!(
            "Task ARN mismatch: expected {expected}, got {task_arn}"
        ));
    }
    registration.endpoint = Some(endpoint.clone());
    registration.task_arn = Some(task_arn);
    let bundle = state.bundle_for(&session_id);
    let workspace_service_url = state.sandbox_workspace_service_url.clone();
    let Some(session) = state.session_mut(&session_id) else {
        return session_not_found(&session_id);
    };
    session.status = "SANDBOX_READY".to_owned();
    let answer = json!({
        "sessionId": session.session_id,
        "workspaceId": session.workspace_id,
        "workspaceServiceUrl": workspace_service_url,
        "llmGatewayEndpoint": "",
        "policyBundle": bundle,
    });
    if let Some(sender) = &state.registered {
        let _ = sender.send(Some(endpoint));
    }
    json_template(200, &answer)
}
