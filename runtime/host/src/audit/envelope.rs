//! SessionEvent → shared envelope (architecture.md §6.3, system-design.md §14), and which
//! events are audit records (system-design.md §18 "Audit Records").
//!
//! Audit receives: approvals (requested, resolved, timed out), tool invocations of every
//! capability whose §8.5 default risk is above `low` (everything but reads, so every
//! high-risk call is in) and unknown tools, every policy decision that denies (a `denied`
//! tool result, `policy_expired`), LLM request/response metadata (model, tokens, latency —
//! the events carry no content) and session and task state transitions.
//! Telemetry receives every SessionEvent except `text_chunk` (model output: content, and by
//! far the most frequent event).

use std::collections::HashSet;

use agent_protocol::approval::RiskLevel;
use agent_protocol::audit::{AuditEvent, Severity};
use agent_protocol::events::{EventBody, SessionEvent};
use agent_protocol::tool::ToolStatus;
use serde_json::{Map, Value, json};

/// String arguments longer than this are summarised in envelopes: a WriteFile's content
/// is not an audit record, its path is.
pub(crate) const MAX_ARGUMENT_CHARS: usize = 256;

/// The identity every envelope of a session carries.
#[derive(Debug, Clone, Default)]
pub(crate) struct Ids {
    pub tenant_id: String,
    pub user_id: String,
    pub workspace_id: String,
    pub session_id: String,
}

/// Where one event goes.
#[derive(Debug, Default)]
pub(crate) struct Routed {
    pub audit: Option<AuditEvent>,
    pub telemetry: Option<AuditEvent>,
}

struct Class {
    audit: bool,
    component: &'static str,
    context: &'static str,
    severity: Severity,
}

fn class(audit: bool, component: &'static str, context: &'static str, severity: Severity) -> Class {
    Class {
        audit,
        component,
        context,
        severity,
    }
}

const HOST: &str = "LocalAgentHost";
const ENFORCER: &str = "LocalPolicyEnforcer";

/// `audited_calls` remembers the tool calls whose request was audited, so their completion
/// is audited too.
fn classify(body: &EventBody, audited_calls: &mut HashSet<String>) -> Class {
    use EventBody as E;
    use Severity::{Error, Info, Warning};
    match body {
        E::SessionStarted(_)
        | E::SessionCompleted(_)
        | E::SessionCancelled(_)
        | E::SessionResumed(_) => class(true, HOST, "SessionCoordination", Info),
        E::SessionPaused(_) => class(true, HOST, "SessionCoordination", Warning),
        E::SessionFailed(_) => class(true, HOST, "SessionCoordination", Error),
        E::TaskStarted(_) | E::TaskCompleted(_) => class(true, HOST, "AgentExecution", Info),
        E::TaskCancelled(_) => class(true, HOST, "AgentExecution", Warning),
        E::TaskFailed(_) => class(true, HOST, "AgentExecution", Error),
        E::LlmRequestStarted(_) | E::LlmRequestCompleted(_) => {
            class(true, HOST, "AgentExecution", Info)
        }
        E::ToolRequested(requested) => {
            let audited = requested.capability.is_empty()
                || crate::policy::default_risk(&requested.capability) != RiskLevel::Low;
            if audited {
                audited_calls.insert(requested.tool_call_id.clone());
            }
            class(audited, HOST, "ToolExecution", Info)
        }
        E::ToolCompleted(completed) => {
            let audited = audited_calls.remove(&completed.tool_call_id);
            match completed.status {
                ToolStatus::Denied => class(true, ENFORCER, "PolicyGuardrails", Warning),
                ToolStatus::Failed => class(audited, HOST, "ToolExecution", Warning),
                ToolStatus::Succeeded => class(audited, HOST, "ToolExecution", Info),
            }
        }
        E::ApprovalRequested(_) | E::ApprovalResolved(_) => class(true, HOST, "Approval", Info),
        E::ApprovalTimeout(_) => class(true, HOST, "Approval", Warning),
        E::PolicyExpired(_) => class(true, ENFORCER, "PolicyGuardrails", Warning),
        E::LlmRetry(_) | E::LlmResponseDiscarded(_) | E::Warning(_) => {
            class(false, HOST, "AgentExecution", Warning)
        }
        E::StepStarted(_)
        | E::StepCompleted(_)
        | E::StepLimitApproaching(_)
        | E::TextChunk(_)
        | E::ContextCompacted(_) => class(false, HOST, "AgentExecution", Info),
    }
}

/// The envelopes of one SessionEvent: for the Audit Service when it is an audit record, for
/// the Telemetry Service unless it is a `text_chunk`.
pub(crate) fn route(
    ids: &Ids,
    event: &SessionEvent,
    audited_calls: &mut HashSet<String>,
) -> Routed {
    let class = classify(&event.body, audited_calls);
    let is_chunk = matches!(event.body, EventBody::TextChunk(_));
    if !class.audit && is_chunk {
        return Routed::default();
    }
    let envelope = AuditEvent {
        event_id: new_event_id(),
        event_type: event.event_type().to_owned(),
        timestamp: event.timestamp.clone(),
        tenant_id: non_empty(&ids.tenant_id),
        user_id: non_empty(&ids.user_id),
        workspace_id: event
            .workspace_id
            .clone()
            .or_else(|| non_empty(&ids.workspace_id)),
        session_id: Some(event.session_id.clone()),
        task_id: event.task_id.clone(),
        step_id: event.step_id.clone(),
        component: class.component.to_owned(),
        bounded_context: class.context.to_owned(),
        severity: class.severity,
        payload: payload(event),
    };
    Routed {
        audit: class.audit.then(|| envelope.clone()),
        telemetry: (!is_chunk).then_some(envelope),
    }
}

/// An envelope the delivery itself creates (e.g. how many events a full queue dropped).
pub(crate) fn own_event(
    ids: &Ids,
    event_type: &str,
    severity: Severity,
    payload: Value,
) -> AuditEvent {
    AuditEvent {
        event_id: new_event_id(),
        event_type: event_type.to_owned(),
        timestamp: crate::time::now_rfc3339(),
        tenant_id: non_empty(&ids.tenant_id),
        user_id: non_empty(&ids.user_id),
        workspace_id: non_empty(&ids.workspace_id),
        session_id: non_empty(&ids.session_id),
        task_id: None,
        step_id: None,
        component: HOST.to_owned(),
        bounded_context: "ObservabilityAudit".to_owned(),
        severity,
        payload,
    }
}

fn new_event_id() -> String {
    format!("evt_{}", uuid::Uuid::new_v4().simple())
}

fn non_empty(text: &str) -> Option<String> {
    (!text.is_empty()).then(|| text.to_owned())
}

/// The SessionEvent's payload with `sessionEventId` (to find it in GetEvents and the local
/// record), without tool output or a task's result and with long strings (file contents in
/// tool arguments) summarised.
fn payload(event: &SessionEvent) -> Value {
    let mut payload = match serde_json::to_value(&event.body) {
        Ok(Value::Object(mut map)) => match map.remove("payload") {
            Some(Value::Object(inner)) => inner,
            _ => Map::new(),
        },
        _ => Map::new(),
    };
    payload.remove("result");
    // Tool arguments ride in tool_requested and in approval_requested's details.
    payload.values_mut().for_each(summarise);
    payload.insert("sessionEventId".into(), json!(event.event_id));
    Value::Object(payload)
}

fn summarise(value: &mut Value) {
    match value {
        Value::String(text) if text.chars().count() > MAX_ARGUMENT_CHARS => {
            let head: String = text.chars().take(MAX_ARGUMENT_CHARS).collect();
            *value = Value::String(format!(
                "{head}… [{} characters in all]",
                text.chars().count()
            ));
        }
        Value::Array(items) => items.iter_mut().for_each(summarise),
        Value::Object(map) => map.values_mut().for_each(summarise),
        _ => {}
    }
}
