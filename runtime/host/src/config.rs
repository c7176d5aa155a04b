//! Runtime configuration. The binary fills it from the same environment variables as the
//! existing Python runtime (so the desktop app can spawn either); every timeout is here so
//! that tests can run in milliseconds.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

#[derive(Debug, Clone)]
pub struct HostConfig {
    /// OpenAI-style base URL including `/v1`.
    pub llm_gateway_endpoint: String,
    pub llm_gateway_auth_token: String,
    pub llm_gateway_headers: BTreeMap<String, String>,
    pub session_service_url: String,
    pub workspace_service_url: String,
    pub approval_service_url: Option<String>,
    pub checkpoint_dir: PathBuf,
    pub log_dir: Option<PathBuf>,
    pub approval_timeout: Duration,
    pub default_max_steps: u32,
    pub llm_max_retries: u32,
    pub llm_retry_base_delay: Duration,
    pub llm_retry_max_delay: Duration,
    pub llm_connect_timeout: Duration,
    /// Longest silence tolerated inside a stream; a long answer is never cut by a total
    /// timeout, a stalled one is.
    pub llm_idle_timeout: Duration,
    pub service_timeout: Duration,
    pub service_retries: u32,
    pub service_retry_delay: Duration,
    pub max_line_bytes: usize,
    pub event_ring_size: usize,
    /// Bytes of event JSON the GetEvents ring may hold: a `tool_completed` carries the
    /// tool's output (up to 100 KiB by default), so a count alone does not bound it.
    pub event_ring_bytes: usize,
    /// The largest `taskOptions.maxSteps` accepted.
    pub max_steps_limit: u32,
    /// Consecutive `max_tokens` answers without tool calls before the task fails.
    pub max_continuations: u32,
    pub file_tool_timeout: Duration,
    /// Default for RunCommand when the model gives no `timeout` (local-agent-host.md §7.4).
    pub shell_tool_timeout: Duration,
    pub network_tool_timeout: Duration,
    pub remote_tool_timeout: Duration,
    /// How long a cancelled task waits for running tools before killing them.
    pub force_cancel_grace: Duration,
    /// Most messages in one LLM request, the system prompt included (the real gateway
    /// rejects more than 50).
    pub max_request_messages: usize,
    /// Latest thread messages kept in every request when the context must be cut.
    pub recency_window: usize,
    /// Audit and telemetry delivery, and the local run store.
    pub audit: crate::audit::AuditConfig,
}

impl HostConfig {
    /// A configuration with the spec's defaults, pointing at the given services.
    pub fn with_endpoints(
        llm_gateway_endpoint: impl Into<String>,
        llm_gateway_auth_token: impl Into<String>,
        session_service_url: impl Into<String>,
        workspace_service_url: impl Into<String>,
    ) -> Self {
        Self {
            llm_gateway_endpoint: llm_gateway_endpoint.into(),
            llm_gateway_auth_token: llm_gateway_auth_token.into(),
            llm_gateway_headers: BTreeMap::new(),
            session_service_url: session_service_url.into(),
            workspace_service_url: workspace_service_url.into(),
            approval_service_url: None,
            checkpoint_dir: std::env::temp_dir()
                .join("agent-runtime")
                .join("checkpoints"),
            log_dir: None,
            approval_timeout: Duration::from_secs(300),
            default_max_steps: 40,
            llm_max_retries: 3,
            llm_retry_base_delay: Duration::from_secs(1),
            llm_retry_max_delay: Duration::from_secs(30),
            llm_connect_timeout: Duration::from_secs(10),
            llm_idle_timeout: Duration::from_secs(60),
            service_timeout: Duration::from_secs(10),
            service_retries: 2,
            service_retry_delay: Duration::from_millis(500),
            max_line_bytes: 256 * 1024 * 1024,
            event_ring_size: 1000,
            event_ring_bytes: 4 * 1024 * 1024,
            max_steps_limit: 1000,
            max_continuations: 3,
            file_tool_timeout: Duration::from_secs(30),
            shell_tool_timeout: Duration::from_secs(300),
            network_tool_timeout: Duration::from_secs(60),
            remote_tool_timeout: Duration::from_secs(120),
            force_cancel_grace: Duration::from_secs(10),
            max_request_messages: 50,
            recency_window: 10,
            audit: crate::audit::AuditConfig::default(),
        }
    }
}
