//! SessionEvent, the notification that streams progress to the desktop app
//! (architecture.md §6.1, local-agent-host.md §12, INTEROP.md §1).
//!
//! The envelope carries the full ID chain; the payload is always an object and carries both
//! the spec's field names and the ones the desktop app reads.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::approval::{ApprovalRequest, Decision};
use crate::error::ErrorCode;
use crate::tool::ToolStatus;

pub const METHOD: &str = "SessionEvent";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionEvent {
    /// Monotonic per session, starting at 1; the app tracks the maximum for GetEvents.
    pub event_id: u64,
    pub timestamp: String,
    pub session_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step_id: Option<String>,
    #[serde(flatten)]
    pub body: EventBody,
}

impl SessionEvent {
    pub fn event_type(&self) -> &'static str {
        self.body.event_type()
    }
}

macro_rules! event_body {
    ($($variant:ident($payload:ty) = $name:literal,)*) => {
        /// `eventType` and its `payload`, one variant per event of the §12 table and
        /// INTEROP.md §1.
        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
        #[serde(tag = "eventType", content = "payload")]
        pub enum EventBody {
            $(#[serde(rename = $name)] $variant($payload),)*
        }

        impl EventBody {
            pub const TYPES: &'static [&'static str] = &[$($name),*];

            pub fn event_type(&self) -> &'static str {
                match self {
                    $(EventBody::$variant(_) => $name,)*
                }
            }
        }
    };
}

event_body! {
    SessionStarted(SessionStarted) = "session_started",
    SessionCompleted(SessionEnded) = "session_completed",
    SessionCancelled(SessionEnded) = "session_cancelled",
    SessionFailed(SessionFailed) = "session_failed",
    SessionPaused(SessionPaused) = "session_paused",
    SessionResumed(Empty) = "session_resumed",
    TaskStarted(TaskStarted) = "task_started",
    TaskCompleted(TaskCompleted) = "task_completed",
    TaskFailed(TaskFailed) = "task_failed",
    TaskCancelled(TaskCancelled) = "task_cancelled",
    StepStarted(StepStarted) = "step_started",
    StepCompleted(StepCompleted) = "step_completed",
    StepLimitApproaching(StepLimitApproaching) = "step_limit_approaching",
    TextChunk(TextChunk) = "text_chunk",
    LlmRequestStarted(LlmRequestStarted) = "llm_request_started",
    LlmRequestCompleted(LlmRequestCompleted) = "llm_request_completed",
    LlmRetry(LlmRetry) = "llm_retry",
    LlmResponseDiscarded(LlmResponseDiscarded) = "llm_response_discarded",
    ToolRequested(ToolRequested) = "tool_requested",
    ToolCompleted(ToolCompleted) = "tool_completed",
    ApprovalRequested(ApprovalRequest) = "approval_requested",
    ApprovalResolved(ApprovalResolved) = "approval_resolved",
    ApprovalTimeout(ApprovalTimeout) = "approval_timeout",
    PolicyExpired(Empty) = "policy_expired",
    ContextCompacted(ContextCompacted) = "context_compacted",
    Warning(Warning) = "warning",
}

/// A payload with no fields: still an object, `{}`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Empty {}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionStarted {
    pub execution_environment: String,
    /// Optional in the schema (not named by the spec): left out when empty.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub policy_bundle_version: String,
}

/// `session_completed` and `session_cancelled`. The fields are required for
/// `session_completed` (local-agent-host.md §12) only; a `session_cancelled` payload
/// without them parses with zeros.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionEnded {
    #[serde(default)]
    pub task_count: u64,
    #[serde(default)]
    pub total_tokens: u64,
    #[serde(default)]
    pub duration_ms: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionFailed {
    pub reason: String,
    pub message: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionPaused {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reason: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub message: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskStarted {
    pub prompt: String,
    /// Optional in the schema: 0 (never a valid limit) means unknown and is left out.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub max_steps: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskCompleted {
    #[serde(default)]
    pub step_count: u32,
    /// The model's final answer.
    #[serde(default)]
    pub result: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskFailed {
    /// Machine-readable reason, e.g. `max_steps_exceeded`. Optional in the schema: left
    /// out when empty.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reason: String,
    pub message: String,
    pub error_code: ErrorCode,
    pub is_recoverable: bool,
    #[serde(default)]
    pub step_count: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskCancelled {
    #[serde(default)]
    pub step_count: u32,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reason: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StepStarted {
    pub step_id: String,
    /// 1-based number of this step within the task.
    pub step_number: u32,
    /// Steps completed before this one.
    pub step_count: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StepCompleted {
    pub step_id: String,
    /// Steps completed, this one included.
    pub step_count: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StepLimitApproaching {
    pub current_step: u32,
    pub step_count: u32,
    pub max_steps: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TextChunk {
    pub text: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LlmRequestStarted {
    pub model: String,
    pub estimated_input_tokens: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LlmRequestCompleted {
    pub model: String,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub latency_ms: u64,
    /// `end_turn`, `max_tokens`, `tool_use` or `guardrail`. Optional in the schema: left out
    /// when empty.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub stop_reason: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LlmRetry {
    pub attempt: u32,
    pub max_retries: u32,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reason: String,
    #[serde(default)]
    pub delay_ms: u64,
}

/// Text already streamed as `text_chunk` was thrown away (partial stream, cancellation):
/// the app resets the bubble it was filling.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LlmResponseDiscarded {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reason: String,
    #[serde(default)]
    pub discarded_chars: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolRequested {
    pub tool_call_id: String,
    pub tool_name: String,
    /// Empty when the tool is unknown.
    pub capability: String,
    pub arguments: Value,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolCompleted {
    pub tool_call_id: String,
    pub tool_name: String,
    pub status: ToolStatus,
    pub latency_ms: u64,
    /// The text shown to the user.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<String>,
    /// Error message when the tool failed or was denied.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_code: Option<ErrorCode>,
    #[serde(default)]
    pub artifact_uris: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ApprovalResolved {
    pub approval_id: String,
    pub decision: Decision,
    pub latency_ms: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ApprovalTimeout {
    pub approval_id: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ContextCompacted {
    pub messages_dropped: u64,
}

/// Something went wrong that the session survives (an upload that failed after retries).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Warning {
    /// Optional in the schema: a warning parsed without a code has an empty one, which is
    /// left out again when serialized.
    #[serde(default = "unset_code", skip_serializing_if = "is_unset_code")]
    pub code: ErrorCode,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub message: String,
}

fn unset_code() -> ErrorCode {
    ErrorCode::Other(String::new())
}

fn is_unset_code(code: &ErrorCode) -> bool {
    code.as_str().is_empty()
}

fn is_zero(count: &u32) -> bool {
    *count == 0
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn envelope_flattens_type_and_payload() {
        let event = SessionEvent {
            event_id: 3,
            timestamp: "2026-11-22T00:00:00Z".into(),
            session_id: "s".into(),
            workspace_id: Some("w".into()),
            task_id: None,
            step_id: None,
            body: EventBody::PolicyExpired(Empty {}),
        };
        let value = serde_json::to_value(&event).unwrap();
        assert_eq!(value["eventType"], json!("policy_expired"));
        assert_eq!(value["payload"], json!({}));
        let back: SessionEvent = serde_json::from_value(value).unwrap();
        assert_eq!(back, event);
    }
}
