//! Drives one runtime-under-test process the way the desktop app does: spawn the command with
//! a prepared environment, write JSON-RPC lines to it, read NDJSON back. Three transports
//! (started by [`launch`], one path with the transport as the varying part):
//!
//! - **stdio** (the default): no argument is added; requests go to the child's stdin, the
//!   protocol comes back on its stdout.
//! - **socket** (Unix only): `--listen <path>` is appended, the kit connects to that Unix
//!   domain socket (a short bounded retry while the runtime binds it) and speaks the same
//!   protocol over the connection. stdout must then stay empty: every stdout line is a
//!   violation. stdin is a pipe the kit keeps open and never writes to.
//! - **http**: `--listen http://127.0.0.1:PORT` and a bearer token; requests are `POST /rpc`
//!   bodies, responses and events are bridged back into lines (see [`http`]).
//! - **sandbox**: the kit plays the Session Service of INTEROP.md §9: the runtime registers
//!   itself and the kit proxies `/rpc` and `/events` to it as the real proxy does (see
//!   [`sandbox`]).
//!
//! Every wait is bounded by a timeout and wakes on a `Notify` fired by the reader task, so a
//! hung or silent runtime fails the step that waits for it instead of hanging the run, and
//! nothing polls. Every stdout line is validated by the reader (see [`reader`]); what does not
//! conform is kept as a [`Violation`] and fails the scenario at its end at the latest.

mod http;
pub(crate) mod launch;
mod reader;
pub(crate) mod sandbox;
pub(crate) mod sandbox_scratch;
mod state;
#[cfg(test)]
mod tests;

use std::process::ExitStatus;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, anyhow, bail};
use serde_json::{Value, json};
use tokio::io::AsyncWriteExt;
use tokio::sync::oneshot;
use tokio::time::Instant;

pub(crate) use launch::{LISTEN_ARG, LaunchSpec, RuntimeCommand, Transport};
pub(crate) use reader::kind;
pub(crate) use sandbox::SandboxSpec;
use state::{Direction, SentRequest, Shared, State};
pub(crate) use state::{ReceivedEvent, Violation, excerpt, id_key};

use crate::validation;

/// One running runtime process and everything the kit has seen of it.
pub(crate) struct RuntimeDriver {
    shared: Arc<Shared>,
    /// Where requests go: the child's stdin (stdio transport) or the write half of the
    /// socket (socket transport). The process, the reader and the waits do not care which.
    stdin: Option<launch::Writer>,
    /// Socket transport: the child's real stdin, kept open (and never written) so that a
    /// runtime watching it does not see end of input; dropped when the scenario ends.
    idle_stdin: Option<tokio::process::ChildStdin>,
    /// The transport in use, for messages.
    transport: Transport,
    /// Dropping this (or sending on it) kills the process.
    kill: Option<oneshot::Sender<()>>,
    timeout: Duration,
    next_id: i64,
    pid: Option<u32>,
    /// stdout position of the last response handed to a caller.
    last_response_seq: u64,
    /// stdout position when the last line was sent: what the runtime writes after it may
    /// be its answer.
    sent_at_seq: u64,
}

impl std::fmt::Debug for RuntimeDriver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RuntimeDriver")
            .field("pid", &self.pid)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

impl RuntimeDriver {
    /// Spawns the runtime over `spec`'s transport and starts the reader tasks; over a socket
    /// or HTTP, also waits (bounded by `timeout`) until the runtime accepts the connection.
    /// `timeout` bounds every later wait.
    pub(crate) async fn start(spec: &LaunchSpec, timeout: Duration) -> anyhow::Result<Self> {
        let launched = launch::launch(spec, timeout).await?;
        Ok(Self {
            shared: launched.shared,
            stdin: Some(launched.writer),
            idle_stdin: launched.idle_stdin,
            transport: launched.transport,
            kill: Some(launched.kill),
            timeout,
            next_id: 0,
            pid: launched.pid,
            last_response_seq: 0,
            sent_at_seq: 0,
        })
    }

    /// The runtime's process id (to signal it, as the OS would at logout).
    pub(crate) fn pid(&self) -> Option<u32> {
        self.pid
    }

    /// The default bound for waits.
    pub(crate) fn timeout(&self) -> Duration {
        self.timeout
    }

    /// Sends a request with a fresh numeric id and waits for its response (the whole
    /// response object, `result` or `error`). Fails when no valid response arrives in time.
    pub(crate) async fn request(
        &mut self,
        method: &str,
        params: Option<Value>,
    ) -> anyhow::Result<Value> {
        let id = self.fresh_id();
        self.request_with_id(id, method, params).await
    }

    /// Like [`request`](Self::request) with a caller-chosen id (any JSON value).
    pub(crate) async fn request_with_id(
        &mut self,
        id: Value,
        method: &str,
        params: Option<Value>,
    ) -> anyhow::Result<Value> {
        let id = self.send_request(id, method, params).await?;
        self.wait_response(&id, method).await
    }

    /// Writes a request without waiting for the answer (to pipeline requests); returns its id.
    pub(crate) async fn send_request(
        &mut self,
        id: Value,
        method: &str,
        params: Option<Value>,
    ) -> anyhow::Result<Value> {
        if self.transport == Transport::Sandbox {
            sandbox::applicable(method, params.as_ref())?;
        }
        let mut request = json!({"jsonrpc": "2.0", "id": id.clone(), "method": method});
        if let (Some(params), Value::Object(map)) = (params, &mut request) {
            map.insert("params".to_owned(), params);
        }
        let line = serde_json::to_vec(&request)?;
        self.send_raw_line(&line).await?;
        Ok(id)
    }

    /// Waits for the response carrying `id` (compared with its JSON type).
    pub(crate) async fn wait_response(&mut self, id: &Value, what: &str) -> anyhow::Result<Value> {
        let key = id_key(id);
        let label = format!("the response to {what} (id {key})");
        let inbound = self
            .wait_until(&label, self.timeout, |s| {
                let position = s
                    .inbox
                    .iter()
                    .position(|m| m.value.get("id").map(id_key).as_deref() == Some(key.as_str()))?;
                let message = s.inbox.remove(position)?;
                if message.problem.is_some() {
                    s.surface(message.seq);
                }
                Some(Ok(message))
            })
            .await
            .map_err(
                |error| match crate::report::attribution::awaited_response(what) {
                    // A response the run never saw is charged to the requirement about it.
                    Some(awaited) => anyhow!("{error:#} {awaited}"),
                    None => error,
                },
            )?;
        self.last_response_seq = inbound.seq;
        match inbound.problem {
            Some(problem) => Err(anyhow!(
                "{label} is not a valid response: {problem}\n      line: {}",
                excerpt(&inbound.value.to_string())
            )),
            None => Ok(inbound.value),
        }
    }

    /// Writes one line (the bytes as given, then `\n`) to the runtime's stdin. Requests in
    /// it are remembered so their responses can be validated against the right schema.
    pub(crate) async fn send_raw_line(&mut self, bytes: &[u8]) -> anyhow::Result<()> {
        let text = String::from_utf8_lossy(bytes).into_owned();
        self.sent_at_seq = self.shared.update(|s| {
            remember_requests(s, bytes);
            s.note(Direction::Sent, &text);
            s.seq
        });
        let stdin = self
            .stdin
            .as_mut()
            .context("the kit already closed the runtime's stdin")?;
        let mut line = Vec::with_capacity(bytes.len() + 1);
        line.extend_from_slice(bytes);
        line.push(b'\n');
        // A long line may take a while to go through the pipe; a runtime that stops reading
        // must still not hang the kit.
        let budget = self.timeout + Duration::from_millis((line.len() / 1024) as u64);
        tokio::time::timeout(budget, async {
            stdin.write_all(&line).await?;
            stdin.flush().await
        })
        .await
        .map_err(|_| {
            anyhow!(
                "the runtime did not read a {}-byte line from its stdin within {budget:?}",
                line.len()
            )
        })?
        .context("cannot write to the runtime's stdin (did it exit?)")?;
        Ok(())
    }

    /// The next unclaimed response (an object, or a batch array) in arrival order, for raw
    /// protocol tests. Fails at once when the runtime writes something that is not JSON-RPC.
    pub(crate) async fn read_next_response(&mut self) -> anyhow::Result<Value> {
        // Lines written since the last send may stand where its answer should be, even if
        // they arrived before this call.
        let since = self.sent_at_seq;
        let inbound = self
            .wait_until("a response", self.timeout, |s| {
                if let Some(message) = s.inbox.pop_front() {
                    if message.problem.is_some() {
                        s.surface(message.seq);
                    }
                    return Some(Ok(message));
                }
                let broken = s
                    .violations
                    .iter_mut()
                    .find(|v| v.seq.is_some_and(|seq| seq > since) && !v.surfaced && !v.in_event)?;
                broken.surfaced = true;
                Some(Err(anyhow!(
                    "instead of a response, the runtime wrote: {broken}"
                )))
            })
            .await?;
        self.last_response_seq = inbound.seq;
        match inbound.problem {
            Some(problem) => Err(anyhow!(
                "the runtime's reply is not a valid response: {problem}\n      line: {}",
                excerpt(&inbound.value.to_string())
            )),
            None => Ok(inbound.value),
        }
    }

    /// Proves no response is pending to anything sent so far: sends a `GetSessionState`
    /// probe, waits for its answer, and returns every other response that arrived first.
    /// A runtime answers in its own order, so this catches replies written before the probe's.
    pub(crate) async fn unclaimed_responses_after_probe(&mut self) -> anyhow::Result<Vec<Value>> {
        let id = self.fresh_id();
        self.request_with_id(id, "GetSessionState", Some(json!({})))
            .await
            .context("the runtime did not answer a GetSessionState probe")?;
        let leftovers = self
            .shared
            .update(|s| s.inbox.drain(..).collect::<Vec<_>>());
        Ok(leftovers.into_iter().map(|m| m.value).collect())
    }

    /// Waits for an event matching `predicate` among all events received so far and later.
    pub(crate) async fn wait_for_event(
        &self,
        what: &str,
        timeout: Duration,
        predicate: impl Fn(&ReceivedEvent) -> bool,
    ) -> anyhow::Result<ReceivedEvent> {
        self.wait_until(what, timeout, |s| {
            s.events.iter().find(|e| predicate(e)).cloned().map(Ok)
        })
        .await
    }

    /// Waits until `check` yields something from the whole list of events received so far
    /// (e.g. "at least N events, or a terminal one").
    pub(crate) async fn wait_for_events<T>(
        &self,
        what: &str,
        timeout: Duration,
        check: impl Fn(&[ReceivedEvent]) -> Option<T>,
    ) -> anyhow::Result<T> {
        self.wait_until(what, timeout, |s| check(&s.events).map(Ok))
            .await
    }

    /// Every `SessionEvent` received so far, in arrival order.
    pub(crate) fn events(&self) -> Vec<ReceivedEvent> {
        self.shared.lock().events.clone()
    }

    /// The stdout position of the last response returned by a request or a raw read, to
    /// order it against events (`ReceivedEvent::seq`).
    pub(crate) fn last_response_seq(&self) -> u64 {
        self.last_response_seq
    }

    /// Ends the input (as when the app goes away): closes stdin over stdio, shuts down the
    /// socket's write half over a socket (the kit keeps reading the other half).
    pub(crate) async fn close_stdin(&mut self) -> anyhow::Result<()> {
        if let Some(mut stdin) = self.stdin.take() {
            let _ = stdin.shutdown().await;
        }
        let note = match self.transport {
            Transport::Stdio => "stdin closed by the kit",
            Transport::Socket => "the socket's write half shut down by the kit (end of input)",
            Transport::Http => {
                "the kit's requests ended: event stream closed after the last answer (end of input)"
            }
            Transport::Sandbox => {
                "the kit's requests ended: SIGTERM to the sandbox after the last answer (a sandbox ends on Shutdown or SIGTERM)"
            }
        };
        self.shared.update(|s| s.note(Direction::Note, note));
        Ok(())
    }

    /// Waits for the process to exit on its own.
    pub(crate) async fn wait_exit(&self, timeout: Duration) -> anyhow::Result<ExitStatus> {
        self.wait_until_exit("the runtime to exit", timeout).await
    }

    /// The exit status, if the process has exited.
    pub(crate) fn exit_status(&self) -> Option<ExitStatus> {
        self.shared.lock().exit
    }

    /// A crash: SIGKILL first, with the input still open (closing it first would let the
    /// runtime see end of input and shut down cleanly — deleting its checkpoint — before
    /// the kill lands), then what [`stop`](Self::stop) does.
    pub(crate) async fn kill(&mut self) {
        if self.exit_status().is_none()
            && let Some(kill) = self.kill.take()
        {
            self.shared
                .update(|s| s.note(Direction::Note, "killed with SIGKILL by the kit (a crash)"));
            let _ = kill.send(());
        }
        let _ = self
            .wait_until_exit("exit after SIGKILL", self.timeout)
            .await;
        self.stop().await;
    }

    /// Kills the process if it still runs and waits (bounded) for it and for stdout to close,
    /// so the last lines it wrote are classified before the scenario is judged.
    pub(crate) async fn stop(&mut self) {
        self.stdin = None;
        self.idle_stdin = None;
        // The scenario is over: what the runtime would do next does not matter, and the lines
        // it already wrote stay in the pipe to be read after the kill.
        if self.exit_status().is_none()
            && let Some(kill) = self.kill.take()
        {
            let _ = kill.send(());
        }
        let _ = self.wait_until_exit("exit after kill", self.timeout).await;
        // A grandchild may keep stdout open after the process is gone; do not wait forever.
        let _ = self
            .wait_until("stdout to close", Duration::from_secs(1), |s| {
                (s.stdout_closed && s.stray_stdout_closed).then_some(Ok(()))
            })
            .await;
    }

    /// Protocol violations recorded so far.
    pub(crate) fn violations(&self) -> Vec<Violation> {
        self.shared.lock().violations.clone()
    }

    /// How many messages were judged against each [`crate::validation::judged`] name.
    pub(crate) fn observed(&self) -> std::collections::BTreeMap<String, u64> {
        self.shared.lock().observed.clone()
    }

    /// The last `max_bytes` of stderr.
    pub(crate) fn stderr_tail(&self, max_bytes: usize) -> String {
        self.shared.lock().stderr_tail(max_bytes)
    }

    /// The conversation so far, one line per message (long lines abridged).
    pub(crate) fn transcript(&self) -> String {
        self.shared.lock().transcript_text()
    }

    /// A number id not used by any request sent so far (raw lines may have used small ones).
    pub(crate) fn fresh_id(&mut self) -> Value {
        loop {
            self.next_id += 1;
            let id = json!(self.next_id);
            if !self.shared.lock().sent.contains_key(&id_key(&id)) {
                return id;
            }
        }
    }

    async fn wait_until_exit(&self, what: &str, timeout: Duration) -> anyhow::Result<ExitStatus> {
        let deadline = Instant::now() + timeout;
        loop {
            let notified = self.shared.changed.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if let Some(status) = self.shared.lock().exit {
                return Ok(status);
            }
            // Checked here too: a runtime that keeps writing wakes this loop forever, and
            // `timeout_at` only fires when the inner future is pending.
            if Instant::now() >= deadline
                || tokio::time::timeout_at(deadline, notified).await.is_err()
            {
                bail!(
                    "timed out after {timeout:?} waiting for {what}; the process is still running"
                );
            }
        }
    }

    /// The one waiting primitive: re-checks `check` after every change until it yields,
    /// stdout closes, or the timeout passes.
    async fn wait_until<T>(
        &self,
        what: &str,
        timeout: Duration,
        mut check: impl FnMut(&mut State) -> Option<anyhow::Result<T>>,
    ) -> anyhow::Result<T> {
        let deadline = Instant::now() + timeout;
        loop {
            let notified = self.shared.changed.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            {
                let mut state = self.shared.lock();
                if let Some(result) = check(&mut state) {
                    return result;
                }
                if state.stdout_closed {
                    let exit = match (state.exit, self.transport) {
                        (Some(status), _) => format!("the process exited ({status})"),
                        (None, Transport::Stdio) => "the process closed its stdout".to_owned(),
                        (None, Transport::Socket) => "the runtime closed the socket".to_owned(),
                        (None, Transport::Http) => "the runtime ended its event stream".to_owned(),
                        (None, Transport::Sandbox) => {
                            "the sandbox's event stream ended for good".to_owned()
                        }
                    };
                    bail!(
                        "{exit} while the kit was waiting for {what}\n      last stderr:\n{}",
                        indent(&state.stderr_tail(2000))
                    );
                }
            }
            if Instant::now() >= deadline
                || tokio::time::timeout_at(deadline, notified).await.is_err()
            {
                let state = self.shared.lock();
                bail!(
                    "timed out after {timeout:?} waiting for {what}\n      last stderr:\n{}",
                    indent(&state.stderr_tail(2000))
                );
            }
        }
    }
}

/// Records the ids (and methods) of the requests in an outgoing line, if it parses.
fn remember_requests(state: &mut State, bytes: &[u8]) {
    let Ok(value) = serde_json::from_slice::<Value>(bytes) else {
        return;
    };
    let items = match value {
        Value::Array(items) => items,
        other => vec![other],
    };
    for item in items {
        let Some(id) = item.get("id") else { continue };
        let method = item
            .get("method")
            .and_then(Value::as_str)
            .filter(|m| validation::is_known_method(m))
            .map(str::to_owned);
        let sent = state.sent.entry(id_key(id)).or_insert(SentRequest {
            method: None,
            outstanding: 0,
        });
        sent.method = method;
        sent.outstanding += 1;
    }
}

pub(crate) fn indent(text: &str) -> String {
    if text.trim().is_empty() {
        return "        (nothing)".to_owned();
    }
    text.lines()
        .map(|line| format!("        {line}"))
        .collect::<Vec<_>>()
        .join("\n")
}
