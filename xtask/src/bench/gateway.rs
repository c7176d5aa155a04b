//! A timing-grade fake of the LLM Gateway for the whole-process benchmarks: OpenAI Chat
//! Completions streaming (INTEROP.md §2) written straight onto the socket (HTTP/1.1,
//! chunked, keep-alive), so the bench knows when each chunk left and how long the fake
//! itself spent on every request. The conformance fakes (`agent-mocks`) favour scripting
//! and recording over timing; this one does one thing per mode, with nothing in between.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use agent_mocks::sse::{GatewayReply, RenderedReply, Usage, render_reply};
use anyhow::{Context, bail};
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;

const MODEL: &str = "gpt-test-1";
/// Small usage numbers so long sessions stay far from any token budget.
const USAGE: Usage = Usage {
    prompt_tokens: 10,
    completion_tokens: 5,
};

/// What the fake answers.
pub(super) enum Mode {
    /// Tasks of `tool_steps` steps: the first `tool_steps` requests since the last
    /// [`BenchGateway::start_task`] get one ReadFile call of `path` each, every later one a
    /// text answer (a runtime's own extra round trip after the answer gets text too).
    ToolSteps { tool_steps: usize, path: String },
    /// The first request streams `chunks` one-word text deltas, each written only after
    /// the previous one was seen on the runtime's stdout (an acknowledgement on `acks`), so
    /// no chunk queues behind another and each latency is the runtime's alone.
    Stream {
        chunks: usize,
        acks: mpsc::UnboundedReceiver<Instant>,
        ack_timeout: Duration,
    },
}

/// What the fake observed.
#[derive(Default)]
pub(super) struct Observed {
    pub requests: usize,
    /// Time from a request fully read to its last byte written, summed over requests.
    pub fake_time: Duration,
    /// When each streamed chunk was handed to the socket (taken just before the write).
    pub chunk_sent: Vec<Instant>,
    /// When the runtime's stdout showed each streamed chunk (from the acknowledgements).
    pub chunk_seen: Vec<Instant>,
    pub error: Option<String>,
}

pub(super) struct BenchGateway {
    url: String,
    observed: Arc<Mutex<Observed>>,
    /// Set by [`BenchGateway::start_task`]: the next request is a task's first.
    new_task: Arc<AtomicBool>,
    task: tokio::task::JoinHandle<()>,
}

impl BenchGateway {
    pub(super) async fn start(mode: Mode) -> anyhow::Result<Self> {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .context("cannot bind the bench gateway")?;
        let url = format!("http://{}/v1", listener.local_addr()?);
        let observed = Arc::new(Mutex::new(Observed::default()));
        let new_task = Arc::new(AtomicBool::new(true));
        let shared = Arc::new(tokio::sync::Mutex::new(State {
            mode,
            served: 0,
            task_start: 0,
            new_task: Arc::clone(&new_task),
            observed: Arc::clone(&observed),
        }));
        let task = tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let _ = stream.set_nodelay(true);
                let shared = Arc::clone(&shared);
                tokio::spawn(async move {
                    if let Err(error) = serve_connection(stream, &shared).await {
                        let state = shared.lock().await;
                        record_error(&state.observed, format!("{error:#}"));
                    }
                });
            }
        });
        Ok(Self {
            url,
            observed,
            new_task,
            task,
        })
    }

    /// The requests from now on belong to a new task (its steps counted from zero).
    pub(super) fn start_task(&self) {
        self.new_task.store(true, Ordering::SeqCst);
    }

    /// `LLM_GATEWAY_ENDPOINT` for the runtime (ends in `/v1`).
    pub(super) fn url(&self) -> &str {
        &self.url
    }

    pub(super) fn take_observed(&self) -> Observed {
        match self.observed.lock() {
            Ok(mut observed) => std::mem::take(&mut *observed),
            Err(poisoned) => std::mem::take(&mut *poisoned.into_inner()),
        }
    }
}

impl Drop for BenchGateway {
    fn drop(&mut self) {
        self.task.abort();
    }
}

struct State {
    mode: Mode,
    served: usize,
    /// The index of the current task's first request.
    task_start: usize,
    new_task: Arc<AtomicBool>,
    observed: Arc<Mutex<Observed>>,
}

fn with_observed(observed: &Mutex<Observed>, f: impl FnOnce(&mut Observed)) {
    match observed.lock() {
        Ok(mut guard) => f(&mut guard),
        Err(poisoned) => f(&mut poisoned.into_inner()),
    }
}

fn record_error(observed: &Mutex<Observed>, error: String) {
    with_observed(observed, |o| {
        o.error.get_or_insert(error);
    });
}

async fn serve_connection(
    mut stream: TcpStream,
    shared: &tokio::sync::Mutex<State>,
) -> anyhow::Result<()> {
    let mut buffer = Vec::with_capacity(64 * 1024);
    loop {
        if !read_request(&mut stream, &mut buffer).await? {
            return Ok(());
        }
        let started = Instant::now();
        // One request at a time: the runtime makes its calls in sequence anyway.
        let mut state = shared.lock().await;
        let index = state.served;
        if state.new_task.swap(false, Ordering::SeqCst) {
            state.task_start = index;
        }
        let in_task = index - state.task_start;
        state.served += 1;
        let State { mode, observed, .. } = &mut *state;
        stream
            .write_all(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\ntransfer-encoding: chunked\r\n\r\n")
            .await?;
        match mode {
            Mode::ToolSteps { tool_steps, path } => {
                let reply = if in_task < *tool_steps {
                    GatewayReply::tool_call(
                        format!("call_{index}"),
                        "ReadFile",
                        json!({ "path": path }).to_string(),
                    )
                } else {
                    GatewayReply::text("Done.")
                };
                write_reply(&mut stream, &reply).await?;
            }
            Mode::Stream {
                chunks,
                acks,
                ack_timeout,
            } => {
                if index == 0 {
                    stream_chunks(&mut stream, *chunks, acks, *ack_timeout, observed).await?;
                } else {
                    write_reply(&mut stream, &GatewayReply::text("Done.")).await?;
                }
            }
        }
        stream.write_all(b"0\r\n\r\n").await?;
        stream.flush().await?;
        let spent = started.elapsed();
        with_observed(observed, |o| {
            o.requests += 1;
            o.fake_time += spent;
        });
    }
}

/// Reads one request (head and `content-length` body); `false` at a clean end of the
/// connection.
async fn read_request(stream: &mut TcpStream, buffer: &mut Vec<u8>) -> anyhow::Result<bool> {
    buffer.clear();
    let mut chunk = vec![0u8; 64 * 1024];
    let head_end = loop {
        if let Some(end) = find(buffer, b"\r\n\r\n") {
            break end + 4;
        }
        let read = match stream.read(&mut chunk).await {
            Ok(read) => read,
            // A pooled connection reset between requests is the client going away.
            Err(_) if buffer.is_empty() => 0,
            Err(error) => return Err(error.into()),
        };
        if read == 0 {
            if buffer.is_empty() {
                return Ok(false);
            }
            bail!("the connection ended inside a request head");
        }
        buffer.extend_from_slice(&chunk[..read]);
    };
    let head = String::from_utf8_lossy(&buffer[..head_end]).to_ascii_lowercase();
    if head.contains("transfer-encoding: chunked") {
        bail!("chunked request bodies are not supported by the bench gateway");
    }
    let length = head
        .lines()
        .find_map(|line| line.strip_prefix("content-length:"))
        .and_then(|value| value.trim().parse::<usize>().ok())
        .unwrap_or(0);
    while buffer.len() < head_end + length {
        let read = stream.read(&mut chunk).await?;
        if read == 0 {
            bail!("the connection ended inside a request body");
        }
        buffer.extend_from_slice(&chunk[..read]);
    }
    Ok(true)
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack
        .windows(needle.len())
        .position(|window| window == needle)
}

async fn write_event(stream: &mut TcpStream, payload: &str) -> std::io::Result<()> {
    let event = format!("data: {payload}\n\n");
    let framed = format!("{:x}\r\n{event}\r\n", event.len());
    stream.write_all(framed.as_bytes()).await
}

async fn write_reply(stream: &mut TcpStream, reply: &GatewayReply) -> anyhow::Result<()> {
    let RenderedReply::Stream(payloads) = render_reply(reply, MODEL, Some(USAGE)) else {
        bail!("the bench gateway only streams");
    };
    for payload in payloads {
        write_event(stream, &payload).await?;
    }
    Ok(())
}

async fn stream_chunks(
    stream: &mut TcpStream,
    chunks: usize,
    acks: &mut mpsc::UnboundedReceiver<Instant>,
    ack_timeout: Duration,
    observed: &Mutex<Observed>,
) -> anyhow::Result<()> {
    let envelope = |delta: serde_json::Value, finish: serde_json::Value| {
        json!({"id": "chatcmpl-bench", "object": "chat.completion.chunk", "created": 0,
               "model": MODEL, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
        .to_string()
    };
    let mut sent = Vec::with_capacity(chunks);
    let mut seen = Vec::with_capacity(chunks);
    for i in 0..chunks {
        let delta = if i == 0 {
            json!({"role": "assistant", "content": format!("w{i} ")})
        } else {
            json!({"content": format!("w{i} ")})
        };
        let payload = envelope(delta, serde_json::Value::Null);
        sent.push(Instant::now());
        write_event(stream, &payload).await?;
        stream.flush().await?;
        match tokio::time::timeout(ack_timeout, acks.recv()).await {
            Ok(Some(at)) => seen.push(at),
            Ok(None) => bail!("the runtime's stdout closed during the stream"),
            Err(_) => bail!(
                "chunk {i} did not show up as a text_chunk within {ack_timeout:?} (is the runtime streaming?)"
            ),
        }
    }
    write_event(stream, &envelope(json!({}), json!("stop"))).await?;
    let usage = json!({"id": "chatcmpl-bench", "object": "chat.completion.chunk", "created": 0,
        "model": MODEL, "choices": [],
        "usage": {"prompt_tokens": USAGE.prompt_tokens, "completion_tokens": USAGE.completion_tokens,
                  "total_tokens": USAGE.prompt_tokens + USAGE.completion_tokens}});
    write_event(stream, &usage.to_string()).await?;
    write_event(stream, "[DONE]").await?;
    with_observed(observed, |o| {
        o.chunk_sent = sent;
        o.chunk_seen = seen;
    });
    Ok(())
}
