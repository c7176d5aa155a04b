//! The `session_history` form the desktop app renders (INTEROP.md §8), and reading a
//! history back in any of the three forms seen in practice.
//!
//! The app draws a `role:"tool"` message as a tool card only when its content is a JSON
//! `tool_call` or `tool_result` object, and an assistant message with empty text as an
//! empty bubble: the upload writes each call and each result as such a tool message and
//! leaves out assistant messages without text. The thread itself keeps the spec's form
//! (`toolCalls` / `toolCallId`), which is what the model is sent.

use std::collections::VecDeque;

use agent_protocol::message::{ConversationMessage, MessageToolCall, Role};
use serde_json::{Map, Value, json};

use crate::thread::estimate_tokens;

/// How the thread words a failed or denied call's result (`ToolResult::text_for_model`).
const FAILURE_PREFIXES: [&str; 2] = ["Error (", "Denied ("];

/// The messages one thread message becomes in the uploaded history, in order.
pub(crate) fn to_app_form(message: &ConversationMessage) -> Vec<Value> {
    let base = |message_id: String, role: &str, content: String| {
        let mut value = Map::new();
        value.insert("messageId".into(), json!(message_id));
        value.insert("sessionId".into(), json!(message.session_id));
        if let Some(task_id) = &message.task_id {
            value.insert("taskId".into(), json!(task_id));
        }
        if let Some(step_id) = &message.step_id {
            value.insert("stepId".into(), json!(step_id));
        }
        value.insert("role".into(), json!(role));
        value.insert("content".into(), json!(content));
        value.insert("timestamp".into(), json!(message.timestamp));
        Value::Object(value)
    };
    match message.role {
        Role::Assistant => {
            let mut out = Vec::with_capacity(message.tool_calls.len() + 1);
            if !message.content.trim().is_empty() {
                out.push(base(
                    message.message_id.clone(),
                    "assistant",
                    message.content.clone(),
                ));
            }
            for (index, call) in message.tool_calls.iter().enumerate() {
                // The app shows the arguments as an object; text the model produced that
                // is not JSON stays a string.
                let arguments = serde_json::from_str::<Value>(&call.arguments)
                    .unwrap_or_else(|_| Value::String(call.arguments.clone()));
                let content = json!({
                    "type": "tool_call",
                    "id": call.id,
                    "toolName": call.name,
                    "arguments": arguments,
                });
                // A call read back from a history keeps the id its own message had there.
                let message_id = call
                    .message_id
                    .clone()
                    .unwrap_or_else(|| format!("{}_call_{}", message.message_id, index + 1));
                out.push(base(message_id, "tool", content.to_string()));
            }
            out
        }
        Role::Tool => {
            let mut content = json!({
                "type": "tool_result",
                "id": message.tool_call_id.clone().unwrap_or_default(),
                "toolName": message.tool_name.clone().unwrap_or_default(),
                "output": message.content,
            });
            if is_failure(&message.content) {
                content["error"] = json!(message.content);
            }
            vec![base(
                message.message_id.clone(),
                "tool",
                content.to_string(),
            )]
        }
        Role::User => vec![base(
            message.message_id.clone(),
            "user",
            message.content.clone(),
        )],
        Role::System => vec![base(
            message.message_id.clone(),
            "system",
            message.content.clone(),
        )],
    }
}

/// A failed or denied call's result as the thread keeps it: `Error (CODE): …` or
/// `Denied (CODE): …` (`ToolResult::text_for_model`).
fn is_failure(content: &str) -> bool {
    FAILURE_PREFIXES.iter().any(|prefix| {
        content.strip_prefix(prefix).is_some_and(|rest| {
            rest.split_once("): ").is_some_and(|(code, _)| {
                !code.is_empty()
                    && code
                        .chars()
                        .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
            })
        })
    })
}

/// A tool message's content when it is one of the app's tool cards.
fn tool_card(value: &Value) -> Option<Map<String, Value>> {
    if value.get("role").and_then(Value::as_str) != Some("tool") {
        return None;
    }
    let content = value.get("content")?.as_str()?;
    let Ok(Value::Object(card)) = serde_json::from_str::<Value>(content) else {
        return None;
    };
    matches!(
        card.get("type").and_then(Value::as_str),
        Some("tool_call" | "tool_result")
    )
    .then_some(card)
}

fn text_of(value: Option<&Value>) -> Option<String> {
    match value? {
        Value::String(text) => Some(text.clone()),
        Value::Null => None,
        other => Some(other.to_string()),
    }
}

/// Reads a stored history back as thread messages. Accepted, also mixed: this runtime's
/// upload form, the Python runtime's (the same without `id`, `arguments` a JSON string),
/// and the spec's ConversationMessage form. A run of `tool_call` messages becomes one
/// assistant message with those calls (joined to the assistant text just before it),
/// each `tool_result` the tool message answering its call: by `id`, else by order.
/// `session_id` fills a message that names none.
pub(crate) fn read_back(
    stored: Vec<Value>,
    session_id: &str,
) -> Result<Vec<ConversationMessage>, String> {
    let mut out: Vec<ConversationMessage> = Vec::with_capacity(stored.len());
    // Calls of the latest run not answered yet, in order.
    let mut unanswered: VecDeque<String> = VecDeque::new();
    // Whether the last message taken in is an assistant message still collecting calls.
    let mut collecting = false;
    let mut generated = 0u64;
    for (index, value) in stored.into_iter().enumerate() {
        if !value.is_object() {
            return Err(format!("history item {index} is not a message object"));
        }
        let common = common_fields(&value, index, session_id);
        match tool_card(&value) {
            Some(card) if card.get("type").and_then(Value::as_str) == Some("tool_call") => {
                let id = match card
                    .get("id")
                    .and_then(Value::as_str)
                    .filter(|id| !id.is_empty())
                {
                    Some(id) => id.to_owned(),
                    None => {
                        generated += 1;
                        format!("call_history_{generated}")
                    }
                };
                let call = MessageToolCall {
                    id: id.clone(),
                    name: text_of(card.get("toolName").or_else(|| card.get("name")))
                        .unwrap_or_default(),
                    arguments: match card.get("arguments") {
                        Some(Value::String(text)) => text.clone(),
                        Some(Value::Null) | None => "{}".to_owned(),
                        Some(other) => other.to_string(),
                    },
                    message_id: Some(common.message_id.clone()),
                };
                let joins = collecting
                    || out.last().is_some_and(|last| {
                        last.role == Role::Assistant
                            && last.tool_calls.is_empty()
                            && last.task_id == common.task_id
                    });
                if !collecting {
                    unanswered.clear();
                }
                match out.last_mut().filter(|_| joins) {
                    Some(last) => last.tool_calls.push(call),
                    None => out.push(ConversationMessage {
                        role: Role::Assistant,
                        content: String::new(),
                        tool_calls: vec![call],
                        // This runtime's upload names a call `<message>_call_<n>`; the
                        // message it came from gets its own id back (no text of its own
                        // is uploaded, so the id is not written twice).
                        message_id: call_owner(&common.message_id),
                        ..common
                    }),
                }
                unanswered.push_back(id);
                collecting = true;
            }
            Some(card) => {
                collecting = false;
                let named = card
                    .get("id")
                    .and_then(Value::as_str)
                    .filter(|id| !id.is_empty())
                    .map(str::to_owned);
                let id = match named {
                    Some(id) => {
                        unanswered.retain(|open| *open != id);
                        id
                    }
                    None => unanswered.pop_front().unwrap_or_else(|| {
                        generated += 1;
                        format!("call_history_{generated}")
                    }),
                };
                let output = text_of(card.get("output")).unwrap_or_default();
                let content = match text_of(card.get("error")) {
                    Some(error) if output.is_empty() => error,
                    _ => output,
                };
                out.push(ConversationMessage {
                    role: Role::Tool,
                    token_count: Some(estimate_tokens(&content)),
                    content,
                    tool_call_id: Some(id),
                    tool_name: text_of(card.get("toolName")),
                    ..common
                });
            }
            None => {
                collecting = false;
                let message = spec_message(&value, common)?;
                if message.role == Role::Assistant && !message.tool_calls.is_empty() {
                    unanswered = message
                        .tool_calls
                        .iter()
                        .map(|call| call.id.clone())
                        .collect();
                }
                if let Some(id) = &message.tool_call_id {
                    unanswered.retain(|open| open != id);
                }
                out.push(message);
            }
        }
    }
    Ok(out)
}

/// The id of the message whose first call the upload named `id` (`<message>_call_1`);
/// any other id as it is.
fn call_owner(id: &str) -> String {
    id.strip_suffix("_call_1")
        .filter(|owner| !owner.is_empty())
        .unwrap_or(id)
        .to_owned()
}

/// The members every form shares; the rest of the message is filled by the caller.
fn common_fields(value: &Value, index: usize, session_id: &str) -> ConversationMessage {
    let text = |key: &str| value.get(key).and_then(Value::as_str).map(str::to_owned);
    ConversationMessage {
        message_id: text("messageId").unwrap_or_else(|| format!("history_{}", index + 1)),
        session_id: text("sessionId").unwrap_or_else(|| session_id.to_owned()),
        task_id: text("taskId"),
        step_id: text("stepId"),
        role: Role::User,
        content: String::new(),
        token_count: None,
        timestamp: text("timestamp").unwrap_or_default(),
        tool_calls: Vec::new(),
        tool_call_id: None,
        tool_name: None,
        image_urls: Vec::new(),
    }
}

/// A message in the spec's form (also this runtime's user, assistant and system messages).
fn spec_message(value: &Value, common: ConversationMessage) -> Result<ConversationMessage, String> {
    let role = match value.get("role").and_then(Value::as_str) {
        Some("user") => Role::User,
        Some("assistant") => Role::Assistant,
        Some("system") => Role::System,
        Some("tool") => Role::Tool,
        other => {
            return Err(format!(
                "history message {} has an unknown role {other:?}",
                common.message_id
            ));
        }
    };
    let content = text_of(value.get("content")).unwrap_or_default();
    let tool_calls = value
        .get("toolCalls")
        .and_then(Value::as_array)
        .map(|calls| {
            calls
                .iter()
                .map(|call| MessageToolCall {
                    id: text_of(call.get("id")).unwrap_or_default(),
                    name: text_of(call.get("name").or_else(|| call.get("toolName")))
                        .unwrap_or_default(),
                    arguments: match call.get("arguments") {
                        Some(Value::String(text)) => text.clone(),
                        Some(Value::Null) | None => "{}".to_owned(),
                        Some(other) => other.to_string(),
                    },
                    message_id: text_of(call.get("messageId")),
                })
                .collect()
        })
        .unwrap_or_default();
    Ok(ConversationMessage {
        role,
        token_count: value
            .get("tokenCount")
            .and_then(Value::as_u64)
            .or_else(|| Some(estimate_tokens(&content))),
        content,
        tool_calls,
        tool_call_id: text_of(value.get("toolCallId")),
        tool_name: text_of(value.get("toolName")),
        ..common
    })
}

#[cfg(test)]
#[path = "history_tests.rs"]
mod tests;
