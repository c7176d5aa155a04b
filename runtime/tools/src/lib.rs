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
