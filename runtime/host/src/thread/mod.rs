//! The in-memory message thread (local-agent-host.md §5): every message of every task of
//! the session, in order, with ids, token estimates and the task/step that produced it.

pub mod tokens;
pub mod window;

use agent_protocol::message::{ConversationMessage, MessageToolCall, Role};

use crate::time::now_rfc3339;

pub struct Thread {
    session_id: String,
    messages: Vec<ConversationMessage>,
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
            messages,
        }
    }

    pub fn messages(&self) -> &[ConversationMessage] {
        &self.messages
    }

    /// Lends the messages to `use_them` by value and takes them back: the checkpoint owns
    /// its thread, and moving it in and out (under the session lock) costs nothing where a
    /// copy of a long thread cost megabytes of allocations per step.
    pub fn lend<R>(
        &mut self,
        use_them: impl FnOnce(Vec<ConversationMessage>) -> (Vec<ConversationMessage>, R),
    ) -> R {
        let (messages, result) = use_them(std::mem::take(&mut self.messages));
        self.messages = messages;
        result
    }

    pub fn len(&self) -> usize {
        self.messages.len()
    }

    pub fn is_empty(&self) -> bool {
        self.messages.is_empty()
    }

    fn push(
        &mut self,
        role: Role,
        content: String,
        origin: Origin<'_>,
    ) -> &mut ConversationMessage {
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
        self.messages.push(message);
        let last = self.messages.len() - 1;
        &mut self.messages[last]
    }

    pub fn add_user(&mut self, prompt: &str, origin: Origin<'_>) {
        self.push(Role::User, prompt.to_owned(), origin);
    }

    pub fn add_system_note(&mut self, note: &str, origin: Origin<'_>) {
        self.push(Role::System, note.to_owned(), origin);
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
        let message = self.push(Role::Assistant, text.to_owned(), origin);
        message.tool_calls = tool_calls;
        if let Some(tokens) = output_tokens {
            message.token_count = Some(tokens);
        }
    }

    pub fn add_tool_result(
        &mut self,
        tool_call_id: &str,
        tool_name: &str,
        content: String,
        origin: Origin<'_>,
    ) {
        let message = self.push(Role::Tool, content, origin);
        message.tool_call_id = Some(tool_call_id.to_owned());
        message.tool_name = Some(tool_name.to_owned());
    }

    pub fn token_count(&self) -> u64 {
        self.messages
            .iter()
            .map(|message| message.token_count.unwrap_or(0))
            .sum()
    }
}

/// The local token estimate of a text (see [`tokens`]).
pub fn estimate_tokens(text: &str) -> u64 {
    tokens::count(text)
}

#[cfg(test)]
mod tests {
    use super::*;

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
