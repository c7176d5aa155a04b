//! Where the host applies the [`Redactor`](super::Redactor): tool results before they enter
//! the thread, and model requests as a whole.

use agent_protocol::ToolResult;
use base64::Engine as _;
use serde_json::Value;
use std::sync::Arc;

use super::{MARKER, Redactor};

/// Redacts what a tool returned — its text, its error message, and the text of its
/// artifacts (uploaded to the Workspace Service) and patch hunks — before anything else sees it.
/// True when something was replaced.
pub fn tool_result(redactor: &Redactor, result: &mut ToolResult) -> bool {
    let mut changed = false;
    if let Some(text) = result.output_text.as_mut() {
        changed |= redactor.redact_in_place(text);
    }
    if let Some(error) = result.error.as_mut() {
        changed |= redactor.redact_in_place(&mut error.message);
    }
    for change in &mut result.file_changes {
        changed |= redactor.redact_in_place(&mut change.hunks);
    }
    let engine = base64::engine::general_purpose::STANDARD;
    for artifact in &mut result.artifacts {
        // Only text artifacts can be redacted; binary ones (images) pass as they are.
        let Ok(bytes) = engine.decode(&artifact.content_base64) else {
            continue;
        };
        let Ok(mut text) = String::from_utf8(bytes) else {
            continue;
        };
        if redactor.redact_in_place(&mut text) {
            artifact.content_base64 = engine.encode(text.as_bytes());
            changed = true;
        }
    }
    changed
}

/// Redacts every message of a Chat Completions body (contents and tool-call arguments).
/// True when the request carries redacted content — replaced now, or earlier when a tool
/// result entered the thread — which the client announces in the
/// [`REDACTION_HEADER`](super::REDACTION_HEADER) header.
pub fn request_body(redactor: &Redactor, body: &mut Value) -> bool {
    let Some(messages) = body.get_mut("messages").and_then(Value::as_array_mut) else {
        return false;
    };
    let mut applied = false;
    for message in messages {
        if let Some(Value::String(content)) = message.get_mut("content") {
            applied |= redactor.redact_in_place(content) || content.contains(MARKER);
        }
        applied |= redact_arguments(redactor, message);
    }
    applied
}

/// [`request_body`] for the requests of one task: message contents `memo` has seen clean
/// under this same redactor are not scanned again. Each request repeats most of the
/// thread, and re-scanning it was a quarter of a step's instructions.
pub fn request_body_remembering(
    redactor: &Arc<Redactor>,
    body: &mut Value,
    memo: &mut CleanMemo,
) -> bool {
    let Some(messages) = body.get_mut("messages").and_then(Value::as_array_mut) else {
        return false;
    };
    memo.serve(redactor);
    let mut applied = false;
    for message in messages {
        if let Some(Value::String(content)) = message.get_mut("content") {
            let key = CleanMemo::key(content);
            if !memo.clean.contains(&key) {
                if redactor.redact_in_place(content) {
                    applied = true;
                } else {
                    memo.clean.insert(key);
                }
            }
            applied |= content.contains(MARKER);
        }
        applied |= redact_arguments(redactor, message);
    }
    applied
}

/// Tool-call arguments are JSON text: exact values only, which keeps them valid.
fn redact_arguments(redactor: &Redactor, message: &mut Value) -> bool {
    let mut applied = false;
    if let Some(calls) = message.get_mut("tool_calls").and_then(Value::as_array_mut) {
        for call in calls {
            if let Some(Value::String(arguments)) = call.pointer_mut("/function/arguments") {
                if let std::borrow::Cow::Owned(clean) = redactor.redact_values(arguments) {
                    *arguments = clean;
                    applied = true;
                }
                applied |= arguments.contains(MARKER);
            }
        }
    }
    applied
}

/// Texts one redactor found clean, by hash (a 64-bit collision is the only way a text
/// could be skipped wrongly). Bound to the redactor it was filled with: when the
/// process-wide redactor is replaced (rules or credentials added), it starts afresh.
#[derive(Default)]
pub struct CleanMemo {
    owner: Option<Arc<Redactor>>,
    clean: std::collections::HashSet<u64>,
}

impl CleanMemo {
    fn serve(&mut self, redactor: &Arc<Redactor>) {
        if !self
            .owner
            .as_ref()
            .is_some_and(|owner| Arc::ptr_eq(owner, redactor))
        {
            self.owner = Some(Arc::clone(redactor));
            self.clean.clear();
        }
    }

    fn key(text: &str) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        text.hash(&mut hasher);
        hasher.finish()
    }
}

/// Redacts every string of a JSON value in place (keys stay): for structured records such
/// as audit and telemetry envelopes, merged just before they leave the process. True when
/// something was replaced.
pub fn json_value(redactor: &Redactor, value: &mut Value) -> bool {
    match value {
        Value::String(text) => redactor.redact_in_place(text),
        Value::Array(items) => items
            .iter_mut()
            .fold(false, |changed, item| json_value(redactor, item) | changed),
        Value::Object(map) => map
            .values_mut()
            .fold(false, |changed, item| json_value(redactor, item) | changed),
        _ => false,
    }
}

/// Takes up the redaction rules of the session's policy bundle (local-agent-host.md §8.7,
/// Phase 2+); a rule that cannot be used is reported by a `warning` event.
pub fn session_policy(session: &crate::session::Session) {
    let problems = super::add_policy_rules(&session.policy().bundle().llm_policy.redaction_rules);
    for message in problems {
        tracing::warn!(%message, "redaction rule");
        session.events.emit(
            crate::events::Scope::session(),
            agent_protocol::events::EventBody::Warning(agent_protocol::events::Warning {
                code: agent_protocol::ErrorCode::PolicyBundleInvalid,
                message,
            }),
        );
    }
}
