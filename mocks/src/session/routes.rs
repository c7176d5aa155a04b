//! The session routes (cowork-session-service `routes/sessions.py` →
//! `services/session_service.py`).

use serde_json::{Map, Value, json};
use time::OffsetDateTime;
use wiremock::{Request, ResponseTemplate};

use super::{DAY, SessionRecord, State};
use crate::fastapi::{Fields, object_body};
use crate::faults::json_template;
use crate::recording::RecordedRequest;
use crate::util::{new_uuid, python_iso, service_error};

/// The real `SessionState` transitions into `SESSION_RUNNING` (resume) and
/// `SESSION_CANCELLED` (cancel), from `models/domain.py` `VALID_TRANSITIONS`.
fn can_resume(status: &str) -> bool {
    matches!(
        status,
        "SESSION_RUNNING"
            | "SESSION_CREATED"
            | "WAITING_FOR_LLM"
            | "WAITING_FOR_TOOL"
            | "WAITING_FOR_APPROVAL"
            | "SESSION_PAUSED"
            | "SESSION_COMPLETED"
            | "SESSION_FAILED"
            | "SANDBOX_READY"
    )
}

fn can_cancel(status: &str) -> bool {
    matches!(
        status,
        "SESSION_CREATED"
            | "SESSION_RUNNING"
            | "WAITING_FOR_LLM"
            | "WAITING_FOR_TOOL"
            | "WAITING_FOR_APPROVAL"
            | "SESSION_PAUSED"
            | "SANDBOX_PROVISIONING"
            | "SANDBOX_READY"
    )
}

/// The `{id}` of `/sessions/{id}/...`.
pub(super) fn session_id_of(request: &Request) -> String {
    segment(request, 1)
}

pub(super) fn segment(request: &Request, index: usize) -> String {
    RecordedRequest::segments(request.url.path())
        .get(index)
        .map(|id| (*id).to_string())
        .unwrap_or_default()
}

pub(super) fn session_not_found(session_id: &str) -> ResponseTemplate {
    let message = format!("Session not found: {session_id}");
    error(404, "SESSION_NOT_FOUND", &message)
}

/// `{code, message, retryable}`, retryable exactly when the status is 5xx (`main.py`).
pub(super) fn error(status: u16, code: &str, message: &str) -> ResponseTemplate {
    json_template(status, &service_error(code, message, status >= 500))
}

fn is_object(value: &Value) -> bool {
    value.is_object()
}

fn is_string_list(value: &Value) -> bool {
    value
        .as_array()
        .is_some_and(|items| items.iter().all(Value::is_string))
}

pub(super) fn create(state: &mut State, request: &Request) -> ResponseTemplate {
    let body = match object_body(request) {
        Ok(body) => body,
        Err(answer) => return *answer,
    };
    let mut fields = Fields::new(&body);
    let tenant_id = fields.string("tenantId", true, 1, None);
    let user_id = fields.string("userId", true, 1, None);
    let environment = fields.literal(
        "executionEnvironment",
        &["desktop", "cloud_sandbox"],
        Some("desktop"),
    );
    fields.nullable_kind("workspaceHint", is_object, "dict");
    fields.defaulted_kind("clientInfo", is_object, "dict");
    fields.defaulted_kind("supportedCapabilities", is_string_list, "list");
    if let Err(answer) = fields.finish() {
        return *answer;
    }
    let (Some(tenant_id), Some(user_id), Some(environment)) = (tenant_id, user_id, environment)
    else {
        return error(500, "INTERNAL_ERROR", "Internal server error");
    };
    if tenant_id.trim().is_empty() || user_id.trim().is_empty() {
        return error(400, "INVALID_REQUEST", "tenantId and userId are required");
    }
    let sandbox = environment == "cloud_sandbox";
    let incompatible = if sandbox {
        None
    } else {
        state
            .incompatible
            .clone()
            .or_else(|| state.version_gate.then(|| version_gate(&body)).flatten())
    };
    let hint = body.get("workspaceHint");
    let workspace_id = match (
        hint.and_then(|hint| hint.get("workspaceId"))
            .and_then(Value::as_str),
        hint.and_then(|hint| hint.get("localPaths")),
    ) {
        (Some(workspace_id), _) if !workspace_id.is_empty() => workspace_id.to_string(),
        // Python truthiness: `localPaths: []` (or null) is a general chat, not an error.
        (_, Some(paths)) if !sandbox && truthy(paths) => {
            let Some(project) = paths.get(0).and_then(Value::as_str) else {
                let message = "workspaceHint.localPaths must be a non-empty list";
                return error(400, "INVALID_REQUEST", message);
            };
            state
                .workspaces
                .entry(format!("{tenant_id}#{user_id}#{project}"))
                .or_insert_with(new_uuid)
                .clone()
        }
        _ => new_uuid(),
    };
    let status = match (sandbox, &incompatible) {
        (true, _) => "SANDBOX_PROVISIONING",
        (false, None) => "SESSION_RUNNING",
        (false, Some(_)) => "SESSION_CREATED",
    };
    let now = OffsetDateTime::now_utc();
    let session_id = new_uuid();
    state.sessions.push(SessionRecord {
        session_id: session_id.clone(),
        workspace_id: workspace_id.clone(),
        tenant_id,
        user_id,
        execution_environment: environment,
        status: status.to_string(),
        name: String::new(),
        auto_named: true,
        capabilities: body
            .get("supportedCapabilities")
            .and_then(Value::as_array)
            .map(|names| {
                names
                    .iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default(),
        created_at: now,
        expires_at: now + time::Duration::try_from(DAY).unwrap_or(time::Duration::DAY),
    });
    let mut answer = Map::new();
    answer.insert("sessionId".into(), json!(session_id));
    answer.insert("workspaceId".into(), json!(workspace_id));
    let compatibility = if incompatible.is_some() {
        "incompatible"
    } else {
        "compatible"
    };
    answer.insert("compatibilityStatus".into(), json!(compatibility));
    answer.insert("name".into(), json!(""));
    if !sandbox && incompatible.is_none() {
        answer.insert("policyBundle".into(), state.bundle_for(&session_id));
    }
    if let Some(reason) = incompatible {
        answer.insert("incompatibilityReason".into(), json!(reason));
    }
    answer.insert("featureFlags".into(), state.feature_flags.clone());
    if sandbox {
        answer.insert("status".into(), json!(status));
    }
    let mut answer = Value::Object(answer);
    state
        .nulls
        .apply(&mut answer, &["policyBundle", "incompatibilityReason"]);
    json_template(201, &answer)
}

/// Whether Python would take this JSON value as true (`if value:`).
fn truthy(value: &Value) -> bool {
    match value {
        Value::Null => false,
        Value::Bool(value) => *value,
        Value::Number(number) => number.as_f64().is_some_and(|n| n != 0.0),
        Value::String(text) => !text.is_empty(),
        Value::Array(items) => !items.is_empty(),
        Value::Object(members) => !members.is_empty(),
    }
}

/// The reason the real `check_compatibility` gives, if any (minimum versions 0.1.0).
fn version_gate(body: &Map<String, Value>) -> Option<String> {
    let info = body.get("clientInfo");
    let version = |key: &str| {
        info.and_then(|info| info.get(key))
            .and_then(Value::as_str)
            .unwrap_or("0.0.0")
            .to_string()
    };
    for (key, who) in [
        ("desktopAppVersion", ("Desktop App", "desktop app")),
        ("localAgentHostVersion", ("Agent Host", "agent host")),
    ] {
        let given = version(key);
        match parse_version(&given) {
            None => return Some(format!("Invalid {} version: {given}", who.1)),
            Some(parsed) if parsed < (0, 1, 0) => {
                return Some(format!("{} version {given} < minimum 0.1.0", who.0));
            }
            Some(_) => {}
        }
    }
    let capabilities = body
        .get("supportedCapabilities")
        .and_then(Value::as_array)
        .map_or(0, Vec::len);
    (capabilities == 0).then(|| "Client must support at least one capability".to_string())
}

/// `major.minor.patch` (missing parts 0), enough of PEP 440 for the gate.
fn parse_version(text: &str) -> Option<(u64, u64, u64)> {
    let mut parts = text.trim().split('.').map(|part| part.parse::<u64>().ok());
    let major = parts.next().flatten()?;
    let minor = parts.next().unwrap_or(Some(0))?;
    let patch = parts.next().unwrap_or(Some(0))?;
    Some((major, minor, patch))
}

pub(super) fn resume(state: &mut State, request: &Request) -> ResponseTemplate {
    let session_id = session_id_of(request);
    let incompatible = state.incompatible.clone();
    let Some(session) = state.session_mut(&session_id) else {
        return session_not_found(&session_id);
    };
    if !can_resume(&session.status) {
        let message = format!("Cannot resume session in {} state", session.status);
        return error(409, "INVALID_REQUEST", &message);
    }
    let now = OffsetDateTime::now_utc();
    if now >= session.expires_at {
        session.status = "SESSION_FAILED".into();
        return error(409, "INVALID_REQUEST", "Session has expired");
    }
    if let Some(reason) = incompatible {
        return error(400, "INVALID_REQUEST", &reason);
    }
    session.status = "SESSION_RUNNING".into();
    session.expires_at = now + time::Duration::try_from(DAY).unwrap_or(time::Duration::DAY);
    let workspace_id = session.workspace_id.clone();
    let mut answer = json!({
        "sessionId": session_id,
        "workspaceId": workspace_id,
        "compatibilityStatus": "compatible",
        "policyBundle": state.bundle_for(&session_id),
    });
    if state.resume_feature_flags {
        answer["featureFlags"] = state.feature_flags.clone();
    }
    state.nulls.apply(&mut answer, &[]);
    json_template(200, &answer)
}

pub(super) fn cancel(state: &mut State, request: &Request) -> ResponseTemplate {
    let session_id = session_id_of(request);
    let Some(session) = state.session_mut(&session_id) else {
        return session_not_found(&session_id);
    };
    if !can_cancel(&session.status) {
        let message = format!("Cannot cancel session in {} state", session.status);
        return error(409, "INVALID_REQUEST", &message);
    }
    session.status = "SESSION_CANCELLED".into();
    ResponseTemplate::new(204)
}

pub(super) fn get(state: &mut State, request: &Request) -> ResponseTemplate {
    let session_id = session_id_of(request);
    let Some(session) = state.session(&session_id) else {
        return session_not_found(&session_id);
    };
    let mut answer = json!({
        "sessionId": session.session_id,
        "workspaceId": session.workspace_id,
        "tenantId": session.tenant_id,
        "userId": session.user_id,
        "executionEnvironment": session.execution_environment,
        "status": session.status,
        "name": session.name,
        "autoNamed": session.auto_named,
        "createdAt": python_iso(session.created_at),
        "expiresAt": python_iso(session.expires_at),
    });
    // Sandbox members the real service adds only once set.
    state.nulls.apply(
        &mut answer,
        &["sandboxEndpoint", "networkAccess", "lastActivityAt"],
    );
    json_template(200, &answer)
}

pub(super) fn rename(state: &mut State, request: &Request) -> ResponseTemplate {
    let body = match object_body(request) {
        Ok(body) => body,
        Err(answer) => return *answer,
    };
    let mut fields = Fields::new(&body);
    let name = fields.string("name", true, 1, Some(200));
    let auto_named = fields.boolean("autoNamed", true);
    if let Err(answer) = fields.finish() {
        return *answer;
    }
    let session_id = session_id_of(request);
    let Some(session) = state.session_mut(&session_id) else {
        return session_not_found(&session_id);
    };
    let name = name.unwrap_or_default();
    session.name = name.clone();
    session.auto_named = auto_named;
    json_template(
        200,
        &json!({"sessionId": session_id, "name": name, "autoNamed": auto_named}),
    )
}
