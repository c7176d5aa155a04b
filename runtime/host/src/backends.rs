//! The backend clients of a session: one HTTP client shared by the LLM Gateway and the
//! services, the checkpoint store, and the Approval Service client. A leaf the host, the
//! loop and the session's task records all use.

use crate::config::HostConfig;
use crate::llm::LlmClient;
use crate::services::{Retry, ServiceClient, SessionServiceClient, WorkspaceServiceClient};
use crate::state::CheckpointStore;

/// The clients the loop talks through, built once per process on first use.
pub(crate) struct Backends {
    /// The one HTTP client of the process (gateway, services, audit and telemetry).
    pub http: reqwest::Client,
    pub llm: LlmClient,
    pub sessions: SessionServiceClient,
    pub workspace: WorkspaceServiceClient,
    pub checkpoints: CheckpointStore,
    pub approvals: crate::services::approval::ApprovalServiceClient,
}

impl Backends {
    pub(crate) fn new(config: &HostConfig) -> Result<Self, reqwest::Error> {
        // One client for the gateway and every service, its trust roots loaded at the first
        // TLS handshake (`agent_tls`). Service calls get their time limit per request
        // (streams must not have one).
        let http = agent_tls::client_builder()
            .connect_timeout(config.llm.connect_timeout)
            .build()?;
        let retry = Retry {
            retries: config.services.retries,
            base_delay: config.services.retry_delay,
        };
        let timeout = config.services.timeout;
        Ok(Self {
            http: http.clone(),
            llm: LlmClient::new(config.llm.clone(), http.clone()),
            sessions: SessionServiceClient::new(ServiceClient::new(
                "Session Service",
                &config.services.session_url,
                http.clone(),
                retry,
                timeout,
            )),
            workspace: WorkspaceServiceClient::new(ServiceClient::new(
                "Workspace Service",
                &config.services.workspace_url,
                http.clone(),
                retry,
                timeout,
            )),
            approvals: crate::services::approval::ApprovalServiceClient::new(
                config
                    .services
                    .approval_url
                    .as_deref()
                    .filter(|url| !url.trim().is_empty())
                    .map(|url| ServiceClient::new("Approval Service", url, http, retry, timeout)),
            ),
            checkpoints: CheckpointStore::new(config.dirs.checkpoints.clone()),
        })
    }
}
