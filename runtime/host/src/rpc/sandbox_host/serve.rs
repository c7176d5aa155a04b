//! The sandbox's accept loop: hyper's HTTP/1 connections with a request-head timeout, at
//! most `max_connections` open at once (one more is closed on arrival, so half-sent heads
//! cannot take every descriptor), and a bounded drain at teardown.

use std::future::Future;
use std::sync::Arc;

use axum::Router;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use tokio::sync::Semaphore;

use super::SandboxLimits;

pub(super) async fn serve(
    listener: tokio::net::TcpListener,
    app: Router,
    limits: &SandboxLimits,
    stop: impl Future<Output = ()>,
) -> std::io::Result<()> {
    let open = Arc::new(Semaphore::new(limits.max_connections.max(1)));
    let graceful = GracefulShutdown::new();
    let mut builder = http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_timeout)
        .keep_alive(true);
    tokio::pin!(stop);
    loop {
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(error) => {
                    // Out of descriptors or a reset before accept: not the end of serving.
                    tracing::warn!(%error, "could not accept a connection");
                    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = &mut stop => break,
        };
        let Ok(permit) = Arc::clone(&open).try_acquire_owned() else {
            tracing::warn!(%peer, max = limits.max_connections, "too many connections; closing the newest (AGENT_RUNTIME_SANDBOX_MAX_CONNECTIONS)");
            drop(stream);
            continue;
        };
        if let Some(bytes) = limits.send_buffer_bytes
            && let Err(error) = socket2::SockRef::from(&stream).set_send_buffer_size(bytes)
        {
            tracing::warn!(%error, bytes, "could not set the connection's send buffer (AGENT_RUNTIME_SANDBOX_SEND_BUFFER_BYTES)");
        }
        let service = TowerToHyperService::new(app.clone());
        let connection = builder.serve_connection(TokioIo::new(stream), service);
        let watched = graceful.watch(connection);
        tokio::spawn(async move {
            if let Err(error) = watched.await {
                tracing::debug!(%error, %peer, "connection ended with an error");
            }
            drop(permit);
        });
    }
    drop(listener);
    if tokio::time::timeout(limits.drain_timeout, graceful.shutdown())
        .await
        .is_err()
    {
        tracing::info!("open connections did not finish in time; closing them");
    }
    Ok(())
}
