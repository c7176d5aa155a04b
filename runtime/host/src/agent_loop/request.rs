//! Building one model request: the thread fitted to the context limits, as the gateway's
//! request body.

use super::TaskRun;
use crate::llm::request::{RequestBody, WireCache};
use crate::thread::estimate_tokens;

impl TaskRun {
    /// The request body within the context limits (redacted, §8.7), its estimated input
    /// tokens, and the number of dropped messages when that number changed since the last
    /// request.
    pub(super) fn build_request(
        &self,
        wires: &mut WireCache,
        system_prompt: &str,
        tools: &[agent_protocol::ToolDefinition],
        llm_policy: &agent_protocol::policy::LlmPolicy,
    ) -> Result<(RequestBody, u64, Option<usize>), serde_json::Error> {
        use crate::thread::tokens::count_repeated;
        use crate::thread::window::{Limits, Sent, fit, marker_text};
        let tools_tokens = wires.tools_tokens(tools, count_repeated)?;
        let fixed_tokens = count_repeated(system_prompt) + tools_tokens;
        let limits = Limits {
            max_input_tokens: llm_policy.max_input_tokens,
            fixed_tokens,
            max_messages: self.config.agent_loop.max_request_messages,
            recency_window: self.config.agent_loop.recency_window,
        };
        let session_id = self.session.id().to_owned();
        let (body, estimated, dropped) = self.session.with_thread(|thread| {
            let fitted = fit(thread.meta(), &limits, |dropped| {
                let text = marker_text(dropped);
                agent_protocol::message::ConversationMessage {
                    message_id: "context_marker".to_owned(),
                    session_id: session_id.clone(),
                    task_id: None,
                    step_id: None,
                    role: agent_protocol::message::Role::System,
                    token_count: Some(estimate_tokens(&text)),
                    content: text,
                    timestamp: String::new(),
                    tool_calls: Vec::new(),
                    tool_call_id: None,
                    tool_name: None,
                    image_urls: Vec::new(),
                }
            });
            let meta = thread.meta();
            let estimated = fixed_tokens
                + fitted
                    .messages
                    .iter()
                    .map(|message| match message {
                        Sent::Thread(index) => meta.get(*index).map_or(0, |meta| meta.token_count),
                        Sent::Marker(marker) => marker.token_count.unwrap_or(0),
                    })
                    .sum::<u64>();
            // §8.7 (Phase 2): the outbound prompt is scrubbed as a whole — the user's
            // prompt too — and the request says so in its context headers.
            let body = wires.body(
                &crate::redact::global(),
                system_prompt,
                &fitted.messages,
                |index| thread.message(index),
                tools,
                llm_policy,
            );
            (body, estimated, fitted.dropped)
        });
        let body = body?;
        let changed = self.session.note_dropped(dropped);
        Ok((body, estimated, changed.filter(|dropped| *dropped > 0)))
    }
}
