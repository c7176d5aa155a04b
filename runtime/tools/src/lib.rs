//! The Local Tool Runtime (local-tool-runtime.md): the [`ToolRouter`] implementation and the
//! built-in tools. It knows nothing of the agent host: requests arrive as
//! [`agent_protocol::ToolRequest`] and leave as [`agent_protocol::ToolResult`].
//!
//! [`ToolRouter`]: agent_protocol::ToolRouter

// The modules that are `pub` carry only what the runtime binary needs: the MCP client's
// settings (`mcp::McpOptions`), the children's environment allowlist
// (`platform::child_env`) and the sandbox launcher (`sandbox`). Everything else is the
// crate's own.
pub(crate) mod args;
pub(crate) mod backend;
pub(crate) mod file;
pub(crate) mod git;
pub mod mcp;
pub(crate) mod network;
pub(crate) mod output;
pub mod platform;
pub(crate) mod router;
pub mod sandbox;
pub(crate) mod shell;
mod tool;

#[cfg(test)]
mod testing;

pub use router::{LocalToolRouter, ToolOptions};

/// The tool runtime's defaults, written here once: the binary shows them in its `--help` and
/// README table and lets each be overridden.
pub mod defaults {
    use std::time::Duration;

    /// Between `SIGTERM` and `SIGKILL` when a command's process tree is ended
    /// (local-tool-runtime.md §6.2).
    pub const KILL_GRACE: Duration = crate::platform::process::DEFAULT_KILL_GRACE;
    /// The most ReadFile holds of one file, whatever the bundle allows.
    pub const MAX_READ_BYTES: u64 = crate::file::read::DEFAULT_MAX_READ_BYTES;
    /// How long the egress proxy of confined commands waits for a connection.
    pub const EGRESS_CONNECT_TIMEOUT: Duration = crate::sandbox::egress::DEFAULT_CONNECT_TIMEOUT;
    /// How long an MCP server may take to answer `initialize`.
    pub const MCP_STARTUP_TIMEOUT: Duration = crate::mcp::DEFAULT_STARTUP_TIMEOUT;
}
