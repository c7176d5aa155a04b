//! The JSON-RPC 2.0 server: newline-delimited framing, dispatch, and the single writer that
//! owns the output stream.

pub mod dispatch;
pub mod framing;
pub mod http;
pub mod sandbox_host;
pub mod server;
