//! ResumeSession of a session this process holds no checkpoint of (INTEROP.md §8): the
//! app's "Continue Conversation" after a clean quit. The Session Service resumes the
//! session and the thread is seeded from its uploaded history; when the service says the
//! session has ended, the conversation continues in a new session seeded from that
//! history, and the answer names both.

use std::sync::Arc;

use agent_protocol::ErrorCode;
use agent_protocol::message::ConversationMessage;
use agent_protocol::methods::CreateSessionParams;
use agent_protocol::services::ResumeSessionResponse;
use agent_protocol::state::SessionStatus;
use serde_json::{Value, json};

use super::resume::refreshed_bundle;
use crate::agent_loop::{self, Backends};
use crate::error::RpcError;
use crate::host::{Host, Slot};
use crate::services::ServiceError;
use crate::session::{Identity, Session};

impl Host {
    pub(super) async fn reopen(self: &Arc<Self>, session_id: &str) -> Result<Value, RpcError> {
        let backends = self.backends()?;
        match backends.sessions.resume_session(session_id, None).await {
            Ok(response) => self.reopen_resumed(&backends, session_id, response).await,
            Err(ServiceError::Status {
                status: 409 | 410, ..
            }) => self.continue_ended(&backends, session_id).await,
            Err(error) => {
                if matches!(error, ServiceError::Status { status: 404, .. }) {
                    backends.checkpoints.forget_origin(session_id);
                }
                let mut shape = error.to_shape();
                shape.message = format!(
                    "Session {session_id} cannot be resumed: this runtime process holds nothing of it and the Session Service did not resume it. {}",
                    shape.message
                );
                Err(RpcError::domain(shape))
            }
        }
    }

    /// The service resumed the session: the same session, its thread from its history.
    async fn reopen_resumed(
        self: &Arc<Self>,
        backends: &Backends,
        session_id: &str,
        response: ResumeSessionResponse,
    ) -> Result<Value, RpcError> {
        let workspace_id = response.workspace_id.clone();
        let (bundle, flags) = refreshed_bundle(response, session_id)?;
        let history = self.history_of(backends, &workspace_id, session_id).await?;
        // The bundle names the session's owner; the session record fills what it leaves out.
        let record = backends.sessions.get_session(session_id).await.ok();
        let tenant_id = bundle
            .tenant_id
            .clone()
            .or_else(|| record.as_ref().and_then(|r| r.tenant_id.clone()))
            .unwrap_or_default();
        let user_id = bundle
            .user_id
            .clone()
            .or_else(|| record.as_ref().and_then(|r| r.user_id.clone()))
            .unwrap_or_default();
        let identity = Identity {
            session_id: session_id.to_owned(),
            workspace_id,
            tenant_id,
            user_id,
            name: record.as_ref().and_then(|r| r.name.clone()),
            execution_environment: record
                .as_ref()
                .and_then(|r| r.execution_environment.clone())
                .unwrap_or_else(|| "desktop".to_owned()),
            workspace_root: backends
                .checkpoints
                .origin_of(session_id)
                .and_then(|origin| origin.project_root()),
            os_family: std::env::consts::OS.to_owned(),
            continued_from: None,
        };
        let events = self.event_sink(&identity);
        let session = Arc::new(Session::new(
            identity,
            bundle,
            flags.unwrap_or_default(),
            events,
            self.config.dirs.checkpoints.clone(),
        ));
        session.reopen(history);
        session
            .transition(SessionStatus::SessionRunning)
            .map_err(|error| RpcError::internal(error.to_string()))?;
        *self.slot() = Slot::Active(Arc::clone(&session));
        agent_loop::checkpoint(&session, &backends.checkpoints).await;
        tracing::info!(
            session_id,
            "session resumed from the Session Service and its history"
        );
        self.announce_resumed(&session).await
    }

    /// The service refused because the session has ended: a new session, of the same
    /// owner, seeded from the ended one's history.
    async fn continue_ended(
        self: &Arc<Self>,
        backends: &Backends,
        session_id: &str,
    ) -> Result<Value, RpcError> {
        let refused = |detail: String| {
            RpcError::new(
                ErrorCode::SessionExpired,
                format!(
                    "Session {session_id} has ended and cannot be resumed, and its conversation could not be continued in a new session: {detail}"
                ),
            )
        };
        let record = backends
            .sessions
            .get_session(session_id)
            .await
            .map_err(|error| refused(error.to_string()))?;
        let history = backends
            .workspace
            .session_history(&record.workspace_id, session_id)
            .await
            .map_err(|error| refused(error.to_string()))?;
        let (Some(tenant_id), Some(user_id)) = (record.tenant_id, record.user_id) else {
            return Err(refused(
                "the Session Service did not say whose session it was.".to_owned(),
            ));
        };
        // What the app sent when it opened the ended session: the same project folder (so
        // the service finds the same workspace and the tools the same files) and the same
        // client, which the service judges for compatibility.
        let origin = backends
            .checkpoints
            .origin_of(session_id)
            .unwrap_or_default();
        let params = CreateSessionParams {
            user_id,
            tenant_id,
            execution_environment: record
                .execution_environment
                .unwrap_or_else(|| "desktop".to_owned()),
            workspace_hint: origin.project_folder.map(|folder| {
                agent_protocol::methods::WorkspaceHint {
                    local_paths: vec![folder],
                }
            }),
            client_info: origin.client_info,
            supported_capabilities: origin.supported_capabilities,
            continue_from_session_id: Some(session_id.to_owned()),
        };
        let mut ready = self.establish(params, Some(history)).await?;
        tracing::info!(
            session_id,
            "the ended session's conversation continues in a new session"
        );
        if let Value::Object(result) = &mut ready {
            result.insert("continuedFromSessionId".to_owned(), json!(session_id));
        }
        Ok(ready)
    }

    /// The uploaded history of a session, in any of its forms; `[]` when none was saved.
    async fn history_of(
        &self,
        backends: &Backends,
        workspace_id: &str,
        session_id: &str,
    ) -> Result<Vec<ConversationMessage>, RpcError> {
        backends
            .workspace
            .session_history(workspace_id, session_id)
            .await
            .map_err(|error| {
                let mut shape = error.to_shape();
                shape.message = format!(
                    "Session {session_id} was resumed but its conversation could not be loaded. {}",
                    shape.message
                );
                RpcError::domain(shape)
            })
    }
}
