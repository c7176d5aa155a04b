//! The message thread (local-agent-host.md §5): every message of every task of
//! the session, in order, with ids, token estimates and the task/step that produced it.
//!
//! A message is kept once, as its stored JSON (the checkpoint's `thread` entry), beside a
//! few bytes of [`MessageMeta`] that the context window reads on every step. Once checked
//! against the credential values its JSON goes to the [`spill`] file beside the
//! checkpoints (in memory when there is none). The whole message is parsed back only when
//! it is needed — a request's wire form for a message entering the context window, a rare
//! RPC — because holding every message both parsed and serialised was two copies of the
//! thread for the life of the session, and the session's memory grew with its length.

pub(crate) mod spill;
mod store;
pub(crate) mod tokens;
pub(crate) mod window;

use std::borrow::Cow;
use std::path::PathBuf;
use std::sync::Arc;

use agent_protocol::message::{ConversationMessage, MessageToolCall, Role};

use crate::json_splice::Items;
use crate::redact::Redactor;
use crate::time::now_rfc3339;
use store::Store;

/// What the context window needs of a message on every step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MessageMeta {
    pub role: Role,
    pub token_count: u64,
    /// A tool result answering a call of the assistant message that opens its unit: kept
    /// or dropped with it (see [`window`]).
    pub joins_previous: bool,
}

pub struct Thread {
    session_id: String,
    meta: Vec<MessageMeta>,
    /// Each message as stored JSON (the checkpoint's `thread`), serialised once when it is
    /// added: the checkpoint repeats the whole thread every step, and serialising it again
    /// each time would be most of a long task's step. The thread's only copy of what its
    /// messages say.
    store: Store,
    /// Tool call ids of the assistant message opening the last unit, while tool results
    /// may still join it.
    open_calls: Vec<String>,
    /// Distinct task ids of the messages, in order of first appearance.
    task_ids: Vec<String>,
    /// The last message that names a task.
    last_tasked: Option<usize>,
    next_id: u64,
}

/// What a tool call answers the model: the result's text, and the images it shows with it
/// (`data:` URIs).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ToolReply {
    pub text: String,
    pub image_urls: Vec<String>,
}

impl From<String> for ToolReply {
    fn from(text: String) -> Self {
        Self {
            text,
            image_urls: Vec::new(),
        }
    }
}

impl From<&str> for ToolReply {
    fn from(text: &str) -> Self {
        text.to_owned().into()
    }
}

/// The local estimate of an image's tokens: the Python runtime's figure, near what OpenAI
/// charges for a 1024×1024 image in high detail (765). Estimated, since the gateway's
/// usage report is the real count.
pub(crate) const IMAGE_TOKENS: u64 = 1000;

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
            meta: Vec::new(),
            store: Store::default(),
            open_calls: Vec::new(),
            task_ids: Vec::new(),
            last_tasked: None,
            next_id: 1,
        }
    }

    /// A thread rebuilt from a checkpoint (crash recovery) or from a past session's
    /// history (continuing a conversation). New ids continue after the highest
    /// `msg_NNNNNN` already present, so they never collide; missing token counts are
    /// estimated.
    pub fn restore(session_id: &str, messages: Vec<ConversationMessage>) -> Self {
        let highest = messages
            .iter()
            .filter_map(|message| message.message_id.strip_prefix("msg_")?.parse::<u64>().ok())
            .max()
            .unwrap_or(0);
        let mut thread = Self::new(session_id);
        thread.next_id = highest.max(messages.len() as u64) + 1;
        thread.meta.reserve_exact(messages.len());
        thread.store.reserve(messages.len());
        for mut message in messages {
            if message.token_count.is_none() {
                message.token_count = Some(estimate_tokens(&message.content));
            }
            thread.add(&message);
        }
        thread
    }

    /// The context window's view of every message, in order.
    pub fn meta(&self) -> &[MessageMeta] {
        &self.meta
    }

    /// Message `index` as it was said, parsed back from its stored JSON. `None` only when
    /// there is no such message.
    pub fn message(&self, index: usize) -> Option<Cow<'_, ConversationMessage>> {
        self.store.message(index)
    }

    /// Keeps the checked messages in a spill file in `dir` (see [`spill`]) from the next
    /// [`stored`](Self::stored) on; `None` keeps them in memory.
    pub fn spill_into(&mut self, dir: Option<PathBuf>) {
        self.store.spill_into(dir);
    }

    pub fn spill_dir(&self) -> Option<&PathBuf> {
        self.store.spill_dir()
    }

    /// The messages as stored JSON, in order, each checked once against `redactor`'s exact
    /// values (the backstop that keeps a known credential off the disk). A snapshot:
    /// messages added later are not part of it.
    pub fn stored(&mut self, redactor: &Arc<Redactor>) -> Items {
        self.store.stored(redactor)
    }

    /// Whether any message belongs to task `task_id`.
    pub fn has_task(&self, task_id: &str) -> bool {
        self.task_ids.iter().any(|known| known == task_id)
    }

    /// The last message that names a task.
    pub fn last_tasked(&self) -> Option<Cow<'_, ConversationMessage>> {
        self.message(self.last_tasked?)
    }

    pub fn len(&self) -> usize {
        self.meta.len()
    }

    pub fn is_empty(&self) -> bool {
        self.meta.is_empty()
    }

    /// A new message of this thread, not yet added (see [`Thread::add`]).
    fn message_from(
        &mut self,
        role: Role,
        content: String,
        origin: Origin<'_>,
    ) -> ConversationMessage {
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
            image_urls: Vec::new(),
        };
        self.next_id += 1;
        message
    }

    /// Messages are added whole and never change afterwards: their stored JSON is final.
    fn add(&mut self, message: &ConversationMessage) {
        let joins_previous = message.role == Role::Tool
            && message
                .tool_call_id
                .as_ref()
                .is_some_and(|id| self.open_calls.contains(id));
        if message.role == Role::Assistant {
            self.open_calls = message.tool_calls.iter().map(|c| c.id.clone()).collect();
        } else if !joins_previous {
            self.open_calls.clear();
        }
        if let Some(task_id) = &message.task_id {
            if !self.has_task(task_id) {
                self.task_ids.push(task_id.clone());
            }
            self.last_tasked = Some(self.meta.len());
        }
        self.meta.push(MessageMeta {
            role: message.role,
            token_count: message.token_count.unwrap_or(0),
            joins_previous,
        });
        self.store.push(store::stored_json(message));
    }

    pub fn add_user(&mut self, prompt: &str, origin: Origin<'_>) {
        let message = self.message_from(Role::User, prompt.to_owned(), origin);
        self.add(&message);
    }

    pub fn add_system_note(&mut self, note: &str, origin: Origin<'_>) {
        let message = self.message_from(Role::System, note.to_owned(), origin);
        self.add(&message);
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
        let mut message = self.message_from(Role::Assistant, text.to_owned(), origin);
        message.tool_calls = tool_calls;
        if let Some(tokens) = output_tokens {
            message.token_count = Some(tokens);
        }
        self.add(&message);
    }

    pub fn add_tool_result(
        &mut self,
        tool_call_id: &str,
        tool_name: &str,
        reply: ToolReply,
        origin: Origin<'_>,
    ) {
        let mut message = self.message_from(Role::Tool, reply.text, origin);
        message.tool_call_id = Some(tool_call_id.to_owned());
        message.tool_name = Some(tool_name.to_owned());
        if !reply.image_urls.is_empty() {
            let images = IMAGE_TOKENS.saturating_mul(reply.image_urls.len() as u64);
            message.token_count = message.token_count.map(|text| text.saturating_add(images));
            message.image_urls = reply.image_urls;
        }
        self.add(&message);
    }

    pub fn token_count(&self) -> u64 {
        self.meta.iter().map(|meta| meta.token_count).sum()
    }

    /// Every message, parsed back (tests compare threads whole).
    #[cfg(test)]
    pub fn all(&self) -> Vec<ConversationMessage> {
        (0..self.len())
            .filter_map(|index| self.message(index).map(Cow::into_owned))
            .collect()
    }
}

/// The local token estimate of a text (see [`tokens`]).
pub(crate) fn estimate_tokens(text: &str) -> u64 {
    tokens::count(text)
}

#[cfg(test)]
mod tests;
