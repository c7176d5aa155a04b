//! The Session Service fake (INTEROP.md §3) on wiremock: creates and resumes sessions,
//! serves policy bundles from a template (see [`crate::policy`]), records task records, and
//! can be made to refuse, fail or disappear.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use wiremock::matchers::{method, path, path_regex};
use wiremock::{Mock, MockBuilder, Request, ResponseTemplate};

use crate::faults::{FaultQueue, json_template};
use crate::host::WiremockHost;
use crate::policy::{BundleValues, default_policy_template, new_bundle_version, render_bundle};
use crate::recording::RecordedRequest;
use crate::util::{lock, new_id, now_rfc3339, rfc3339_micros, service_error, validation_error};

struct State {
    template: Value,
    version: String,
    bundle_ttl: Duration,
    /// `expiresAt` of the latest bundle served, so a scenario can wait for exactly that instant.
    last_expiry: std::cell::Cell<Option<time::OffsetDateTime>>,
    incompatible: Option<String>,
    feature_flags: Value,
    sessions: Vec<SessionRecord>,
    /// A local workspace is reused by every session on the same project (system-design.md
    /// §2a): the first local path → its workspace id.
    workspaces: std::collections::HashMap<String, String>,
}

struct SessionRecord {
    session_id: String,
    workspace_id: String,
    tenant_id: String,
    user_id: String,
    name: String,
    created_at: String,
    expired: bool,
    cancelled: bool,
    tasks: Vec<Value>,
}

impl State {
    fn session_mut(&mut self, session_id: &str) -> Option<&mut SessionRecord> {
        self.sessions
            .iter_mut()
            .find(|session| session.session_id == session_id)
    }

    fn bundle_for(&self, session: &SessionRecord) -> Value {
        let ttl = time::Duration::try_from(self.bundle_ttl).unwrap_or(time::Duration::HOUR);
        let expires_at = time::OffsetDateTime::now_utc() + ttl;
        self.last_expiry.set(Some(expires_at));
        render_bundle(
            &self.template,
            &BundleValues {
                session_id: &session.session_id,
                workspace_id: &session.workspace_id,
                tenant_id: &session.tenant_id,
                user_id: &session.user_id,
                expires_at: rfc3339_micros(expires_at),
                version: &self.version,
            },
        )
    }

    /// `compatibilityStatus` and `policyBundle` (+ reason) as create and resume answer them.
    fn compatibility(&self, session: &SessionRecord) -> Value {
        match &self.incompatible {
            Some(reason) => json!({
                "compatibilityStatus": "incompatible",
                "policyBundle": null,
                "incompatibilityReason": reason,
            }),
            None => json!({
                "compatibilityStatus": "compatible",
                "policyBundle": self.bundle_for(session),
                "incompatibilityReason": null,
            }),
        }
    }
}

type Shared = Arc<Mutex<State>>;

/// The Session Service fake.
pub struct SessionServiceFake {
    host: WiremockHost,
    state: Shared,
    faults: Arc<FaultQueue>,
}

crate::faults::fault_control!(SessionServiceFake);

impl SessionServiceFake {
    /// Starts on a fresh ephemeral loopback port with the default policy template.
    pub async fn start() -> anyhow::Result<Self> {
        let state: Shared = Arc::new(Mutex::new(State {
            template: default_policy_template(),
            version: new_bundle_version(),
            bundle_ttl: Duration::from_secs(3600),
            last_expiry: std::cell::Cell::new(None),
            incompatible: None,
            feature_flags: json!({}),
            sessions: Vec::new(),
            workspaces: std::collections::HashMap::new(),
        }));
        let faults = Arc::new(FaultQueue::default());
        let route = |matcher: MockBuilder,
                     handler: fn(&mut State, &Request) -> ResponseTemplate| {
            faults.route(matcher, &state, handler)
        };
        let routes = vec![
            route(Mock::given(method("POST")).and(path("/sessions")), create),
            route(
                Mock::given(method("POST")).and(path_regex(r"^/sessions/[^/]+/resume$")),
                resume,
            ),
            route(
                Mock::given(method("POST")).and(path_regex(r"^/sessions/[^/]+/cancel$")),
                cancel,
            ),
            route(
                Mock::given(method("GET")).and(path_regex(r"^/sessions/[^/]+$")),
                get,
            ),
            route(
                Mock::given(method("POST")).and(path_regex(r"^/sessions/[^/]+/tasks$")),
                create_task,
            ),
            route(
                Mock::given(method("POST"))
                    .and(path_regex(r"^/sessions/[^/]+/tasks/[^/]+/complete$")),
                complete_task,
            ),
        ];
        let host = faults.serve(routes).await?;
        Ok(Self {
            host,
            state,
            faults,
        })
    }

    /// The service's base URL (no trailing slash), for `SESSION_SERVICE_URL`.
    pub fn url(&self) -> String {
        self.host.base_url()
    }

    /// The current bundle template (placeholders unrendered).
    pub fn policy(&self) -> Value {
        lock(&self.state).template.clone()
    }

    /// Replaces the template; later creates and resumes serve it (with a new version).
    pub fn set_policy(&self, bundle_template: Value) {
        let mut state = lock(&self.state);
        state.template = bundle_template;
        state.version = new_bundle_version();
    }

    /// Edits the template in place (with a new version), e.g. to add a capability.
    pub fn update_policy(&self, f: impl FnOnce(&mut Value)) {
        let mut state = lock(&self.state);
        f(&mut state.template);
        state.version = new_bundle_version();
    }

    /// How far in the future `{{expiresAt}}` lies (default 1 hour), e.g. a few seconds to
    /// see the policy expire during a session.
    pub fn set_bundle_ttl(&self, ttl: Duration) {
        lock(&self.state).bundle_ttl = ttl;
    }

    /// `expiresAt` of the latest policy bundle served (create or resume), if any.
    pub fn last_served_expiry(&self) -> Option<time::OffsetDateTime> {
        lock(&self.state).last_expiry.get()
    }

    /// `featureFlags` of later create answers (default `{}`).
    pub fn set_feature_flags(&self, flags: Value) {
        lock(&self.state).feature_flags = flags;
    }

    /// From now on, creates (and resumes) answer 201/200 with `compatibilityStatus:
    /// "incompatible"`, this `incompatibilityReason` and `policyBundle: null`.
    pub fn answer_incompatible(&self, reason: &str) {
        lock(&self.state).incompatible = Some(reason.to_string());
    }

    /// Undoes [`Self::answer_incompatible`].
    pub fn answer_compatible(&self) {
        lock(&self.state).incompatible = None;
    }

    /// Ids of the sessions created, in order.
    pub fn session_ids(&self) -> Vec<String> {
        lock(&self.state)
            .sessions
            .iter()
            .map(|session| session.session_id.clone())
            .collect()
    }

    /// The workspace id given to a session.
    pub fn workspace_id(&self, session_id: &str) -> Option<String> {
        lock(&self.state)
            .session_mut(session_id)
            .map(|session| session.workspace_id.clone())
    }

    /// Task records posted for a session, with their completion fields merged in.
    pub fn tasks(&self, session_id: &str) -> Vec<Value> {
        lock(&self.state)
            .session_mut(session_id)
            .map(|session| session.tasks.clone())
            .unwrap_or_default()
    }

    /// Resuming this session now answers 409 `{code: "INVALID_REQUEST", message: "Session
    /// has expired"}`.
    pub fn expire_session(&self, session_id: &str) {
        if let Some(session) = lock(&self.state).session_mut(session_id) {
            session.expired = true;
        }
    }
}

fn body_object(request: &Request) -> Option<serde_json::Map<String, Value>> {
    match serde_json::from_slice(&request.body) {
        Ok(Value::Object(object)) => Some(object),
        _ => None,
    }
}

/// The `{id}` of `/sessions/{id}/...`.
fn session_id_of(request: &Request) -> String {
    RecordedRequest::segments(request.url.path())
        .get(1)
        .map(|id| (*id).to_string())
        .unwrap_or_default()
}

fn session_not_found(session_id: &str) -> ResponseTemplate {
    let message = format!("Session {session_id} not found");
    json_template(404, &service_error("SESSION_NOT_FOUND", &message, false))
}

fn create(state: &mut State, request: &Request) -> ResponseTemplate {
    let Some(body) = body_object(request) else {
        return json_template(422, &validation_error("the body must be a JSON object"));
    };
    let field = |name: &str| body.get(name).and_then(Value::as_str).map(str::to_string);
    let (Some(tenant_id), Some(user_id)) = (field("tenantId"), field("userId")) else {
        return json_template(
            422,
            &validation_error("tenantId and userId are required strings"),
        );
    };
    let project = body
        .get("workspaceHint")
        .and_then(|hint| hint.get("localPaths"))
        .and_then(|paths| paths.get(0))
        .and_then(Value::as_str)
        .map(str::to_string);
    let workspace_id = match project {
        Some(project) => state
            .workspaces
            .entry(project)
            .or_insert_with(|| new_id("ws"))
            .clone(),
        None => new_id("ws"),
    };
    let session = SessionRecord {
        session_id: new_id("sess"),
        workspace_id,
        tenant_id,
        user_id,
        name: format!("Session {}", state.sessions.len() + 1),
        created_at: now_rfc3339(),
        expired: false,
        cancelled: false,
        tasks: Vec::new(),
    };
    let mut answer = json!({
        "sessionId": session.session_id,
        "workspaceId": session.workspace_id,
        "featureFlags": state.feature_flags,
        "name": session.name,
    });
    merge(&mut answer, state.compatibility(&session));
    state.sessions.push(session);
    json_template(201, &answer)
}

fn resume(state: &mut State, request: &Request) -> ResponseTemplate {
    let session_id = session_id_of(request);
    let Some(session) = state
        .sessions
        .iter()
        .find(|session| session.session_id == session_id)
    else {
        return session_not_found(&session_id);
    };
    if session.expired {
        return json_template(
            409,
            &service_error("INVALID_REQUEST", "Session has expired", false),
        );
    }
    if session.cancelled {
        return json_template(
            409,
            &service_error("INVALID_REQUEST", "Session has been cancelled", false),
        );
    }
    let mut answer = json!({
        "sessionId": session.session_id,
        "workspaceId": session.workspace_id,
        "featureFlags": state.feature_flags,
    });
    merge(&mut answer, state.compatibility(session));
    json_template(200, &answer)
}

fn cancel(state: &mut State, request: &Request) -> ResponseTemplate {
    let session_id = session_id_of(request);
    match state.session_mut(&session_id) {
        Some(session) => {
            session.cancelled = true;
            ResponseTemplate::new(204)
        }
        None => session_not_found(&session_id),
    }
}

fn get(state: &mut State, request: &Request) -> ResponseTemplate {
    let session_id = session_id_of(request);
    let compatibility = if state.incompatible.is_some() {
        "incompatible"
    } else {
        "compatible"
    };
    let Some(session) = state.session_mut(&session_id) else {
        return session_not_found(&session_id);
    };
    let status = match (session.expired, session.cancelled) {
        (true, _) => "expired",
        (false, true) => "cancelled",
        (false, false) => "active",
    };
    json_template(
        200,
        &json!({
            "sessionId": session.session_id,
            "workspaceId": session.workspace_id,
            "tenantId": session.tenant_id,
            "userId": session.user_id,
            "name": session.name,
            "status": status,
            "compatibilityStatus": compatibility,
            "createdAt": session.created_at,
            "taskCount": session.tasks.len(),
        }),
    )
}

fn create_task(state: &mut State, request: &Request) -> ResponseTemplate {
    let session_id = session_id_of(request);
    let body = body_object(request).unwrap_or_default();
    let Some(session) = state.session_mut(&session_id) else {
        return session_not_found(&session_id);
    };
    let task_id = body
        .get("taskId")
        .and_then(Value::as_str)
        .map_or_else(|| new_id("task"), str::to_string);
    let mut record = Value::Object(body);
    merge(
        &mut record,
        json!({"taskId": task_id, "sessionId": session_id, "status": "running", "createdAt": now_rfc3339()}),
    );
    session.tasks.push(record.clone());
    json_template(201, &record)
}

fn complete_task(state: &mut State, request: &Request) -> ResponseTemplate {
    let session_id = session_id_of(request);
    let segments = RecordedRequest::segments(request.url.path());
    let task_id = segments.get(3).copied().unwrap_or_default().to_string();
    let body = body_object(request).unwrap_or_default();
    let Some(session) = state.session_mut(&session_id) else {
        return session_not_found(&session_id);
    };
    let Some(task) = session
        .tasks
        .iter_mut()
        .find(|task| task.get("taskId").and_then(Value::as_str) == Some(task_id.as_str()))
    else {
        let message = format!("Task {task_id} not found");
        return json_template(404, &service_error("TASK_NOT_FOUND", &message, false));
    };
    let status = body
        .get("status")
        .cloned()
        .unwrap_or_else(|| json!("completed"));
    merge(task, Value::Object(body));
    merge(
        task,
        json!({"status": status, "completedAt": now_rfc3339()}),
    );
    json_template(200, task)
}

/// Shallow merge of `extra`'s members into `target` (both objects).
fn merge(target: &mut Value, extra: Value) {
    if let (Some(target), Value::Object(extra)) = (target.as_object_mut(), extra) {
        target.extend(extra);
    }
}
