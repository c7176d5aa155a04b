//! The MCP client (local-tool-runtime.md §9, system-design.md §19.6–§19.7), built on the
//! official SDK `rmcp` over streamable HTTP.
//!
//! - Discovery: the servers of the policy's `Mcp.Invoke` entry (format in
//!   [`agent_protocol::extensions`]); no other server is contacted.
//! - Registration: only allowlisted tools with sound manifests, as `{server}/{tool}`
//!   ([`manifest`]); rejected tools are reported as notices.
//! - Startup: every server concurrently, each bounded by [`McpOptions::startup_timeout`], so
//!   a server that hangs delays no other and never the loop.
//! - Calls: arguments validated against the tool's schema, the request's `timeoutMs` as the
//!   deadline of the HTTP exchange (dropping it cancels the request), response bodies and
//!   SSE events capped at [`McpOptions::max_response_bytes`] (10 MB) by the SDK transport.
//! - Failure: a server that cannot be reached or fails mid-call is marked unavailable (its
//!   tools disappear from the offer) and retried with exponential backoff — in the
//!   background when tools are listed, inline on the next call to it.
//! - Shutdown: [`McpClient::close`] ends every MCP session.

pub(crate) mod endpoint;
pub(crate) mod manifest;
mod result;
mod server;

#[cfg(test)]
mod tests;

use std::sync::{Arc, RwLock};
use std::time::Duration;

use agent_protocol::extensions::{ExtensionNotice, McpServerConfig, split_mcp_name};
use agent_protocol::{ErrorCode, ToolDefinition, ToolRequest, ToolResult};

use server::{Connected, Server};

/// Largest MCP response body or SSE event accepted (§9.3: "capped at 10MB").
pub(crate) const MAX_RESPONSE_BYTES: usize = 10 * 1024 * 1024;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct McpOptions {
    /// Plain `http` to loopback endpoints (tests only); everything else needs `https`.
    pub allow_loopback_http: bool,
    /// Initialize plus tools/list, per server.
    pub startup_timeout: Duration,
    /// A call's deadline when the request carries no `timeoutMs`.
    pub call_timeout: Duration,
    /// First wait before retrying an unavailable server; doubles up to `retry_max`.
    pub retry_base: Duration,
    pub retry_max: Duration,
    pub max_response_bytes: usize,
}

/// How long a server may take to answer `initialize`.
pub(crate) const DEFAULT_STARTUP_TIMEOUT: Duration = Duration::from_secs(10);

impl Default for McpOptions {
    fn default() -> Self {
        Self {
            allow_loopback_http: false,
            startup_timeout: DEFAULT_STARTUP_TIMEOUT,
            call_timeout: Duration::from_secs(120),
            retry_base: Duration::from_secs(1),
            retry_max: Duration::from_secs(60),
            max_response_bytes: MAX_RESPONSE_BYTES,
        }
    }
}

#[derive(Default)]
pub(crate) struct McpClient {
    options: McpOptions,
    servers: RwLock<Vec<Arc<Server>>>,
}

impl McpClient {
    pub(crate) fn new(options: McpOptions) -> Self {
        Self {
            options,
            servers: RwLock::new(Vec::new()),
        }
    }

    fn servers(&self) -> Vec<Arc<Server>> {
        match self.servers.read() {
            Ok(servers) => servers.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }

    /// Connects to every configured server at once; returns what could not be set up.
    pub(crate) async fn open(&self, configs: Vec<McpServerConfig>) -> Vec<ExtensionNotice> {
        self.close().await;
        let servers: Vec<Arc<Server>> = configs
            .into_iter()
            .map(|config| Arc::new(Server::new(config, self.options)))
            .collect();
        match self.servers.write() {
            Ok(mut slot) => *slot = servers.clone(),
            Err(poisoned) => *poisoned.into_inner() = servers.clone(),
        }
        let attempts = servers
            .iter()
            .map(|server| async move { (server.config.name.clone(), server.connect().await) });
        let mut notices = Vec::new();
        for (name, outcome) in futures::future::join_all(attempts).await {
            match outcome {
                Connected::Ready(rejected) => notices.extend(rejected.into_iter().map(|rejection| {
                    ExtensionNotice {
                        message: rejection.to_string(),
                    }
                })),
                Connected::Failed(error) => notices.push(ExtensionNotice {
                    message: format!(
                        "The MCP server \"{name}\" is unavailable ({error}); its tools are not offered until it can be reached."
                    ),
                }),
            }
        }
        for notice in &notices {
            tracing::warn!(target: "audit", message = %notice.message, "MCP setup");
        }
        notices
    }

    /// The tools of the reachable servers; unreachable ones due for a retry are retried in
    /// the background.
    pub(crate) fn tools(&self) -> Vec<ToolDefinition> {
        let mut tools = Vec::new();
        for server in self.servers() {
            if server.retry_due() {
                server.reconnect_in_background();
            }
            tools.extend(server.definitions());
        }
        tools
    }

    fn server_of(&self, tool_name: &str) -> Option<Arc<Server>> {
        let (server, _) = split_mcp_name(tool_name)?;
        self.servers()
            .into_iter()
            .find(|candidate| candidate.config.name == server)
    }

    pub(crate) async fn call(&self, request: &ToolRequest) -> ToolResult {
        match self.server_of(&request.tool_name) {
            Some(server) => server.call(request, &request.tool_name).await,
            None => ToolResult::failed(
                request,
                ErrorCode::ToolNotFound,
                format!("Unknown tool: {}", request.tool_name),
            ),
        }
    }

    /// Ends every MCP session (session end).
    pub(crate) async fn close(&self) {
        let servers = match self.servers.write() {
            Ok(mut slot) => std::mem::take(&mut *slot),
            Err(poisoned) => std::mem::take(&mut *poisoned.into_inner()),
        };
        futures::future::join_all(servers.iter().map(|server| server.close())).await;
    }
}
