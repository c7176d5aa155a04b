//! ConversationMessage (architecture.md §6.4), the unit of the thread, the checkpoint and
//! the session_history artifact.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    System,
    User,
    Assistant,
    Tool,
}

/// A tool call the model made, kept on the assistant message so the thread can be replayed
/// to an OpenAI-style gateway (which rejects a tool result without its call).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MessageToolCall {
    pub id: String,
    pub name: String,
    /// The arguments exactly as the model produced them (a JSON text, possibly invalid).
    pub arguments: String,
    /// The id of the history message that carried this call, when the thread was read back
    /// from a history written one message per call (INTEROP.md §8): uploading the history
    /// again gives the call that id back, so ids stay stable across read-backs. Absent for
    /// a call the model made here (and in checkpoints written before it existed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message_id: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ConversationMessage {
    pub message_id: String,
    pub session_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step_id: Option<String>,
    pub role: Role,
    pub content: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_count: Option<u64>,
    pub timestamp: String,
    /// Assistant messages: the tool calls of this turn, in the model's order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<MessageToolCall>,
    /// Tool messages: the call this message answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    /// Tool messages: the tool that produced it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_name: Option<String>,
    /// Tool messages: images the model sees with `content`, as `data:` URIs (ViewImage,
    /// INTEROP.md §11). Kept for the model's requests and the checkpoint; the history
    /// upload leaves them out.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub image_urls: Vec<String>,
}
