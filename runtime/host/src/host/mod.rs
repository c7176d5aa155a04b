//! The Host: the JSON-RPC methods of local-agent-host.md §3.1 over the one session slot of
//! this process.

mod create;
mod extension_tools;
mod register;
mod reopen;
mod resume;
mod sandbox_notice;
mod sync;
mod task;
mod teardown;

pub use register::SandboxRegistration;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use agent_protocol::approval::Decision;
use agent_protocol::events::EventBody;
use agent_protocol::methods::{
    self as m, ApproveActionStatus, GetEventsParams, GetEventsResult, GetPatchPreviewParams,
    GetSessionStateParams, PatchPreviewResult, ResumeSessionParams, SessionStateResult,
    ShutdownResult,
};
use agent_protocol::state::SessionStatus;
use agent_protocol::{ErrorCode, ToolRouter};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use tokio::sync::watch;

use crate::agent_loop::Backends;
use crate::config::HostConfig;
use crate::error::RpcError;
use crate::events::{EventSink, Scope};
use crate::outbound::Outbound;
use crate::session::{Identity, Session};

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
    /// Set in sandbox mode (INTEROP.md §9): the session comes from the registration, and
    /// requests without `sessionId` mean it.
    sandbox: OnceLock<register::SandboxBinding>,
    /// True once the sandbox's registration has ended (its session open, or failed).
    registration_ended: watch::Sender<bool>,
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
            sandbox: OnceLock::new(),
            registration_ended: watch::Sender::new(false),
        })
    }

    pub fn config(&self) -> &HostConfig {
        &self.config
    }

    /// The event sink of a session this process opens: its ring bounded as configured, its
    /// events also delivered to audit/telemetry and the run store.
    fn event_sink(&self, identity: &Identity) -> EventSink {
        EventSink::new(
            &identity.session_id,
            &identity.workspace_id,
            self.outbound.clone(),
            self.config.rpc.event_ring_size,
        )
        .with_byte_budget(self.config.rpc.event_ring_bytes)
        .with_outlets(self.outlets(identity))
    }

    /// The end of every resume (from a checkpoint or from the Session Service): announce it,
    /// apply the policy's redaction, report the sandbox and reopen the bundle's extensions
    /// exactly as CreateSession does (a new process has no extension connections yet).
    async fn announce_resumed(&self, session: &Arc<Session>) -> Result<Value, RpcError> {
        session.events.emit(
            Scope::session(),
            EventBody::SessionResumed(agent_protocol::events::Empty {}),
        );
        take_up_policy(session);
        sandbox_notice::announce(self.tools.as_ref(), session);
        extension_tools::open(self.tools.as_ref(), session).await;
        to_value(self.ready(session, "compatible"))
    }

    /// Audit/telemetry delivery and the run store of a session (crate::audit), through the
    /// backends' HTTP client.
    fn outlets(&self, identity: &Identity) -> crate::audit::Outlets {
        let client = self.backends().ok().map(|backends| backends.http.clone());
        crate::audit::Outlets::start(
            &self.config.audit,
            self.config.dirs.logs.as_ref(),
            crate::audit::Ids {
                tenant_id: identity.tenant_id.clone(),
                user_id: identity.user_id.clone(),
                workspace_id: identity.workspace_id.clone(),
                session_id: identity.session_id.clone(),
            },
            client,
        )
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
            Some(session) if session.answers_to(session_id) => Ok(session),
            Some(session) => Err(not_found(session_id, Some(session.id()))),
            None => Err(not_found(session_id, None)),
        }
    }

    pub async fn handle(self: &Arc<Self>, method: &str, params: Value) -> Result<Value, RpcError> {
        // A request that reaches a sandbox while it registers waits for its session.
        self.registration_settled().await;
        let params = self.default_session_id(method, params);
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
        if matches!(
            method,
            m::START_TASK
                | m::CANCEL_TASK
                | m::GET_SESSION_STATE
                | m::GET_PATCH_PREVIEW
                | m::APPROVE_ACTION
        ) && let Some(named) = params.get("sessionId").and_then(Value::as_str)
        {
            self.restore_if_saved(named).await?;
        }
        match method {
            m::CREATE_SESSION => self.create_session(parse(method, params)?).await,
            m::START_TASK => self.start_task(parse(method, params)?).await,
            m::CANCEL_TASK => self.cancel_task(parse(method, params)?),
            m::RESUME_SESSION => self.resume_session(parse(method, params)?).await,
            m::GET_SESSION_STATE => self.session_state(parse(method, params)?),
            m::GET_PATCH_PREVIEW => self.patch_preview(parse(method, params)?),
            m::APPROVE_ACTION => Ok(self.approve_action(&params)),
            m::SHUTDOWN => to_value(ShutdownResult {
                status: "shutting_down".to_owned(),
            }),
            m::GET_EVENTS => self.events(parse(method, params)?),
            m::WORKSPACE_SYNC if self.sandbox.get().is_some() => {
                self.workspace_sync(parse(method, params)?).await
            }
            other => Err(RpcError::method_not_found(other)),
        }
    }

    /// Transparent restore (INTEROP.md §8): after a crash the app restarts the runtime and
    /// goes on naming the old session in its requests. When this process holds no session
    /// and `CHECKPOINT_DIR` holds that one's checkpoint, it is restored first, as
    /// ResumeSession would, and the request is then handled; a failed restore is the
    /// request's answer. A session continued from the named one (§8: the app keeps naming
    /// the ended session) is found by the link its checkpoint holds.
    async fn restore_if_saved(self: &Arc<Self>, session_id: &str) -> Result<(), RpcError> {
        if !matches!(*self.slot(), Slot::Empty) {
            return Ok(());
        }
        let backends = self.backends()?;
        let mut saved = session_id.to_owned();
        if matches!(backends.checkpoints.load(session_id), Ok(None)) {
            match backends.checkpoints.continuation_of(session_id) {
                Some(continuation) => saved = continuation,
                None => return Ok(()),
            }
        }
        self.resume_session(ResumeSessionParams { session_id: saved })
            .await
            .map(|_| ())
    }

    fn session_state(&self, params: GetSessionStateParams) -> Result<Value, RpcError> {
        let slot = self.slot();
        match (&*slot, params.session_id) {
            (Slot::Active(session), Some(id)) if !session.answers_to(&id) => {
                Err(not_found(&id, Some(session.id())))
            }
            (Slot::Active(session), _) => {
                let mut state = session.state();
                state.sandbox = self.tools.sandbox_status();
                to_value(state)
            }
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
                sandbox: self.tools.sandbox_status(),
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
        let known = session.knows_task(&params.task_id);
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
        let files = session.patch_preview(&params.task_id);
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
}

/// Takes up the redaction rules of the session's policy bundle (local-agent-host.md §8.7,
/// Phase 2+); a rule that cannot be used is reported by a `warning` event, and so is a glob
/// entry of `allowedPaths`/`blockedPaths` that does not compile.
pub(super) fn take_up_policy(session: &crate::session::Session) {
    let policy = session.policy();
    let mut problems = crate::redact::add_policy_rules(&policy.bundle().llm_policy.redaction_rules);
    // Path patterns are taken up at the same moments; one that cannot be used says so.
    problems.extend(crate::policy::path_glob::problems(policy.bundle()));
    for message in problems {
        tracing::warn!(%message, "redaction rule");
        session.events.emit(
            crate::events::Scope::session(),
            agent_protocol::events::EventBody::Warning(agent_protocol::events::Warning {
                code: agent_protocol::ErrorCode::PolicyBundleInvalid,
                message,
            }),
        );
    }
}
