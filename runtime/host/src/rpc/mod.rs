//! The JSON-RPC 2.0 server: newline-delimited framing, dispatch, and the single writer that
//! owns the output stream.

pub(crate) mod dispatch;
pub(crate) mod framing;
pub(crate) mod http;
pub(crate) mod sandbox_host;
pub(crate) mod server;
