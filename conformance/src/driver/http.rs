//! The HTTP transport (the sandbox shape): the runtime is started with
//! `--listen http://127.0.0.1:PORT` and `AGENT_RUNTIME_HTTP_TOKEN`, the kit opens the SSE
//! stream `GET /events` and sends each request line as a `POST /rpc` body.
//!
//! The bridge turns this back into the byte streams the rest of the driver reads, so every
//! scenario runs unchanged: each line the kit writes becomes one POST (concurrently, like
//! requests over stdio); a `200` body and each SSE `data:` become one line of "stdout"; a
//! `204` (notification) adds nothing; any other status becomes a non-JSON line, which the
//! stdout checks report as a protocol violation. When the kit ends its input, the bridge
//! waits for the requests in flight, then closes the event stream: the end of input.

use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, bail};
use futures::StreamExt as _;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, DuplexStream};
use tokio::sync::mpsc;
use tokio::task::JoinSet;
use tokio::time::Instant;

use super::state::Shared;
use super::{LISTEN_ARG, indent};

/// The variable the kit sets to the bearer token the runtime must require.
pub(super) const TOKEN_ENV: &str = "AGENT_RUNTIME_HTTP_TOKEN";

/// A loopback port that was free a moment ago (the runtime binds it next).
pub(crate) fn free_port() -> anyhow::Result<u16> {
    let listener = std::net::TcpListener::bind(("127.0.0.1", 0))
        .context("cannot find a free loopback port for the runtime")?;
    Ok(listener.local_addr()?.port())
}

/// A per-scenario token (loopback only, so unguessable enough without a CSPRNG).
pub(crate) fn fresh_token() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    format!("kit-{nanos:x}-{:x}", std::process::id())
}

/// Opens the event stream (retrying, bounded by `timeout`, while the runtime is not
/// listening yet) and starts the bridge. Returns the stream the kit writes request lines to
/// and the stream it reads response and event lines from.
pub(crate) async fn connect(
    base: &str,
    token: &str,
    shared: &Arc<Shared>,
    timeout: Duration,
) -> anyhow::Result<(DuplexStream, DuplexStream)> {
    let client = reqwest::Client::builder()
        .no_proxy()
        .build()
        .context("cannot build the HTTP client")?;
    let events = open_events(&client, base, token, shared, timeout).await?;
    require_token(&client, base).await?;
    let (requests_kit, requests_bridge, lines_kit, line_tx) = bridge();
    let sse = tokio::spawn(read_events(events, line_tx.clone()));
    let poster = Poster {
        client,
        base: base.to_owned(),
        token: token.to_owned(),
        line_tx,
    };
    tokio::spawn(async move {
        poster.post_lines(requests_bridge).await;
        // The kit's input ended and every answer is in: close the event stream.
        sse.abort();
    });
    Ok((requests_kit, lines_kit))
}

/// `GET /events`, retried while the runtime is not listening yet; fails at once when the
/// runtime exits or answers with an error status.
async fn open_events(
    client: &reqwest::Client,
    base: &str,
    token: &str,
    shared: &Arc<Shared>,
    timeout: Duration,
) -> anyhow::Result<reqwest::Response> {
    let deadline = Instant::now() + timeout;
    let mut delay = Duration::from_millis(2);
    loop {
        let error = match client
            .get(format!("{base}/events"))
            .bearer_auth(token)
            .header("accept", "text/event-stream")
            .send()
            .await
        {
            Ok(response) if response.status().is_success() => return Ok(response),
            Ok(response) => bail!(
                "GET {base}/events with the bearer token answered {} (a runtime certified over HTTP must serve its SessionEvents there)",
                response.status()
            ),
            Err(error) if error.is_connect() => error,
            Err(error) => return Err(error).context(format!("GET {base}/events failed")),
        };
        let exited = {
            let state = shared.lock();
            state.exit.map(|status| (status, state.stderr_tail(2000)))
        };
        if let Some((status, stderr)) = exited {
            bail!(
                "the runtime exited ({status}) before listening on {base} (a runtime certified over the HTTP transport must accept `{LISTEN_ARG} http://IP:PORT`)\n      last stderr:\n{}",
                indent(&stderr)
            );
        }
        if Instant::now() >= deadline {
            let stderr = shared.lock().stderr_tail(2000);
            bail!(
                "timed out after {timeout:?} waiting for the runtime to listen on {base} ({error})\n      last stderr:\n{}",
                indent(&stderr)
            );
        }
        tokio::time::sleep(delay.min(deadline.saturating_duration_since(Instant::now()))).await;
        delay = (delay * 2).min(Duration::from_millis(20));
    }
}

/// The contract requires the token: a request without it must be refused.
async fn require_token(client: &reqwest::Client, base: &str) -> anyhow::Result<()> {
    let unauthenticated = client
        .post(format!("{base}/rpc"))
        .header("content-type", "application/json")
        .body(r#"{"jsonrpc":"2.0","id":0,"method":"GetSessionState","params":{}}"#)
        .send()
        .await
        .with_context(|| format!("POST {base}/rpc without a token failed"))?;
    if unauthenticated.status() != reqwest::StatusCode::UNAUTHORIZED {
        bail!(
            "POST {base}/rpc without a bearer token answered {} instead of 401 Unauthorized (the HTTP transport requires {TOKEN_ENV})",
            unauthenticated.status()
        );
    }
    Ok(())
}

/// Sends each SSE event's `data:` (its lines joined) as one line, until the stream ends.
async fn read_events(events: reqwest::Response, line_tx: mpsc::UnboundedSender<Vec<u8>>) {
    let mut body = events.bytes_stream();
    let mut buffer: Vec<u8> = Vec::new();
    let mut data: Vec<Vec<u8>> = Vec::new();
    while let Some(Ok(chunk)) = body.next().await {
        buffer.extend_from_slice(&chunk);
        while let Some(end) = buffer.iter().position(|b| *b == b'\n') {
            let mut line: Vec<u8> = buffer.drain(..=end).collect();
            line.pop();
            if line.last() == Some(&b'\r') {
                line.pop();
            }
            if line.is_empty() {
                if !data.is_empty() {
                    let _ = line_tx.send(data.join(&b'\n'));
                    data.clear();
                }
            } else if let Some(value) = line.strip_prefix(b"data:") {
                data.push(value.strip_prefix(b" ").unwrap_or(value).to_vec());
            }
            // `event:`, `id:`, `retry:` and comments carry nothing the kit checks.
        }
    }
}

/// POSTs the kit's request lines to `/rpc` and sends each answer on as a line.
struct Poster {
    client: reqwest::Client,
    base: String,
    token: String,
    line_tx: mpsc::UnboundedSender<Vec<u8>>,
}

impl Poster {
    /// Each line the kit writes becomes one POST, concurrently (like requests over stdio);
    /// returns once the kit's input ended and every POST was answered.
    async fn post_lines(&self, requests: DuplexStream) {
        let mut reader = tokio::io::BufReader::with_capacity(256 * 1024, requests);
        let mut in_flight = JoinSet::new();
        while let Some(line) = next_request_line(&mut reader).await {
            let expects_reply = expects_reply(&line);
            let request = self
                .client
                .post(format!("{}/rpc", self.base))
                .bearer_auth(&self.token)
                .header("content-type", "application/json")
                .body(line);
            let tx = self.line_tx.clone();
            in_flight.spawn(async move {
                if let Some(mut reply) = reply_line(request, expects_reply).await {
                    while reply.last().is_some_and(u8::is_ascii_whitespace) {
                        reply.pop();
                    }
                    let _ = tx.send(reply);
                }
            });
        }
        while in_flight.join_next().await.is_some() {}
    }
}

/// The line a POST's answer becomes: a `200` body, nothing for a `204`, and a non-JSON line
/// (a protocol violation where a response was due) for any other status or a failure.
async fn reply_line(request: reqwest::RequestBuilder, expects_reply: bool) -> Option<Vec<u8>> {
    match request.send().await {
        Ok(response) if response.status() == reqwest::StatusCode::NO_CONTENT => None,
        Ok(response) if response.status().is_success() => {
            response.bytes().await.ok().map(|b| b.to_vec())
        }
        Ok(response) => {
            let status = response.status();
            let body = response.text().await.unwrap_or_default();
            Some(format!("(HTTP {status} from POST /rpc) {body}").into_bytes())
        }
        // A notification expects nothing back: a POST cut short (the scenario ended and the
        // runtime was stopped while it was in flight) is no protocol line. For a request,
        // the failure is shown where its answer was due.
        Err(_) if !expects_reply => None,
        Err(error) => Some(format!("(POST /rpc failed: {error})").into_bytes()),
    }
}

/// The pipes between the kit's line-based driver and an HTTP transport: the kit writes
/// requests into `requests_kit` and reads lines from `lines_kit`; the transport reads
/// `requests_bridge` and sends each response or event line through `line_tx`, which one
/// writer drains so lines never interleave.
#[allow(clippy::type_complexity)]
pub(super) fn bridge() -> (
    DuplexStream,
    DuplexStream,
    DuplexStream,
    mpsc::UnboundedSender<Vec<u8>>,
) {
    let (requests_kit, requests_bridge) = tokio::io::duplex(1024 * 1024);
    let (mut lines_bridge, lines_kit) = tokio::io::duplex(1024 * 1024);
    let (line_tx, mut line_rx) = mpsc::unbounded_channel::<Vec<u8>>();
    tokio::spawn(async move {
        while let Some(mut line) = line_rx.recv().await {
            line.push(b'\n');
            if lines_bridge.write_all(&line).await.is_err() {
                break;
            }
        }
        let _ = lines_bridge.shutdown().await;
    });
    (requests_kit, requests_bridge, lines_kit, line_tx)
}

/// The next non-blank line the kit wrote for the runtime, without its newline; `None` at
/// the end of the kit's input.
pub(super) async fn next_request_line(
    reader: &mut tokio::io::BufReader<DuplexStream>,
) -> Option<Vec<u8>> {
    loop {
        let mut line = Vec::new();
        match reader.read_until(b'\n', &mut line).await {
            Ok(0) | Err(_) => return None,
            Ok(_) => {}
        }
        if line.last() == Some(&b'\n') {
            line.pop();
        }
        if !line.iter().all(u8::is_ascii_whitespace) {
            return Some(line);
        }
    }
}

/// Whether a POSTed line can have an answer: a request with an id, a batch holding one, or
/// anything that is not valid JSON-RPC (which gets an error reply).
fn expects_reply(line: &[u8]) -> bool {
    let has_id = |value: &serde_json::Value| value.get("id").is_some();
    match serde_json::from_slice::<serde_json::Value>(line) {
        Ok(serde_json::Value::Object(object)) => object.contains_key("id"),
        Ok(serde_json::Value::Array(items)) => items.is_empty() || items.iter().any(has_id),
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::expects_reply;

    #[test]
    fn only_notifications_expect_no_reply() {
        assert!(expects_reply(
            br#"{"jsonrpc":"2.0","id":1,"method":"GetSessionState"}"#
        ));
        assert!(!expects_reply(
            br#"{"jsonrpc":"2.0","method":"GetSessionState"}"#
        ));
        assert!(!expects_reply(
            br#"[{"jsonrpc":"2.0","method":"a"},{"jsonrpc":"2.0","method":"b"}]"#
        ));
        assert!(expects_reply(
            br#"[{"jsonrpc":"2.0","method":"a"},{"jsonrpc":"2.0","id":2,"method":"b"}]"#
        ));
        assert!(expects_reply(b"[]"));
        assert!(expects_reply(b"not json"));
    }
}
