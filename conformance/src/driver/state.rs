//! What the kit has seen of one runtime process: every stdout line classified (responses,
//! events, protocol violations), the requests it sent, a bounded transcript and stderr tail.
//!
//! One `std::sync::Mutex` guards it: critical sections are short and never await, and the
//! reader task and the steps both touch it. A `Notify` wakes every waiter after each change,
//! so waits are event-driven (no polling) and bounded by the caller's timeout.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::fmt;
use std::process::ExitStatus;
use std::sync::{Mutex, MutexGuard};

use serde_json::Value;
use tokio::sync::Notify;

use crate::validation::{Finding, judged};

/// The longest excerpt of a line kept in the transcript or quoted in an error.
pub(super) const EXCERPT_CHARS: usize = 600;
/// Transcript entries kept (oldest dropped first).
const TRANSCRIPT_ENTRIES: usize = 4000;
/// Bytes of stderr kept (the tail).
const STDERR_BYTES: usize = 256 * 1024;

pub(crate) struct Shared {
    state: Mutex<State>,
    pub(crate) changed: Notify,
}

impl Shared {
    pub(crate) fn new() -> Self {
        Self {
            state: Mutex::new(State::default()),
            changed: Notify::new(),
        }
    }

    /// Locks the state; a poisoned lock (a panic elsewhere) still yields the data, since the
    /// state stays consistent line by line.
    pub(crate) fn lock(&self) -> MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Applies a change and wakes every waiter.
    pub(crate) fn update<T>(&self, change: impl FnOnce(&mut State) -> T) -> T {
        let out = change(&mut self.lock());
        self.changed.notify_waiters();
        out
    }
}

/// A message the runtime wrote that answers something: a response object or a batch array.
#[derive(Debug, Clone)]
pub(super) struct Inbound {
    /// Position among all stdout lines (1-based), to order responses against events.
    pub seq: u64,
    pub value: Value,
    /// Why the message is not a valid answer, when it is not (schema, shape, duplicate).
    pub problem: Option<String>,
}

/// One `SessionEvent` notification (its `params`).
#[derive(Debug, Clone)]
pub(crate) struct ReceivedEvent {
    pub seq: u64,
    pub params: Value,
}

impl ReceivedEvent {
    pub(crate) fn event_type(&self) -> &str {
        self.params
            .get("eventType")
            .and_then(Value::as_str)
            .unwrap_or("")
    }

    pub(crate) fn str_field(&self, name: &str) -> Option<&str> {
        self.params.get(name).and_then(Value::as_str)
    }

    pub(crate) fn payload(&self) -> &Value {
        self.params.get("payload").unwrap_or(&Value::Null)
    }
}

/// Something the runtime did that no conforming runtime does. Fails the scenario.
#[derive(Debug, Clone)]
pub(crate) struct Violation {
    /// The stdout line it concerns, if any.
    pub seq: Option<u64>,
    pub problem: String,
    pub excerpt: String,
    /// Already reported through a failing step, so the end-of-scenario check need not repeat it.
    pub surfaced: bool,
    /// About a `SessionEvent` (a bad event), as opposed to a line that is no protocol at all.
    pub in_event: bool,
    /// What the message is judged against (a [`crate::validation::judged`] name): the
    /// requirement about that message is charged with it, not the scenario that saw it.
    pub judged: String,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.seq {
            Some(seq) => write!(f, "stdout line {seq}: {}", self.problem)?,
            None => write!(f, "{}", self.problem)?,
        }
        if !self.excerpt.is_empty() {
            write!(f, "\n      line: {}", self.excerpt)?;
        }
        Ok(())
    }
}

/// Direction of a transcript entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Direction {
    /// Kit → runtime (stdin).
    Sent,
    /// Runtime → kit (stdout).
    Received,
    /// Something the kit noted (stdin closed, process exited, ...).
    Note,
}

#[derive(Debug, Clone)]
pub(super) struct TranscriptEntry {
    pub direction: Direction,
    pub text: String,
}

/// What the kit knows about a request it sent, keyed by the JSON text of its id so that the
/// number `1` and the string `"1"` stay different.
#[derive(Debug, Clone)]
pub(crate) struct SentRequest {
    /// The method, when the request named one the schemas know (used to pick the result
    /// schema); `None` for raw lines without a usable method.
    pub(crate) method: Option<String>,
    /// Requests with this id sent but not answered yet. A client may reuse an id once it is
    /// answered; an answer with nothing outstanding is a duplicate.
    pub(crate) outstanding: usize,
}

#[derive(Default)]
pub(super) struct State {
    /// stdout lines received so far.
    pub(crate) seq: u64,
    pub(crate) sent: HashMap<String, SentRequest>,
    pub(crate) inbox: VecDeque<Inbound>,
    pub(crate) events: Vec<ReceivedEvent>,
    pub(crate) violations: Vec<Violation>,
    /// How many messages were judged against each [`judged`] name.
    pub(crate) observed: BTreeMap<String, u64>,
    transcript: VecDeque<TranscriptEntry>,
    transcript_dropped: usize,
    /// The protocol stream (stdout, or the socket) reached its end.
    pub(crate) stdout_closed: bool,
    /// Socket transport: stdout (which must stay empty) reached its end; always true over
    /// stdio, where stdout is the protocol stream.
    pub(crate) stray_stdout_closed: bool,
    pub(crate) exit: Option<ExitStatus>,
    stderr: VecDeque<u8>,
    stderr_total: usize,
}

impl State {
    pub(crate) fn note(&mut self, direction: Direction, text: &str) {
        if self.transcript.len() >= TRANSCRIPT_ENTRIES {
            self.transcript.pop_front();
            self.transcript_dropped += 1;
        }
        self.transcript.push_back(TranscriptEntry {
            direction,
            text: excerpt(text),
        });
    }

    /// A line that is no JSON-RPC message at all (charged to the framing requirement).
    pub(crate) fn violation(&mut self, seq: Option<u64>, problem: impl Into<String>, line: &str) {
        self.finding(seq, judged::FRAMING, problem, line);
    }

    /// Something wrong with a message, charged to what it is judged against.
    pub(crate) fn finding(
        &mut self,
        seq: Option<u64>,
        judged: impl Into<String>,
        problem: impl Into<String>,
        line: &str,
    ) {
        let problem = problem.into();
        self.note(Direction::Note, &format!("VIOLATION: {problem}"));
        self.violations.push(Violation {
            seq,
            problem,
            excerpt: excerpt(line),
            surfaced: false,
            in_event: false,
            judged: judged.into(),
        });
    }

    /// A finding about a `SessionEvent` line (it does not stand in for a missing response).
    pub(crate) fn event_finding(&mut self, seq: u64, finding: Finding, line: &str) {
        self.finding(Some(seq), finding.judged, finding.problem, line);
        if let Some(last) = self.violations.last_mut() {
            last.in_event = true;
        }
    }

    /// Counts a message judged against `judged`, so a shape requirement that held on every
    /// message seen is told apart from one no scenario ever observed.
    pub(crate) fn observe(&mut self, judged: impl Into<String>) {
        *self.observed.entry(judged.into()).or_default() += 1;
    }

    pub(crate) fn push_stderr(&mut self, bytes: &[u8]) {
        self.stderr_total += bytes.len();
        self.stderr.extend(bytes);
        let excess = self.stderr.len().saturating_sub(STDERR_BYTES);
        self.stderr.drain(..excess);
    }

    pub(crate) fn stderr_tail(&self, max_bytes: usize) -> String {
        let skip = self.stderr.len().saturating_sub(max_bytes);
        let bytes: Vec<u8> = self.stderr.iter().skip(skip).copied().collect();
        let mut text = String::from_utf8_lossy(&bytes).into_owned();
        if skip > 0 || self.stderr_total > self.stderr.len() {
            text.insert_str(0, "[… earlier stderr dropped …]\n");
        }
        text
    }

    /// Marks the violations on these lines as already reported.
    pub(crate) fn surface(&mut self, seq: u64) {
        for violation in &mut self.violations {
            if violation.seq == Some(seq) {
                violation.surfaced = true;
            }
        }
    }

    pub(crate) fn transcript_text(&self) -> String {
        let mut out = String::new();
        if self.transcript_dropped > 0 {
            out.push_str(&format!(
                "[… {} earlier entries dropped …]\n",
                self.transcript_dropped
            ));
        }
        for entry in &self.transcript {
            let arrow = match entry.direction {
                Direction::Sent => "→ ",
                Direction::Received => "← ",
                Direction::Note => "# ",
            };
            out.push_str(arrow);
            out.push_str(&entry.text);
            out.push('\n');
        }
        out
    }
}

/// The start and end of a long text, so a 10 MB line stays readable in a report.
pub(crate) fn excerpt(text: &str) -> String {
    let chars = text.chars().count();
    if chars <= EXCERPT_CHARS {
        return text.to_owned();
    }
    let head: String = text.chars().take(EXCERPT_CHARS * 2 / 3).collect();
    let tail: String = text
        .chars()
        .skip(chars - EXCERPT_CHARS / 3)
        .collect::<String>();
    format!("{head}[… {} chars …]{tail}", chars - EXCERPT_CHARS)
}

/// The key a request id is tracked under: its compact JSON text (`1` ≠ `"1"`).
pub(crate) fn id_key(id: &Value) -> String {
    id.to_string()
}
