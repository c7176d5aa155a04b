//! How a streaming answer reaches the app while it arrives: text chunks, retries and
//! discarded partial answers as events of the step.

use std::time::Duration;

use agent_protocol::events::{EventBody, LlmResponseDiscarded, LlmRetry, TextChunk};

use super::millis;
use crate::events::Scope;
use crate::llm::StreamObserver;
use crate::session::Session;

/// Forwards what the LLM client sees to the app as it happens.
pub(super) struct EventObserver<'a> {
    pub(super) session: &'a Session,
    pub(super) scope: Scope,
    /// Characters streamed by the current attempt, so a cancellation can say what the app
    /// should throw away.
    pub(super) streamed_chars: u64,
}

impl StreamObserver for EventObserver<'_> {
    fn text(&mut self, text: &str) {
        self.streamed_chars += text.chars().count() as u64;
        self.session.events.emit(
            self.scope.clone(),
            EventBody::TextChunk(TextChunk {
                text: text.to_owned(),
            }),
        );
    }

    fn retry(&mut self, attempt: u32, max_retries: u32, reason: &str, delay: Duration) {
        self.session.events.emit(
            self.scope.clone(),
            EventBody::LlmRetry(LlmRetry {
                attempt,
                max_retries,
                reason: reason.to_owned(),
                delay_ms: millis(delay),
            }),
        );
    }

    fn discarded(&mut self, reason: &str, chars: u64) {
        self.streamed_chars = 0;
        self.session.events.emit(
            self.scope.clone(),
            EventBody::LlmResponseDiscarded(LlmResponseDiscarded {
                reason: reason.to_owned(),
                discarded_chars: chars,
            }),
        );
    }
}
