//! Command line and environment. Every setting is an environment variable (listed with its
//! default by `--help`); the flags exist for trying the runtime by hand.

use std::collections::BTreeMap;
use std::path::PathBuf;

use agent_host::{Dirs, HostConfig, LlmConfig, LoopLimits, RpcLimits, ServiceConfig, ToolTimeouts};
use anyhow::{Context, bail};
use clap::Parser;

pub(crate) use seconds::Seconds;

mod seconds;

#[cfg(test)]
mod defaults_tests;

/// The reference agent runtime: serves one session over JSON-RPC 2.0 (NDJSON on stdio).
#[derive(Debug, Parser)]
#[command(name = "agent-runtime", version, about, max_term_width = 100)]
pub(crate) struct Cli {
    /// Serve one client on a local socket instead of stdio: a Unix domain socket path, or on
    /// Windows a named pipe `\\.\pipe\NAME`. The runtime accepts one connection; its end
    /// is treated like the end of stdin.
    /// Or `http://IP:PORT`: JSON-RPC as `POST /rpc` bodies, SessionEvents on the SSE stream
    /// `GET /events` (its end is the end of input), bearer token from
    /// AGENT_RUNTIME_HTTP_TOKEN.
    #[arg(long, value_name = "PATH|URL")]
    pub listen: Option<PathBuf>,
    /// Serve as the Sandbox Agent Host the Session Service launches (INTEROP.md §9):
    /// register with SESSION_SERVICE_URL as SESSION_ID using REGISTRATION_TOKEN, then serve
    /// HTTP without a bearer token. Implied when SESSION_ID and REGISTRATION_TOKEN are set.
    #[arg(long)]
    pub sandbox_host: bool,
    /// The sandbox launcher's transport flag; only `http` is served (sandbox mode).
    #[arg(long, value_name = "http")]
    pub transport: Option<String>,
    /// The sandbox's HTTP port [default: 8080] (sandbox mode; on 127.0.0.1 when
    /// SANDBOX_LOCAL_MODE=true, else 0.0.0.0).
    #[arg(long)]
    pub port: Option<u16>,
    /// The sandbox's workspace folder [default: WORKSPACE_DIR, else the current directory]
    /// (sandbox mode): policy paths, files and workspace.sync are relative to it.
    #[arg(long, value_name = "DIR")]
    pub workspace_dir: Option<PathBuf>,
    /// OpenAI-style base URL of the LLM Gateway, including /v1 (required).
    #[arg(long, env = "LLM_GATEWAY_ENDPOINT")]
    llm_gateway_endpoint: Option<String>,
    /// Bearer token for the LLM Gateway (required).
    #[arg(long, env = "LLM_GATEWAY_AUTH_TOKEN", hide_env_values = true)]
    llm_gateway_auth_token: Option<String>,
    /// Extra headers for the LLM Gateway, as a JSON object of strings.
    #[arg(long, env = "LLM_GATEWAY_HEADERS", default_value = "{}")]
    llm_gateway_headers: String,
    /// Base URL of the Session Service (required).
    #[arg(long, env = "SESSION_SERVICE_URL")]
    session_service_url: Option<String>,
    /// Base URL of the Workspace Service (required).
    #[arg(long, env = "WORKSPACE_SERVICE_URL")]
    workspace_service_url: Option<String>,
    /// Base URL of the Approval Service; decisions are not persisted when unset.
    #[arg(long, env = "APPROVAL_SERVICE_URL")]
    approval_service_url: Option<String>,
    /// Directory of the crash-recovery checkpoints [default: platform data dir]/agent-runtime/checkpoints.
    #[arg(long, env = "CHECKPOINT_DIR")]
    checkpoint_dir: Option<PathBuf>,
    /// Directory of the log file (agent-runtime.log); stderr only when unset.
    #[arg(long, env = "LOG_DIR")]
    log_dir: Option<PathBuf>,
    /// Log filter: error, warn, info, debug, trace (or a tracing filter expression).
    #[arg(long, env = "LOG_LEVEL", default_value = "info")]
    pub log_level: String,
    /// Seconds to wait for an approval decision before treating it as denied (fractional allowed).
    #[arg(long, env = "APPROVAL_TIMEOUT_SECONDS", default_value_t = Seconds(ToolTimeouts::default().approval))]
    approval_timeout_seconds: Seconds,
    /// Steps per task when StartTask gives no taskOptions.maxSteps.
    #[arg(long, env = "DEFAULT_MAX_STEPS", default_value_t = LoopLimits::default().default_max_steps)]
    default_max_steps: u32,
    /// Retries of a failed LLM call after the first attempt.
    #[arg(long, env = "LLM_MAX_RETRIES", default_value_t = LlmConfig::default().max_retries)]
    llm_max_retries: u32,
    /// Base delay of the LLM retry backoff, in seconds.
    #[arg(long, env = "LLM_RETRY_BASE_DELAY", default_value_t = Seconds(LlmConfig::default().retry_base_delay))]
    llm_retry_base_delay: Seconds,
    /// Largest delay of the LLM retry backoff, in seconds.
    #[arg(long, env = "LLM_RETRY_MAX_DELAY", default_value_t = Seconds(LlmConfig::default().retry_max_delay))]
    llm_retry_max_delay: Seconds,
    /// Timeout of each Session/Workspace Service request, in seconds.
    #[arg(long, env = "AGENT_RUNTIME_SERVICE_TIMEOUT_SECONDS", default_value_t = Seconds(ServiceConfig::default().timeout))]
    service_timeout_seconds: Seconds,
    /// Retries of a failed Session/Workspace Service request.
    #[arg(long, env = "AGENT_RUNTIME_SERVICE_RETRIES", default_value_t = ServiceConfig::default().retries)]
    service_retries: u32,
    /// Base delay between service retries, in seconds (doubles each time).
    #[arg(long, env = "AGENT_RUNTIME_SERVICE_RETRY_DELAY_SECONDS", default_value_t = Seconds(ServiceConfig::default().retry_delay))]
    service_retry_delay_seconds: Seconds,
    /// Connect timeout to the LLM Gateway, in seconds.
    #[arg(long, env = "AGENT_RUNTIME_LLM_CONNECT_TIMEOUT_SECONDS", default_value_t = Seconds(LlmConfig::default().connect_timeout))]
    llm_connect_timeout_seconds: Seconds,
    /// Longest silence tolerated inside an LLM stream, in seconds.
    #[arg(long, env = "AGENT_RUNTIME_LLM_IDLE_TIMEOUT_SECONDS", default_value_t = Seconds(LlmConfig::default().idle_timeout))]
    llm_idle_timeout_seconds: Seconds,
    /// Timeout of file tools, in seconds.
    #[arg(long, env = "AGENT_RUNTIME_FILE_TOOL_TIMEOUT_SECONDS", default_value_t = Seconds(ToolTimeouts::default().file))]
    file_tool_timeout_seconds: Seconds,
    /// Default RunCommand timeout when the model gives none, in seconds.
    #[arg(long, env = "AGENT_RUNTIME_SHELL_TOOL_TIMEOUT_SECONDS", default_value_t = Seconds(ToolTimeouts::default().shell))]
    shell_tool_timeout_seconds: Seconds,
    /// Timeout of HttpRequest, in seconds.
    #[arg(long, env = "AGENT_RUNTIME_NETWORK_TOOL_TIMEOUT_SECONDS", default_value_t = Seconds(ToolTimeouts::default().network))]
    network_tool_timeout_seconds: Seconds,
    /// Timeout of remote (Backend Tool Service) tools, in seconds.
    #[arg(long, env = "AGENT_RUNTIME_REMOTE_TOOL_TIMEOUT_SECONDS", default_value_t = Seconds(ToolTimeouts::default().remote))]
    remote_tool_timeout_seconds: Seconds,
    /// Seconds a cancelled task waits for running tools before killing them.
    #[arg(long, env = "AGENT_RUNTIME_FORCE_CANCEL_GRACE_SECONDS", default_value_t = Seconds(ToolTimeouts::default().force_cancel_grace))]
    force_cancel_grace_seconds: Seconds,
    /// Seconds between SIGTERM and SIGKILL when a command's process tree is ended
    /// (local-tool-runtime.md §6.2: 5).
    #[arg(long, env = "AGENT_RUNTIME_KILL_GRACE_SECONDS", default_value_t = Seconds(agent_tools::defaults::KILL_GRACE))]
    kill_grace_seconds: Seconds,
    /// Let HttpRequest reach loopback addresses (127.0.0.0/8, ::1) — for tests against local
    /// servers only; private, link-local and metadata addresses stay refused.
    #[arg(
        long,
        env = "AGENT_RUNTIME_ALLOW_LOOPBACK_HTTP",
        default_value_t = false
    )]
    allow_loopback_http: bool,
    /// OS sandbox around the commands and git runs the tools start (Landlock + seccomp on
    /// Linux, Seatbelt on macOS): required (refuse to run them when the OS cannot sandbox),
    /// best-effort (run them unsandboxed then, with a warning at session start) or off.
    #[arg(long, env = "AGENT_RUNTIME_SANDBOX", default_value = "best-effort", value_parser = sandbox_mode)]
    pub sandbox: agent_protocol::sandbox::SandboxMode,
    /// Seconds the egress proxy of a sandboxed command may take to connect to a destination.
    #[arg(
        long,
        env = "AGENT_RUNTIME_EGRESS_CONNECT_TIMEOUT_SECONDS",
        default_value_t = Seconds(agent_tools::defaults::EGRESS_CONNECT_TIMEOUT)
    )]
    egress_connect_timeout_seconds: Seconds,
    /// Base URL of the Backend Tool Service (BackendTool.Invoke tools); none offered when unset.
    #[arg(long, env = "BACKEND_TOOL_SERVICE_URL")]
    backend_tool_service_url: Option<String>,
    /// Search endpoint of WebSearch (SearxNG's JSON API: `GET URL?q=…&format=json`); the
    /// tool is not offered when unset.
    #[arg(long, env = "AGENT_RUNTIME_WEB_SEARCH_URL")]
    web_search_url: Option<String>,
    /// The LLM gateway takes `image_url` content parts (OpenAI's multimodal messages): offer
    /// ViewImage, whose images go to the model that way. Off by default, since the real
    /// gateway refuses any message content that is not a string.
    #[arg(long, env = "AGENT_RUNTIME_LLM_IMAGE_PARTS", default_value_t = false)]
    llm_image_parts: bool,
    /// Seconds each MCP server may take to initialize and list its tools at session start.
    #[arg(
        long,
        env = "AGENT_RUNTIME_MCP_STARTUP_TIMEOUT_SECONDS",
        default_value_t = Seconds(agent_tools::defaults::MCP_STARTUP_TIMEOUT)
    )]
    mcp_startup_timeout_seconds: Seconds,
    /// The most ReadFile holds of one file, in bytes, even when the policy sets no size
    /// limit; a larger file is read in parts (offset/limit).
    #[arg(long, env = "AGENT_RUNTIME_MAX_READ_BYTES", default_value_t = agent_tools::defaults::MAX_READ_BYTES)]
    max_read_bytes: u64,
    /// Largest accepted JSON-RPC line, in bytes.
    #[arg(long, env = "AGENT_RUNTIME_MAX_LINE_BYTES", default_value_t = RpcLimits::default().max_line_bytes)]
    max_line_bytes: usize,
    /// Events kept in memory for GetEvents.
    #[arg(long, env = "AGENT_RUNTIME_EVENT_RING_SIZE", default_value_t = RpcLimits::default().event_ring_size)]
    event_ring_size: usize,
    /// Bytes of events kept in memory for GetEvents (their JSON); the oldest go first.
    #[arg(long, env = "AGENT_RUNTIME_EVENT_RING_BYTES", default_value_t = RpcLimits::default().event_ring_bytes)]
    event_ring_bytes: usize,
    /// Most messages in one LLM request, the system prompt included.
    #[arg(long, env = "AGENT_RUNTIME_MAX_REQUEST_MESSAGES", default_value_t = LoopLimits::default().max_request_messages)]
    max_request_messages: usize,
    /// Latest messages always kept when the context must be cut.
    #[arg(long, env = "AGENT_RUNTIME_RECENCY_WINDOW", default_value_t = LoopLimits::default().recency_window)]
    recency_window: usize,
    /// A file of extra redaction rules, one `kind = regular expression` per line (`#`
    /// comments; a group named `secret` limits the replacement to it). The built-in rules
    /// (API keys, tokens, JWTs, private keys, password assignments) always apply.
    #[arg(long, env = "AGENT_RUNTIME_REDACTION_RULES_FILE")]
    redaction_rules_file: Option<PathBuf>,
    /// Variables that commands and git may see although their names look like secrets
    /// (`*_TOKEN`, `*SECRET*`, `*_KEY`, `*PASSWORD*`, `AWS_*`, …), comma-separated; a
    /// trailing `*` is a prefix (`AWS_REGION,NPM_TOKEN`). The runtime's own credentials are
    /// never passed on.
    #[arg(long, env = "AGENT_RUNTIME_CHILD_ENV_ALLOW", default_value = "")]
    child_env_allow: String,
    /// Largest accepted taskOptions.maxSteps.
    #[arg(long, env = "AGENT_RUNTIME_MAX_STEPS_LIMIT", default_value_t = LoopLimits::default().max_steps_limit)]
    max_steps_limit: u32,
    #[command(flatten)]
    audit: crate::audit_args::AuditArgs,
}

fn required(name: &str, value: &Option<String>) -> anyhow::Result<String> {
    match value.as_deref().map(str::trim) {
        Some(value) if !value.is_empty() => Ok(value.to_owned()),
        _ => bail!(
            "the environment variable {name} is required but not set (see agent-runtime --help)"
        ),
    }
}

fn default_checkpoint_dir() -> PathBuf {
    let base = if cfg!(target_os = "macos") {
        std::env::var_os("HOME").map(|home| PathBuf::from(home).join("Library/Application Support"))
    } else if cfg!(windows) {
        std::env::var_os("APPDATA").map(PathBuf::from)
    } else {
        std::env::var_os("XDG_DATA_HOME")
            .map(PathBuf::from)
            .or_else(|| {
                std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".local/share"))
            })
    };
    base.unwrap_or_else(std::env::temp_dir)
        .join("agent-runtime")
        .join("checkpoints")
}

impl Cli {
    /// The process-wide redactor: default rules, the rules file, and as exact values the
    /// gateway token, credential-like gateway headers and every `*_TOKEN`, `*_SECRET`,
    /// `*_PASSWORD`, `*_API_KEY`, `*_CREDENTIALS` variable of the environment.
    pub(crate) fn redactor(&self, config: &HostConfig) -> anyhow::Result<agent_host::Redactor> {
        let mut extra = vec![config.llm.auth_token.clone()];
        extra.extend(
            config
                .llm
                .headers
                .iter()
                .filter(|(name, _)| {
                    let name = name.to_ascii_lowercase();
                    ["auth", "token", "key", "secret", "cookie"]
                        .iter()
                        .any(|word| name.contains(word))
                })
                .flat_map(|(_, value)| {
                    let bare = value
                        .strip_prefix("Bearer ")
                        .or_else(|| value.strip_prefix("bearer "))
                        .map(str::to_owned);
                    std::iter::once(value.clone()).chain(bare)
                }),
        );
        let rules_file = self
            .redaction_rules_file
            .as_deref()
            .filter(|path| !path.as_os_str().is_empty());
        agent_host::redaction::from_environment(rules_file, std::env::vars(), extra).with_context(
            || {
                format!(
                    "AGENT_RUNTIME_REDACTION_RULES_FILE {}",
                    rules_file
                        .map(|path| path.display().to_string())
                        .unwrap_or_default()
                )
            },
        )
    }

    /// The sandbox of the processes the tools start; this binary is its launcher. The
    /// runtime's own state folders are hidden from them.
    pub(crate) fn sandbox(&self, host: &HostConfig) -> agent_tools::sandbox::SandboxConfig {
        let private_dirs = [
            Some(host.dirs.checkpoints.clone()),
            host.dirs.logs.clone(),
            host.audit.run_store_dir.clone(),
        ]
        .into_iter()
        .flatten()
        .collect();
        agent_tools::sandbox::SandboxConfig {
            mode: self.sandbox,
            launcher: std::env::current_exe().ok(),
            allow_loopback: self.allow_loopback_http,
            egress_connect_timeout: self.egress_connect_timeout_seconds.0,
            private_dirs,
        }
    }

    pub(crate) fn tool_options(&self) -> anyhow::Result<agent_tools::ToolOptions> {
        agent_tools::platform::child_env::set_allowlist(&self.child_env_allow);
        let mcp = agent_tools::mcp::McpOptions {
            startup_timeout: self.mcp_startup_timeout_seconds.0,
            ..Default::default()
        };
        let options = agent_tools::ToolOptions {
            allow_loopback_http: self.allow_loopback_http,
            kill_grace: Some(self.kill_grace_seconds.0),
            max_read_bytes: Some(self.max_read_bytes),
            backend_tool_service_url: self
                .backend_tool_service_url
                .clone()
                .filter(|url| !url.trim().is_empty()),
            web_search_url: self
                .web_search_url
                .clone()
                .filter(|url| !url.trim().is_empty()),
            image_parts: self.llm_image_parts,
            mcp,
        };
        options
            .validate()
            .map_err(|error| anyhow::anyhow!("AGENT_RUNTIME_WEB_SEARCH_URL: {error}"))?;
        Ok(options)
    }

    pub(crate) fn to_host_config(&self) -> anyhow::Result<HostConfig> {
        let endpoint = required("LLM_GATEWAY_ENDPOINT", &self.llm_gateway_endpoint)?;
        let auth_token = required("LLM_GATEWAY_AUTH_TOKEN", &self.llm_gateway_auth_token)?;
        let session_url = required("SESSION_SERVICE_URL", &self.session_service_url)?;
        let workspace_url = required("WORKSPACE_SERVICE_URL", &self.workspace_service_url)?;
        let headers =
            serde_json::from_str::<BTreeMap<String, String>>(&self.llm_gateway_headers)
                .context("LLM_GATEWAY_HEADERS must be a JSON object whose values are strings")?;
        if self.default_max_steps == 0 {
            bail!("DEFAULT_MAX_STEPS must be at least 1");
        }
        if self.max_request_messages < 3 {
            bail!(
                "AGENT_RUNTIME_MAX_REQUEST_MESSAGES must be at least 3 (system prompt, marker, latest message)"
            );
        }
        Ok(HostConfig {
            llm: LlmConfig {
                endpoint,
                auth_token,
                headers,
                max_retries: self.llm_max_retries,
                retry_base_delay: self.llm_retry_base_delay.0,
                retry_max_delay: self.llm_retry_max_delay.0,
                connect_timeout: self.llm_connect_timeout_seconds.0,
                idle_timeout: self.llm_idle_timeout_seconds.0,
            },
            services: ServiceConfig {
                session_url,
                workspace_url,
                approval_url: self
                    .approval_service_url
                    .clone()
                    .filter(|url| !url.trim().is_empty()),
                timeout: self.service_timeout_seconds.0,
                retries: self.service_retries,
                retry_delay: self.service_retry_delay_seconds.0,
            },
            agent_loop: LoopLimits {
                default_max_steps: self.default_max_steps,
                max_steps_limit: self.max_steps_limit.max(self.default_max_steps),
                max_request_messages: self.max_request_messages,
                recency_window: self.recency_window,
                // Not a setting of the binary.
                ..LoopLimits::default()
            },
            tools: ToolTimeouts {
                file: self.file_tool_timeout_seconds.0,
                shell: self.shell_tool_timeout_seconds.0,
                network: self.network_tool_timeout_seconds.0,
                remote: self.remote_tool_timeout_seconds.0,
                approval: self.approval_timeout_seconds.0,
                force_cancel_grace: self.force_cancel_grace_seconds.0,
            },
            rpc: RpcLimits {
                max_line_bytes: self.max_line_bytes,
                event_ring_size: self.event_ring_size,
                event_ring_bytes: self.event_ring_bytes,
            },
            dirs: Dirs {
                checkpoints: self
                    .checkpoint_dir
                    .clone()
                    .unwrap_or_else(default_checkpoint_dir),
                logs: self.log_dir.clone(),
            },
            audit: self.audit.to_config()?,
        })
    }
}

fn sandbox_mode(text: &str) -> Result<agent_protocol::sandbox::SandboxMode, String> {
    agent_protocol::sandbox::SandboxMode::parse(text)
}
