//! Persisting approval decisions to the Approval Service (local-agent-host.md §10.4,
//! INTEROP.md §6): `POST {APPROVAL_SERVICE_URL}/approvals` with the decision record.
//!
//! Fire-and-forget: [`ApprovalServiceClient::record`] spawns the request and returns at once,
//! so a slow or absent service never holds up the tool call the decision is about. The
//! request is retried like every backend call (`AGENT_RUNTIME_SERVICE_RETRIES`, each attempt
//! bounded by `AGENT_RUNTIME_SERVICE_TIMEOUT_SECONDS`); when it still fails, a warning is
//! logged and nothing else happens. Without `APPROVAL_SERVICE_URL` nothing is sent.

use std::sync::Arc;

use agent_protocol::services::ApprovalDecisionRecord;
use serde_json::Value;

use super::ServiceClient;

#[derive(Clone, Default)]
pub(crate) struct ApprovalServiceClient {
    client: Option<Arc<ServiceClient>>,
}

impl ApprovalServiceClient {
    /// `None`: persistence is skipped (Phase 1 behaviour, local-agent-host.md §10.4 item 3).
    pub(crate) fn new(client: Option<ServiceClient>) -> Self {
        Self {
            client: client.map(Arc::new),
        }
    }

    /// Sends `record` in the background; never waits and never fails.
    pub(crate) fn record(&self, record: ApprovalDecisionRecord) {
        let Some(client) = self.client.clone() else {
            return;
        };
        tokio::spawn(async move {
            match client.post::<_, Value>("/approvals", &record).await {
                Ok(_) => tracing::debug!(
                    target: "audit",
                    approval_id = %record.approval_id,
                    decision = ?record.decision,
                    "approval decision persisted"
                ),
                Err(error) => tracing::warn!(
                    target: "audit",
                    approval_id = %record.approval_id,
                    %error,
                    "could not persist the approval decision; the session goes on"
                ),
            }
        });
    }
}
