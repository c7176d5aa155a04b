//! The backend clients of a session: one HTTP client shared by the LLM Gateway and the
//! services, the checkpoint store, and the Approval Service client. A leaf the host, the
//! loop and the session's task records all use.

use crate::config::HostConfig;
use crate::llm::LlmClient;
use crate::llm::client::LlmSettings;
use crate::services::{Retry, ServiceClient, SessionServiceClient, WorkspaceServiceClient};
use crate::state::CheckpointStore;

/// The clients the loop talks through, built once per process on first use.
pub struct Backends {
    /// The one HTTP client of the process (gateway, services, audit and telemetry).
    pub http: reqwest::Client,
    pub llm: LlmClient,
    pub sessions: SessionServiceClient,
    pub workspace: WorkspaceServiceClient,
    pub checkpoints: CheckpointStore,
    pub approvals: crate::approval::service::ApprovalServiceClient,
}

impl Backends {
    pub fn new(config: &HostConfig) -> Result<Self, reqwest::Error> {
        // One client for the gateway and every service, its trust roots loaded at the first
        // TLS handshake (`agent_tls`). Service calls get their time limit per request
        // (streams must not have one).
        let http = agent_tls::client_builder()
            .connect_timeout(config.llm_connect_timeout)
            .build()?;
        let retry = Retry {
            retries: config.service_retries,
            base_delay: config.service_retry_delay,
        };
        let timeout = config.service_timeout;
        Ok(Self {
            http: http.clone(),
            llm: LlmClient::new(
                LlmSettings {
                    endpoint: config.llm_gateway_endpoint.clone(),
                    auth_token: config.llm_gateway_auth_token.clone(),
                    headers: config.llm_gateway_headers.clone(),
                    idle_timeout: config.llm_idle_timeout,
                    max_retries: config.llm_max_retries,
                    retry_base_delay: config.llm_retry_base_delay,
                    retry_max_delay: config.llm_retry_max_delay,
                },
                http.clone(),
            ),
            sessions: SessionServiceClient::new(ServiceClient::new(
                "Session Service",
                &config.session_service_url,
                http.clone(),
                retry,
                timeout,
            )),
            workspace: WorkspaceServiceClient::new(ServiceClient::new(
                "Workspace Service",
                &config.workspace_service_url,
                http.clone(),
                retry,
                timeout,
            )),
            approvals: crate::approval::service::ApprovalServiceClient::new(
                config
                    .approval_service_url
                    .as_deref()
                    .filter(|url| !url.trim().is_empty())
                    .map(|url| ServiceClient::new("Approval Service", url, http, retry, timeout)),
            ),
            checkpoints: CheckpointStore::new(config.checkpoint_dir.clone()),
        })
    }
}
