//! The LLM Gateway client (local-agent-host.md §6) speaking OpenAI Chat Completions
//! streaming, as the real gateway does (INTEROP.md §2).

pub(crate) mod client;
pub(crate) mod request;
pub(crate) mod stream;

use std::time::Duration;

pub(crate) use client::LlmClient;

/// Why the model stopped, in the spec's vocabulary (§4.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopReason {
    EndTurn,
    MaxTokens,
    ToolUse,
    Guardrail,
}

impl StopReason {
    pub fn from_finish_reason(reason: &str) -> Self {
        match reason {
            "length" => StopReason::MaxTokens,
            "tool_calls" | "function_call" => StopReason::ToolUse,
            "content_filter" => StopReason::Guardrail,
            _ => StopReason::EndTurn,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            StopReason::EndTurn => "end_turn",
            StopReason::MaxTokens => "max_tokens",
            StopReason::ToolUse => "tool_use",
            StopReason::Guardrail => "guardrail",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    /// The raw JSON text of the arguments; parsed (and possibly rejected) by the loop.
    pub arguments: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Usage {
    pub input_tokens: u64,
    pub output_tokens: u64,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LlmResponse {
    pub text: String,
    pub tool_calls: Vec<ToolCall>,
    pub stop_reason: StopReason,
    /// From the gateway's final usage chunk; `None` when it sent none.
    pub usage: Option<Usage>,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum LlmError {
    /// Worth retrying the whole request: 429, 5xx, connect errors, timeouts, partial streams.
    #[error("{reason}")]
    Retryable {
        reason: String,
        retry_after: Option<Duration>,
    },
    /// HTTP 400 or a content filter: never retried.
    #[error("The LLM Gateway blocked the request: {0}")]
    Guardrail(String),
    /// 401/403.
    #[error("The LLM Gateway refused the credentials (HTTP {status}): {message}")]
    Unauthorized { status: u16, message: String },
    #[error("The LLM Gateway rejected the request (HTTP {status}): {message}")]
    Rejected { status: u16, message: String },
    #[error("The LLM request was cancelled")]
    Cancelled,
}

/// Receives what happens during a call, as it happens.
pub(crate) trait StreamObserver: Send {
    fn text(&mut self, text: &str);
    fn retry(&mut self, attempt: u32, max_retries: u32, reason: &str, delay: Duration);
    /// Text already passed to `text` was thrown away because the attempt failed.
    fn discarded(&mut self, reason: &str, chars: u64);
}
