//! The Sandbox Agent Host's HTTP face, as the real Session Service's proxy uses it
//! (INTEROP.md §9): `POST /rpc` (no Authorization: the sandbox is reachable only from the
//! service's network), the SessionEvent stream `GET /events` with ids, replay and any
//! number of readers, `GET /health`, `GET /ready`, and the workspace folder's files
//! (`GET /files`, `GET /files/{path}`, `POST /upload`).
//!
//! A closed event stream is not the end of input: the session ends on Shutdown or SIGTERM.
//! The session itself comes from the registration (`Host::register_sandbox`).

mod files;
mod stream;
mod zip;

use std::path::PathBuf;
use std::sync::Arc;

use agent_protocol::jsonrpc::Response as RpcResponse;
use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::json;

use super::dispatch::handle_line;
use crate::error::RpcError;
use crate::host::Host;
use crate::outbound::Outbound;

struct AppState {
    host: Arc<Host>,
    workspace_dir: PathBuf,
    hub: stream::Hub,
}

/// Serves the sandbox on `listener` until Shutdown (or SIGTERM) has torn the session down
/// and the last events have reached the open streams. `make_host` builds the host around
/// the outbound handle that feeds the event streams; `registered` runs once the listener
/// is serving (it registers with the Session Service).
pub async fn serve_sandbox<F, R>(
    listener: tokio::net::TcpListener,
    workspace_dir: PathBuf,
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
        hub: stream::Hub::start(read_end),
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
    axum::serve(listener, app)
        .with_graceful_shutdown(stop)
        .await?;
    let _ = writer.await;
    Ok(())
}

fn json_body(status: StatusCode, body: String) -> Response {
    (status, [(header::CONTENT_TYPE, "application/json")], body).into_response()
}

async fn rpc(State(state): State<Arc<AppState>>, body: Body) -> Response {
    let limit = state.host.config().rpc.max_line_bytes;
    let bytes: Bytes = match axum::body::to_bytes(body, limit).await {
        Ok(bytes) => bytes,
        Err(_) => {
            let error = RpcError::invalid_request(format!(
                "Invalid request: the body is larger than the limit of {limit} bytes (AGENT_RUNTIME_MAX_LINE_BYTES)."
            ));
            let reply = RpcResponse::failure(None, error.into_object());
            return json_body(
                StatusCode::OK,
                serde_json::to_string(&reply).unwrap_or_default(),
            );
        }
    };
    let outcome = handle_line(&state.host, &bytes).await;
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
