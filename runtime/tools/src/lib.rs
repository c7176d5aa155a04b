//! The Local Tool Runtime (local-tool-runtime.md): the [`ToolRouter`] implementation and the
//! built-in tools. It knows nothing of the agent host: requests arrive as
//! [`agent_protocol::ToolRequest`] and leave as [`agent_protocol::ToolResult`].
//!
//! [`ToolRouter`]: agent_protocol::ToolRouter

pub mod args;
pub mod backend;
pub mod file;
pub mod git;
pub mod mcp;
pub mod network;
pub mod output;
pub mod platform;
pub mod router;
pub mod sandbox;
pub mod shell;
mod tool;

#[cfg(test)]
mod testing;

pub use router::{LocalToolRouter, ToolOptions};
