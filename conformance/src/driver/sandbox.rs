//! The sandbox transport (INTEROP.md §9): the kit plays the Session Service. It provisions
//! a sandbox session in the Session Service fake, starts the runtime as the service's local
//! launcher does (`SESSION_ID`, `REGISTRATION_TOKEN`, `SANDBOX_LOCAL_MODE=true`, `--transport
//! http --port P --workspace-dir D`), waits for its registration and then talks to the
//! endpoint it registered exactly as the service's proxy does:
//!
//! - `POST /rpc`: the body as written, only `Content-Type`, no Authorization; a 5xx answer
//!   becomes the proxy's 503 (a non-JSON line here, so a violation), any other body is passed
//!   on as it is;
//! - `GET /events`: only `Last-Event-ID`, the answer taken as an event stream whatever its
//!   status (unless 5xx). Each frame must carry `id: N`, `event: session_event` and `data:`
//!   with `id` = N beside the SessionEvent; the kit checks that and hands the SessionEvent on
//!   as a notification line. When the stream ends while the runtime lives, the kit
//!   reconnects with `Last-Event-ID`, as a browser's EventSource does.
//!
//! The end of the kit's input is not the end of the event stream here: the sandbox ends on
//! Shutdown or SIGTERM, so the kit answers what is in flight and then sends SIGTERM.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::bail;
use futures::StreamExt as _;
use serde_json::Value;
use tokio::io::DuplexStream;
use tokio::sync::{mpsc, watch};
use tokio::task::JoinSet;
use tokio::time::Instant;

use super::indent;
use super::state::{Direction, Shared};

/// What judges a frame that breaks §9's framing.
const FRAMING: &str = "INTEROP.md §9 event stream";

/// What the kit, as the Session Service, hands the sandbox it launches.
#[derive(Debug, Clone)]
pub(crate) struct SandboxSpec {
    pub session_id: String,
    pub registration_token: String,
    pub workspace_dir: PathBuf,
    /// The `sandboxEndpoint` of the latest registration (the Session Service fake's watch).
    pub registered: watch::Receiver<Option<String>>,
}

impl SandboxSpec {
    /// The local launcher's arguments.
    pub(super) fn args(&self, port: u16) -> Vec<String> {
        vec![
            "--transport".to_owned(),
            "http".to_owned(),
            "--port".to_owned(),
            port.to_string(),
            "--workspace-dir".to_owned(),
            self.workspace_dir.display().to_string(),
        ]
    }

    /// The local launcher's environment.
    pub(super) fn env(&self) -> Vec<(String, String)> {
        vec![
            ("SESSION_ID".to_owned(), self.session_id.clone()),
            (
                "REGISTRATION_TOKEN".to_owned(),
                self.registration_token.clone(),
            ),
            ("SANDBOX_LOCAL_MODE".to_owned(), "true".to_owned()),
        ]
    }
}

/// Waits (bounded by `timeout`) for the sandbox to register, then opens the proxy bridge.
pub(super) async fn connect(
    spec: &SandboxSpec,
    pid: Option<u32>,
    shared: &Arc<Shared>,
    timeout: Duration,
) -> anyhow::Result<(DuplexStream, DuplexStream)> {
    let endpoint = registered_endpoint(spec, shared, timeout).await?;
    shared.update(|s| {
        s.note(
            Direction::Note,
            &format!("the sandbox registered {endpoint}"),
        );
    });
    let client = reqwest::Client::builder()
        .no_proxy()
        .build()
        .map_err(|error| anyhow::anyhow!("cannot build the HTTP client: {error}"))?;
    let (requests_kit, requests_bridge, lines_kit, line_tx) = super::http::bridge();
    tokio::spawn(events(
        client.clone(),
        endpoint.clone(),
        line_tx.clone(),
        Arc::clone(shared),
    ));
    tokio::spawn(async move {
        let mut reader = tokio::io::BufReader::with_capacity(256 * 1024, requests_bridge);
        let mut in_flight = JoinSet::new();
        while let Some(line) = super::http::next_request_line(&mut reader).await {
            let request = client
                .post(format!("{endpoint}/rpc"))
                .header("content-type", "application/json")
                .body(line);
            let tx = line_tx.clone();
            in_flight.spawn(async move {
                if let Some(mut reply) = proxy_rpc(request).await {
                    while reply.last().is_some_and(u8::is_ascii_whitespace) {
                        reply.pop();
                    }
                    let _ = tx.send(reply);
                }
            });
        }
        // End of input: answer what was sent, then end the sandbox as the service does.
        while in_flight.join_next().await.is_some() {}
        terminate(pid);
    });
    Ok((requests_kit, lines_kit))
}

async fn registered_endpoint(
    spec: &SandboxSpec,
    shared: &Arc<Shared>,
    timeout: Duration,
) -> anyhow::Result<String> {
    let deadline = Instant::now() + timeout;
    let mut registered = spec.registered.clone();
    loop {
        if let Some(endpoint) = registered.borrow_and_update().clone() {
            return Ok(endpoint.trim_end_matches('/').to_owned());
        }
        let exited = {
            let state = shared.lock();
            state.exit.map(|status| (status, state.stderr_tail(2000)))
        };
        if let Some((status, stderr)) = exited {
            bail!(
                "the runtime exited ({status}) without registering its sandbox (POST /sessions/{}/register, INTEROP.md §9)\n      last stderr:\n{}",
                spec.session_id,
                indent(&stderr)
            );
        }
        let changed = shared.changed.notified();
        tokio::select! {
            _ = registered.changed() => {}
            () = changed => {}
            () = tokio::time::sleep_until(deadline) => {
                let stderr = shared.lock().stderr_tail(2000);
                bail!(
                    "timed out after {timeout:?} waiting for the sandbox to register session {} (POST /sessions/{{id}}/register with SESSION_ID and REGISTRATION_TOKEN, INTEROP.md §9)\n      last stderr:\n{}",
                    spec.session_id,
                    indent(&stderr)
                );
            }
        }
    }
}

/// What the proxy hands back for one POST: `None` for 204.
async fn proxy_rpc(request: reqwest::RequestBuilder) -> Option<Vec<u8>> {
    match request.send().await {
        Ok(response) if response.status() == reqwest::StatusCode::NO_CONTENT => None,
        Ok(response) if response.status().is_server_error() => Some(
            format!(
                "(HTTP 503 from the Session Service's proxy: the sandbox answered {})",
                response.status()
            )
            .into_bytes(),
        ),
        Ok(response) => response.bytes().await.ok().map(|body| body.to_vec()),
        Err(error) => Some(format!("(the proxy's POST /rpc failed: {error})").into_bytes()),
    }
}

/// Reads the event stream as the proxy relays it, reconnecting with `Last-Event-ID` when
/// the runtime ends a stream while it still runs.
async fn events(
    client: reqwest::Client,
    endpoint: String,
    tx: mpsc::UnboundedSender<Vec<u8>>,
    shared: Arc<Shared>,
) {
    let mut last_id: Option<u64> = None;
    loop {
        let mut request = client.get(format!("{endpoint}/events"));
        if let Some(id) = last_id {
            request = request.header("Last-Event-ID", id.to_string());
        }
        let response = match request.send().await {
            Ok(response) => response,
            // The runtime is gone: the stream is over.
            Err(_) => return,
        };
        if response.status().is_server_error() {
            let line = format!(
                "(HTTP 503 from the Session Service's proxy: GET /events answered {})",
                response.status()
            );
            let _ = tx.send(line.into_bytes());
            return;
        }
        let mut frames = FrameReader::default();
        let mut body = response.bytes_stream();
        while let Some(Ok(chunk)) = body.next().await {
            for frame in frames.push(&chunk) {
                match judge(&frame, last_id) {
                    Judged::Event { id, line } => {
                        last_id = Some(id);
                        let _ = tx.send(line);
                    }
                    Judged::Gap(data) => shared.update(|s| {
                        s.note(Direction::Note, &format!("event: gap {data}"));
                    }),
                    Judged::Ignored => {}
                    Judged::Broken { problem, text } => {
                        shared.update(|s| s.finding(None, FRAMING, problem, &text));
                        let _ = tx.send(text.into_bytes());
                    }
                }
            }
        }
        if shared.lock().exit.is_some() {
            return;
        }
        shared.update(|s| {
            s.note(
                Direction::Note,
                &format!("the event stream ended; reconnecting with Last-Event-ID {last_id:?}"),
            );
        });
    }
}

/// One SSE frame's fields.
#[derive(Debug, Default, Clone, PartialEq)]
pub(crate) struct Frame {
    pub id: Option<String>,
    pub event: Option<String>,
    pub data: Vec<String>,
}

/// Splits an SSE byte stream into frames (blank-line separated).
#[derive(Debug, Default)]
pub(crate) struct FrameReader {
    buffer: Vec<u8>,
    current: Frame,
}

impl FrameReader {
    pub(crate) fn push(&mut self, chunk: &[u8]) -> Vec<Frame> {
        self.buffer.extend_from_slice(chunk);
        let mut done = Vec::new();
        while let Some(end) = self.buffer.iter().position(|b| *b == b'\n') {
            let mut line: Vec<u8> = self.buffer.drain(..=end).collect();
            line.pop();
            if line.last() == Some(&b'\r') {
                line.pop();
            }
            let line = String::from_utf8_lossy(&line).into_owned();
            if line.is_empty() {
                let frame = std::mem::take(&mut self.current);
                if frame != Frame::default() {
                    done.push(frame);
                }
                continue;
            }
            if line.starts_with(':') {
                continue;
            }
            let (field, value) = line.split_once(':').unwrap_or((line.as_str(), ""));
            let value = value.strip_prefix(' ').unwrap_or(value).to_owned();
            match field {
                "id" => self.current.id = Some(value),
                "event" => self.current.event = Some(value),
                "data" => self.current.data.push(value),
                _ => {}
            }
        }
        done
    }
}

#[derive(Debug)]
pub(crate) enum Judged {
    /// A SessionEvent, as the notification line the rest of the kit reads.
    Event {
        id: u64,
        line: Vec<u8>,
    },
    Gap(String),
    /// A frame with nothing to judge (a retry hint).
    Ignored,
    Broken {
        problem: String,
        text: String,
    },
}

/// Checks a frame against §9 and turns a SessionEvent into a notification line.
pub(crate) fn judge(frame: &Frame, last_id: Option<u64>) -> Judged {
    let data = frame.data.join("\n");
    let broken = |problem: String| Judged::Broken {
        problem,
        text: format!("(event stream frame) {data}"),
    };
    match frame.event.as_deref() {
        Some("gap") => return Judged::Gap(data),
        Some("session_event") => {}
        _ if frame.data.is_empty() => return Judged::Ignored,
        other => {
            return broken(format!(
                "an event-stream frame has `event: {}` instead of `event: session_event` (INTEROP.md §9)",
                other.unwrap_or("<none>")
            ));
        }
    }
    let Some(id) = frame
        .id
        .as_deref()
        .and_then(|id| id.trim().parse::<u64>().ok())
    else {
        return broken(
            "a session_event frame carries no numeric `id:` line (INTEROP.md §9: Last-Event-ID replay needs it)"
                .to_owned(),
        );
    };
    if last_id.is_some_and(|last| id <= last) {
        return broken(format!(
            "the event stream repeated or reordered event {id} after {}",
            last_id.unwrap_or_default()
        ));
    }
    let Ok(Value::Object(mut event)) = serde_json::from_str::<Value>(&data) else {
        return broken("a session_event frame's data is not one JSON object".to_owned());
    };
    match event.remove("id") {
        Some(Value::Number(n)) if n.as_u64() == Some(id) => {}
        other => {
            return broken(format!(
                "a session_event frame's data carries `id` {other:?}, not the frame's id {id} (INTEROP.md §9)"
            ));
        }
    }
    let notification = serde_json::json!({
        "jsonrpc": "2.0",
        "method": "SessionEvent",
        "params": Value::Object(event),
    });
    Judged::Event {
        id,
        line: notification.to_string().into_bytes(),
    }
}

/// Requirements whose scenarios cannot run against a sandbox, and why: the sandbox's session
/// comes from its registration (INTEROP.md §9), so what CreateSession decides at the Session
/// Service — compatibility, the bundle's checks, retries, a second session — never happens.
const NOT_APPLICABLE_REQUIREMENTS: &[(&str, &str)] = &[
    (
        "REQ-SES-001",
        "the runtime does not ask for a session: it registers",
    ),
    (
        "REQ-SES-002",
        "the session's ids and flags come from the registration",
    ),
    (
        "REQ-SES-005",
        "compatibility is decided when the service creates the sandbox's session",
    ),
    (
        "REQ-SES-011",
        "CreateSession's failures at the Session Service do not arise",
    ),
    (
        "REQ-SES-020",
        "CreateSession's retries do not arise; registration has its own",
    ),
    (
        "REQ-SES-021",
        "CreateSession never waits on the Session Service",
    ),
    (
        "REQ-SES-103",
        "the Session Service's CreateSession errors do not arise",
    ),
    (
        "REQ-SES-300",
        "the bundle is checked at registration, before the sandbox serves",
    ),
    ("REQ-SES-302", "no POST /sessions is sent"),
    (
        "REQ-LOOP-005",
        "a proxied CreateSession is answered with the registered session",
    ),
    (
        "REQ-POL-102",
        "a sandbox always has its workspace folder (--workspace-dir)",
    ),
];

/// Scenario names (outline rows) whose premise the sandbox contract reverses.
const NOT_APPLICABLE_SCENARIOS: &[(&str, &str)] = &[(
    "(sessionId is missing)",
    "requests without sessionId mean the sandbox's one session",
)];

/// Why a scenario with these tags and this name is not applicable over the sandbox
/// transport, if it is not.
pub(crate) fn not_applicable(tags: &[String], name: &str) -> Option<String> {
    let by_tag = NOT_APPLICABLE_REQUIREMENTS.iter().find_map(|(id, why)| {
        tags.iter()
            .any(|tag| tag.trim_start_matches('@') == *id)
            .then(|| format!("over the sandbox transport (INTEROP.md §9): {id}: {why}"))
    });
    by_tag.or_else(|| {
        NOT_APPLICABLE_SCENARIOS.iter().find_map(|(part, why)| {
            name.contains(part)
                .then(|| format!("over the sandbox transport (INTEROP.md §9): {why}"))
        })
    })
}

/// Requests a sandbox cannot be asked for (its session comes from the registration, not
/// from CreateSession): the scenario is not applicable over this transport.
pub(super) fn applicable(method: &str, params: Option<&Value>) -> anyhow::Result<()> {
    let reason = match method {
        "ResumeSession" => Some(
            "ResumeSession: a sandbox's session comes from its registration (INTEROP.md §9), there is no earlier process to resume",
        ),
        "CreateSession"
            if params
                .and_then(|params| params.get("continueFromSessionId"))
                .is_some_and(|value| !value.is_null()) =>
        {
            Some(
                "CreateSession with continueFromSessionId: a sandbox serves the one session it registered (INTEROP.md §9)",
            )
        }
        _ => None,
    };
    match reason {
        Some(reason) => bail!("{} {reason}", crate::contract::NOT_APPLICABLE),
        None => Ok(()),
    }
}

/// SIGTERM to the sandbox, as the service's launcher stops it.
#[cfg(unix)]
fn terminate(pid: Option<u32>) {
    if let Some(pid) = pid.and_then(|p| i32::try_from(p).ok()) {
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(pid),
            nix::sys::signal::Signal::SIGTERM,
        );
    }
}

#[cfg(not(unix))]
fn terminate(_pid: Option<u32>) {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_are_judged_by_the_sandbox_rules() {
        let mut reader = FrameReader::default();
        let frames = reader.push(
            b"id: 3\nevent: session_event\ndata: {\"id\":3,\"eventId\":3,\"eventType\":\"x\"}\n\n: keep-alive\n\ndata: {\"eventId\":4}\n\n",
        );
        assert_eq!(frames.len(), 2);
        match judge(&frames[0], None) {
            Judged::Event { id, line } => {
                assert_eq!(id, 3);
                let value: Value = serde_json::from_slice(&line).unwrap();
                assert_eq!(value["params"]["eventId"], 3);
                assert!(value["params"].get("id").is_none());
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(judge(&frames[0], Some(3)), Judged::Broken { .. }));
        assert!(matches!(judge(&frames[1], None), Judged::Broken { .. }));
    }
}
