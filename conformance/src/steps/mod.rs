//! Step definitions, in the domain's words. The plumbing (ids, JSON, fakes) lives here so
//! the `.feature` files can read like the spec.
//!
//! Every step returns [`StepResult`]: a failure carries its whole context chain, which
//! cucumber prints as the step's error (a panic in a step loses its file, line and context).

/// `ensure!` for steps: fails with a formatted message, converting with `.into()` so it works
/// in functions returning [`StepResult`] as well as `anyhow::Result` (anyhow's own macros
/// return `anyhow::Error` unconverted).
macro_rules! check {
    ($cond:expr, $($arg:tt)+) => {
        if !$cond {
            return Err(::anyhow::anyhow!($($arg)+).into());
        }
    };
}

/// `bail!` for steps (see [`check!`]).
macro_rules! fail {
    ($($arg:tt)+) => {
        return Err(::anyhow::anyhow!($($arg)+).into())
    };
}

pub mod agent_loop;
pub mod approvals;
pub mod audit;
pub mod cancellation;
pub mod common;
pub mod errors;
pub mod events;
pub mod extensions;
pub mod faults;
pub mod gateway;
pub mod governance;
pub mod hardening_files;
pub mod hardening_policy;
pub mod hardening_sandbox;
pub mod lifecycle;
pub mod loop_extra;
pub mod model;
pub mod model_requests;
pub mod pause;
pub mod paused_resume;
pub mod policy;
pub mod prompt;
pub mod recovery;
pub mod redaction;
pub mod restarts;
pub mod rpc;
pub mod sandbox_files;
pub mod sandbox_host;
pub mod session;
pub mod shutdown_history;
pub mod spec_gaps;
pub mod task;
pub mod task_options;
pub mod thread;
pub mod tools;
pub mod tools_git;
pub mod tools_http;
pub mod walk_design;
pub mod walk_host;
pub mod walk_tools;

use std::fmt;
use std::future::Future;
use std::time::Duration;

use agent_mocks::{Fakes, GatewayReply, RecordedRequest, StreamStep};
use anyhow::{anyhow, bail};
use serde_json::Value;

use crate::driver::ReceivedEvent;
use crate::world::ConformanceWorld;

/// What a step returns.
pub type StepResult = Result<(), Failure>;

/// A step failure: an `anyhow::Error` displayed with its whole context chain (cucumber shows
/// a failed step's error with `{}`, which for anyhow would print only the outermost line).
pub struct Failure(anyhow::Error);

impl<E: Into<anyhow::Error>> From<E> for Failure {
    fn from(error: E) -> Self {
        Failure(error.into())
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:#}", self.0)
    }
}

impl fmt::Debug for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:#}", self.0)
    }
}

// ---- the model (LLM Gateway fake) ------------------------------------------------------------
//
// Scenarios talk to the streaming gateway: it sends each SSE event as its own write, which is
// how a real gateway behaves and what "text_chunk as each delta arrives" is about, and it can
// hold a stream mid-way (to observe a task while the model is still answering).

/// The gateway URL the runtime is given (`LLM_GATEWAY_ENDPOINT`, including `/v1`).
pub fn gateway_url(fakes: &Fakes) -> String {
    fakes.streaming_gateway.url()
}

/// Appends a scripted model reply.
pub fn push_model_reply(fakes: &Fakes, reply: GatewayReply) {
    fakes.streaming_gateway.push_reply(reply);
}

/// Appends an exact stream (for stalls).
pub fn push_model_stream(fakes: &Fakes, steps: Vec<StreamStep>) {
    fakes.streaming_gateway.push_stream(steps);
}

/// Lets a stalled model stream go on.
pub fn release_model(fakes: &Fakes) {
    fakes.streaming_gateway.release();
}

/// Every chat-completions request the model received, in order.
pub async fn model_requests(fakes: &Fakes) -> Vec<RecordedRequest> {
    fakes.streaming_gateway.requests().await
}

// ---- small helpers ---------------------------------------------------------------------------

/// Waits until `check` yields, re-checking with a short backoff. For what only the fakes can
/// observe (a service call the runtime makes after its last stdout line): the fakes record
/// requests but offer no notification, so this bounded re-check is the one place the kit polls.
pub async fn eventually<T, F, Fut>(timeout: Duration, what: &str, mut check: F) -> anyhow::Result<T>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, String>>,
{
    let deadline = tokio::time::Instant::now() + timeout;
    let mut pause = Duration::from_millis(5);
    loop {
        match check().await {
            Ok(value) => return Ok(value),
            Err(last) => {
                if tokio::time::Instant::now() >= deadline {
                    bail!("after {timeout:?}, {what}: {last}");
                }
            }
        }
        tokio::time::sleep(pause).await;
        pause = (pause * 2).min(Duration::from_millis(100));
    }
}

/// Checks a body the runtime sent to a service against its schema in `agent-schemas` (when
/// the schemas have one by that name), so the fakes' leniency cannot hide a malformed call.
pub fn check_service_body(schema: &str, body: &Value, what: &str) -> anyhow::Result<()> {
    if !crate::validation::has_schema(schema) {
        return Ok(());
    }
    crate::validation::check_as_services_read(schema, body)
        .map_err(|problem| anyhow!("{what} does not match {schema}: {problem}"))
}

/// Whether an optional error code matches: `tool_completed.errorCode` is the reference's
/// addition (INTEROP.md §1 lists `status` and `error` for the app), so a runtime may leave it
/// out; when it is there, it must be the expected one.
pub fn optional_code(payload: &Value, field: &str, expected: &str) -> bool {
    match payload.get(field) {
        None | Some(Value::Null) => true,
        Some(value) => value.as_str() == Some(expected),
    }
}

/// The answer a completed task gave: `task_completed.result` when the runtime sends it
/// (optional in the documents), else the text the task streamed as `text_chunk`s.
pub fn task_answer(end: &ReceivedEvent, events: &[ReceivedEvent]) -> String {
    if let Some(result) = str_at(end.payload(), &["result"]) {
        return result.to_owned();
    }
    // The text of the task's last model call: after its last step_started, llm_retry or
    // llm_request_started (a retried stream's partial text was never part of the answer).
    let task_id = end.str_field("taskId");
    let of_task: Vec<&ReceivedEvent> = events
        .iter()
        .filter(|e| e.str_field("taskId") == task_id && e.seq < end.seq)
        .collect();
    let last_attempt = of_task
        .iter()
        .rposition(|e| {
            matches!(
                e.event_type(),
                "step_started" | "llm_retry" | "llm_request_started"
            )
        })
        .map_or(0, |at| at + 1);
    of_task[last_attempt..]
        .iter()
        .filter(|e| e.event_type() == "text_chunk")
        .filter_map(|e| str_at(e.payload(), &["text"]))
        .collect()
}

/// `value[a][b]…` as a string.
pub fn str_at<'a>(value: &'a Value, path: &[&str]) -> Option<&'a str> {
    at(value, path).and_then(Value::as_str)
}

/// `value[a][b]…`.
pub fn at<'a>(value: &'a Value, path: &[&str]) -> Option<&'a Value> {
    path.iter().try_fold(value, |v, key| v.get(*key))
}

/// Compact JSON for messages, abridged.
pub fn show(value: &Value) -> String {
    crate::driver::excerpt(&value.to_string())
}

/// The `result` of a response, or a failure quoting the error the runtime gave instead.
pub fn expect_result<'a>(response: &'a Value, what: &str) -> anyhow::Result<&'a Value> {
    if let Some(result) = response.get("result") {
        return Ok(result);
    }
    Err(anyhow!(
        "{what} failed instead of succeeding: {}",
        show(response.get("error").unwrap_or(response))
    ))
}

/// Events of one task, in order.
pub fn task_events(events: &[ReceivedEvent], task_id: &str) -> Vec<ReceivedEvent> {
    // An event without a taskId between the task's first event and its end is the task's
    // too: its missing taskId is charged to REQ-EVT-004 alone, not to every behaviour that
    // needs the task's tool events (one defect, one verdict).
    let of_task = |e: &ReceivedEvent| e.str_field("taskId") == Some(task_id);
    let start = events.iter().find(|e| of_task(e)).map(|e| e.seq);
    let end = events
        .iter()
        .find(|e| of_task(e) && TASK_TERMINAL_EVENTS.contains(&e.event_type()))
        .map_or(u64::MAX, |e| e.seq);
    events
        .iter()
        .filter(|e| {
            of_task(e)
                || (e.params.get("taskId").is_none_or(Value::is_null)
                    && start.is_some_and(|start| e.seq > start && e.seq < end)
                    && !e.event_type().starts_with("session_"))
        })
        .cloned()
        .collect()
}

/// The event types that end a task (INTEROP.md §1: exactly one per task).
pub const TASK_TERMINAL_EVENTS: &[&str] = &["task_completed", "task_failed", "task_cancelled"];

/// A readable list of event types, for messages.
pub fn event_types(events: &[ReceivedEvent]) -> String {
    if events.is_empty() {
        return "(no events)".to_owned();
    }
    events
        .iter()
        .map(|e| e.event_type().to_owned())
        .collect::<Vec<_>>()
        .join(", ")
}

/// Sends a `GetSessionState` round trip so that everything the runtime wrote before answering
/// it has been read: a cheap barrier before asserting that something did *not* happen.
pub async fn barrier(world: &mut ConformanceWorld) -> anyhow::Result<()> {
    let params = match &world.session {
        Some(session) => serde_json::json!({"sessionId": session.session_id}),
        None => serde_json::json!({}),
    };
    world
        .runtime()
        .await?
        .request("GetSessionState", Some(params))
        .await?;
    Ok(())
}
