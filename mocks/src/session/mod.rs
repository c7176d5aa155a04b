//! The Session Service fake (INTEROP.md §3, §8) on wiremock. Every answer has the members,
//! statuses and error bodies of the real service (suman724/cowork-session-service,
//! `services/session_service.py`, `services/task_service.py`, `exceptions.py`, `main.py`),
//! pinned by `tests/shapes.rs`; the policy bundle comes from a template (see
//! [`crate::policy`]). Options cover where real deployments differ: [`Nulls`], feature flags
//! in resume answers, the version gate.

mod routes;
mod sandbox;
mod tasks;

pub use sandbox::SandboxLaunch;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use time::OffsetDateTime;
use wiremock::matchers::{method, path, path_regex};
use wiremock::{Mock, MockBuilder, Request, ResponseTemplate};

use crate::faults::FaultQueue;
use crate::host::WiremockHost;
use crate::nulls::Nulls;
use crate::policy::{BundleValues, default_policy_template, new_bundle_version, render_bundle};
use crate::util::{lock, rfc3339_micros};

/// The real service's `session_expiry_hours` and the Policy Service's `policy_expiry_hours`.
const DAY: Duration = Duration::from_secs(24 * 3600);

pub(crate) struct State {
    template: Value,
    version: String,
    bundle_ttl: Duration,
    /// `expiresAt` of the latest bundle served, so a scenario can wait for exactly that instant.
    last_expiry: Option<OffsetDateTime>,
    incompatible: Option<String>,
    feature_flags: Value,
    nulls: Nulls,
    resume_feature_flags: bool,
    version_gate: bool,
    grant_only_requested: bool,
    sessions: Vec<SessionRecord>,
    /// Keyed by `taskId` alone, as the real service keys them (a second create replaces).
    tasks: Vec<tasks::TaskRecord>,
    /// A local workspace is reused by every session on the same project (the Workspace
    /// Service's `localPath` lookup): the first local path → its workspace id.
    workspaces: std::collections::HashMap<String, String>,
    /// Sandbox sessions by id: their token and what their registration sent.
    registrations: std::collections::HashMap<String, sandbox::Registration>,
    /// `workspaceServiceUrl` of registration answers (the real service's own setting).
    sandbox_workspace_service_url: String,
    /// Told the endpoint of each sandbox that registered.
    registered: Option<tokio::sync::watch::Sender<Option<String>>>,
}

pub(crate) struct SessionRecord {
    session_id: String,
    workspace_id: String,
    tenant_id: String,
    user_id: String,
    execution_environment: String,
    /// One of the real `SESSION_*` / `SANDBOX_*` states.
    status: String,
    name: String,
    auto_named: bool,
    /// The `supportedCapabilities` of the create.
    capabilities: Vec<String>,
    created_at: OffsetDateTime,
    expires_at: OffsetDateTime,
}

impl State {
    fn session(&self, session_id: &str) -> Option<&SessionRecord> {
        self.sessions
            .iter()
            .find(|session| session.session_id == session_id)
    }

    fn session_mut(&mut self, session_id: &str) -> Option<&mut SessionRecord> {
        self.sessions
            .iter_mut()
            .find(|session| session.session_id == session_id)
    }

    fn bundle_for(&mut self, session_id: &str) -> Value {
        let Some(session) = self.session(session_id) else {
            return Value::Null;
        };
        let ttl = time::Duration::try_from(self.bundle_ttl).unwrap_or(time::Duration::DAY);
        let expires_at = OffsetDateTime::now_utc() + ttl;
        let mut bundle = render_bundle(
            &self.template,
            &BundleValues {
                session_id: &session.session_id,
                workspace_id: &session.workspace_id,
                tenant_id: &session.tenant_id,
                user_id: &session.user_id,
                expires_at: rfc3339_micros(expires_at),
                version: &self.version,
            },
        );
        if self.grant_only_requested {
            grant_only(&mut bundle, &session.capabilities);
        }
        self.last_expiry = Some(expires_at);
        bundle
    }
}

/// The real Policy Service's `capability_resolver`: only the capabilities asked for, or all
/// of them when none were named.
fn grant_only(bundle: &mut Value, requested: &[String]) {
    if requested.is_empty() {
        return;
    }
    if let Some(Value::Array(capabilities)) = bundle.get_mut("capabilities") {
        capabilities.retain(|capability| {
            capability
                .get("name")
                .and_then(Value::as_str)
                .is_some_and(|name| requested.iter().any(|asked| asked == name))
        });
    }
}

pub(crate) type Shared = Arc<Mutex<State>>;

/// What the Workspace Service fake asks the Session Service, as the real one does over HTTP
/// (`GET /sessions/{id}` for the sidebar's names; its own table for workspaces).
pub(crate) trait Directory: Send + Sync {
    /// `(name, autoNamed)` of a session the service knows.
    fn name_of(&self, session_id: &str) -> Option<(String, bool)>;
    /// Whether a workspace was created for one of the sessions.
    fn knows_workspace(&self, workspace_id: &str) -> bool;
}

impl Directory for Mutex<State> {
    fn name_of(&self, session_id: &str) -> Option<(String, bool)> {
        lock(self)
            .session(session_id)
            .map(|session| (session.name.clone(), session.auto_named))
    }

    fn knows_workspace(&self, workspace_id: &str) -> bool {
        lock(self)
            .sessions
            .iter()
            .any(|session| session.workspace_id == workspace_id)
    }
}

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
            bundle_ttl: DAY,
            last_expiry: None,
            incompatible: None,
            feature_flags: json!({"approvalUiEnabled": false, "mcpEnabled": false}),
            nulls: Nulls::default(),
            resume_feature_flags: false,
            version_gate: false,
            grant_only_requested: false,
            sessions: Vec::new(),
            tasks: Vec::new(),
            workspaces: std::collections::HashMap::new(),
            registrations: std::collections::HashMap::new(),
            sandbox_workspace_service_url: String::new(),
            registered: None,
        }));
        let faults = Arc::new(FaultQueue::default());
        let route = |matcher: MockBuilder,
                     handler: fn(&mut State, &Request) -> ResponseTemplate| {
            faults.route(matcher, &state, handler)
        };
        let session = r"^/sessions/[^/]+";
        let routes = vec![
            route(
                Mock::given(method("POST")).and(path("/sessions")),
                routes::create,
            ),
            route(
                Mock::given(method("POST")).and(path_regex(format!("{session}/resume$"))),
                routes::resume,
            ),
            route(
                Mock::given(method("POST")).and(path_regex(format!("{session}/register$"))),
                sandbox::register,
            ),
            route(
                Mock::given(method("POST")).and(path_regex(format!("{session}/cancel$"))),
                routes::cancel,
            ),
            route(
                Mock::given(method("PATCH")).and(path_regex(format!("{session}/name$"))),
                routes::rename,
            ),
            route(
                Mock::given(method("GET")).and(path_regex(format!("{session}$"))),
                routes::get,
            ),
            route(
                Mock::given(method("POST")).and(path_regex(format!("{session}/tasks$"))),
                tasks::create,
            ),
            route(
                Mock::given(method("POST"))
                    .and(path_regex(format!("{session}/tasks/[^/]+/complete$"))),
                tasks::complete,
            ),
            route(
                Mock::given(method("GET")).and(path_regex(format!("{session}/tasks$"))),
                tasks::list,
            ),
            route(
                Mock::given(method("GET")).and(path_regex(format!("{session}/tasks/[^/]+$"))),
                tasks::get,
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

    /// What the Workspace Service fake reads names and workspaces from.
    pub(crate) fn directory(&self) -> Arc<dyn Directory> {
        self.state.clone()
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

    /// How far in the future `{{expiresAt}}` lies (default 24 hours, the Policy Service's
    /// `policy_expiry_hours`), e.g. a few seconds to see the policy expire during a session.
    pub fn set_bundle_ttl(&self, ttl: Duration) {
        lock(&self.state).bundle_ttl = ttl;
    }

    /// `expiresAt` of the latest policy bundle served (create or resume), if any.
    pub fn last_served_expiry(&self) -> Option<OffsetDateTime> {
        lock(&self.state).last_expiry
    }

    /// Replaces the whole `featureFlags` object of later answers (default
    /// `{"approvalUiEnabled": false, "mcpEnabled": false}`, all the real service sends).
    pub fn set_feature_flags(&self, flags: Value) {
        lock(&self.state).feature_flags = flags;
    }

    /// Sets one feature flag, keeping the others.
    pub fn set_feature_flag(&self, name: &str, value: Value) {
        let mut state = lock(&self.state);
        match state.feature_flags.as_object_mut() {
            Some(flags) => {
                flags.insert(name.to_string(), value);
            }
            None => state.feature_flags = json!({ name: value }),
        }
    }

    /// Resume answers carry `featureFlags` too (local-agent-host.md §9.5 "session metadata").
    /// The real service's do not (the default), so a runtime must keep the handshake's.
    pub fn set_resume_feature_flags(&self, on: bool) {
        lock(&self.state).resume_feature_flags = on;
    }

    /// The null style of every answer (default [`Nulls::AsServed`]).
    pub fn set_nulls(&self, nulls: Nulls) {
        lock(&self.state).nulls = nulls;
    }

    /// The real service's version gate (`services/compatibility.py`): a create with
    /// `clientInfo.desktopAppVersion` or `localAgentHostVersion` missing, unparsable or below
    /// 0.1.0, or with no `supportedCapabilities`, is answered incompatible with the real
    /// reason. Off by default, so scenarios choose incompatibility with
    /// [`Self::answer_incompatible`].
    pub fn set_version_gate(&self, on: bool) {
        lock(&self.state).version_gate = on;
    }

    /// The real Policy Service grants only the capabilities the create asked for
    /// (`supportedCapabilities`; all when none). Off by default: scenarios grant what their
    /// premise needs whatever a runtime asks.
    pub fn set_grant_only_requested(&self, on: bool) {
        lock(&self.state).grant_only_requested = on;
    }

    /// From now on, creates answer 201 `compatibilityStatus: "incompatible"` with this
    /// `incompatibilityReason` and no `policyBundle`, and resumes answer 400
    /// `INVALID_REQUEST` with the reason as message (the real service re-checks on resume).
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
            .session(session_id)
            .map(|session| session.workspace_id.clone())
    }

    /// A session's status as `GET /sessions/{id}` reports it (`SESSION_RUNNING`, …).
    pub fn status(&self, session_id: &str) -> Option<String> {
        lock(&self.state)
            .session(session_id)
            .map(|session| session.status.clone())
    }

    /// Puts a session in a state, e.g. `SESSION_COMPLETED` (resumable) or
    /// `SESSION_CANCELLED` (not resumable).
    pub fn set_status(&self, session_id: &str, status: &str) {
        if let Some(session) = lock(&self.state).session_mut(session_id) {
            session.status = status.to_string();
        }
    }

    /// `(name, autoNamed)` of a session, as `PATCH /sessions/{id}/name` left them.
    pub fn name(&self, session_id: &str) -> Option<(String, bool)> {
        self.state.name_of(session_id)
    }

    /// A session's task records as `GET /sessions/{id}/tasks` lists them.
    pub fn tasks(&self, session_id: &str) -> Vec<Value> {
        lock(&self.state)
            .tasks
            .iter()
            .filter(|task| task.session_id == session_id)
            .map(tasks::TaskRecord::to_json)
            .collect()
    }

    /// The session expires now: resuming it answers 409 `{code: "INVALID_REQUEST", message:
    /// "Session has expired"}` and leaves it `SESSION_FAILED`, as the real service does.
    pub fn expire_session(&self, session_id: &str) {
        if let Some(session) = lock(&self.state).session_mut(session_id) {
            session.expires_at = OffsetDateTime::now_utc() - time::Duration::SECOND;
        }
    }

    /// Creates a `cloud_sandbox` session waiting for its sandbox (`SANDBOX_PROVISIONING`),
    /// as the real service does before it launches one: the launch's env carries the ids
    /// and the registration token.
    pub fn provision_sandbox(&self, tenant_id: &str, user_id: &str) -> SandboxLaunch {
        sandbox::provision(&mut lock(&self.state), tenant_id, user_id)
    }

    /// Registrations must name this task (the real service checks the ARN it launched).
    pub fn expect_task_arn(&self, session_id: &str, task_arn: &str) {
        if let Some(registration) = lock(&self.state).registrations.get_mut(session_id) {
            registration.expected_task_arn = Some(task_arn.to_owned());
        }
    }

    /// `workspaceServiceUrl` in registration answers.
    pub fn set_sandbox_workspace_service_url(&self, url: &str) {
        lock(&self.state).sandbox_workspace_service_url = url.to_owned();
    }

    /// Watches registrations: the `sandboxEndpoint` of the latest sandbox that registered.
    /// Each call starts a fresh watch (registrations before it are not seen).
    pub fn watch_registrations(&self) -> tokio::sync::watch::Receiver<Option<String>> {
        let (sender, receiver) = tokio::sync::watch::channel(None);
        lock(&self.state).registered = Some(sender);
        receiver
    }

    /// `(sandboxEndpoint, taskArn)` a sandbox registered with, once it has.
    pub fn sandbox_registration(&self, session_id: &str) -> Option<(String, String)> {
        let state = lock(&self.state);
        let registration = state.registrations.get(session_id)?;
        Some((
            registration.endpoint.clone()?,
            registration.task_arn.clone()?,
        ))
    }

    /// Registration attempts that reached the service for a sandbox session.
    pub fn registration_attempts(&self, session_id: &str) -> u32 {
        lock(&self.state)
            .registrations
            .get(session_id)
            .map_or(0, |registration| registration.attempts)
    }
}
