//! The Local Agent Host (local-agent-host.md): the JSON-RPC server the desktop app drives,
//! the session lifecycle and its two-level state machine, the agent loop, the LLM Gateway
//! client, the Local Policy Enforcer, approvals, the Local State Store and events.
//!
//! It reaches tools only through [`agent_protocol::ToolRouter`]; it never imports the tool
//! runtime.

pub(crate) mod agent_loop;
pub(crate) mod approval;
pub(crate) mod audit;
pub(crate) mod backends;
pub(crate) mod config;
pub(crate) mod error;
pub(crate) mod events;
pub(crate) mod host;
pub(crate) mod json_splice;
pub(crate) mod llm;
pub(crate) mod outbound;
pub(crate) mod policy;
pub(crate) mod redact;
pub(crate) mod routing;
pub(crate) mod rpc;
pub(crate) mod services;
pub(crate) mod session;
pub(crate) mod state;
pub(crate) mod thread;
mod time;
pub(crate) mod workspace_files;
pub(crate) mod workspace_stream;

#[cfg(test)]
mod testing;

pub use audit::AuditConfig;
pub use audit::delivery::DeliveryTuning;
pub use audit::run_store::RunStoreLimits;
pub use config::{Dirs, HostConfig, LlmConfig, LoopLimits, RpcLimits, ServiceConfig, ToolTimeouts};
pub use host::{Host, SandboxRegistration};
pub use outbound::Outbound;
pub use redact::Redactor;

/// Taking up the credential values and rules the runtime must never let out, before any
/// line is written (`redact`).
pub mod redaction {
    pub use crate::redact::{from_environment, global, install, warm_up_in_background};
}

/// The transports: newline-delimited JSON-RPC over a stream, HTTP, and the sandbox's HTTP
/// surface (`rpc`).
pub mod transport {
    pub use crate::rpc::http::{HttpError, TOKEN_ENV, serve_http};
    pub use crate::rpc::sandbox_host::{SandboxLimits, serve_sandbox};
    pub use crate::rpc::server::{buffered, serve};
}

/// The enforcer's path decisions, for the test that holds them equal to the tool runtime's
/// (`runtime/cli/tests/path_rules`, the one crate that sees both sides); not an API.
#[doc(hidden)]
pub mod path_check {
    pub use crate::policy::{PolicyEnforcer, Verdict};
}

/// What the criterion benchmarks measure; not an API.
#[doc(hidden)]
pub mod bench {
    pub use crate::llm::request::WireCache;
    pub use crate::llm::stream::Accumulator;
    pub use crate::policy::PolicyEnforcer;
    pub use crate::policy::command::analyse;
    pub use crate::state::{CheckpointStore, DiskCounts, disk_counts};
    pub use crate::thread::Thread;
    pub use crate::thread::window::{Limits, fit, marker_text};
    pub use agent_path_rules::Os;
}
