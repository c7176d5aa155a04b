//! The in-memory message thread (local-agent-host.md §5): every message of every task of
//! the session, in order, with ids, token estimates and the task/step that produced it.

pub mod tokens;
pub mod window;

use std::borrow::Cow;
use std::sync::Arc;

use agent_protocol::message::{ConversationMessage, MessageToolCall, Role};

use crate::redact::Redactor;
use crate::time::now_rfc3339;

pub struct Thread {
    session_id: String,
    messages: Vec<ConversationMessage>,
    /// Each message as stored JSON (the checkpoint's `thread`), serialised once when it is
    /// added: the checkpoint repeats the whole thread every step, and serialising it again
    /// each time was most of a long task's step.
    stored: Vec<Arc<str>>,
    /// The redactor whose exact values `stored[..scrubbed]` were checked against.
    scrubbed_by: Option<Arc<Redactor>>,
    scrubbed: usize,
    next_id: u64,
}

/// Where a new message comes from in the ID chain.
#[derive(Debug, Clone, Copy)]
pub struct Origin<'a> {
    pub task_id: &'a str,
    pub step_id: Option<&'a str>,
}

impl Thread {
    pub fn new(session_id: &str) -> Self {
        Self {
            session_id: session_id.to_owned(),
            messages: Vec::new(),
            stored: Vec::new(),
            scrubbed_by: None,
            scrubbed: 0,
            next_id: 1,
        }
    }

    /// A thread rebuilt from a checkpoint (crash recovery) or from a past session's
    /// history (continuing a conversation). New ids continue after the highest
    /// `msg_NNNNNN` already present, so they never collide; missing token counts are
    /// estimated.
    pub fn restore(session_id: &str, mut messages: Vec<ConversationMessage>) -> Self {
        for message in &mut messages {
            if message.token_count.is_none() {
                message.token_count = Some(estimate_tokens(&message.content));
            }
        }
        let highest = messages
            .iter()
            .filter_map(|message| message.message_id.strip_prefix("msg_")?.parse::<u64>().ok())
            .max()
            .unwrap_or(0);
        Self {
            session_id: session_id.to_owned(),
            next_id: highest.max(messages.len() as u64) + 1,
            stored: messages.iter().map(stored_json).collect(),
            scrubbed_by: None,
            scrubbed: 0,
            messages,
        }
    }

    pub fn messages(&self) -> &[ConversationMessage] {
        &self.messages
    }

    /// The messages as stored JSON, in order, each checked once against `redactor`'s exact
    /// values (the backstop that keeps a known credential off the disk): a message is
    /// scanned when it is first written, and all of them again when the redactor changes.
    pub fn stored(&mut self, redactor: &Arc<Redactor>) -> &[Arc<str>] {
        if !self
            .scrubbed_by
            .as_ref()
            .is_some_and(|known| Arc::ptr_eq(known, redactor))
        {
            self.scrubbed_by = Some(Arc::clone(redactor));
            self.scrubbed = 0;
        }
        for (json, message) in self.stored[self.scrubbed..]
            .iter_mut()
            .zip(&self.messages[self.scrubbed..])
        {
            if let Cow::Owned(clean) = redactor.redact_values(json) {
                *json = scrubbed_json(redactor, message, clean);
            }
        }
        self.scrubbed = self.stored.len();
        &self.stored
    }

    pub fn len(&self) -> usize {
        self.messages.len()
    }

    pub fn is_empty(&self) -> bool {
        self.messages.is_empty()
    }

    /// A new message of this thread, not yet added (see [`Thread::add`]).
    fn message(&mut self, role: Role, content: String, origin: Origin<'_>) -> ConversationMessage {
        let message = ConversationMessage {
            message_id: format!("msg_{:06}", self.next_id),
            session_id: self.session_id.clone(),
            task_id: Some(origin.task_id.to_owned()),
            step_id: origin.step_id.map(str::to_owned),
            role,
            token_count: Some(estimate_tokens(&content)),
            content,
            timestamp: now_rfc3339(),
            tool_calls: Vec::new(),
            tool_call_id: None,
            tool_name: None,
        };
        self.next_id += 1;
        message
    }

    /// Messages are added whole and never change afterwards: their stored JSON is final.
    fn add(&mut self, message: ConversationMessage) {
        self.stored.push(stored_json(&message));
        self.messages.push(message);
    }

    pub fn add_user(&mut self, prompt: &str, origin: Origin<'_>) {
        let message = self.message(Role::User, prompt.to_owned(), origin);
        self.add(message);
    }

    pub fn add_system_note(&mut self, note: &str, origin: Origin<'_>) {
        let message = self.message(Role::System, note.to_owned(), origin);
        self.add(message);
    }

    /// The model's answer for a step. `output_tokens` from the gateway, when known,
    /// replaces the local estimate.
    pub fn add_assistant(
        &mut self,
        text: &str,
        tool_calls: Vec<MessageToolCall>,
        output_tokens: Option<u64>,
        origin: Origin<'_>,
    ) {
        let mut message = self.message(Role::Assistant, text.to_owned(), origin);
        message.tool_calls = tool_calls;
        if let Some(tokens) = output_tokens {
            message.token_count = Some(tokens);
        }
        self.add(message);
    }

    pub fn add_tool_result(
        &mut self,
        tool_call_id: &str,
        tool_name: &str,
        content: String,
        origin: Origin<'_>,
    ) {
        let mut message = self.message(Role::Tool, content, origin);
        message.tool_call_id = Some(tool_call_id.to_owned());
        message.tool_name = Some(tool_name.to_owned());
        self.add(message);
    }

    pub fn token_count(&self) -> u64 {
        self.messages
            .iter()
            .map(|message| message.token_count.unwrap_or(0))
            .sum()
    }
}

/// A message as the checkpoint stores it. Serialising a message cannot fail: it holds
/// strings, numbers and lists only (no map whose keys could be refused).
fn stored_json(message: &ConversationMessage) -> Arc<str> {
    serde_json::to_string(message).map_or_else(|_| Arc::from("null"), Arc::from)
}

/// `clean` is the stored JSON with exact credential values replaced. A value that spans
/// JSON syntax (a quote, say) can break the text; then every string of the message is
/// redacted instead, which always stays valid.
fn scrubbed_json(redactor: &Redactor, message: &ConversationMessage, clean: String) -> Arc<str> {
    if serde_json::from_str::<serde::de::IgnoredAny>(&clean).is_ok() {
        return Arc::from(clean);
    }
    let Ok(mut value) = serde_json::to_value(message) else {
        return Arc::from("null");
    };
    crate::redact::apply::json_value(redactor, &mut value);
    Arc::from(value.to_string())
}

/// The local token estimate of a text (see [`tokens`]).
pub fn estimate_tokens(text: &str) -> u64 {
    tokens::count(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn origin() -> Origin<'static> {
        Origin {
            task_id: "t",
            step_id: None,
        }
    }

    #[test]
    fn stored_json_is_the_message_and_rescanned_when_the_redactor_learns_a_value() {
        let mut thread = Thread::new("s");
        thread.add_user("use key-learnt-later now", origin());
        let first = Arc::new(Redactor::with_defaults());
        let stored = thread.stored(&first).to_vec();
        let Ok(back) = serde_json::from_str::<ConversationMessage>(&stored[0]) else {
            panic!("stored JSON is a message: {}", stored[0]);
        };
        assert_eq!(back, thread.messages()[0]);
        let second = Arc::new(first.with_values(["key-learnt-later".to_owned()]));
        let stored = thread.stored(&second).to_vec();
        assert!(!stored[0].contains("key-learnt-later"), "{}", stored[0]);
        assert!(
            thread.messages()[0].content.contains("key-learnt-later"),
            "the thread itself keeps what was said"
        );
    }

    #[test]
    fn a_credential_spanning_json_syntax_still_leaves_valid_json() {
        let mut thread = Thread::new("s");
        thread.add_user("x", origin());
        // The stored text has `"content":"x"`: replacing `x"` breaks the string.
        let redactor = Arc::new(Redactor::with_defaults().with_values(["x\"".to_owned()]));
        let stored = thread.stored(&redactor).to_vec();
        assert!(
            serde_json::from_str::<serde_json::Value>(&stored[0]).is_ok(),
            "{}",
            stored[0]
        );
    }

    #[test]
    fn a_restored_thread_continues_its_ids_and_estimates_missing_counts() {
        let mut original = Thread::new("s");
        let origin = Origin {
            task_id: "t",
            step_id: None,
        };
        original.add_user("first", origin);
        original.add_user("second", origin);
        let mut messages = original.messages().to_vec();
        messages[1].token_count = None;
        let mut restored = Thread::restore("s", messages);
        assert!(restored.messages()[1].token_count.is_some_and(|n| n > 0));
        restored.add_user("third", origin);
        let ids: Vec<&str> = restored
            .messages()
            .iter()
            .map(|m| m.message_id.as_str())
            .collect();
        assert_eq!(ids, ["msg_000001", "msg_000002", "msg_000003"]);
    }

    #[test]
    fn messages_get_sequential_ids_and_their_origin() {
        let mut thread = Thread::new("s");
        let origin = Origin {
            task_id: "t",
            step_id: Some("step_001"),
        };
        thread.add_user(
            "hi",
            Origin {
                task_id: "t",
                step_id: None,
            },
        );
        thread.add_assistant(
            "",
            vec![MessageToolCall {
                id: "c1".into(),
                name: "ReadFile".into(),
                arguments: "{}".into(),
            }],
            Some(7),
            origin,
        );
        thread.add_tool_result("c1", "ReadFile", "content".into(), origin);
        let ids: Vec<_> = thread
            .messages()
            .iter()
            .map(|m| m.message_id.as_str())
            .collect();
        assert_eq!(ids, ["msg_000001", "msg_000002", "msg_000003"]);
        assert_eq!(thread.messages()[1].token_count, Some(7));
        assert_eq!(thread.messages()[2].tool_call_id.as_deref(), Some("c1"));
        assert_eq!(thread.messages()[0].step_id, None);
    }
}
