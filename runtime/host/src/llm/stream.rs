//! Accumulates the chunks of one streamed completion: text deltas pass straight through,
//! tool-call fragments are assembled by index, the finish reason and usage are kept.
//! Pure and synchronous so it can be tested and benchmarked without I/O.

use std::collections::BTreeMap;

use serde_json::Value;

use super::{LlmResponse, StopReason, ToolCall, Usage};

#[derive(Debug, Default)]
struct PartialCall {
    id: String,
    name: String,
    arguments: String,
}

#[derive(Debug, Default)]
pub struct Accumulator {
    text: String,
    calls: BTreeMap<u64, PartialCall>,
    finish_reason: Option<String>,
    usage: Option<Usage>,
    done: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ChunkError {
    #[error("the gateway sent an error event in the stream: {0}")]
    Upstream(String),
    #[error("the gateway sent a chunk that is not JSON: {0}")]
    Malformed(String),
}

impl Accumulator {
    pub fn is_done(&self) -> bool {
        self.done
    }

    /// Feeds one SSE `data:` payload; returns the text delta it carried, if any.
    pub fn push(&mut self, data: &str) -> Result<Option<String>, ChunkError> {
        let data = data.trim();
        if data == "[DONE]" {
            self.done = true;
            return Ok(None);
        }
        if data.is_empty() {
            return Ok(None);
        }
        let chunk: Value =
            serde_json::from_str(data).map_err(|error| ChunkError::Malformed(error.to_string()))?;
        if let Some(error) = chunk.get("error") {
            let message = error
                .get("message")
                .and_then(Value::as_str)
                .map(str::to_owned)
                .or_else(|| error.as_str().map(str::to_owned))
                .unwrap_or_else(|| error.to_string());
            return Err(ChunkError::Upstream(message));
        }
        if let Some(usage) = chunk.get("usage").filter(|usage| !usage.is_null()) {
            self.usage = Some(Usage {
                input_tokens: usage
                    .get("prompt_tokens")
                    .and_then(Value::as_u64)
                    .unwrap_or(0),
                output_tokens: usage
                    .get("completion_tokens")
                    .and_then(Value::as_u64)
                    .unwrap_or(0),
            });
        }
        let Some(choice) = chunk
            .get("choices")
            .and_then(Value::as_array)
            .and_then(|choices| choices.first())
        else {
            return Ok(None);
        };
        if let Some(reason) = choice.get("finish_reason").and_then(Value::as_str) {
            self.finish_reason = Some(reason.to_owned());
        }
        let Some(delta) = choice.get("delta") else {
            return Ok(None);
        };
        if let Some(calls) = delta.get("tool_calls").and_then(Value::as_array) {
            for (position, call) in calls.iter().enumerate() {
                let index = call
                    .get("index")
                    .and_then(Value::as_u64)
                    .unwrap_or(position as u64);
                let partial = self.calls.entry(index).or_default();
                if let Some(id) = call.get("id").and_then(Value::as_str) {
                    partial.id = id.to_owned();
                }
                if let Some(function) = call.get("function") {
                    if let Some(name) = function.get("name").and_then(Value::as_str) {
                        partial.name.push_str(name);
                    }
                    if let Some(fragment) = function.get("arguments").and_then(Value::as_str) {
                        partial.arguments.push_str(fragment);
                    }
                }
            }
        }
        match delta.get("content").and_then(Value::as_str) {
            Some(text) if !text.is_empty() => {
                self.text.push_str(text);
                Ok(Some(text.to_owned()))
            }
            _ => Ok(None),
        }
    }

    pub fn text_len(&self) -> u64 {
        self.text.chars().count() as u64
    }

    pub fn finish(self) -> LlmResponse {
        let tool_calls: Vec<ToolCall> = self
            .calls
            .into_iter()
            .map(|(index, call)| ToolCall {
                id: if call.id.is_empty() {
                    format!("call_{index}")
                } else {
                    call.id
                },
                // MCP tools travel as `{server}__{tool}` (agent_protocol::extensions).
                name: agent_protocol::extensions::from_wire_name(&call.name),
                arguments: call.arguments,
            })
            .collect();
        let stop_reason = match self.finish_reason.as_deref() {
            Some(reason) => StopReason::from_finish_reason(reason),
            None if !tool_calls.is_empty() => StopReason::ToolUse,
            None => StopReason::EndTurn,
        };
        LlmResponse {
            text: self.text,
            tool_calls,
            stop_reason,
            usage: self.usage,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_and_fragmented_parallel_tool_calls_are_assembled() {
        let mut acc = Accumulator::default();
        let chunks = [
            r#"{"choices":[{"index":0,"delta":{"role":"assistant","content":"Let me "},"finish_reason":null}]}"#,
            r#"{"choices":[{"index":0,"delta":{"content":"look."}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"ReadFile","arguments":""}}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"c2","type":"function","function":{"name":"ReadFile","arguments":"{\"pa"}}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"path\":\"a\"}"}}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":"th\":\"b\"}"}}]},"finish_reason":"tool_calls"}]}"#,
            r#"{"choices":[],"usage":{"prompt_tokens":12,"completion_tokens":5}}"#,
            "[DONE]",
        ];
        let mut streamed = String::new();
        for chunk in chunks {
            if let Some(text) = acc.push(chunk).unwrap() {
                streamed.push_str(&text);
            }
        }
        assert!(acc.is_done());
        let response = acc.finish();
        assert_eq!(streamed, "Let me look.");
        assert_eq!(response.text, "Let me look.");
        assert_eq!(response.stop_reason, StopReason::ToolUse);
        assert_eq!(
            response.usage,
            Some(Usage {
                input_tokens: 12,
                output_tokens: 5
            })
        );
        assert_eq!(response.tool_calls.len(), 2);
        assert_eq!(response.tool_calls[0].arguments, r#"{"path":"a"}"#);
        assert_eq!(response.tool_calls[1].id, "c2");
        assert_eq!(response.tool_calls[1].arguments, r#"{"path":"b"}"#);
    }

    #[test]
    fn an_error_event_in_the_stream_is_reported() {
        let mut acc = Accumulator::default();
        assert_eq!(
            acc.push(r#"{"error":{"message":"upstream overloaded"}}"#),
            Err(ChunkError::Upstream("upstream overloaded".into()))
        );
        assert!(matches!(acc.push("{nope"), Err(ChunkError::Malformed(_))));
    }
}
