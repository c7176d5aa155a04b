//! Runtime configuration, grouped by the component each setting tunes. The binary fills it
//! from the same environment variables as the existing Python runtime (so the desktop app can
//! spawn either); every timeout is here so that tests can run in milliseconds.
//!
//! Each default is written once, in the `Default` of its group: the binary's declarations
//! (`--help`) read them from there, and the README's table is held equal to those.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use crate::audit::AuditConfig;

#[derive(Debug, Clone)]
pub struct HostConfig {
    /// The LLM Gateway client (local-agent-host.md §6).
    pub llm: LlmConfig,
    /// The Session, Workspace and Approval Service clients.
    pub services: ServiceConfig,
    /// Bounds of the agent loop and of the requests it builds (§4.3, §5.4).
    pub agent_loop: LoopLimits,
    /// Waits around a tool call: the tool itself (§7.4), its approval (§10), a cancellation
    /// (§4.5).
    pub tools: ToolTimeouts,
    /// The JSON-RPC server and its event ring (§3.1).
    pub rpc: RpcLimits,
    /// Where the Local State Store and the log live (§9.4).
    pub dirs: Dirs,
    /// Audit and telemetry delivery, and the local run store.
    pub audit: AuditConfig,
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
            llm: LlmConfig {
                endpoint: llm_gateway_endpoint.into(),
                auth_token: llm_gateway_auth_token.into(),
                ..LlmConfig::default()
            },
            services: ServiceConfig {
                session_url: session_service_url.into(),
                workspace_url: workspace_service_url.into(),
                ..ServiceConfig::default()
            },
            agent_loop: LoopLimits::default(),
            tools: ToolTimeouts::default(),
            rpc: RpcLimits::default(),
            dirs: Dirs::default(),
            audit: AuditConfig::default(),
        }
    }
}

/// The LLM Gateway and how its calls are retried. The default has no endpoint and no token:
/// they are required, [`HostConfig::with_endpoints`] takes them.
#[derive(Debug, Clone)]
pub struct LlmConfig {
    /// OpenAI-style base URL including `/v1`.
    pub endpoint: String,
    pub auth_token: String,
    pub headers: BTreeMap<String, String>,
    /// Retries of a failed call after the first attempt.
    pub max_retries: u32,
    pub retry_base_delay: Duration,
    pub retry_max_delay: Duration,
    pub connect_timeout: Duration,
    /// Longest silence tolerated inside a stream; a long answer is never cut by a total
    /// timeout, a stalled one is.
    pub idle_timeout: Duration,
}

impl Default for LlmConfig {
    fn default() -> Self {
        Self {
            endpoint: String::new(),
            auth_token: String::new(),
            headers: BTreeMap::new(),
            max_retries: 3,
            retry_base_delay: Duration::from_secs(1),
            retry_max_delay: Duration::from_secs(30),
            connect_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(60),
        }
    }
}

/// The backend services other than the gateway. The default names no service: the Session
/// and Workspace Services are required, [`HostConfig::with_endpoints`] takes them.
#[derive(Debug, Clone)]
pub struct ServiceConfig {
    pub session_url: String,
    pub workspace_url: String,
    /// Approval decisions are not persisted when `None`.
    pub approval_url: Option<String>,
    /// Per Session/Workspace request.
    pub timeout: Duration,
    pub retries: u32,
    /// Base delay between retries; it doubles each time.
    pub retry_delay: Duration,
}

impl Default for ServiceConfig {
    fn default() -> Self {
        Self {
            session_url: String::new(),
            workspace_url: String::new(),
            approval_url: None,
            timeout: Duration::from_secs(10),
            retries: 2,
            retry_delay: Duration::from_millis(500),
        }
    }
}

#[derive(Debug, Clone)]
pub struct LoopLimits {
    /// Steps per task when StartTask gives no `taskOptions.maxSteps`.
    pub default_max_steps: u32,
    /// The largest `taskOptions.maxSteps` accepted.
    pub max_steps_limit: u32,
    /// Consecutive `max_tokens` answers without tool calls before the task fails.
    pub max_continuations: u32,
    /// Most messages in one LLM request, the system prompt included (the real gateway
    /// rejects more than 50).
    pub max_request_messages: usize,
    /// Latest thread messages kept in every request when the context must be cut.
    pub recency_window: usize,
}

impl Default for LoopLimits {
    fn default() -> Self {
        Self {
            default_max_steps: 40,
            max_steps_limit: 1000,
            max_continuations: 3,
            max_request_messages: 50,
            recency_window: 10,
        }
    }
}

#[derive(Debug, Clone)]
pub struct ToolTimeouts {
    pub file: Duration,
    /// Default for RunCommand when the model gives no `timeout` (local-agent-host.md §7.4).
    pub shell: Duration,
    pub network: Duration,
    /// Backend Tool Service and MCP tools.
    pub remote: Duration,
    /// How long a call waits for an approval decision before it counts as denied.
    pub approval: Duration,
    /// How long a cancelled task waits for running tools before killing them.
    pub force_cancel_grace: Duration,
}

impl Default for ToolTimeouts {
    fn default() -> Self {
        Self {
            file: Duration::from_secs(30),
            shell: Duration::from_secs(300),
            network: Duration::from_secs(60),
            remote: Duration::from_secs(120),
            approval: Duration::from_secs(300),
            force_cancel_grace: Duration::from_secs(10),
        }
    }
}

#[derive(Debug, Clone)]
pub struct RpcLimits {
    /// Largest accepted JSON-RPC line, in bytes.
    pub max_line_bytes: usize,
    /// Events the GetEvents ring keeps.
    pub event_ring_size: usize,
    /// Bytes of event JSON the GetEvents ring may hold: a `tool_completed` carries the
    /// tool's output (up to 100 KiB by default), so a count alone does not bound it.
    pub event_ring_bytes: usize,
}

impl Default for RpcLimits {
    fn default() -> Self {
        Self {
            max_line_bytes: 256 * 1024 * 1024,
            event_ring_size: 1000,
            event_ring_bytes: 4 * 1024 * 1024,
        }
    }
}

#[derive(Debug, Clone)]
pub struct Dirs {
    /// The crash-recovery checkpoints. The default is the temporary folder, for tests and
    /// benches; the binary puts them in the platform's data folder.
    pub checkpoints: PathBuf,
    /// The log file's folder, and the run store's default parent; `None`: stderr only.
    pub logs: Option<PathBuf>,
}

impl Default for Dirs {
    fn default() -> Self {
        Self {
            checkpoints: std::env::temp_dir()
                .join("agent-runtime")
                .join("checkpoints"),
            logs: None,
        }
    }
}
