//! A plain web server on loopback for HttpRequest (local-tool-runtime.md §4.5): the success
//! side of the tool, which a runtime only reaches in its test mode that lets HttpRequest call
//! loopback. Every request is recorded. Routes:
//!
//! - `/plain`: `200`, `text/plain`, [`WebFake::PLAIN_BODY`].
//! - `/echo`: `200`, `application/json`: `{"method", "headers": {name: value}, "body"}` of the
//!   request (header names lower case).
//! - `/large/{bytes}`: `200`, `text/plain`, exactly `bytes` bytes: lines `line NNNNNN\n`,
//!   the last line cut to fit, so the head and the tail of a cut body are recognisable.
//! - `/redirect/{hops}`: `302` to `/redirect/{hops-1}`; `/redirect/0` is `200` `arrived`.
//! - `/redirect-host/{host}/{path}`: `302` to `http://{host}:{this port}/{path}`, the same
//!   server under another name (`localhost`), for per-hop domain rules.
//! - `/huge/{bytes}`: `200` with `bytes` bytes streamed in 64 KiB chunks and no
//!   `Content-Length`, so a client can only stop it by counting.
//! - `/never`: headers never come; the request hangs until the client gives up.
//! - `/status/{code}`: that status with the body `status {code}`.
//! - `/page`: `200`, `text/html`: [`WebFake::PAGE_HTML`], a page with a heading, a link, a
//!   list, a script and a style, for FetchUrl's Markdown (INTEROP.md §11).
//! - `/search?q=…&format=json`: a search endpoint speaking SearxNG's JSON API for WebSearch
//!   (INTEROP.md §11): `{"query", "results": [{title, url, content}]}`, seven results
//!   `Result N for {q}` (`https://example.com/result/N`, `Snippet N about {q}.`), none for
//!   the query `nothing`.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{Path, State};
use axum::http::{HeaderMap, Method, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use axum::routing::any;
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use crate::recording::RecordedRequest;
use crate::util::lock;

type Recorded = Arc<Mutex<Vec<RecordedRequest>>>;

/// The web server fake; stops when dropped.
pub struct WebFake {
    address: SocketAddr,
    recorded: Recorded,
    stop: CancellationToken,
}

const CHUNK_BYTES: usize = 64 * 1024;

impl WebFake {
    /// The body of `/plain`.
    pub const PLAIN_BODY: &'static str = "Hello from the web fake.\n";

    /// The body of `/page`.
    pub const PAGE_HTML: &'static str = "<!doctype html><html><head><title>Fake page</title>\
        <style>h1 { color: red }</style></head><body><h1>Release notes</h1>\
        <script>document.write('scripted')</script>\
        <p>Read <a href=\"https://example.com/docs\">the guide</a> first.</p>\
        <ul><li>faster builds</li><li>safer defaults</li></ul></body></html>";

    /// How many results `/search` answers.
    pub const SEARCH_RESULTS: usize = 7;

    pub async fn start() -> anyhow::Result<Self> {
        let recorded: Recorded = Arc::default();
        let router = Router::new()
            .route("/plain", any(plain))
            .route("/echo", any(echo))
            .route("/large/{bytes}", any(large))
            .route("/redirect/{hops}", any(redirect))
            .route("/redirect-host/{host}/{*path}", any(redirect_host))
            .route("/huge/{bytes}", any(huge))
            .route("/never", any(never))
            .route("/status/{code}", any(status))
            .route("/page", any(page))
            .route("/search", any(search))
            .fallback(|| async { (StatusCode::NOT_FOUND, "no such route in the web fake") })
            .layer(axum::middleware::from_fn_with_state(
                Arc::clone(&recorded),
                record,
            ));
        let stop = CancellationToken::new();
        let (address, _) = crate::loopback::serve(router, stop.clone(), "web fake").await?;
        Ok(Self {
            address,
            recorded,
            stop,
        })
    }

    /// `http://127.0.0.1:PORT`, no trailing slash.
    pub fn url(&self) -> String {
        format!("http://{}", self.address)
    }

    /// Every request received so far, in arrival order.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        lock(&self.recorded).clone()
    }
}

impl Drop for WebFake {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

async fn record(
    State(recorded): State<Recorded>,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    let (parts, body) = request.into_parts();
    let bytes = axum::body::to_bytes(body, usize::MAX)
        .await
        .unwrap_or_default();
    lock(&recorded).push(RecordedRequest::from_parts(
        &parts.method,
        &parts.uri,
        &parts.headers,
        &bytes,
    ));
    next.run(axum::extract::Request::from_parts(parts, Body::from(bytes)))
        .await
}

fn text(body: impl Into<Body>) -> Response {
    (
        [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
        body.into(),
    )
        .into_response()
}

async fn plain() -> Response {
    text(WebFake::PLAIN_BODY)
}

async fn echo(method: Method, _uri: Uri, headers: HeaderMap, body: Bytes) -> Response {
    let headers: Map<String, Value> = headers
        .iter()
        .map(|(name, value)| {
            (
                name.as_str().to_owned(),
                json!(String::from_utf8_lossy(value.as_bytes())),
            )
        })
        .collect();
    let answer = json!({
        "method": method.as_str(),
        "headers": headers,
        "body": String::from_utf8_lossy(&body),
    });
    (
        [(header::CONTENT_TYPE, "application/json")],
        answer.to_string(),
    )
        .into_response()
}

/// `bytes` bytes of numbered lines.
pub fn numbered_lines(bytes: usize) -> String {
    let mut body = String::with_capacity(bytes + 16);
    let mut n = 1;
    while body.len() < bytes {
        body.push_str(&format!("line {n:06}\n"));
        n += 1;
    }
    body.truncate(bytes);
    body
}

async fn large(Path(bytes): Path<usize>) -> Response {
    text(numbered_lines(bytes))
}

async fn redirect(Path(hops): Path<u32>) -> Response {
    match hops.checked_sub(1) {
        None => text("arrived"),
        Some(next) => (
            StatusCode::FOUND,
            [(header::LOCATION, format!("/redirect/{next}"))],
        )
            .into_response(),
    }
}

async fn redirect_host(Path((host, path)): Path<(String, String)>, headers: HeaderMap) -> Response {
    let port = headers
        .get(header::HOST)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.rsplit_once(':'))
        .map(|(_, port)| port.to_owned())
        .unwrap_or_default();
    (
        StatusCode::FOUND,
        [(header::LOCATION, format!("http://{host}:{port}/{path}"))],
    )
        .into_response()
}

async fn huge(Path(bytes): Path<usize>) -> Response {
    let chunks = (0..bytes.div_ceil(CHUNK_BYTES)).map(move |index| {
        let size = CHUNK_BYTES.min(bytes - index * CHUNK_BYTES);
        Ok::<_, std::convert::Infallible>(Bytes::from(vec![b'x'; size]))
    });
    text(Body::from_stream(futures::stream::iter(chunks)))
}

async fn never() -> Response {
    std::future::pending::<()>().await;
    text("unreachable")
}

async fn page() -> Response {
    (
        [(header::CONTENT_TYPE, "text/html; charset=utf-8")],
        WebFake::PAGE_HTML,
    )
        .into_response()
}

async fn search(
    axum::extract::Query(query): axum::extract::Query<std::collections::HashMap<String, String>>,
) -> Response {
    let asked = query.get("q").cloned().unwrap_or_default();
    let results: Vec<Value> = if asked == "nothing" {
        Vec::new()
    } else {
        (1..=WebFake::SEARCH_RESULTS)
            .map(|n| {
                json!({
                    "title": format!("Result {n} for {asked}"),
                    "url": format!("https://example.com/result/{n}"),
                    "content": format!("Snippet {n} about {asked}."),
                    "engine": "fake",
                })
            })
            .collect()
    };
    (
        [(header::CONTENT_TYPE, "application/json")],
        json!({"query": asked, "results": results}).to_string(),
    )
        .into_response()
}

async fn status(Path(code): Path<u16>) -> Response {
    let status = StatusCode::from_u16(code).unwrap_or(StatusCode::BAD_REQUEST);
    (status, text(format!("status {code}"))).into_response()
}
