//! The Local Agent Host (local-agent-host.md): the JSON-RPC server the desktop app drives,
//! the session lifecycle and its two-level state machine, the agent loop, the LLM Gateway
//! client, the Local Policy Enforcer, approvals, the Local State Store and events.
//!
//! It reaches tools only through [`agent_protocol::ToolRouter`]; it never imports the tool
//! runtime.

pub mod agent_loop;
pub mod approval;
pub mod audit;
pub mod backends;
pub mod config;
pub mod error;
pub mod events;
pub mod extensions;
pub mod host;
pub mod llm;
pub mod outbound;
pub mod pieces;
pub mod policy;
pub mod redact;
pub mod routing;
pub mod rpc;
pub mod sandbox;
pub mod services;
pub mod session;
pub mod state;
pub mod thread;
mod time;
pub mod workspace_files;

pub use config::HostConfig;
pub use host::Host;
