//! The Host: the JSON-RPC methods of local-agent-host.md §3.1 over the one session slot of
//! this process.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use agent_protocol::approval::Decision;
use agent_protocol::events::{EventBody, SessionEnded, SessionStarted};
use agent_protocol::methods::{self as m, *};
use agent_protocol::policy::{PolicyBundle, SUPPORTED_SCHEMA_VERSIONS};
use agent_protocol::services::CreateSessionRequest;
use agent_protocol::state::{SessionStatus, TaskStatus};
use agent_protocol::{ErrorCode, ToolRouter};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use crate::agent_loop::{self, Backends, TaskRun};
use crate::config::HostConfig;
use crate::error::RpcError;
use crate::events::{EventSink, Scope};
use crate::rpc::Outbound;
use crate::session::{Identity, Session, TaskRecord, machine::TaskMachine};
use crate::time::{now_rfc3339, parse_rfc3339};

enum Slot {
    Empty,
    Creating,
    Active(Arc<Session>),
}

pub struct Host {
    config: Arc<HostConfig>,
    tools: Arc<dyn ToolRouter>,
    outbound: Outbound,
    slot: Mutex<Slot>,
    /// HTTP clients are built on first use: nothing heavy at start-up.
    backends: OnceLock<Arc<Backends>>,
    shutdown_started: AtomicBool,
    shutdown_done: watch::Sender<bool>,
}

fn to_value<T: Serialize>(value: T) -> Result<Value, RpcError> {
    serde_json::to_value(value)
        .map_err(|error| RpcError::internal(format!("Could not encode the result: {error}")))
}

/// Reads params, naming the offending field in a readable message.
fn parse<T: DeserializeOwned>(method: &str, params: Value) -> Result<T, RpcError> {
    serde_path_to_error::deserialize(params).map_err(|error| {
        let path = error.path().to_string();
        let inner = error.into_inner().to_string();
        let missing = inner
            .strip_prefix("missing field `")
            .and_then(|rest| rest.split('`').next())
            .map(str::to_owned);
        let field = match (missing, path.as_str()) {
            (Some(name), "." | "") => name,
            (Some(name), parent) => format!("{parent}.{name}"),
            (None, path) => path.to_owned(),
        };
        let detail = inner.split(" at line ").next().unwrap_or(&inner).to_owned();
        RpcError::invalid_params(
            Some(&field),
            format!("Invalid params for {method}: {field}: {detail}."),
        )
    })
}

fn not_found(session_id: &str, current: Option<&str>) -> RpcError {
    let message = match current {
        Some(current) => format!(
            "Session {session_id} is not served by this runtime process (it serves session {current}). The runtime may have been restarted; resume or create a session."
        ),
        None => format!(
            "Session {session_id} is not known to this runtime process: no session has been created here yet. The runtime may have been restarted; create a new session."
        ),
    };
    RpcError::new(ErrorCode::SessionNotFound, message)
}

impl Host {
    pub fn new(config: HostConfig, tools: Arc<dyn ToolRouter>, outbound: Outbound) -> Arc<Self> {
        Arc::new(Self {
            config: Arc::new(config),
            tools,
            outbound,
            slot: Mutex::new(Slot::Empty),
            backends: OnceLock::new(),
            shutdown_started: AtomicBool::new(false),
            shutdown_done: watch::Sender::new(false),
        })
    }

    pub fn config(&self) -> &HostConfig {
        &self.config
    }

    pub fn shutdown_finished(&self) -> watch::Receiver<bool> {
        self.shutdown_done.subscribe()
    }

    fn slot(&self) -> MutexGuard<'_, Slot> {
        match self.slot.lock() {
            Ok(slot) => slot,
            Err(poisoned) => poisoned.into_inner(),
        }
    }

    fn current(&self) -> Option<Arc<Session>> {
        match &*self.slot() {
            Slot::Active(session) => Some(Arc::clone(session)),
            _ => None,
        }
    }

    fn backends(&self) -> Result<Arc<Backends>, RpcError> {
        if let Some(backends) = self.backends.get() {
            return Ok(Arc::clone(backends));
        }
        let built = Arc::new(Backends::new(&self.config).map_err(|error| {
            RpcError::internal(format!("Could not set up the HTTP clients: {error}"))
        })?);
        Ok(Arc::clone(self.backends.get_or_init(|| built)))
    }

    /// The session a request names; a readable SESSION_NOT_FOUND otherwise.
    fn session_for(&self, session_id: &str) -> Result<Arc<Session>, RpcError> {
        match self.current() {
            Some(session) if session.id() == session_id => Ok(session),
            Some(session) => Err(not_found(session_id, Some(session.id()))),
            None => Err(not_found(session_id, None)),
        }
    }

    pub async fn handle(self: &Arc<Self>, method: &str, params: Value) -> Result<Value, RpcError> {
        if self.shutdown_started.load(Ordering::SeqCst)
            && !matches!(
                method,
                m::SHUTDOWN | m::GET_SESSION_STATE | m::GET_EVENTS | m::APPROVE_ACTION
            )
        {
            return Err(RpcError::new(
                ErrorCode::InvalidRequest,
                format!("The runtime is shutting down and no longer accepts {method}."),
            ));
        }
        match method {
            m::CREATE_SESSION => self.create_session(parse(method, params)?).await,
            m::START_TASK => self.start_task(parse(method, params)?),
            m::CANCEL_TASK => self.cancel_task(parse(method, params)?),
            m::RESUME_SESSION => self.resume_session(parse(method, params)?).await,
            m::GET_SESSION_STATE => self.session_state(parse(method, params)?),
            m::GET_PATCH_PREVIEW => self.patch_preview(parse(method, params)?),
            m::APPROVE_ACTION => Ok(self.approve_action(&params)),
            m::SHUTDOWN => to_value(ShutdownResult {
                status: "shutting_down".to_owned(),
            }),
            m::GET_EVENTS => self.events(parse(method, params)?),
            other => Err(RpcError::method_not_found(other)),
        }
    }

    async fn create_session(
        self: &Arc<Self>,
        params: CreateSessionParams,
    ) -> Result<Value, RpcError> {
        {
            let mut slot = self.slot();
            match &*slot {
                Slot::Empty => *slot = Slot::Creating,
                Slot::Creating => {
                    return Err(RpcError::new(
                        ErrorCode::InvalidRequest,
                        "A session is already being created in this runtime process; one process serves one session.",
                    ));
                }
                Slot::Active(session) => {
                    return Err(RpcError::new(
                        ErrorCode::InvalidRequest,
                        format!(
                            "This runtime process already serves session {}; one process serves one session. Start another runtime for a new session.",
                            session.id()
                        ),
                    ));
                }
            }
        }
        let result = self.establish(params).await;
        if result.is_err() {
            let mut slot = self.slot();
            if matches!(*slot, Slot::Creating) {
                *slot = Slot::Empty;
            }
        }
        result
    }

    async fn establish(self: &Arc<Self>, params: CreateSessionParams) -> Result<Value, RpcError> {
        let backends = self.backends()?;
        crate::thread::tokens::warm_up();
        let mut client_info = params.client_info.clone().unwrap_or_default();
        client_info
            .local_agent_host_version
            .get_or_insert_with(|| env!("CARGO_PKG_VERSION").to_owned());
        client_info
            .os_family
            .get_or_insert_with(|| std::env::consts::OS.to_owned());
        let tools: Vec<String> = self
            .tools
            .available_tools()
            .into_iter()
            .map(|tool| tool.tool_name)
            .collect();
        let supported_capabilities = if params.supported_capabilities.is_empty() {
            let mut caps: Vec<String> = tools
                .iter()
                .filter_map(|tool| crate::routing::capability_for(tool))
                .map(str::to_owned)
                .collect();
            caps.push("LLM.Call".to_owned());
            caps
        } else {
            params.supported_capabilities.clone()
        };
        let workspace_hint = params.workspace_hint.clone().unwrap_or_default();
        let request = CreateSessionRequest {
            tenant_id: params.tenant_id.clone(),
            user_id: params.user_id.clone(),
            execution_environment: params.execution_environment.clone(),
            workspace_hint: workspace_hint.clone(),
            client_info: client_info.clone(),
            supported_capabilities,
            supported_tools: tools,
        };
        let response = backends
            .sessions
            .create_session(&request)
            .await
            .map_err(|error| {
                let mut shape = error.to_shape();
                shape.message = format!("Could not create the session. {}", shape.message);
                RpcError::domain(shape)
            })?;
        if response.compatibility_status != "compatible" {
            let reason = response
                .incompatibility_reason
                .clone()
                .unwrap_or_else(|| "no reason given".to_owned());
            return Err(RpcError::domain(
                agent_protocol::ErrorShape::new(
                    ErrorCode::SessionIncompatible,
                    format!(
                        "The Session Service reports that this agent runtime (version {}) is not compatible: {reason}. Update the agent runtime and try again.",
                        env!("CARGO_PKG_VERSION")
                    ),
                )
                .with_details(json!({ "incompatibilityReason": reason, "sessionId": response.session_id })),
            ));
        }
        let Some(bundle) = response.policy_bundle.clone() else {
            return Err(RpcError::new(
                ErrorCode::PolicyBundleInvalid,
                "The Session Service accepted the session but sent no policy bundle, so the session cannot start.",
            ));
        };
        validate_bundle(&bundle, &response.session_id)?;
        let identity = Identity {
            session_id: response.session_id.clone(),
            workspace_id: response.workspace_id.clone(),
            tenant_id: params.tenant_id,
            user_id: params.user_id,
            name: response.name.clone(),
            execution_environment: params.execution_environment,
            workspace_root: workspace_hint.local_paths.first().map(PathBuf::from),
            feature_flags: response.feature_flags.clone(),
            os_family: client_info.os_family.clone().unwrap_or_default(),
        };
        let events = EventSink::new(
            &identity.session_id,
            &identity.workspace_id,
            self.outbound.clone(),
            self.config.event_ring_size,
        );
        let policy_version = bundle.policy_bundle_version.clone();
        let session = Arc::new(Session::new(identity, bundle, events));
        session
            .transition(SessionStatus::SessionRunning)
            .map_err(|error| RpcError::internal(error.to_string()))?;
        *self.slot() = Slot::Active(Arc::clone(&session));
        session.events.emit(
            Scope::session(),
            EventBody::SessionStarted(SessionStarted {
                execution_environment: session.identity.execution_environment.clone(),
                policy_bundle_version: policy_version.clone(),
            }),
        );
        crate::extensions::open(self.tools.as_ref(), &session).await;
        to_value(self.ready(&session, "compatible"))
    }

    fn ready(&self, session: &Session, compatibility: &str) -> SessionReadyResult {
        SessionReadyResult {
            session_id: session.identity.session_id.clone(),
            workspace_id: session.identity.workspace_id.clone(),
            name: session.identity.name.clone(),
            log_dir: self
                .config
                .log_dir
                .as_ref()
                .map(|dir| dir.display().to_string()),
            status: session.status(),
            compatibility_status: compatibility.to_owned(),
            policy_bundle_version: session.policy().bundle().policy_bundle_version.clone(),
            feature_flags: session.identity.feature_flags.clone(),
        }
    }

    fn start_task(self: &Arc<Self>, params: StartTaskParams) -> Result<Value, RpcError> {
        let session = self.session_for(&params.session_id)?;
        match session.status() {
            SessionStatus::SessionRunning => {}
            SessionStatus::SessionPaused => {
                return Err(RpcError::new(
                    ErrorCode::InvalidRequest,
                    format!(
                        "Session {} is paused; resume it with ResumeSession before starting a task.",
                        session.id()
                    ),
                ));
            }
            other => {
                return Err(RpcError::new(
                    ErrorCode::InvalidRequest,
                    format!(
                        "Session {} has ended ({other:?}); start a new session.",
                        session.id()
                    ),
                ));
            }
        }
        if params.prompt.trim().is_empty() {
            return Err(RpcError::invalid_params(
                Some("prompt"),
                "Invalid params for StartTask: prompt must not be empty.",
            ));
        }
        let options = params.task_options.clone().unwrap_or_default();
        let max_steps = match options.max_steps {
            None => self.config.default_max_steps,
            Some(steps) if steps >= 1 && steps <= i64::from(self.config.max_steps_limit) => {
                u32::try_from(steps).unwrap_or(self.config.default_max_steps)
            }
            Some(steps) => {
                return Err(RpcError::invalid_params(
                    Some("taskOptions.maxSteps"),
                    format!(
                        "Invalid params for StartTask: taskOptions.maxSteps must be between 1 and {}, got {steps}.",
                        self.config.max_steps_limit
                    ),
                ));
            }
        };
        let task_id = params
            .task_id
            .clone()
            .unwrap_or_else(|| format!("task_{}", uuid::Uuid::new_v4().simple()));
        let cancel = CancellationToken::new();
        let (prompt, max_steps, continues) = {
            let mut inner = session.lock();
            if let Some(running) = inner
                .task
                .as_ref()
                .filter(|task| task.machine.status().is_active())
            {
                return Err(RpcError::new(
                    ErrorCode::InvalidRequest,
                    format!(
                        "Task {} is still running in this session; cancel it or wait for it to finish before starting another.",
                        running.task_id
                    ),
                ));
            }
            // The same taskId as the last task: continue it if it is incomplete.
            let previous = inner.task.as_ref().filter(|task| task.task_id == task_id);
            if previous.is_some_and(|task| !task.incomplete) {
                return Err(RpcError::new(
                    ErrorCode::InvalidRequest,
                    format!(
                        "Task {task_id} has already finished; start a new task with a new taskId."
                    ),
                ));
            }
            let (prompt, step_count, step_cursor, max_steps, continues) = match previous {
                Some(task) => (
                    task.prompt.clone(),
                    task.step_count,
                    task.step_cursor.clone(),
                    if options.max_steps.is_some() {
                        max_steps
                    } else {
                        task.max_steps
                    },
                    true,
                ),
                None => (params.prompt.clone(), 0, None, max_steps, false),
            };
            let mut machine = TaskMachine::new();
            machine
                .transition(TaskStatus::TaskRunning)
                .map_err(|error| RpcError::internal(error.to_string()))?;
            inner.task = Some(TaskRecord {
                task_id: task_id.clone(),
                prompt: prompt.clone(),
                machine,
                step_count,
                max_steps,
                cancel: cancel.clone(),
                incomplete: false,
                step_cursor,
            });
            if !continues {
                inner.task_count += 1;
            }
            (prompt, max_steps, continues)
        };
        let run = TaskRun {
            session: Arc::clone(&session),
            backends: self.backends()?,
            tools: Arc::clone(&self.tools),
            config: Arc::clone(&self.config),
            task_id: task_id.clone(),
            prompt,
            max_steps,
            options,
            cancel,
            continues,
        };
        session.set_runner(tokio::spawn(agent_loop::run(run)));
        to_value(StartTaskResult {
            task_id,
            status: "running".to_owned(),
        })
    }

    fn cancel_task(&self, params: CancelTaskParams) -> Result<Value, RpcError> {
        let session = self.session_for(&params.session_id)?;
        let Some((task_id, cancel)) = session.active_task() else {
            return Err(RpcError::new(
                ErrorCode::InvalidRequest,
                format!(
                    "No task is running in session {}, so there is nothing to cancel.",
                    session.id()
                ),
            ));
        };
        if let Some(requested) = params
            .task_id
            .as_deref()
            .filter(|requested| *requested != task_id)
        {
            return Err(RpcError::new(
                ErrorCode::InvalidRequest,
                format!("Task {requested} is not running; the running task is {task_id}."),
            ));
        }
        cancel.cancel();
        session.approvals.cancel_all();
        to_value(CancelTaskResult {
            task_id,
            status: "cancelling".to_owned(),
        })
    }

    /// Resumes the live session when it is paused (gateway down, policy expired): a fresh
    /// bundle from the Session Service, validated, then RUNNING again. Resuming from a
    /// checkpoint after a crash is not part of this build.
    async fn resume_session(&self, params: ResumeSessionParams) -> Result<Value, RpcError> {
        let session = match self.current() {
            Some(session) if session.id() == params.session_id => session,
            current => {
                return Err(RpcError::new(
                    ErrorCode::SessionNotFound,
                    format!(
                        "Session {} cannot be resumed by this runtime process: it has no live session or checkpoint for it{}. Create a new session to continue.",
                        params.session_id,
                        current
                            .map(|s| format!(" (it serves session {})", s.id()))
                            .unwrap_or_default()
                    ),
                ));
            }
        };
        if session.status() != SessionStatus::SessionPaused {
            return to_value(self.ready(&session, "compatible"));
        }
        let backends = self.backends()?;
        let cursor = session
            .lock()
            .task
            .as_ref()
            .and_then(|task| task.step_cursor.clone());
        let response = backends
            .sessions
            .resume_session(session.id(), cursor)
            .await
            .map_err(|error| {
                let mut shape = error.to_shape();
                shape.message = format!("Could not resume the session. {}", shape.message);
                RpcError::domain(shape)
            })?;
        if response.compatibility_status != "compatible" {
            return Err(RpcError::new(
                ErrorCode::SessionIncompatible,
                "The Session Service reports that this agent runtime is no longer compatible with the session.",
            ));
        }
        let Some(bundle) = response.policy_bundle else {
            return Err(RpcError::new(
                ErrorCode::PolicyBundleInvalid,
                "The Session Service resumed the session but sent no policy bundle.",
            ));
        };
        validate_bundle(&bundle, session.id())?;
        session.set_policy(bundle);
        session
            .transition(SessionStatus::SessionRunning)
            .map_err(|error| RpcError::internal(error.to_string()))?;
        session.events.emit(
            Scope::session(),
            EventBody::SessionResumed(agent_protocol::events::Empty {}),
        );
        to_value(self.ready(&session, "compatible"))
    }

    fn session_state(&self, params: GetSessionStateParams) -> Result<Value, RpcError> {
        let slot = self.slot();
        match (&*slot, params.session_id) {
            (Slot::Active(session), Some(id)) if session.id() != id => {
                Err(not_found(&id, Some(session.id())))
            }
            (Slot::Active(session), _) => to_value(session.state()),
            (Slot::Creating, None) => to_value(SessionStateResult {
                session_id: None,
                workspace_id: None,
                session_status: SessionStatus::SessionCreated,
                task: None,
                status: SessionStatus::SessionCreated,
                current_task_id: None,
                step_count: 0,
                session_tokens_used: 0,
                max_session_tokens: None,
                incomplete_task: None,
            }),
            (_, Some(id)) => Err(not_found(&id, None)),
            (Slot::Empty, None) => Err(RpcError::new(
                ErrorCode::SessionNotFound,
                "No session has been created in this runtime process yet; call CreateSession first.",
            )),
        }
    }

    fn patch_preview(&self, params: GetPatchPreviewParams) -> Result<Value, RpcError> {
        let session = self.session_for(&params.session_id)?;
        let inner = session.lock();
        let known = inner
            .thread
            .messages()
            .iter()
            .any(|message| message.task_id.as_deref() == Some(params.task_id.as_str()))
            || inner
                .task
                .as_ref()
                .is_some_and(|task| task.task_id == params.task_id);
        if !known {
            return Err(RpcError::new(
                ErrorCode::InvalidRequest,
                format!(
                    "Task {} is not part of session {}.",
                    params.task_id,
                    session.id()
                ),
            ));
        }
        let files = inner.patches.preview(&params.task_id);
        drop(inner);
        to_value(PatchPreviewResult {
            task_id: params.task_id,
            files,
        })
    }

    /// Never an error (INTEROP.md §1): the app's dialog cannot close on one.
    fn approve_action(&self, params: &Value) -> Value {
        let approval_id = params
            .get("approvalId")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        let reason = params
            .get("reason")
            .and_then(Value::as_str)
            .map(str::to_owned);
        let decision = match params.get("decision").and_then(Value::as_str) {
            Some("approved") => Some(Decision::Approved),
            Some("denied") => Some(Decision::Denied),
            _ => None,
        };
        let status = match (decision, self.current()) {
            (None, _) => ApproveActionStatus::InvalidDecision,
            (Some(_), None) => ApproveActionStatus::NotFound,
            (Some(decision), Some(session)) => {
                session.approvals.resolve(&approval_id, decision, reason)
            }
        };
        json!({ "approvalId": approval_id, "status": status })
    }

    fn events(&self, params: GetEventsParams) -> Result<Value, RpcError> {
        let since = params.since_id.unwrap_or(0);
        match self.current() {
            Some(session) => to_value(session.events.since(since)),
            None => to_value(GetEventsResult {
                events: Vec::new(),
                gap_detected: false,
                latest_id: 0,
            }),
        }
    }

    /// Teardown in the spec's order (§3.4); the same path for Shutdown, input EOF and
    /// SIGTERM. Runs once; later calls are no-ops.
    pub fn begin_shutdown(self: &Arc<Self>, reason: &'static str) {
        if self.shutdown_started.swap(true, Ordering::SeqCst) {
            return;
        }
        let host = Arc::clone(self);
        tokio::spawn(async move {
            if let Some(session) = host.current() {
                host.teardown(&session, reason).await;
            }
            host.shutdown_done.send_replace(true);
        });
    }

    async fn teardown(&self, session: &Arc<Session>, reason: &str) {
        let had_task = session.active_task().is_some();
        if let Some((_, cancel)) = session.active_task() {
            cancel.cancel();
            session.approvals.cancel_all();
        }
        if let Some(runner) = session.take_runner() {
            let _ = runner.await;
        }
        crate::extensions::close(self.tools.as_ref()).await;
        let Ok(backends) = self.backends() else {
            return;
        };
        agent_loop::upload_history(session, &backends, None).await;
        let (to, body_of): (SessionStatus, fn(SessionEnded) -> EventBody) = if had_task {
            (SessionStatus::SessionCancelled, EventBody::SessionCancelled)
        } else {
            (SessionStatus::SessionCompleted, EventBody::SessionCompleted)
        };
        let _ = session.transition(to);
        let (task_count, total_tokens) = {
            let inner = session.lock();
            (inner.task_count, inner.tokens_used)
        };
        session.events.emit(
            Scope::session(),
            body_of(SessionEnded {
                task_count,
                total_tokens,
                duration_ms: u64::try_from(session.started.elapsed().as_millis())
                    .unwrap_or(u64::MAX),
            }),
        );
        if let Err(error) = backends.sessions.cancel_session(session.id(), reason).await {
            tracing::warn!(%error, "could not tell the Session Service that the session ended");
        }
        backends.checkpoints.delete(session.id());
        tracing::info!(session_id = session.id(), at = %now_rfc3339(), "session ended");
    }
}

/// §3.2 step 5: a bundle that fails any check never starts a session.
fn validate_bundle(bundle: &PolicyBundle, session_id: &str) -> Result<(), RpcError> {
    let invalid = |message: String, details: Value| {
        RpcError::domain(
            agent_protocol::ErrorShape::new(ErrorCode::PolicyBundleInvalid, message)
                .with_details(details),
        )
    };
    if !SUPPORTED_SCHEMA_VERSIONS.contains(&bundle.schema_version.as_str()) {
        return Err(invalid(
            format!(
                "The policy bundle uses schema version {}, which this agent runtime does not support (supported: {}). Update the agent runtime.",
                bundle.schema_version,
                SUPPORTED_SCHEMA_VERSIONS.join(", ")
            ),
            json!({ "schemaVersion": bundle.schema_version }),
        ));
    }
    if bundle.session_id != session_id {
        return Err(invalid(
            format!(
                "The policy bundle was issued for session {}, not for the new session {session_id}, so it cannot be used.",
                bundle.session_id
            ),
            json!({ "bundleSessionId": bundle.session_id, "sessionId": session_id }),
        ));
    }
    match parse_rfc3339(&bundle.expires_at) {
        None => Err(invalid(
            format!(
                "The policy bundle's expiry time \"{}\" is not a valid RFC 3339 timestamp.",
                bundle.expires_at
            ),
            json!({ "expiresAt": bundle.expires_at }),
        )),
        Some(expires_at) if expires_at <= time::OffsetDateTime::now_utc() => Err(invalid(
            format!(
                "The policy bundle expired at {}, so the session cannot start. Try again to get a fresh policy.",
                bundle.expires_at
            ),
            json!({ "expiresAt": bundle.expires_at }),
        )),
        Some(_) => Ok(()),
    }
}
