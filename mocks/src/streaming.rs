//! The streaming LLM Gateway fake: the same protocol as [`crate::GatewayFake`], served by a
//! small axum server that writes each `data:` event as it comes, so tests can observe
//! timing: text arriving before the stream ends, idle timeouts (stalls), mid-stream
//! disconnects. wiremock cannot do this (a body is one buffer).
//!
//! Its faults are those of every fake ([`FaultControl`]: failures served before the script,
//! a slow answer, down) plus [`StreamingGateway::stall_next_after`], a stream that goes
//! silent mid-answer.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{DefaultBodyLimit, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use tokio::net::TcpSocket;
use tokio::sync::Semaphore;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::faults::{FaultControl, FaultQueue};

use crate::gateway::{COMPLETIONS_PATH, Next, ReplyScript, script_exhausted, status_content_type};
use crate::port;
use crate::recording::RecordedRequest;
use crate::sse::{GatewayReply, RenderedReply, Usage, render_reply, requested_model, sse_event};
use crate::util::{lock, sane_headers, sane_status};

/// One step of a scripted stream.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StreamStep {
    /// One SSE event, `data: <payload>` (write `"[DONE]"` for the terminator: nothing is
    /// added to a scripted stream).
    Chunk(String),
    /// Wait this long before the next step.
    Delay(Duration),
    /// Wait until [`StreamingGateway::release`] is called (one release per stall; a release
    /// that comes first lets the next stall pass at once).
    StallUntilReleased,
    /// Abort the connection here: the client sees the body fail, with no `[DONE]`. (To end
    /// cleanly but without `[DONE]`, just leave `Chunk("[DONE]")` out.)
    Disconnect,
    /// Hold the stream open and send nothing more: a real stall, which only the client can
    /// end (by giving up on the connection) — or the end of the scenario, when the gateway
    /// is dropped. Nothing after it is played.
    Stall,
}

impl StreamStep {
    /// `Chunk("[DONE]")`.
    pub fn done() -> Self {
        Self::Chunk("[DONE]".to_string())
    }

    /// The chunks of a rendered reply, e.g. to interleave delays or stalls with a
    /// well-formed stream. `None` for a `Status` reply, which is not a stream.
    pub fn from_reply(reply: &GatewayReply, usage: Option<Usage>) -> Option<Vec<StreamStep>> {
        match render_reply(reply, crate::sse::DEFAULT_MODEL, usage) {
            RenderedReply::Stream(payloads) => {
                Some(payloads.into_iter().map(StreamStep::Chunk).collect())
            }
            RenderedReply::Status { .. } => None,
        }
    }
}

#[derive(Clone)]
enum Scripted {
    Steps(Vec<StreamStep>),
    Reply(GatewayReply),
}

/// Answers a request from its body, for a model whose next move depends on the thread
/// (e.g. "call the next tool until N results are in"), which a fixed script cannot do
/// when a runtime is restarted mid-task.
pub type Responder = Arc<dyn Fn(&serde_json::Value) -> Vec<StreamStep> + Send + Sync>;

struct Shared {
    script: ReplyScript<Scripted>,
    responder: Mutex<Option<Responder>>,
    recorded: Mutex<Vec<RecordedRequest>>,
    /// When each model request (`POST …/chat/completions`) arrived, in order: lets a test
    /// measure the gap a runtime left between two attempts without trusting its clock.
    arrivals: Mutex<Vec<Instant>>,
    chunks_sent: AtomicUsize,
    releases: Semaphore,
    faults: FaultQueue,
    /// Per stalled request to come, the number of events it gets before the stall.
    stalls: Mutex<VecDeque<usize>>,
    /// Cancelled when the gateway is dropped: ends every [`StreamStep::Stall`].
    dropped: CancellationToken,
}

/// The axum-based streaming gateway fake.
pub struct StreamingGateway {
    addr: SocketAddr,
    shared: Arc<Shared>,
    server: Mutex<Option<Running>>,
    reservation: Mutex<Option<TcpSocket>>,
}

struct Running {
    shutdown: CancellationToken,
    task: JoinHandle<()>,
}

impl StreamingGateway {
    /// Starts on a fresh ephemeral loopback port with an empty script.
    pub async fn start() -> anyhow::Result<Self> {
        let shared = Arc::new(Shared {
            script: ReplyScript::default(),
            responder: Mutex::new(None),
            recorded: Mutex::new(Vec::new()),
            arrivals: Mutex::new(Vec::new()),
            chunks_sent: AtomicUsize::new(0),
            releases: Semaphore::new(0),
            faults: FaultQueue::default(),
            stalls: Mutex::new(VecDeque::new()),
            dropped: CancellationToken::new(),
        });
        let router = Router::new()
            .fallback(handle)
            .layer(DefaultBodyLimit::disable())
            .with_state(Arc::clone(&shared));
        let shutdown = CancellationToken::new();
        let (addr, task) =
            crate::loopback::serve(router, shutdown.clone(), "streaming gateway").await?;
        Ok(Self {
            addr,
            shared,
            server: Mutex::new(Some(Running { shutdown, task })),
            reservation: Mutex::new(None),
        })
    }

    /// The base URL including `/v1`.
    pub fn url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// Appends an exact stream to the script.
    pub fn push_stream(&self, steps: Vec<StreamStep>) {
        self.shared.script.push(Scripted::Steps(steps));
    }

    /// Appends a reply, rendered exactly as [`crate::GatewayFake`] renders it and sent one
    /// event at a time.
    pub fn push_reply(&self, reply: GatewayReply) {
        self.shared.script.push(Scripted::Reply(reply));
    }

    /// From now on every request is answered by `responder` (the script is not used).
    pub fn set_responder(&self, responder: Option<Responder>) {
        *lock(&self.shared.responder) = responder;
    }

    /// The next request that reaches the script (after any [`FaultControl::fail_next`]
    /// failures) is answered with the first `chunks` events of what it would get — the next
    /// scripted reply, which stays in the script so that a retry gets it whole — and then
    /// [`StreamStep::Stall`]. Calls accumulate: one stalled request each.
    pub fn stall_next_after(&self, chunks: usize) {
        lock(&self.shared.stalls).push_back(chunks);
    }

    /// Lets one `StallUntilReleased` (current or next) continue.
    pub fn release(&self) {
        self.shared.releases.add_permits(1);
    }

    /// See [`crate::GatewayFake::set_usage`].
    pub fn set_usage(&self, prompt_tokens: u64, completion_tokens: u64) {
        self.shared.script.set_usage(Some(Usage {
            prompt_tokens,
            completion_tokens,
        }));
    }

    /// See [`crate::GatewayFake::omit_usage`].
    pub fn omit_usage(&self) {
        self.shared.script.set_usage(None);
    }

    /// See [`crate::GatewayFake::set_fallback_reply`].
    pub fn set_fallback_reply(&self, reply: Option<GatewayReply>) {
        self.shared.script.set_fallback(reply);
    }

    /// Every `POST …/chat/completions`, in order.
    pub async fn requests(&self) -> Vec<RecordedRequest> {
        lock(&self.shared.recorded)
            .iter()
            .filter(|request| request.method == "POST" && request.path == COMPLETIONS_PATH)
            .cloned()
            .collect()
    }

    /// When each request of [`Self::requests`] arrived, in the same order.
    pub fn request_arrivals(&self) -> Vec<Instant> {
        lock(&self.shared.arrivals).clone()
    }

    /// Every request, including those to unknown paths.
    pub async fn all_requests(&self) -> Vec<RecordedRequest> {
        lock(&self.shared.recorded).clone()
    }

    /// How many `data:` events have been handed to the connection so far, over all requests.
    pub async fn chunks_sent(&self) -> usize {
        self.shared.chunks_sent.load(Ordering::SeqCst)
    }

    /// Scripted entries not yet consumed.
    pub fn remaining_replies(&self) -> usize {
        self.shared.script.remaining()
    }

    /// Stops accepting connections (connection refused) and keeps the port reserved. Idle
    /// keep-alive connections are closed; a response already streaming runs to its end.
    pub async fn go_down(&self) {
        let Some(running) = lock(&self.server).take() else {
            return;
        };
        running.shutdown.cancel();
        port::wait_until_refused(self.addr).await;
        // Graceful shutdown waits for in-flight streams (a stall may never end): stop waiting.
        running.task.abort();
        let _ = running.task.await;
        *lock(&self.reservation) = port::reserve(self.addr);
    }
}

impl FaultControl for StreamingGateway {
    /// Failures are served before the script (the gateway's body shape is the caller's).
    fn fail_next(&self, count: usize, status: u16, body: Value) {
        self.shared.faults.push(count, status, body);
    }

    /// Also drops stalls not yet served.
    fn clear_faults(&self) {
        self.shared.faults.clear();
        lock(&self.shared.stalls).clear();
    }

    /// Holds back the response head (status and headers) of every later model request.
    fn slow_by(&self, delay: Option<Duration>) {
        self.shared.faults.set_delay(delay);
    }

    async fn go_down(&self) {
        StreamingGateway::go_down(self).await;
    }

    async fn requests(&self) -> Vec<RecordedRequest> {
        self.all_requests().await
    }
}

impl Drop for StreamingGateway {
    fn drop(&mut self) {
        self.shared.dropped.cancel();
        if let Some(running) = lock(&self.server).take() {
            running.shutdown.cancel();
        }
    }
}

async fn handle(
    State(shared): State<Arc<Shared>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let arrived = Instant::now();
    let request = RecordedRequest::from_parts(&method, &uri, &headers, &body);
    lock(&shared.recorded).push(request.clone());
    if method == Method::POST && uri.path() == COMPLETIONS_PATH {
        lock(&shared.arrivals).push(arrived);
    }
    if method != Method::POST || uri.path() != COMPLETIONS_PATH {
        let message = format!("no such endpoint: {method} {}", uri.path());
        return (
            StatusCode::NOT_FOUND,
            axum::Json(json!({ "error": message })),
        )
            .into_response();
    }
    if let Some((status, body)) = shared.faults.take() {
        let body = match body {
            Value::Null => String::new(),
            Value::String(text) => text,
            other => other.to_string(),
        };
        return status_response(status, &[], body);
    }
    if let Some(delay) = shared.faults.delay() {
        tokio::time::sleep(delay).await;
    }
    let stall = lock(&shared.stalls).pop_front();
    if let Some(chunks) = stall {
        // A reply that is not a stream has no chunks: the stall follows a bare 200 head.
        let steps = answer_steps(&shared, &request.body, true).unwrap_or_default();
        let mut steps: Vec<StreamStep> = steps.into_iter().take(chunks).collect();
        steps.push(StreamStep::Stall);
        return stream_response(shared, steps);
    }
    match answer_steps(&shared, &request.body, false) {
        Ok(steps) => stream_response(shared, steps),
        Err(response) => *response,
    }
}

/// The steps that answer a request (the responder's, or the script's next entry; with `peek`
/// the entry stays in the script), or the whole response when that is not a stream.
fn answer_steps(
    shared: &Shared,
    body: &Value,
    peek: bool,
) -> Result<Vec<StreamStep>, Box<Response>> {
    let responder = lock(&shared.responder).clone();
    if let Some(responder) = responder {
        return Ok(responder(body));
    }
    let next = if peek {
        shared.script.peek()
    } else {
        shared.script.next()
    };
    let steps = match next {
        Next::Scripted(Scripted::Steps(steps)) => steps,
        Next::Scripted(Scripted::Reply(reply)) | Next::Fallback(reply) => {
            match render_reply(&reply, &requested_model(body), shared.script.usage()) {
                RenderedReply::Stream(payloads) => {
                    payloads.into_iter().map(StreamStep::Chunk).collect()
                }
                RenderedReply::Status {
                    status,
                    headers,
                    body,
                } => return Err(Box::new(status_response(status, &headers, body))),
            }
        }
        Next::Exhausted => {
            return Err(Box::new(
                (
                    StatusCode::INTERNAL_SERVER_ERROR,
                    axum::Json(script_exhausted()),
                )
                    .into_response(),
            ));
        }
    };
    Ok(steps)
}

fn stream_response(shared: Arc<Shared>, steps: Vec<StreamStep>) -> Response {
    let mut response = Response::new(Body::from_stream(step_stream(shared, steps)));
    let response_headers = response.headers_mut();
    response_headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    response_headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}

/// Plays the steps lazily: hyper polls for the next frame only when it has written the
/// previous one, so delays and stalls really happen between events on the wire.
fn step_stream(
    shared: Arc<Shared>,
    steps: Vec<StreamStep>,
) -> impl futures::Stream<Item = Result<Bytes, std::io::Error>> + Send + 'static {
    futures::stream::unfold(
        (steps.into_iter(), shared),
        |(mut steps, shared)| async move {
            loop {
                match steps.next()? {
                    StreamStep::Chunk(payload) => {
                        shared.chunks_sent.fetch_add(1, Ordering::SeqCst);
                        return Some((Ok(Bytes::from(sse_event(&payload))), (steps, shared)));
                    }
                    StreamStep::Delay(duration) => tokio::time::sleep(duration).await,
                    StreamStep::StallUntilReleased => {
                        if let Ok(permit) = shared.releases.acquire().await {
                            permit.forget();
                        }
                    }
                    StreamStep::Disconnect => {
                        // Be pending once first: hyper flushes what it has buffered while the
                        // body is pending, but drops the buffer if the error comes straight
                        // after the last chunk (the client would then see no response at all).
                        tokio::task::yield_now().await;
                        // An error frame makes hyper abort the connection mid-body; nothing
                        // after it is played.
                        let error = std::io::Error::other("scripted disconnect");
                        return Some((Err(error), (Vec::new().into_iter(), shared)));
                    }
                    StreamStep::Stall => {
                        shared.dropped.cancelled().await;
                        return None;
                    }
                }
            }
        },
    )
}

fn status_response(status: u16, headers: &[(String, String)], body: String) -> Response {
    let default_content_type = status_content_type(&body);
    let mut response = Response::new(Body::from(body));
    *response.status_mut() = sane_status(status);
    let response_headers = response.headers_mut();
    for (name, value) in sane_headers(headers) {
        response_headers.append(name, value);
    }
    if !response_headers.contains_key(header::CONTENT_TYPE) {
        response_headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static(default_content_type),
        );
    }
    response
}
