//! CreateSession (local-agent-host.md §3.2): the Session Service call, bundle validation
//! and the session slot.

use std::path::PathBuf;
use std::sync::Arc;

use agent_protocol::ErrorCode;
use agent_protocol::events::{EventBody, SessionStarted};
use agent_protocol::methods::{CreateSessionParams, SessionReadyResult};
use agent_protocol::policy::{PolicyBundle, SUPPORTED_SCHEMA_VERSIONS};
use agent_protocol::services::CreateSessionRequest;
use agent_protocol::state::SessionStatus;
use serde_json::{Value, json};

use crate::agent_loop::{self, Backends};
use crate::error::RpcError;
use crate::events::Scope;
use crate::host::{Host, Slot, extension_tools, take_up_policy, to_value};
use crate::session::{Identity, Session};
use crate::state::SessionOrigin;
use crate::time::parse_rfc3339;

impl Host {
    pub(super) async fn create_session(
        self: &Arc<Self>,
        params: CreateSessionParams,
    ) -> Result<Value, RpcError> {
        {
            let mut slot = self.slot();
            match &*slot {
                Slot::Empty if self.sandbox.get().is_some() => {
                    return Err(RpcError::new(
                        ErrorCode::InvalidRequest,
                        "This sandbox serves the session it registered with the Session Service and cannot create another; its registration has not completed.",
                    ));
                }
                Slot::Empty => *slot = Slot::Creating,
                Slot::Creating if self.sandbox.get().is_some() => {
                    return Err(RpcError::new(
                        ErrorCode::InvalidRequest,
                        "This sandbox is still registering with the Session Service; its session is not ready yet. Try again in a moment.",
                    ));
                }
                Slot::Creating => {
                    return Err(RpcError::new(
                        ErrorCode::InvalidRequest,
                        "A session is already being created in this runtime process; one process serves one session.",
                    ));
                }
                Slot::Active(session) if self.sandbox.get().is_some() => {
                    // The sandbox's session came from its registration; a CreateSession
                    // proxied to it must not open a second one at the Session Service.
                    return to_value(self.ready(session, "compatible"));
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
        let result = self.establish(params, None).await;
        if result.is_err() {
            let mut slot = self.slot();
            if matches!(*slot, Slot::Creating) {
                *slot = Slot::Empty;
            }
        }
        result
    }

    /// `preloaded` is a history already read (a session continued by ResumeSession,
    /// INTEROP.md §8); else `continueFromSessionId`'s is loaded.
    pub(super) async fn establish(
        self: &Arc<Self>,
        params: CreateSessionParams,
        preloaded: Option<Vec<agent_protocol::message::ConversationMessage>>,
    ) -> Result<Value, RpcError> {
        let backends = self.backends()?;
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
        let supported_capabilities = supported_capabilities(&params.supported_capabilities, &tools);
        let workspace_hint = params.workspace_hint.clone().unwrap_or_default();
        let request = CreateSessionRequest {
            tenant_id: params.tenant_id.clone(),
            user_id: params.user_id.clone(),
            execution_environment: params.execution_environment.clone(),
            workspace_hint: workspace_hint.clone(),
            client_info: client_info.clone(),
            supported_capabilities: supported_capabilities.clone(),
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
        let history = match params.continue_from_session_id.as_deref() {
            _ if preloaded.is_some() => preloaded,
            Some(past) => Some(
                self.past_conversation(
                    &backends,
                    &response.workspace_id,
                    &response.session_id,
                    past,
                )
                .await?,
            ),
            None => None,
        };
        // A continued session keeps the ended one's name (INTEROP.md §8).
        let kept_name = match params.continue_from_session_id.as_deref() {
            Some(past) => past_name(&backends, past).await,
            None => None,
        };
        let identity = Identity {
            session_id: response.session_id.clone(),
            workspace_id: response.workspace_id.clone(),
            tenant_id: params.tenant_id,
            user_id: params.user_id,
            name: kept_name.clone().or_else(|| response.name.clone()),
            execution_environment: params.execution_environment,
            workspace_root: workspace_hint.local_paths.first().map(PathBuf::from),
            os_family: client_info.os_family.clone().unwrap_or_default(),
            continued_from: params.continue_from_session_id.clone(),
        };
        let session = self
            .activate(
                &backends,
                identity,
                bundle,
                response.feature_flags.clone(),
                history,
            )
            .await?;
        if let Some(name) = &kept_name {
            session
                .records
                .keep_name(Arc::clone(&backends), session.id(), name);
        }
        backends.checkpoints.remember_origin(
            session.id(),
            &SessionOrigin {
                project_folder: workspace_hint.local_paths.first().cloned(),
                client_info: params.client_info,
                supported_capabilities: params.supported_capabilities,
            },
        );
        to_value(self.ready(&session, "compatible"))
    }

    /// Opens the session slot with a validated bundle: the event sink, the first
    /// checkpoint, `session_started`, the redaction and sandbox notices and the extensions.
    /// Shared by CreateSession and the sandbox's registration.
    pub(super) async fn activate(
        self: &Arc<Self>,
        backends: &Backends,
        identity: Identity,
        bundle: PolicyBundle,
        feature_flags: serde_json::Map<String, Value>,
        history: Option<Vec<agent_protocol::message::ConversationMessage>>,
    ) -> Result<Arc<Session>, RpcError> {
        let events = self.event_sink(&identity);
        let policy_version = bundle.policy_bundle_version.clone();
        let session = Arc::new(Session::new(
            identity,
            bundle,
            feature_flags,
            events,
            self.config.dirs.checkpoints.clone(),
        ));
        if let Some(history) = history {
            session.continue_conversation(history);
        }
        session
            .transition(SessionStatus::SessionRunning)
            .map_err(|error| RpcError::internal(error.to_string()))?;
        *self.slot() = Slot::Active(Arc::clone(&session));
        // From now on a crash loses nothing: a restarted runtime can resume this session
        // even before its first task.
        agent_loop::checkpoint(&session, &backends.checkpoints).await;
        session.events.emit(
            Scope::session(),
            EventBody::SessionStarted(SessionStarted {
                execution_environment: session.identity.execution_environment.clone(),
                policy_bundle_version: policy_version.clone(),
            }),
        );
        take_up_policy(&session);
        super::sandbox_notice::announce(self.tools.as_ref(), &session);
        extension_tools::open(self.tools.as_ref(), &session).await;
        Ok(session)
    }

    /// The thread of an ended session to continue (system-design.md §2a), from the
    /// Workspace Service. Without it the user would silently lose the context they asked
    /// for, so a failure fails CreateSession — and the session just opened is cancelled.
    async fn past_conversation(
        &self,
        backends: &Backends,
        workspace_id: &str,
        new_session_id: &str,
        past_session_id: &str,
    ) -> Result<Vec<agent_protocol::message::ConversationMessage>, RpcError> {
        match backends
            .workspace
            .session_history(workspace_id, past_session_id)
            .await
        {
            Ok(messages) => Ok(messages),
            Err(error) => {
                if let Err(cancel) = backends
                    .sessions
                    .cancel_session(new_session_id, "history_unavailable")
                    .await
                {
                    tracing::warn!(error = %cancel, "could not cancel the session just created");
                }
                let mut shape = error.to_shape();
                shape.message = format!(
                    "Could not continue the conversation of session {past_session_id}: its history could not be loaded. {}",
                    shape.message
                );
                Err(RpcError::domain(shape))
            }
        }
    }

    pub(super) fn ready(&self, session: &Session, compatibility: &str) -> SessionReadyResult {
        SessionReadyResult {
            session_id: session.identity.session_id.clone(),
            workspace_id: session.identity.workspace_id.clone(),
            name: session.identity.name.clone(),
            log_dir: self
                .config
                .dirs
                .logs
                .as_ref()
                .map(|dir| dir.display().to_string()),
            status: session.status(),
            compatibility_status: compatibility.to_owned(),
            policy_bundle_version: session.policy().bundle().policy_bundle_version.clone(),
            feature_flags: session.feature_flags(),
            continued_from_session_id: None,
        }
    }
}

/// The name of the ended session a new one continues, as the Session Service holds it;
/// none when it has none or cannot say (the continuation is then named as usual).
async fn past_name(backends: &Backends, past_session_id: &str) -> Option<String> {
    match backends.sessions.get_session(past_session_id).await {
        Ok(record) => record.name.filter(|name| !name.trim().is_empty()),
        Err(error) => {
            tracing::warn!(%error, past_session_id, "could not read the ended session's name");
            None
        }
    }
}

/// §3.2 step 5: a bundle that fails any check never starts a session.
pub(super) fn validate_bundle(bundle: &PolicyBundle, session_id: &str) -> Result<(), RpcError> {
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

/// The capabilities asked of the Session Service: the app's, then those of this runtime's
/// tools (and `LLM.Call`) that the app did not name. The real app names a fixed six without
/// `Git.*`, and the real Policy Service grants only what is asked, so forwarding the app's
/// list alone would leave the git tools ungranted for ever; the app's own list is kept
/// whole, since the bundle may still refuse any of it.
fn supported_capabilities(app: &[String], tools: &[String]) -> Vec<String> {
    let own = tools
        .iter()
        .filter_map(|tool| crate::routing::capability_for(tool))
        .chain(["LLM.Call"]);
    let mut capabilities: Vec<String> = app.to_vec();
    for capability in own {
        if !capabilities.iter().any(|named| named == capability) {
            capabilities.push(capability.to_owned());
        }
    }
    capabilities
}

#[cfg(test)]
mod tests {
    use super::supported_capabilities;

    fn strings(items: &[&str]) -> Vec<String> {
        items.iter().map(|item| (*item).to_owned()).collect()
    }

    #[test]
    fn the_apps_capabilities_come_first_and_the_tools_own_are_added_once() {
        let app = strings(&["File.Read", "Shell.Exec", "LLM.Call", "Browser.Open"]);
        let tools = strings(&["ReadFile", "WriteFile", "GitStatus", "GitDiff"]);
        assert_eq!(
            supported_capabilities(&app, &tools),
            strings(&[
                "File.Read",
                "Shell.Exec",
                "LLM.Call",
                "Browser.Open",
                "File.Write",
                "Git.Status",
                "Git.Diff",
            ])
        );
    }

    #[test]
    fn without_an_apps_list_the_tools_decide() {
        assert_eq!(
            supported_capabilities(&[], &strings(&["ReadFile"])),
            strings(&["File.Read", "LLM.Call"])
        );
    }
}
