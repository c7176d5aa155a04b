//! The mutant runtime: a wrapper around another runtime (the reference one in `cargo test`)
//! that breaks exactly one named thing on the wire, so the kit proves it catches each defect
//! and names it once: `conformance mutant-runtime --mutant NAME PROGRAM [ARGS…]`.
//!
//! Every mutant of [`MUTANTS`] names the requirements it must fail. The kit run against it
//! (its requirements and a few witnesses that run the same path, see [`Mutant::tags`]) must
//! fail exactly those: failing fewer is a defect the kit misses, failing more is a cascade
//! charged to the wrong requirement. `agent-runtime`'s `mutants` test holds every one to that.

mod catalogue;

use std::collections::HashMap;

use serde_json::{Value, json};

pub use catalogue::MUTANTS;

/// One named defect.
#[derive(Debug, Clone, Copy)]
pub struct Mutant {
    pub name: &'static str,
    /// What it breaks, in a sentence.
    pub breaks: &'static str,
    /// The requirements the kit must fail, and no other.
    pub fails: &'static [&'static str],
    /// Requirements whose scenarios run the broken path without judging it: they run beside
    /// and must pass or end not judged.
    pub witnesses: &'static [&'static str],
    kind: Kind,
}

impl Mutant {
    /// The tag expression of the focused run: its requirements and its witnesses.
    pub fn tags(&self) -> String {
        self.fails
            .iter()
            .chain(self.witnesses)
            .map(|id| format!("@{id}"))
            .collect::<Vec<_>>()
            .join(" or ")
    }

    /// The mutant of this name.
    pub fn named(name: &str) -> Option<&'static Mutant> {
        MUTANTS.iter().find(|m| m.name == name)
    }
}

/// How a mutant breaks the wire.
#[derive(Debug, Clone, Copy)]
enum Kind {
    /// Never send events of this type.
    DropEvent(&'static str),
    /// Send events of the first type as the second (payload unchanged).
    RenameEvent(&'static str, &'static str),
    /// `tool_completed.status`: the first value sent as the second.
    ToolStatus(&'static str, &'static str),
    /// Every second event repeats the id of the one before.
    RepeatEventId,
    /// Event ids 2 and 3, 4 and 5, … change places.
    SwapEventIds,
    /// The envelope member is left out of events whose type starts with the prefix.
    DropEnvelope(&'static str, &'static str),
    /// A task's last text_chunk is sent again after its terminal event.
    EventAfterTerminal,
    /// Every text_chunk is sent twice (each with an id of its own).
    DuplicateChunk,
    /// A JSON-RPC error code sent as another.
    ErrorCode(i64, i64),
    /// Numeric request ids are echoed as strings.
    IdAsString,
    /// String request ids are answered under another string.
    WrongStringId,
    /// GetSessionState always says the task is IDLE, with no current task.
    StateAlwaysIdle,
    /// A member of one method's result replaced by a value.
    ResultMember(&'static str, &'static str, &'static str),
    /// A member of one event type's payload replaced by a value.
    PayloadMember(&'static str, &'static str, &'static str),
    /// A batch is answered with one line per response instead of one array.
    BatchAsLines,
    /// `step_started.stepNumber` counts from 0.
    StepNumberFromZero,
    /// Event timestamps in milliseconds since the epoch instead of RFC 3339.
    EpochTimestamps,
    /// The response to this method is never sent.
    DropResponse(&'static str),
    /// Responses lack `"jsonrpc": "2.0"`.
    NoJsonrpcVersion,
}

/// The line rewriting of one mutant, kept apart from the pipes so it can be tested.
#[derive(Debug)]
pub struct Breaker {
    kind: Kind,
    /// Request id (as JSON text) → method, to know what a response answers.
    methods: HashMap<String, String>,
    /// The id the last event was sent with (after the mutation).
    last_event_id: Option<u64>,
    /// Events seen, for the pairwise mutations.
    events: u64,
    /// Per task, its last text_chunk event (for an event after the terminal one).
    last_chunk: HashMap<String, Value>,
}

/// Event ids are multiplied by this when a mutant inserts events, leaving room for them
/// (GetEvents' `sinceId` is mapped back).
const STRIDE: u64 = 2;

impl Breaker {
    pub fn new(mutant: &Mutant) -> Self {
        Self {
            kind: mutant.kind,
            methods: HashMap::new(),
            last_event_id: None,
            events: 0,
            last_chunk: HashMap::new(),
        }
    }

    /// Whether this mutant renumbers event ids to insert events of its own.
    fn inserts(&self) -> bool {
        matches!(self.kind, Kind::EventAfterTerminal | Kind::DuplicateChunk)
    }

    fn request_value(&mut self, request: &mut Value) {
        if let (Some(id), Some(method)) = (
            request.get("id").filter(|id| !id.is_null()),
            request.get("method").and_then(Value::as_str),
        ) {
            self.methods.insert(id.to_string(), method.to_owned());
        }
        if self.inserts()
            && request.get("method").and_then(Value::as_str) == Some("GetEvents")
            && let Some(params) = request.get_mut("params").and_then(Value::as_object_mut)
            && let Some(since) = params.get("sinceId").and_then(Value::as_u64)
        {
            params.insert("sinceId".to_owned(), json!(since / STRIDE));
        }
    }

    /// A line from the kit on its way to the wrapped runtime.
    pub fn request(&mut self, line: Vec<u8>) -> Vec<Vec<u8>> {
        let Ok(mut value) = serde_json::from_slice::<Value>(&line) else {
            return vec![line];
        };
        match &mut value {
            Value::Array(items) => items.iter_mut().for_each(|item| self.request_value(item)),
            item => self.request_value(item),
        }
        vec![serde_json::to_vec(&value).unwrap_or(line)]
    }

    /// A line from the wrapped runtime on its way to the kit: the lines to send instead.
    pub fn response(&mut self, line: Vec<u8>) -> Vec<Vec<u8>> {
        let Ok(value) = serde_json::from_slice::<Value>(&line) else {
            return vec![line];
        };
        let out = match value {
            Value::Object(_)
                if value.get("method").and_then(Value::as_str) == Some("SessionEvent") =>
            {
                match value.get("params") {
                    Some(params) => self
                        .event(params.clone())
                        .into_iter()
                        .map(|params| json!({"jsonrpc": "2.0", "method": "SessionEvent", "params": params}))
                        .collect(),
                    None => vec![value],
                }
            }
            Value::Array(items) => {
                let items: Vec<Value> = items
                    .into_iter()
                    .filter_map(|item| self.reply(item))
                    .collect();
                if matches!(self.kind, Kind::BatchAsLines) {
                    items
                } else {
                    vec![Value::Array(items)]
                }
            }
            other => self.reply(other).into_iter().collect(),
        };
        out.iter()
            .map(|v| serde_json::to_vec(v).unwrap_or_default())
            .collect()
    }

    /// One response, broken as the mutant says (`None`: not sent).
    fn reply(&mut self, mut response: Value) -> Option<Value> {
        let method = response
            .get("id")
            .and_then(|id| self.methods.get(&id.to_string()))
            .cloned()
            .unwrap_or_default();
        if self.inserts()
            && let Some(result) = response.get_mut("result")
        {
            if let Some(Value::Array(events)) = result.get_mut("events") {
                for event in events.iter_mut() {
                    if let Some(id) = event.get("eventId").and_then(Value::as_u64) {
                        event["eventId"] = json!(id * STRIDE);
                    }
                }
            }
            if let Some(latest) = result.get("latestId").and_then(Value::as_u64) {
                result["latestId"] = json!(latest * STRIDE);
            }
        }
        match self.kind {
            Kind::DropResponse(dropped) if method == dropped => return None,
            Kind::NoJsonrpcVersion => {
                if let Some(map) = response.as_object_mut() {
                    map.remove("jsonrpc");
                }
            }
            Kind::ErrorCode(from, to) => {
                if let Some(code) = response.pointer_mut("/error/code")
                    && code.as_i64() == Some(from)
                {
                    *code = json!(to);
                }
            }
            Kind::IdAsString => {
                if let Some(id) = response.get_mut("id")
                    && id.is_number()
                {
                    *id = json!(id.to_string());
                }
            }
            Kind::WrongStringId => {
                if let Some(id) = response.get_mut("id")
                    && let Some(text) = id.as_str()
                {
                    *id = json!(format!("{text}-other"));
                }
            }
            Kind::StateAlwaysIdle if method == "GetSessionState" => {
                if let Some(result) = response.get_mut("result") {
                    if let Some(task) = result.get_mut("task").filter(|t| t.is_object()) {
                        task["status"] = json!("IDLE");
                    }
                    if result.get("currentTaskId").is_some() {
                        result["currentTaskId"] = Value::Null;
                    }
                }
            }
            Kind::ResultMember(wanted, member, value) if method == wanted => {
                if let Some(result) = response.get_mut("result").and_then(Value::as_object_mut) {
                    result.insert(member.to_owned(), json!(value));
                }
            }
            _ => {}
        }
        Some(response)
    }

    /// One event's params, broken as the mutant says: the events to send instead.
    fn event(&mut self, mut event: Value) -> Vec<Value> {
        let event_type = event
            .get("eventType")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned();
        if self.inserts()
            && let Some(id) = event.get("eventId").and_then(Value::as_u64)
        {
            event["eventId"] = json!(id * STRIDE);
        }
        match self.kind {
            Kind::DropEvent(dropped) if event_type == dropped => return vec![],
            Kind::RenameEvent(from, to) if event_type == from => {
                event["eventType"] = json!(to);
            }
            Kind::ToolStatus(from, to) if event_type == "tool_completed" => {
                if let Some(status) = event.pointer_mut("/payload/status")
                    && status.as_str() == Some(from)
                {
                    *status = json!(to);
                }
            }
            Kind::RepeatEventId => {
                self.events += 1;
                if self.events.is_multiple_of(2)
                    && let Some(previous) = self.last_event_id
                {
                    event["eventId"] = json!(previous);
                }
            }
            Kind::SwapEventIds => {
                // Ids 2 and 3, 4 and 5, … change places: still unique, no longer increasing.
                if let Some(id) = event.get("eventId").and_then(Value::as_u64)
                    && id > 1
                {
                    event["eventId"] = json!(if id % 2 == 0 { id + 1 } else { id - 1 });
                }
            }
            Kind::DropEnvelope(member, prefix) if event_type.starts_with(prefix) => {
                if let Some(map) = event.as_object_mut() {
                    map.remove(member);
                }
            }
            Kind::EventAfterTerminal => {
                let task = event
                    .get("taskId")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_owned();
                if event_type == "text_chunk" {
                    self.last_chunk.insert(task.clone(), event.clone());
                }
                if matches!(
                    event_type.as_str(),
                    "task_completed" | "task_failed" | "task_cancelled"
                ) && let Some(mut late) = self.last_chunk.remove(&task)
                {
                    late["eventId"] =
                        json!(event.get("eventId").and_then(Value::as_u64).unwrap_or(0) + 1);
                    late["timestamp"] = event.get("timestamp").cloned().unwrap_or(Value::Null);
                    return vec![event, late];
                }
            }
            Kind::DuplicateChunk if event_type == "text_chunk" => {
                let mut again = event.clone();
                again["eventId"] =
                    json!(event.get("eventId").and_then(Value::as_u64).unwrap_or(0) + 1);
                return vec![event, again];
            }
            Kind::PayloadMember(wanted, member, value) if event_type == wanted => {
                if let Some(payload) = event.get_mut("payload").and_then(Value::as_object_mut) {
                    payload.insert(member.to_owned(), json!(value));
                }
            }
            Kind::StepNumberFromZero if event_type == "step_started" => {
                if let Some(number) = event.pointer_mut("/payload/stepNumber")
                    && let Some(n) = number.as_u64()
                {
                    *number = json!(n.saturating_sub(1));
                }
            }
            Kind::EpochTimestamps => {
                let millis = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| d.as_millis());
                event["timestamp"] = json!(millis.to_string());
            }
            _ => {}
        }
        self.last_event_id = event.get("eventId").and_then(Value::as_u64);
        vec![event]
    }
}

impl crate::proxy::LineRewriter for Breaker {
    fn request(&mut self, line: Vec<u8>) -> Vec<Vec<u8>> {
        Breaker::request(self, line)
    }

    fn response(&mut self, line: Vec<u8>) -> Vec<Vec<u8>> {
        Breaker::response(self, line)
    }
}

/// Runs the mutant `name` around `program args…`. Returns the wrapped runtime's exit code.
pub async fn run(name: &str, program: &str, args: &[String]) -> anyhow::Result<i32> {
    let mutant = Mutant::named(name).ok_or_else(|| {
        anyhow::anyhow!(
            "no mutant named {name:?}; the mutants are: {}",
            MUTANTS
                .iter()
                .map(|m| m.name)
                .collect::<Vec<_>>()
                .join(", ")
        )
    })?;
    crate::proxy::run(program, args, &[], Breaker::new(mutant)).await
}

/// The last recorded cargo-mutants run over the reference runtime with the kit as the test
/// (`cargo xtask mutants`): what it covered, mutants caught (a timeout counts as caught) and
/// viable mutants. Updated by hand from `target/mutants/` when a run is recorded in
/// conformance/README.md.
pub const BEHAVIOUR_MUTANTS: Option<(&str, usize, usize)> = Some((
    "the state machines, the approval flow, the agent loop, policy/mod.rs, policy/extensions.rs, policy/code.rs, policy/scope.rs, policy/sandbox.rs, policy/paths.rs, policy/domain.rs, policy/command.rs and a sample of the command analyser's POSIX reader, 50 mutants of shard 1 of 12 (2026-12-07; the rest of the analyser not run yet)",
    292,
    371,
));

/// The kit's sensitivity in a line, for the report's footer: the wire mutants `cargo test`
/// holds it to (each caught, each charged to exactly its requirements) and the behaviour
/// mutants of the last recorded cargo-mutants run.
pub fn sensitivity() -> String {
    let behaviour = match BEHAVIOUR_MUTANTS {
        Some((scope, caught, viable)) => {
            format!("behaviour mutants of {scope}: {caught} of {viable} caught")
        }
        None => "behaviour mutants (cargo xtask mutants): no run recorded".to_owned(),
    };
    format!(
        "wire mutants: {n} of {n} caught, each charged to exactly its requirements (cargo test); {behaviour}",
        n = MUTANTS.len()
    )
}

/// `name  breaks…  (fails REQ-…)`, one line per mutant, for `--list`.
pub fn listing() -> String {
    MUTANTS
        .iter()
        .map(|m| format!("{:<28} {} (fails {})", m.name, m.breaks, m.fails.join(", ")))
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests;
