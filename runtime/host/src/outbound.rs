//! The one writer of the output stream. Responses and events are queued here and written
//! by a single task, so lines never interleave and event ids reach the client in order.

use serde::Serialize;
use tokio::io::{AsyncWrite, AsyncWriteExt};
use tokio::sync::{mpsc, oneshot};

enum Message {
    Line(String),
    Close(oneshot::Sender<()>),
}

/// A cheap, cloneable handle for queueing protocol lines.
///
/// The queue is unbounded on purpose: `emit` is synchronous and called under the session
/// lock and from the LLM stream, so a bounded queue could only block there (stalling the
/// agent loop behind a slow reader, an app busy rendering, and every RPC behind the lock)
/// or drop events, which the protocol forbids (every event id is sent, in order). What
/// bounds it is the reader: the app reads stdout continuously, and a stream of text chunks
/// is a few hundred bytes each. A client that stops reading altogether costs the events of
/// the tasks it still starts, each bounded by its step limit and the tools' output cap.
#[derive(Clone)]
pub struct Outbound {
    sender: mpsc::UnboundedSender<Message>,
}

impl Outbound {
    /// Creates the handle and the writer future that drains it into `writer`.
    pub fn new<W>(writer: W) -> (Self, impl Future<Output = std::io::Result<()>>)
    where
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let (sender, receiver) = mpsc::unbounded_channel();
        (Self { sender }, write_loop(receiver, writer))
    }

    /// Serializes `message` as one compact line and queues it. Serialization of our own
    /// types cannot fail in practice; if it ever does, the failure is logged, not sent.
    pub fn send<T: Serialize>(&self, message: &T) {
        match serde_json::to_string(message) {
            Ok(line) => self.send_line(line),
            Err(error) => tracing::error!(%error, "could not serialize an outbound message"),
        }
    }

    pub fn send_line(&self, line: String) {
        // Last backstop: the runtime's own credentials never reach the client, even inside
        // an error message.
        let line = match crate::redact::global().redact_values(&line) {
            std::borrow::Cow::Borrowed(_) => line,
            std::borrow::Cow::Owned(clean) => clean,
        };
        // A closed writer means the process is exiting: nothing left to tell.
        let _ = self.sender.send(Message::Line(line));
    }

    /// Flushes everything queued so far and stops the writer.
    pub async fn close(&self) {
        let (done, flushed) = oneshot::channel();
        if self.sender.send(Message::Close(done)).is_ok() {
            let _ = flushed.await;
        }
    }
}

async fn write_loop<W>(
    mut receiver: mpsc::UnboundedReceiver<Message>,
    mut writer: W,
) -> std::io::Result<()>
where
    W: AsyncWrite + Unpin,
{
    while let Some(message) = receiver.recv().await {
        let mut next = Some(message);
        // Write everything already queued, then flush once: low latency for a lone
        // text_chunk, few syscalls under a burst.
        while let Some(message) = next.take() {
            match message {
                Message::Line(mut line) => {
                    line.push('\n');
                    writer.write_all(line.as_bytes()).await?;
                }
                Message::Close(done) => {
                    writer.flush().await?;
                    let _ = done.send(());
                    return Ok(());
                }
            }
            next = receiver.try_recv().ok();
        }
        writer.flush().await?;
    }
    writer.flush().await
}
