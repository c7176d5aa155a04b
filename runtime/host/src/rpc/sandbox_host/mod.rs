//! The Sandbox Agent Host's HTTP face, as the real Session Service's proxy uses it
//! (INTEROP.md §9): `POST /rpc` (no Authorization: the sandbox is reachable only from the
//! service's network), the SessionEvent stream `GET /events` with ids, replay and any
//! number of readers, `GET /health`, `GET /ready`, and the workspace folder's files
//! (`GET /files`, `GET /files/{path}`, `POST /upload`).
//!
//! A closed event stream is not the end of input: the session ends on Shutdown or SIGTERM.
//! The session itself comes from the registration (`Host::register_sandbox`).
//!
//! The endpoint has no authentication, so it is bounded ([`SandboxLimits`], each a README
//! knob): a request head must arrive within a timeout and a body must keep moving, the
//! connections open at once are capped, `/rpc` and `/upload` bodies are read as they arrive
//! up to a size answered 413 (only a few large `/rpc` bodies at once), files and archives
//! stream out, and event readers share one ring.

mod files;
mod multipart;
mod serve;
mod stream;
mod zip;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use agent_protocol::jsonrpc::Response as RpcResponse;
use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use futures::StreamExt;
use serde_json::json;

use super::dispatch::handle_line;
use crate::error::RpcError;
use crate::host::Host;
use crate::outbound::Outbound;

/// The bounds of the sandbox's HTTP surface; see README "Sandbox host bounds".
#[derive(Debug, Clone)]
pub struct SandboxLimits {
    /// A request head not complete by then closes the connection.
    pub header_timeout: Duration,
    /// A request body that delivers nothing for this long is answered 408.
    pub body_timeout: Duration,
    /// Connections open at once; one more is closed at once.
    pub max_connections: usize,
    /// The largest `/rpc` body (answered 413 past it).
    pub rpc_max_bytes: usize,
    /// The largest `/upload` body (answered 413 past it; it streams to disk).
    pub upload_max_bytes: u64,
    /// `/rpc` bodies past 64 KiB read at once; more wait their turn.
    pub large_bodies: usize,
    /// Events a reader may have queued towards its socket before it is dropped (it
    /// reconnects with `Last-Event-ID`).
    pub reader_backlog: usize,
    /// How long teardown waits for open connections before closing them.
    pub drain_timeout: Duration,
    /// The kernel's send buffer of each connection (`SO_SNDBUF`); `None`: the system's,
    /// autotuned (on loopback up to megabytes, taken before a reader that stops reading
    /// falls behind).
    pub send_buffer_bytes: Option<usize>,
}

/// An `/rpc` body up to this size needs no turn among the large ones.
const SMALL_BODY_BYTES: usize = 64 * 1024;

impl Default for SandboxLimits {
    fn default() -> Self {
        Self {
            header_timeout: Duration::from_secs(10),
            body_timeout: Duration::from_secs(30),
            max_connections: 256,
            rpc_max_bytes: 16 * 1024 * 1024,
            upload_max_bytes: 1024 * 1024 * 1024,
            large_bodies: 2,
            reader_backlog: 1024,
            drain_timeout: Duration::from_secs(5),
            send_buffer_bytes: None,
        }
    }
}

struct AppState {
    host: Arc<Host>,
    workspace_dir: PathBuf,
    hub: stream::Hub,
    limits: SandboxLimits,
    large_bodies: tokio::sync::Semaphore,
}

/// Serves the sandbox on `listener` until Shutdown (or SIGTERM) has torn the session down
/// and the last events have reached the open streams. `make_host` builds the host around
/// the outbound handle that feeds the event streams; `registered` runs once the listener
/// is serving (it registers with the Session Service).
pub async fn serve_sandbox<F, R>(
    listener: tokio::net::TcpListener,
    workspace_dir: PathBuf,
    limits: SandboxLimits,
    make_host: F,
    registered: R,
) -> std::io::Result<()>
where
    F: FnOnce(Outbound) -> Arc<Host>,
    R: FnOnce(Arc<Host>) -> futures::future::BoxFuture<'static, ()>,
{
    let (write_end, read_end) = tokio::io::duplex(256 * 1024);
    let (outbound, writer) = Outbound::new(write_end);
    let writer = tokio::spawn(writer);
    let host = make_host(outbound.clone());
    let state = Arc::new(AppState {
        host: Arc::clone(&host),
        workspace_dir,
        hub: stream::Hub::start(read_end, limits.reader_backlog),
        large_bodies: tokio::sync::Semaphore::new(limits.large_bodies.max(1)),
        limits: limits.clone(),
    });
    let app = Router::new()
        .route("/rpc", post(rpc))
        .route("/events", get(stream::events))
        .route("/health", get(health))
        .route("/ready", get(ready))
        .route("/files", get(files::list))
        .route("/files/{*path}", get(files::download))
        .route("/upload", post(files::upload))
        .with_state(Arc::clone(&state));
    let mut finished = host.shutdown_finished();
    let stop = async move {
        let _ = finished.wait_for(|done| *done).await;
        // Flush the last events (session_completed) into the streams, which then end.
        outbound.close().await;
    };
    tokio::spawn(registered(Arc::clone(&host)));
    serve::serve(listener, app, &limits, stop).await?;
    let _ = writer.await;
    Ok(())
}

fn json_body(status: StatusCode, body: String) -> Response {
    (status, [(header::CONTENT_TYPE, "application/json")], body).into_response()
}

async fn rpc(State(state): State<Arc<AppState>>, body: Body) -> Response {
    let (bytes, turn) = match read_rpc_body(&state, body).await {
        Ok(read) => read,
        Err(response) => return response,
    };
    let outcome = handle_line(&state.host, &bytes).await;
    drop(bytes);
    drop(turn);
    if outcome.shutdown_requested {
        state.host.begin_shutdown("shutdown_requested");
    }
    match outcome.reply {
        Some(reply) => match serde_json::to_string(&reply) {
            Ok(body) => json_body(StatusCode::OK, body),
            Err(error) => {
                tracing::error!(%error, "could not serialize a response");
                StatusCode::INTERNAL_SERVER_ERROR.into_response()
            }
        },
        None => StatusCode::NO_CONTENT.into_response(),
    }
}

/// A JSON-RPC error object as an HTTP answer with `status`.
fn rpc_refusal(status: StatusCode, message: String) -> Response {
    let reply = RpcResponse::failure(None, RpcError::invalid_request(message).into_object());
    json_body(status, serde_json::to_string(&reply).unwrap_or_default())
}

/// The body of an `/rpc` request, read as it arrives: past the limit it is answered 413,
/// stalled 408; past [`SMALL_BODY_BYTES`] it waits for a turn among the large bodies, so a
/// few huge requests at once cannot take the memory.
async fn read_rpc_body(
    state: &AppState,
    body: Body,
) -> Result<(Bytes, Option<tokio::sync::SemaphorePermit<'_>>), Response> {
    let limits = &state.limits;
    let limit = limits
        .rpc_max_bytes
        .min(state.host.config().rpc.max_line_bytes);
    let too_large = || {
        rpc_refusal(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!(
                "Invalid request: the body is larger than the limit of {limit} bytes (AGENT_RUNTIME_SANDBOX_RPC_MAX_BYTES)."
            ),
        )
    };
    let mut stream = body.into_data_stream();
    let mut collected = Vec::new();
    let mut permit = None;
    loop {
        let next = tokio::time::timeout(limits.body_timeout, stream.next())
            .await
            .map_err(|_| {
                rpc_refusal(
                    StatusCode::REQUEST_TIMEOUT,
                    format!(
                        "Invalid request: the body stalled for {} s (AGENT_RUNTIME_SANDBOX_BODY_TIMEOUT_SECONDS).",
                        limits.body_timeout.as_secs_f64()
                    ),
                )
            })?;
        let chunk = match next {
            None => break,
            Some(Ok(chunk)) => chunk,
            Some(Err(error)) => {
                return Err(rpc_refusal(
                    StatusCode::BAD_REQUEST,
                    format!("Invalid request: the body could not be read ({error})."),
                ));
            }
        };
        if collected.len() + chunk.len() > limit {
            return Err(too_large());
        }
        if permit.is_none() && collected.len() + chunk.len() > SMALL_BODY_BYTES {
            let turn = tokio::time::timeout(limits.body_timeout, state.large_bodies.acquire());
            match turn.await {
                Ok(Ok(granted)) => permit = Some(granted),
                _ => {
                    return Err(rpc_refusal(
                        StatusCode::SERVICE_UNAVAILABLE,
                        "Invalid request: too many large requests at once; retry.".to_owned(),
                    ));
                }
            }
        }
        collected.extend_from_slice(&chunk);
    }
    Ok((Bytes::from(collected), permit))
}

async fn health() -> Response {
    json_body(StatusCode::OK, json!({ "status": "ok" }).to_string())
}

/// Ready once the registration has opened the session, until teardown begins.
async fn ready(State(state): State<Arc<AppState>>) -> Response {
    match state.host.sandbox_session_id() {
        Some(session_id) if !state.host.is_shutting_down() => json_body(
            StatusCode::OK,
            json!({ "status": "ready", "sessionId": session_id }).to_string(),
        ),
        Some(session_id) => json_body(
            StatusCode::SERVICE_UNAVAILABLE,
            json!({ "status": "shutting_down", "sessionId": session_id }).to_string(),
        ),
        None => json_body(
            StatusCode::SERVICE_UNAVAILABLE,
            json!({ "status": "registering" }).to_string(),
        ),
    }
}
