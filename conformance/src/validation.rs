//! Every message the runtime writes is checked against `agent-schemas`, the source of truth
//! shared with the reference runtime. This module is the kit's only door to those schemas,
//! so a rename there is a one-place change here.

use std::collections::BTreeSet;
use std::sync::OnceLock;

use serde_json::Value;

/// Schema names known to `agent-schemas`, read once.
fn schema_names() -> &'static BTreeSet<String> {
    static NAMES: OnceLock<BTreeSet<String>> = OnceLock::new();
    NAMES.get_or_init(|| agent_schemas::names().map(str::to_owned).collect())
}

/// Whether the schemas describe this method's result (so a response to it can be checked
/// against that result schema, not only the envelope).
pub(crate) fn is_known_method(method: &str) -> bool {
    schema_names().contains(&format!("methods/{method}.result"))
}

/// Checks a value against a schema by name, e.g. `messages/ConversationMessage`.
pub(crate) fn check(name: &str, value: &Value) -> Result<(), String> {
    agent_schemas::validate(name, value).map_err(|e| e.to_string())
}

/// Like [`check`], but open to members the schema does not declare (every message may carry
/// more than the documents name): only missing or malformed members are problems.
pub(crate) fn check_open(name: &str, value: &Value) -> Result<(), String> {
    check_filtered(name, value, is_extra_member)
}

/// Like [`check_open`], and a member sent as `null` counts as absent: how the real services
/// read a body (pydantic takes `null` for an optional member, INTEROP.md §3–§5), so a body
/// they accept is not judged malformed.
pub(crate) fn check_as_services_read(name: &str, value: &Value) -> Result<(), String> {
    check_filtered(name, value, |e| {
        is_extra_member(e) || e.contains(": null is not of type")
    })
}

fn check_filtered(name: &str, value: &Value, ignored: impl Fn(&str) -> bool) -> Result<(), String> {
    match agent_schemas::validate(name, value) {
        Ok(()) => Ok(()),
        Err(agent_schemas::ValidationError::Invalid { errors, .. }) => {
            let errors: Vec<String> = errors.into_iter().filter(|e| !ignored(e)).collect();
            if errors.is_empty() {
                Ok(())
            } else {
                Err(format!(
                    "does not match schema {name}: {}",
                    errors.join("; ")
                ))
            }
        }
        Err(other) => Err(other.to_string()),
    }
}

/// Whether a schema of this name exists.
pub(crate) fn has_schema(name: &str) -> bool {
    schema_names().contains(name)
}

/// What a message is judged against. Each name is what a catalogue requirement's `judges`
/// field names, so a malformed message is charged to the requirement about that message
/// (one per method result and per event type), not to the scenario that happened to see it.
pub(crate) mod judged {
    /// Framing: every stdout line is one JSON-RPC message (REQ-RPC-001).
    pub(crate) const FRAMING: &str = "stdout-lines";
    /// The JSON-RPC response envelope.
    pub(crate) const RESPONSE: &str = "jsonrpc/Response";
    /// Ids: echoed with their JSON type, each answered once, none invented.
    pub(crate) const IDS: &str = "jsonrpc/ids";
    /// The SessionEvent envelope.
    pub(crate) const EVENT: &str = "events/SessionEvent";
    /// The envelope's `eventId`: an integer only by INTEROP.md §1 (system-design.md §13.1
    /// shows a string), so its form is judged apart from the envelope (REQ-EVT-002).
    pub(crate) const EVENT_ID: &str = "events/SessionEvent/eventId";
    /// The envelope's ID chain (`sessionId`, `workspaceId`, `taskId`, `stepId`) on the events
    /// that need it (REQ-EVT-004).
    pub(crate) const EVENT_ID_CHAIN: &str = "events/SessionEvent/idChain";

    /// `methods/<method>.result`.
    pub(crate) fn method_result(method: &str) -> String {
        format!("methods/{method}.result")
    }

    /// `events/payloads/<eventType>`.
    pub(crate) fn payload(event_type: &str) -> String {
        format!("events/payloads/{event_type}")
    }
}

/// One thing wrong with a message, and what it is judged against (a [`judged`] name).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Finding {
    pub judged: String,
    pub problem: String,
}

impl Finding {
    pub(crate) fn new(judged: impl Into<String>, problem: impl Into<String>) -> Self {
        Self {
            judged: judged.into(),
            problem: problem.into(),
        }
    }
}

/// Whether a schema error only says a member is there that the schema does not declare.
/// Every message may carry more than the documents name (INTEROP.md: emit a superset, parse
/// unknown fields without error), so such an error is never a finding.
fn is_extra_member(error: &str) -> bool {
    error.contains("Additional properties are not allowed")
}

/// Judges a response: its envelope (charged to [`judged::RESPONSE`]) and, when the method is
/// known, its result (charged to that method's result).
pub(crate) fn judge_response(method: Option<&str>, response: &Value) -> Vec<Finding> {
    let method = method.filter(|m| is_known_method(m));
    // Events replayed by GetEvents are judged like the ones on the stream: extra envelope
    // members and unknown types allowed, payload problems charged to the result.
    let mut view;
    let mut response = response;
    let mut replayed = Vec::new();
    if method == Some("GetEvents")
        && let Some(Value::Array(events)) = response.get("result").and_then(|r| r.get("events"))
    {
        for (index, event) in events.iter().enumerate() {
            for finding in judge_event(event) {
                replayed.push(format!("/result/events/{index}: {}", finding.problem));
            }
        }
        view = response.clone();
        view["result"]["events"] = Value::Array(Vec::new());
        response = &view;
    }
    let findings_of_result = |mut errors: Vec<String>| {
        errors.extend(replayed.iter().cloned());
        errors
    };
    let Err(error) = agent_schemas::validate_response(method, response) else {
        return match (method, replayed.is_empty()) {
            (Some(method), false) => vec![Finding::new(
                judged::method_result(method),
                format!(
                    "the {method} result does not match methods/{method}.result: {}",
                    replayed.join("; ")
                ),
            )],
            _ => Vec::new(),
        };
    };
    let agent_schemas::ValidationError::Invalid { errors, .. } = error else {
        return vec![Finding::new(judged::RESPONSE, error.to_string())];
    };
    // INTEROP.md §1 names the session result's `status` but not its values; the schema's
    // SESSION_* set is the reference runtime's.
    // ApproveAction's status is an open set too ("a status such as", INTEROP.md §1).
    let open_status = matches!(
        method,
        Some("CreateSession" | "ResumeSession" | "ApproveAction")
    );
    let (in_result, in_envelope): (Vec<String>, Vec<String>) = errors
        .into_iter()
        .filter(|e| !is_extra_member(e))
        .filter(|e| {
            !(open_status && e.starts_with("/result/status") && e.contains("is not one of"))
        })
        .partition(|e| e.starts_with("/result"));
    let in_result = findings_of_result(in_result);
    let mut findings = Vec::new();
    if !in_envelope.is_empty() {
        findings.push(Finding::new(
            judged::RESPONSE,
            format!(
                "the response does not match the JSON-RPC response schema: {}",
                in_envelope.join("; ")
            ),
        ));
    }
    if let (Some(method), false) = (method, in_result.is_empty()) {
        findings.push(Finding::new(
            judged::method_result(method),
            format!(
                "the {method} result does not match methods/{method}.result: {}",
                in_result.join("; ")
            ),
        ));
    }
    findings
}

/// Judges a `SessionEvent`'s params the way the documents allow any runtime to write them:
/// members the envelope does not declare (architecture.md §6.3 names `tenantId`, `userId`,
/// `component`, `severity`) are ignored, and so is an event type the spec does not define
/// (INTEROP.md: parse unknown fields without error); a known type's payload is checked
/// against its schema and charged to that type.
pub(crate) fn judge_event(params: &Value) -> Vec<Finding> {
    let mut view = params.clone();
    if let (Value::Object(members), Some(declared)) = (&mut view, envelope_members()) {
        members.retain(|key, _| declared.contains(key));
    }
    let event_type = params.get("eventType").and_then(Value::as_str);
    let known_type = event_type.is_some_and(|t| has_schema(&judged::payload(t)));
    let Err(error) = agent_schemas::validate_session_event(&view) else {
        return Vec::new();
    };
    let agent_schemas::ValidationError::Invalid { errors, .. } = error else {
        return vec![Finding::new(judged::EVENT, error.to_string())];
    };
    // A payload that is no object breaks the envelope (REQ-EVT-003); inside an object, a
    // missing or malformed member is the payload's own problem.
    let payload_is_object = params.get("payload").is_some_and(Value::is_object);
    let mut envelope = Vec::new();
    let mut payload = Vec::new();
    let mut event_id = Vec::new();
    let mut id_chain = Vec::new();
    let chain_member = |error: &str| {
        ["sessionId", "workspaceId", "taskId", "stepId"]
            .iter()
            .any(|m| {
                error.contains(&format!("\"{m}\" is a required property"))
                    || error.starts_with(&format!("/{m}"))
            })
    };
    for error in errors {
        if is_extra_member(&error)
            || (event_type.is_some() && !known_type && error.starts_with("/eventType"))
        {
            continue;
        }
        if error.starts_with("/eventId") {
            event_id.push(error);
        } else if !error.starts_with("/payload") && chain_member(&error) {
            id_chain.push(error);
        } else if error.starts_with("/payload") && known_type && payload_is_object {
            payload.push(error);
        } else {
            envelope.push(error);
        }
    }
    let mut findings = Vec::new();
    if !envelope.is_empty() {
        findings.push(Finding::new(
            judged::EVENT,
            format!(
                "the SessionEvent envelope does not match its schema: {}",
                envelope.join("; ")
            ),
        ));
    }
    if !id_chain.is_empty() {
        findings.push(Finding::new(
            judged::EVENT_ID_CHAIN,
            format!(
                "the SessionEvent does not carry the ID chain: {}",
                id_chain.join("; ")
            ),
        ));
    }
    if !event_id.is_empty() {
        findings.push(Finding::new(
            judged::EVENT_ID,
            format!(
                "the SessionEvent's eventId is not the integer INTEROP.md §1 asks for: {}",
                event_id.join("; ")
            ),
        ));
    }
    if let (Some(event_type), false) = (event_type, payload.is_empty()) {
        findings.push(Finding::new(
            judged::payload(event_type),
            format!(
                "the {event_type} payload does not match events/payloads/{event_type}: {}",
                payload.join("; ")
            ),
        ));
    }
    findings
}

/// Whether the documents define this event type (the schemas have its payload).
pub(crate) fn is_known_event_type(event_type: &str) -> bool {
    has_schema(&judged::payload(event_type))
}

/// The members the SessionEvent envelope schema declares.
fn envelope_members() -> Option<&'static BTreeSet<String>> {
    static MEMBERS: OnceLock<Option<BTreeSet<String>>> = OnceLock::new();
    MEMBERS
        .get_or_init(|| {
            let properties = agent_schemas::schema(judged::EVENT)?
                .get("properties")?
                .as_object()?;
            Some(properties.keys().cloned().collect())
        })
        .as_ref()
}
