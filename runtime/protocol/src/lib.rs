//! Message types shared by the agent host and the tool runtime. The conformance kit does
//! not use them: it judges a runtime's JSON against `schemas/` alone.
//!
//! Every type here crosses a boundary (JSON-RPC, the in-process tool boundary, a backend
//! service, the checkpoint file) and has a JSON Schema in `schemas/` that is the source of
//! truth. The tests in this crate serialize these types and validate them against those
//! schemas, so the two cannot drift apart silently.
//!
//! Wire conventions (INTEROP.md): camelCase fields; `null` is accepted wherever a field is
//! optional and means "absent"; unknown fields are ignored when parsing.

pub mod approval;
pub mod audit;
pub mod checkpoint;
pub mod error;
pub mod events;
pub mod extensions;
pub mod jsonrpc;
pub mod message;
pub mod methods;
pub mod policy;
pub mod sandbox;
pub mod services;
pub mod state;
pub mod tool;

mod serde_util;

pub use error::{ErrorCode, ErrorShape};
pub use tool::{
    FileChange, ImagePart, ToolDefinition, ToolRequest, ToolResult, ToolRouter, ToolStatus,
    UrlCheck,
};
