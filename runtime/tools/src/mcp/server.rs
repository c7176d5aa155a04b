//! One remote MCP server (local-tool-runtime.md §9.2): connect and initialize within the
//! startup timeout, list and translate its tools, forward calls within the per-tool
//! timeout, and fall back to "unavailable, retry later" when it cannot be reached.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use agent_protocol::extensions::McpServerConfig;
use agent_protocol::{ErrorCode, ToolDefinition, ToolRequest, ToolResult};
use rmcp::model::{CallToolRequestParams, ClientCapabilities, ClientConfig, Implementation};
use rmcp::service::{Peer, RunningService, ServiceError};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{RoleClient, ServiceExt};
use serde_json::Value;

use super::McpOptions;
use super::manifest::{self, McpTool, Rejected};
use crate::output::format_seconds;

type Service = RunningService<RoleClient, ClientConfig>;

pub(super) struct Server {
    pub config: McpServerConfig,
    options: McpOptions,
    state: Mutex<State>,
    /// The live session, kept apart from `state` because closing it is async.
    service: tokio::sync::Mutex<Option<Service>>,
    /// One connection attempt at a time.
    connecting: tokio::sync::Mutex<()>,
    reconnecting: AtomicBool,
}

#[derive(Default)]
struct State {
    peer: Option<Peer<RoleClient>>,
    tools: Vec<Arc<McpTool>>,
    failures: u32,
    retry_at: Option<Instant>,
    last_error: Option<String>,
    closed: bool,
}

/// The outcome of a connection attempt, for the notices of `open_extensions`.
pub(super) enum Connected {
    Ready(Vec<Rejected>),
    Failed(String),
}

impl Server {
    pub(super) fn new(config: McpServerConfig, options: McpOptions) -> Self {
        Self {
            config,
            options,
            state: Mutex::new(State::default()),
            service: tokio::sync::Mutex::new(None),
            connecting: tokio::sync::Mutex::new(()),
            reconnecting: AtomicBool::new(false),
        }
    }

    fn state(&self) -> MutexGuard<'_, State> {
        match self.state.lock() {
            Ok(state) => state,
            Err(poisoned) => poisoned.into_inner(),
        }
    }

    /// The tools offered now: none while the server is unavailable.
    pub(super) fn definitions(&self) -> Vec<ToolDefinition> {
        let state = self.state();
        match state.peer {
            Some(_) => state
                .tools
                .iter()
                .map(|tool| tool.definition.clone())
                .collect(),
            None => Vec::new(),
        }
    }

    /// Unavailable, not closed, and its backoff has run out.
    pub(super) fn retry_due(&self) -> bool {
        let state = self.state();
        !state.closed
            && state.peer.is_none()
            && state.retry_at.is_none_or(|at| at <= Instant::now())
    }

    /// A reconnection in the background (so listing tools never waits for a server).
    pub(super) fn reconnect_in_background(self: &Arc<Self>) {
        let Ok(handle) = tokio::runtime::Handle::try_current() else {
            return;
        };
        if self.reconnecting.swap(true, Ordering::SeqCst) {
            return;
        }
        let server = Arc::clone(self);
        handle.spawn(async move {
            if let Connected::Failed(error) = server.connect().await {
                tracing::warn!(server = %server.config.name, %error, "MCP server still unavailable");
            }
            server.reconnecting.store(false, Ordering::SeqCst);
        });
    }

    /// Initialize and list tools, bounded by the startup timeout.
    pub(super) async fn connect(&self) -> Connected {
        let _one_at_a_time = self.connecting.lock().await;
        if self.state().peer.is_some() {
            return Connected::Ready(Vec::new());
        }
        if self.state().closed {
            return Connected::Failed("the session has ended".to_owned());
        }
        let timeout = self.options.startup_timeout;
        let attempt = tokio::time::timeout(timeout, self.initialize());
        let (service, listed) = match attempt.await {
            Ok(Ok(connected)) => connected,
            Ok(Err(error)) => return Connected::Failed(self.mark_down(error)),
            Err(_) => {
                return Connected::Failed(self.mark_down(format!(
                    "it did not complete initialization within {} seconds",
                    format_seconds(timeout)
                )));
            }
        };
        let mut tools = Vec::new();
        let mut rejected = Vec::new();
        for tool in &listed {
            match manifest::translate(&self.config.name, &self.config.allowed_tools, tool) {
                Ok(Some(tool)) => tools.push(Arc::new(tool)),
                Ok(None) => {}
                Err(rejection) => rejected.push(rejection),
            }
        }
        let peer = service.peer().clone();
        *self.service.lock().await = Some(service);
        let mut state = self.state();
        if state.closed {
            return Connected::Failed("the session has ended".to_owned());
        }
        state.peer = Some(peer);
        state.tools = tools;
        state.failures = 0;
        state.retry_at = None;
        state.last_error = None;
        Connected::Ready(rejected)
    }

    async fn initialize(&self) -> Result<(Service, Vec<rmcp::model::Tool>), String> {
        let endpoint =
            super::endpoint::check(&self.config.endpoint, self.options.allow_loopback_http)?;
        // No redirects: a redirect could carry the bearer token to another host.
        let http = agent_tls::client_builder()
            .redirect(reqwest::redirect::Policy::none())
            .connect_timeout(self.options.startup_timeout)
            .pool_max_idle_per_host(0)
            .build()
            .map_err(|error| format!("the HTTP client could not be set up: {error}"))?;
        let limit = self.options.max_response_bytes;
        let mut config = StreamableHttpClientTransportConfig::with_uri(endpoint.as_str())
            .max_json_response_size(limit)
            .max_sse_event_size(limit);
        // A dropped stream is not resumed: a server that went away mid-call fails the call
        // now (and is marked unavailable) instead of holding it until the tool timeout.
        config.retry_config =
            Arc::new(rmcp::transport::common::client_side_sse::NeverRetry::default());
        if let Some(token) = &self.config.bearer_token {
            config = config.auth_header(token.clone());
        }
        let transport = StreamableHttpClientTransport::with_client(http, config);
        let client = ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("agent-runtime", env!("CARGO_PKG_VERSION")),
        );
        let service = client
            .serve(transport)
            .await
            .map_err(|error| format!("initialization failed: {error}"))?;
        let tools = service
            .peer()
            .list_all_tools()
            .await
            .map_err(|error| format!("listing its tools failed: {error}"))?;
        Ok((service, tools))
    }

    /// Marks the server unavailable and schedules the next attempt; returns the message.
    fn mark_down(&self, error: String) -> String {
        let mut state = self.state();
        state.peer = None;
        state.failures = state.failures.saturating_add(1);
        let exponent = state.failures.saturating_sub(1).min(16);
        let delay = self
            .options
            .retry_base
            .saturating_mul(1 << exponent)
            .min(self.options.retry_max);
        state.retry_at = Some(Instant::now() + delay);
        state.last_error = Some(error.clone());
        error
    }

    /// Forwards one call (tools/call) within the request's timeout.
    pub(super) async fn call(&self, request: &ToolRequest, tool_name: &str) -> ToolResult {
        if self.retry_due()
            && let Connected::Failed(error) = self.connect().await
        {
            return self.unavailable(request, &error);
        }
        let (peer, tool) = {
            let state = self.state();
            let Some(peer) = state.peer.clone() else {
                let error = state.last_error.clone().unwrap_or_default();
                drop(state);
                return self.unavailable(request, &error);
            };
            let tool = state
                .tools
                .iter()
                .find(|tool| tool.definition.tool_name == tool_name)
                .cloned();
            (peer, tool)
        };
        let Some(tool) = tool else {
            return ToolResult::failed(
                request,
                ErrorCode::ToolNotFound,
                format!(
                    "Unknown tool: {tool_name} (the MCP server does not offer it, or the policy does not allow it)"
                ),
            );
        };
        let arguments = Value::Object(request.arguments.clone());
        if let Err(error) = tool.input.validate(&arguments) {
            return ToolResult::failed(
                request,
                ErrorCode::InvalidRequest,
                format!("The arguments of {tool_name} do not match its input schema: {error}"),
            );
        }
        let params = CallToolRequestParams::new(tool.remote_name.clone())
            .with_arguments(request.arguments.clone());
        let timeout = request
            .limits
            .timeout_ms
            .map_or(self.options.call_timeout, Duration::from_millis);
        // Dropping the call on timeout cancels the HTTP request (and tells the server).
        match tokio::time::timeout(timeout, peer.call_tool(params)).await {
            Err(_) => ToolResult::failed(
                request,
                ErrorCode::ToolExecutionTimeout,
                format!(
                    "{tool_name} timed out after {} seconds",
                    format_seconds(timeout)
                ),
            ),
            Ok(Ok(result)) => super::result::translate(request, &tool, result),
            Ok(Err(ServiceError::McpError(error))) => ToolResult::failed(
                request,
                ErrorCode::ToolExecutionFailed,
                format!(
                    "The MCP server \"{}\" refused the call: {}",
                    self.config.name, error.message
                ),
            ),
            Ok(Err(error)) => {
                let error = match error {
                    // The SDK closes the transport on an oversized body or event too.
                    ServiceError::TransportClosed => format!(
                        "the connection closed: the server went away, or its answer was larger than the {} MB limit",
                        self.options.max_response_bytes / (1024 * 1024)
                    ),
                    other => other.to_string(),
                };
                let error = self.mark_down(error);
                ToolResult::failed(
                    request,
                    ErrorCode::ToolExecutionFailed,
                    format!(
                        "The MCP server \"{}\" failed during the call ({error}); its tools are unavailable until it can be reached again.",
                        self.config.name
                    ),
                )
            }
        }
    }

    fn unavailable(&self, request: &ToolRequest, error: &str) -> ToolResult {
        let wait = self
            .state()
            .retry_at
            .map(|at| at.saturating_duration_since(Instant::now()))
            .unwrap_or_default();
        ToolResult::failed(
            request,
            ErrorCode::ToolExecutionFailed,
            format!(
                "The MCP server \"{}\" is unavailable ({error}); it will be tried again in {} seconds.",
                self.config.name,
                format_seconds(Duration::from_secs(wait.as_secs().max(1)))
            ),
        )
    }

    /// Ends the MCP session (session end); no reconnection afterwards.
    pub(super) async fn close(&self) {
        {
            let mut state = self.state();
            state.closed = true;
            state.peer = None;
        }
        if let Some(mut service) = self.service.lock().await.take() {
            let _ = tokio::time::timeout(self.options.startup_timeout, service.close()).await;
        }
    }
}
