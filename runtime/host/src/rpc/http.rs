//! JSON-RPC over HTTP, the shape of the web design's sandbox (the Session Service forwards
//! `POST /sessions/{id}/rpc` and streams events over SSE): one request per `POST /rpc` body,
//! its response in the response body (`204` for a notification); SessionEvents on one
//! server-sent event stream, `GET /events`, one `data:` line per event. Every request needs
//! `Authorization: Bearer <token>` (`401` otherwise).
//!
//! The same dispatch as over stdio, so the protocol cannot drift between transports. The
//! end of the event stream (the client went away) is the end of input, i.e. `Shutdown`;
//! after teardown the last events are flushed to the stream, then the server stops.

use std::convert::Infallible;
use std::sync::{Arc, Mutex};

use agent_protocol::jsonrpc::Response as RpcResponse;
use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::sse::{Event, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use futures::Stream;
use tokio::io::AsyncBufReadExt;
use tokio::sync::mpsc;

use super::dispatch::handle_line;
use crate::error::RpcError;
use crate::host::Host;
use crate::outbound::Outbound;

/// The environment variable holding the bearer token clients must present.
pub const TOKEN_ENV: &str = "AGENT_RUNTIME_HTTP_TOKEN";

#[derive(Debug, thiserror::Error)]
pub enum HttpError {
    #[error("the HTTP listener needs a bearer token: set {TOKEN_ENV} to a non-empty secret")]
    MissingToken,
    #[error("serving HTTP failed: {0}")]
    Io(#[from] std::io::Error),
}

struct AppState {
    host: Arc<Host>,
    token: String,
    /// The event lines, taken by the one client that opens `GET /events`.
    events: Mutex<Option<mpsc::UnboundedReceiver<String>>>,
}

/// Serves one session on `listener` until Shutdown (or the event stream's end) has torn it
/// down. `make_host` builds the host around the outbound handle that feeds the event stream.
pub async fn serve_http<F>(
    listener: tokio::net::TcpListener,
    token: String,
    make_host: F,
) -> Result<(), HttpError>
where
    F: FnOnce(Outbound) -> Arc<Host>,
{
    if token.trim().is_empty() {
        return Err(HttpError::MissingToken);
    }
    // The outbound writer owns a pipe; its lines become the event stream.
    let (write_end, read_end) = tokio::io::duplex(256 * 1024);
    let (outbound, writer) = Outbound::new(write_end);
    let writer = tokio::spawn(writer);
    // Unbounded for the reason `Outbound` is: lines wait here until a client opens
    // `GET /events`, and none may be dropped.
    let (sender, receiver) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        let mut lines = tokio::io::BufReader::new(read_end).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            if sender.send(line).is_err() {
                break;
            }
        }
    });
    let host = make_host(outbound.clone());
    let state = Arc::new(AppState {
        host: Arc::clone(&host),
        token,
        events: Mutex::new(Some(receiver)),
    });
    let app = Router::new()
        .route("/rpc", post(rpc))
        .route("/events", get(events))
        .with_state(state);
    let mut finished = host.shutdown_finished();
    let stop = async move {
        let _ = finished.wait_for(|done| *done).await;
        // Flush the last events (session_completed) into the stream, which then ends.
        outbound.close().await;
    };
    axum::serve(listener, app)
        .with_graceful_shutdown(stop)
        .await?;
    let _ = writer.await;
    Ok(())
}

fn authorized(state: &AppState, headers: &HeaderMap) -> bool {
    let presented = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "));
    presented == Some(state.token.as_str())
}

fn unauthorized() -> Response {
    (
        StatusCode::UNAUTHORIZED,
        [(header::WWW_AUTHENTICATE, "Bearer")],
        "A valid bearer token is required (Authorization: Bearer <token>).",
    )
        .into_response()
}

fn json(body: String) -> Response {
    ([(header::CONTENT_TYPE, "application/json")], body).into_response()
}

async fn rpc(State(state): State<Arc<AppState>>, headers: HeaderMap, body: Body) -> Response {
    if !authorized(&state, &headers) {
        return unauthorized();
    }
    let limit = state.host.config().rpc.max_line_bytes;
    let bytes: Bytes = match axum::body::to_bytes(body, limit).await {
        Ok(bytes) => bytes,
        Err(_) => {
            let error = RpcError::invalid_request(format!(
                "Invalid request: the body is larger than the limit of {limit} bytes (AGENT_RUNTIME_MAX_LINE_BYTES)."
            ));
            let reply = RpcResponse::failure(None, error.into_object());
            return json(serde_json::to_string(&reply).unwrap_or_default());
        }
    };
    let outcome = handle_line(&state.host, &bytes).await;
    if outcome.shutdown_requested {
        state.host.begin_shutdown("shutdown");
    }
    match outcome.reply {
        Some(reply) => match serde_json::to_string(&reply) {
            Ok(body) => json(body),
            Err(error) => {
                tracing::error!(%error, "could not serialize a response");
                StatusCode::INTERNAL_SERVER_ERROR.into_response()
            }
        },
        None => StatusCode::NO_CONTENT.into_response(),
    }
}

/// Ends the session when the event stream is dropped (the client went away), like the end
/// of stdin; harmless when teardown already ran.
struct EndOfInput(Arc<Host>);

impl Drop for EndOfInput {
    fn drop(&mut self) {
        self.0.begin_shutdown("input_closed");
    }
}

async fn events(State(state): State<Arc<AppState>>, headers: HeaderMap) -> Response {
    if !authorized(&state, &headers) {
        return unauthorized();
    }
    let receiver = state.events.lock().ok().and_then(|mut slot| slot.take());
    let Some(receiver) = receiver else {
        return (
            StatusCode::CONFLICT,
            "The event stream is already open: one client per runtime.",
        )
            .into_response();
    };
    let guard = EndOfInput(Arc::clone(&state.host));
    Sse::new(event_stream(receiver, guard)).into_response()
}

fn event_stream(
    receiver: mpsc::UnboundedReceiver<String>,
    guard: EndOfInput,
) -> impl Stream<Item = Result<Event, Infallible>> {
    futures::stream::unfold((receiver, guard), |(mut receiver, guard)| async move {
        let line = receiver.recv().await?;
        Some((Ok(Event::default().data(line)), (receiver, guard)))
    })
}
