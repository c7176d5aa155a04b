//! Serves JSON-RPC over any byte stream pair (stdio today, a local socket later).

use std::sync::Arc;

use agent_protocol::jsonrpc::Response;
use tokio::io::AsyncBufRead;
use tokio_util::task::TaskTracker;

use super::dispatch::handle_line;
use super::framing::{Frame, LineReader};
use crate::error::RpcError;
use crate::host::Host;
use crate::outbound::Outbound;

/// Reads requests until Shutdown completes or the input closes (which is treated exactly
/// like Shutdown), then flushes every queued line. Each request runs on its own task, so a
/// slow CreateSession never blocks GetSessionState.
pub async fn serve<R>(host: Arc<Host>, reader: R, outbound: Outbound) -> std::io::Result<()>
where
    R: AsyncBufRead + Unpin,
{
    let mut lines = LineReader::new(reader, host.config().rpc.max_line_bytes);
    let mut finished = host.shutdown_finished();
    let in_flight = TaskTracker::new();
    loop {
        let frame = tokio::select! {
            frame = lines.next_frame() => frame,
            _ = finished.wait_for(|done| *done) => break,
        };
        match frame {
            Ok(Frame::Line(line)) => {
                let host = Arc::clone(&host);
                let outbound = outbound.clone();
                in_flight.spawn(async move {
                    let outcome = handle_line(&host, &line).await;
                    if let Some(reply) = outcome.reply {
                        outbound.send(&reply);
                    }
                    if outcome.shutdown_requested {
                        host.begin_shutdown("shutdown");
                    }
                });
            }
            Ok(Frame::TooLong { bytes }) => {
                let error = RpcError::invalid_request(format!(
                    "Invalid request: the line is {bytes} bytes, more than the limit of {} bytes (AGENT_RUNTIME_MAX_LINE_BYTES).",
                    host.config().rpc.max_line_bytes
                ));
                outbound.send(&Response::failure(None, error.into_object()));
            }
            Ok(Frame::Eof) => {
                tracing::info!("input closed; shutting down");
                // Requests already read are answered before teardown starts.
                in_flight.close();
                in_flight.wait().await;
                host.begin_shutdown("input_closed");
                let _ = finished.wait_for(|done| *done).await;
                break;
            }
            Err(error) => {
                tracing::error!(%error, "reading the input failed; shutting down");
                host.begin_shutdown("input_error");
                let _ = finished.wait_for(|done| *done).await;
                break;
            }
        }
    }
    in_flight.close();
    in_flight.wait().await;
    outbound.close().await;
    Ok(())
}

/// Keeps a stream type usable where a `BufRead` is expected.
pub fn buffered<R: tokio::io::AsyncRead>(reader: R) -> tokio::io::BufReader<R> {
    tokio::io::BufReader::with_capacity(64 * 1024, reader)
}
