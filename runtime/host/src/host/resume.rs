//! ResumeSession: a paused live session gets a fresh bundle; a session this process does
//! not hold is restored from its checkpoint (local-agent-host.md §9.5) — the desktop app
//! restarts a crashed runtime and keeps using the old sessionId (INTEROP.md §1) — or,
//! without one, reopened through the Session Service (`reopen`, INTEROP.md §8).

use std::path::PathBuf;
use std::sync::Arc;

use agent_protocol::checkpoint::Checkpoint;
use agent_protocol::events::EventBody;
use agent_protocol::methods::ResumeSessionParams;
use agent_protocol::policy::PolicyBundle;
use agent_protocol::services::ResumeSessionResponse;
use agent_protocol::state::SessionStatus;
use agent_protocol::{ErrorCode, ErrorShape};
use serde_json::{Map, Value, json};

use crate::error::RpcError;
use crate::events::{EventSink, Scope};
use crate::host::{Host, Slot, create, extension_tools, take_up_policy, to_value};
use crate::services::ServiceError;
use crate::session::{Identity, Session};

impl Host {
    pub(super) async fn resume_session(
        self: &Arc<Self>,
        params: ResumeSessionParams,
    ) -> Result<Value, RpcError> {
        let live = {
            let mut slot = self.slot();
            match &*slot {
                Slot::Active(session) if session.answers_to(&params.session_id) => {
                    Some(Arc::clone(session))
                }
                Slot::Active(session) => {
                    return Err(RpcError::new(
                        ErrorCode::SessionNotFound,
                        format!(
                            "Session {} cannot be resumed by this runtime process: it serves session {}. Start another runtime to resume it.",
                            params.session_id,
                            session.id()
                        ),
                    ));
                }
                Slot::Creating => {
                    return Err(RpcError::new(
                        ErrorCode::InvalidRequest,
                        "A session is already being created or restored in this runtime process; one process serves one session.",
                    ));
                }
                Slot::Empty => {
                    *slot = Slot::Creating;
                    None
                }
            }
        };
        match live {
            Some(session) => self.resume_live(&session).await,
            None => {
                let result = self.restore(&params.session_id).await;
                if result.is_err() {
                    let mut slot = self.slot();
                    if matches!(*slot, Slot::Creating) {
                        *slot = Slot::Empty;
                    }
                }
                result
            }
        }
    }

    /// A paused live session (gateway down, policy expired): a fresh bundle from the
    /// Session Service, validated, then RUNNING again. A running one is answered as is.
    async fn resume_live(&self, session: &Arc<Session>) -> Result<Value, RpcError> {
        if session.status() != SessionStatus::SessionPaused {
            return to_value(self.ready(session, "compatible"));
        }
        let backends = self.backends()?;
        let cursor = session.step_cursor();
        let response = backends
            .sessions
            .resume_session(session.id(), cursor)
            .await
            // The same refusals as a crash recovery (§9.6): an expired or unknown session
            // deletes its stale checkpoint; an unreachable service keeps it for a retry.
            .map_err(|error| self.resume_refused(session.id(), &error))?;
        let (bundle, flags) = refreshed_bundle(response, session.id())?;
        session.set_policy(bundle);
        if let Some(flags) = flags {
            session.set_feature_flags(flags);
        }
        take_up_policy(session);
        // The fresh bundle decides the extensions too (PAUSED → RUNNING re-inits the policy,
        // §3.3): servers it adds are connected, servers it drops are closed, a rotated
        // bearer token is used — `open` replaces whatever the old bundle had opened.
        super::sandbox_notice::announce(self.tools.as_ref(), session);
        extension_tools::open(self.tools.as_ref(), session).await;
        session
            .transition(SessionStatus::SessionRunning)
            .map_err(|error| RpcError::internal(error.to_string()))?;
        session.events.emit(
            Scope::session(),
            EventBody::SessionResumed(agent_protocol::events::Empty {}),
        );
        to_value(self.ready(session, "compatible"))
    }

    /// Crash recovery (§9.5): load and check the checkpoint, ask the Session Service to
    /// resume with its cursor, validate the refreshed bundle, rebuild the session. A
    /// corrupt checkpoint (§9.7) or a session the service calls expired or unknown (§9.6)
    /// deletes the checkpoint and says so; the slot stays free for a fresh session.
    async fn restore(self: &Arc<Self>, session_id: &str) -> Result<Value, RpcError> {
        let backends = self.backends()?;
        let checkpoint = match backends.checkpoints.load(session_id) {
            Ok(Some(checkpoint)) => checkpoint,
            // No checkpoint (the last quit was clean): the service and the uploaded
            // history (INTEROP.md §8).
            Ok(None) => return self.reopen(session_id).await,
            Err(corrupt) => {
                return Err(RpcError::domain(
                    ErrorShape::new(
                        ErrorCode::CheckpointCorrupt,
                        format!(
                            "Crash recovery for session {session_id} failed: {corrupt}. The damaged checkpoint was removed; start a new session. The conversation saved after the last finished task is still in the workspace."
                        ),
                    )
                    .with_details(json!({ "sessionId": session_id })),
                ));
            }
        };
        let response = backends
            .sessions
            .resume_session(session_id, checkpoint.step_cursor.clone())
            .await
            .map_err(|error| self.resume_refused(session_id, &error))?;
        let (bundle, flags) = refreshed_bundle(response, session_id)?;
        let session = self.rebuild(checkpoint, bundle, flags);
        session
            .transition(SessionStatus::SessionRunning)
            .map_err(|error| RpcError::internal(error.to_string()))?;
        // The new event-id epoch is on disk before the first event carries it, so a crash
        // of this process too can't make a third one reuse its ids.
        crate::agent_loop::checkpoint(&session, &backends.checkpoints).await;
        *self.slot() = Slot::Active(Arc::clone(&session));
        tracing::info!(session_id, "session restored from its checkpoint");
        self.announce_resumed(&session).await
    }

    /// The Session Service said no. Expired or unknown: the checkpoint is stale, so it is
    /// deleted (§9.6). Unreachable: it is kept, so the app can try again.
    fn resume_refused(&self, session_id: &str, error: &ServiceError) -> RpcError {
        let stale = match error {
            ServiceError::Status { status: 409, .. } | ServiceError::Status { status: 410, .. } => {
                Some(ErrorCode::SessionExpired)
            }
            ServiceError::Status { status: 404, .. } => Some(ErrorCode::SessionNotFound),
            _ => None,
        };
        let mut shape = error.to_shape();
        match stale {
            Some(code) => {
                if let Ok(backends) = self.backends() {
                    backends.checkpoints.delete(session_id);
                }
                shape.code = code;
                shape.retryable = false;
                shape.message = format!(
                    "Session {session_id} can no longer be resumed: {} Its saved checkpoint was removed; start a new session.",
                    error
                );
            }
            None => {
                shape.message = format!(
                    "Could not resume session {session_id}; its checkpoint is kept, try again. {}",
                    shape.message
                );
            }
        }
        RpcError::domain(shape)
    }

    /// The in-memory session a checkpoint describes: identity, thread, tokens, last task;
    /// the feature flags of the resume answer when it has any, else the checkpoint's.
    fn rebuild(
        &self,
        checkpoint: Checkpoint,
        bundle: PolicyBundle,
        flags: Option<Map<String, Value>>,
    ) -> Arc<Session> {
        let identity = Identity {
            session_id: checkpoint.session_id.clone(),
            workspace_id: checkpoint.workspace_id.clone(),
            tenant_id: checkpoint.tenant_id.clone(),
            user_id: checkpoint.user_id.clone(),
            name: checkpoint.name.clone(),
            execution_environment: checkpoint
                .execution_environment
                .clone()
                .unwrap_or_else(|| "desktop".to_owned()),
            workspace_root: checkpoint.workspace_root.as_ref().map(PathBuf::from),
            os_family: checkpoint
                .os_family
                .clone()
                .unwrap_or_else(|| std::env::consts::OS.to_owned()),
            continued_from: checkpoint.continued_from.clone(),
        };
        let events = EventSink::with_epoch(
            &identity.session_id,
            &identity.workspace_id,
            self.outbound.clone(),
            self.config.rpc.event_ring_size,
            checkpoint.event_id_epoch.saturating_add(1),
        )
        .with_byte_budget(self.config.rpc.event_ring_bytes)
        .with_outlets(self.outlets(&identity));
        let flags = flags.unwrap_or_else(|| checkpoint.feature_flags.clone());
        let session = Arc::new(Session::new(
            identity,
            bundle,
            flags,
            events,
            self.config.dirs.checkpoints.clone(),
        ));
        session.restore(checkpoint);
        session
    }
}

/// The bundle of a resume answer, checked like a new one (§9.5 "validate the refreshed
/// policy bundle"), and the fresh feature flags if the answer has them.
pub(super) fn refreshed_bundle(
    response: ResumeSessionResponse,
    session_id: &str,
) -> Result<(PolicyBundle, Option<Map<String, Value>>), RpcError> {
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
    create::validate_bundle(&bundle, session_id)?;
    Ok((bundle, response.feature_flags))
}
