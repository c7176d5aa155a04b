//! What the sandbox-host steps keep between them in a scenario's World: held here, beside
//! the sandbox transport, so the World names no step module.

use std::sync::{Arc, Mutex};

use super::sandbox::Frame;

/// One extra reader of the event stream: its frames so far, and a wake-up for each batch.
#[derive(Debug, Default)]
pub(crate) struct Reader {
    pub(crate) frames: Mutex<Vec<Frame>>,
    pub(crate) changed: tokio::sync::Notify,
}

impl Reader {
    pub(crate) fn frames(&self) -> Vec<Frame> {
        self.frames.lock().map(|f| f.clone()).unwrap_or_default()
    }
}

/// What these steps keep between them.
#[derive(Debug, Default)]
pub(crate) struct SandboxScratch {
    /// Replaces the registration token the runtime is launched with.
    pub token_override: Option<String>,
    /// Why the sandbox did not start, when it did not.
    pub start_error: Option<String>,
    /// Frames of the extra readers this scenario opened.
    pub readers: Vec<Arc<Reader>>,
    /// The last plain HTTP answer: status, content type, body.
    pub answer: Option<(u16, String, Vec<u8>)>,
    /// The id a reconnecting reader sent as Last-Event-ID.
    pub resumed_after: u64,
    /// Files the Workspace Service holds for the sandbox's workspace before it starts.
    pub preseed: Vec<(String, Vec<u8>)>,
    /// Raw connections a scenario holds open (half-sent heads, readers that never read).
    pub held: Vec<tokio::net::TcpStream>,
    /// A reader that stopped reading: its connection and the bytes after the answer's head.
    pub stalled_reader: Option<(tokio::net::TcpStream, Vec<u8>)>,
}
