//! The tasks that read the runtime's stdout and stderr. Each stdout line is classified and
//! validated as it arrives, so a protocol violation is recorded even when no step looks at
//! that line, and responses are routed to whichever step waits for their id.

use std::sync::Arc;

use serde_json::{Map, Value};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, BufReader};

use super::state::{Direction, Inbound, ReceivedEvent, Shared, State, id_key};
use crate::validation::{self, Finding, judged};

/// The longest stdout line the kit buffers. Longer lines are a violation and are skipped
/// (a runaway runtime must not exhaust the kit's memory).
const MAX_LINE_BYTES: usize = 64 * 1024 * 1024;

const SESSION_EVENT: &str = "SessionEvent";

/// Reads stdout to EOF, one NDJSON line at a time.
pub(crate) async fn read_stdout(stdout: impl AsRead, shared: Arc<Shared>) {
    let mut reader = BufReader::with_capacity(256 * 1024, stdout);
    let mut line: Vec<u8> = Vec::new();
    let mut oversized = false;
    loop {
        let chunk = match reader.fill_buf().await {
            Ok(chunk) => chunk,
            Err(error) => {
                shared.update(|s| s.note(Direction::Note, &format!("stdout read error: {error}")));
                break;
            }
        };
        if chunk.is_empty() {
            if !line.is_empty() && !oversized {
                let done = std::mem::take(&mut line);
                shared.update(|s| handle_line(s, &done));
            }
            break;
        }
        let (take, complete) = match chunk.iter().position(|b| *b == b'\n') {
            Some(at) => (at + 1, true),
            None => (chunk.len(), false),
        };
        if !oversized {
            let body = if complete { &chunk[..take - 1] } else { chunk };
            if line.len() + body.len() > MAX_LINE_BYTES {
                oversized = true;
                line.clear();
                shared.update(|s| {
                    s.seq += 1;
                    let seq = s.seq;
                    s.violation(
                        Some(seq),
                        format!("a stdout line is longer than {MAX_LINE_BYTES} bytes"),
                        "",
                    );
                });
            } else {
                line.extend_from_slice(body);
            }
        }
        reader.consume(take);
        if complete {
            if !oversized {
                let done = std::mem::take(&mut line);
                shared.update(|s| handle_line(s, &done));
            }
            oversized = false;
        }
    }
    shared.update(|s| {
        s.stdout_closed = true;
        s.note(Direction::Note, "stdout closed");
    });
}

/// Socket transport: reads stdout to EOF. The protocol runs over the socket, so stdout must
/// carry nothing at all: every line on it (JSON or not) is a protocol violation.
pub(crate) async fn read_stray_stdout(stdout: impl AsRead, shared: Arc<Shared>) {
    let mut lines = BufReader::new(stdout).split(b'\n');
    loop {
        match lines.next_segment().await {
            Ok(Some(line)) => {
                let text = String::from_utf8_lossy(&line).into_owned();
                shared.update(|s| {
                    s.note(Direction::Note, &format!("stdout (must stay empty): {text}"));
                    s.violation(
                        None,
                        "the runtime wrote to stdout while the protocol runs over the socket (socket transport: stdout must stay empty, logs belong on stderr)",
                        &text,
                    );
                });
            }
            Ok(None) => break,
            Err(error) => {
                shared.update(|s| s.note(Direction::Note, &format!("stdout read error: {error}")));
                break;
            }
        }
    }
    shared.update(|s| s.stray_stdout_closed = true);
}

/// Reads stderr to EOF into the bounded tail kept for reports.
pub(crate) async fn read_stderr(mut stderr: impl AsRead, shared: Arc<Shared>) {
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        match stderr.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                let bytes = &buf[..n];
                // No notify: nobody waits on stderr.
                shared.lock().push_stderr(bytes);
            }
        }
    }
}

/// `AsyncRead + Unpin + Send`, for the child's pipes.
pub(crate) trait AsRead: AsyncRead + Unpin + Send + 'static {}
impl<T: AsyncRead + Unpin + Send + 'static> AsRead for T {}

/// Classifies one stdout line and records what it is.
fn handle_line(state: &mut State, bytes: &[u8]) {
    state.seq += 1;
    let seq = state.seq;
    let text = match std::str::from_utf8(bytes) {
        Ok(text) => text,
        Err(error) => {
            let lossy = String::from_utf8_lossy(bytes).into_owned();
            state.note(Direction::Received, &lossy);
            state.violation(
                Some(seq),
                format!("stdout line is not valid UTF-8 ({error})"),
                &lossy,
            );
            return;
        }
    };
    state.note(Direction::Received, text);
    let trimmed = text.strip_suffix('\r').unwrap_or(text);
    if trimmed.trim().is_empty() {
        state.violation(
            Some(seq),
            "empty line on stdout (stdout must carry only JSON-RPC messages)",
            text,
        );
        return;
    }
    let value: Value = match serde_json::from_str(trimmed) {
        Ok(value) => value,
        Err(error) => {
            state.violation(
                Some(seq),
                format!("stdout line is not JSON ({error}); stdout must carry only JSON-RPC messages, logs belong on stderr"),
                text,
            );
            return;
        }
    };
    match value {
        Value::Array(items) => handle_batch(state, seq, text, items),
        Value::Object(map) => handle_object(state, seq, text, map),
        other => state.violation(
            Some(seq),
            format!(
                "stdout line is JSON but neither an object nor a batch array ({})",
                kind(&other)
            ),
            text,
        ),
    }
}

fn handle_batch(state: &mut State, seq: u64, text: &str, items: Vec<Value>) {
    let mut structural = Vec::new();
    if items.is_empty() {
        structural.push("an empty array is never a valid reply (JSON-RPC 2.0 §6)".to_owned());
    }
    for (index, item) in items.iter().enumerate() {
        match item {
            Value::Object(map) if is_response(map) => {
                for finding in judge_response_object(state, map, item) {
                    state.finding(
                        Some(seq),
                        finding.judged,
                        format!("batch element {index}: {}", finding.problem),
                        text,
                    );
                }
            }
            other => structural.push(format!(
                "batch element {index} is not a response ({})",
                kind(other)
            )),
        }
    }
    let problem = join_problems(&structural);
    if let Some(problem) = &problem {
        state.violation(Some(seq), problem.clone(), text);
    }
    state.inbox.push_back(Inbound {
        seq,
        value: Value::Array(items),
        problem,
    });
}

fn handle_object(state: &mut State, seq: u64, text: &str, map: Map<String, Value>) {
    let has_id = map.contains_key("id");
    if is_response(&map) {
        let value = Value::Object(map);
        if let Value::Object(map) = &value {
            for finding in judge_response_object(state, map, &value) {
                state.finding(Some(seq), finding.judged, finding.problem, text);
            }
        }
        // A response with a malformed member still answers its request: the finding is
        // charged to the requirement about that message, and the step waiting for the
        // answer goes on to judge its own behaviour.
        state.inbox.push_back(Inbound {
            seq,
            value,
            problem: None,
        });
        return;
    }
    let method = map.get("method").and_then(Value::as_str).map(str::to_owned);
    match (method.as_deref(), has_id) {
        (Some(SESSION_EVENT), false) => {
            let params = map.get("params").cloned().unwrap_or(Value::Null);
            if map.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
                state.event_finding(
                    seq,
                    Finding::new(judged::EVENT, "SessionEvent without \"jsonrpc\": \"2.0\""),
                    text,
                );
            }
            state.observe(judged::EVENT);
            state.observe(judged::EVENT_ID);
            state.observe(judged::EVENT_ID_CHAIN);
            if let Some(event_type) = params.get("eventType").and_then(Value::as_str) {
                state.observe(judged::payload(event_type));
            }
            for finding in validation::judge_event(&params) {
                state.event_finding(seq, finding, text);
            }
            state.events.push(ReceivedEvent { seq, params });
        }
        (Some(other), false) => state.violation(
            Some(seq),
            format!("unexpected notification {other:?}: the runtime only sends SessionEvent notifications"),
            text,
        ),
        _ => {
            // Not a response, yet it may carry the id of a pending request (e.g. a runtime
            // that echoes its input): hand it to that request's waiter so it fails at once
            // instead of timing out.
            let problem = match method {
                Some(method) => format!(
                    "stdout carries a request ({method:?} with an id) where a response was expected: a response has \"result\" or \"error\" and no \"method\""
                ),
                None => "stdout line is an object that is neither a response (id + result/error) nor a SessionEvent notification".to_owned(),
            };
            state.violation(Some(seq), problem.clone(), text);
            if has_id {
                state.inbox.push_back(Inbound {
                    seq,
                    value: Value::Object(map),
                    problem: Some(problem),
                });
            }
        }
    }
}

/// An object with an `id` and a `result` or an `error`, and no `method`.
fn is_response(map: &Map<String, Value>) -> bool {
    map.contains_key("id")
        && !map.contains_key("method")
        && (map.contains_key("result") || map.contains_key("error"))
}

/// Judges a response and does the id bookkeeping: an id is answered once, and only ids the
/// client sent are answered (`null` excepted: it answers unreadable requests).
fn judge_response_object(
    state: &mut State,
    map: &Map<String, Value>,
    value: &Value,
) -> Vec<Finding> {
    let id = map.get("id").cloned().unwrap_or(Value::Null);
    let mut findings = Vec::new();
    let method = if id.is_null() {
        None
    } else {
        let key = id_key(&id);
        match state.sent.get_mut(&key) {
            None => {
                findings.push(Finding::new(
                    judged::IDS,
                    match same_id_other_type(state, &id) {
                        Some(sent) => format!(
                            "answers id {key} ({}), but the client sent the id {sent}: ids must be echoed with their JSON type",
                            kind(&id)
                        ),
                        None => format!("answers id {key}, which the client never sent"),
                    },
                ));
                None
            }
            Some(sent) if sent.outstanding == 0 => {
                findings.push(Finding::new(
                    judged::IDS,
                    format!("id {key} is answered more than once"),
                ));
                sent.method.clone()
            }
            Some(sent) => {
                sent.outstanding -= 1;
                sent.method.clone()
            }
        }
    };
    state.observe(judged::RESPONSE);
    if let Some(method) = &method
        && map.contains_key("result")
    {
        state.observe(judged::method_result(method));
    }
    findings.extend(validation::judge_response(method.as_deref(), value));
    findings
}

/// The id the client sent that this one is a retyped copy of (`7` for `"7"` and back).
fn same_id_other_type(state: &State, id: &Value) -> Option<String> {
    let twin = match id {
        Value::Number(n) => Value::String(n.to_string()),
        Value::String(s) => serde_json::from_str::<serde_json::Number>(s)
            .ok()
            .map(Value::Number)?,
        _ => return None,
    };
    let key = id_key(&twin);
    state
        .sent
        .contains_key(&key)
        .then(|| format!("{key} ({})", kind(&twin)))
}

fn join_problems(problems: &[String]) -> Option<String> {
    (!problems.is_empty()).then(|| problems.join("; "))
}

/// A JSON value's kind, for messages.
pub(crate) fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}
