//! The one place where a scripted [`GatewayReply`] becomes OpenAI Chat Completions
//! streaming chunks (INTEROP.md §2). Both gateways use it: [`crate::GatewayFake`] sends the
//! events as one body, [`crate::StreamingGateway`] sends them one by one.

use serde_json::{Value, json};

/// What the gateway answers to one request.
#[derive(Clone, Debug, PartialEq)]
pub enum GatewayReply {
    /// Streamed as several content deltas (split on whitespace, at least 3 when the text has
    /// 3 words), then a `finish_reason: "stop"` chunk, the usage chunk (if enabled) and
    /// `data: [DONE]`.
    Text(String),
    /// Optional text deltas, then each call as `delta.tool_calls[{index, ...}]`: a first
    /// delta with `id`, `type: "function"`, `function.name` and `arguments: ""`, then the
    /// arguments in at least 2 fragments (when they have 2 characters); `finish_reason:
    /// "tool_calls"`, usage, `[DONE]`.
    ToolCalls {
        text: Option<String>,
        calls: Vec<ScriptedToolCall>,
    },
    /// A plain HTTP answer, e.g. 429 with `Retry-After`, or 400 `{"error":"blocked"}`.
    /// Without a `content-type` header, a JSON body is labelled `application/json`, any other
    /// body `text/plain`.
    Status {
        status: u16,
        headers: Vec<(String, String)>,
        body: String,
    },
    /// Exactly these `data:` payloads, nothing added (no usage, no `[DONE]` unless listed):
    /// for malformed chunks, a missing `[DONE]`, `data: {"error": ...}` mid-stream.
    RawSse(Vec<String>),
}

impl GatewayReply {
    /// `GatewayReply::Text`.
    pub fn text(text: impl Into<String>) -> Self {
        Self::Text(text.into())
    }

    /// One tool call and no text.
    pub fn tool_call(
        id: impl Into<String>,
        name: impl Into<String>,
        arguments: impl Into<String>,
    ) -> Self {
        Self::ToolCalls {
            text: None,
            calls: vec![ScriptedToolCall::new(id, name, arguments)],
        }
    }

    /// An HTTP error with a body and no extra headers.
    pub fn status(status: u16, body: impl Into<String>) -> Self {
        Self::Status {
            status,
            headers: Vec::new(),
            body: body.into(),
        }
    }
}

/// A tool call the fake model makes. `arguments` is sent verbatim (it may be invalid JSON on
/// purpose).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScriptedToolCall {
    pub id: String,
    pub name: String,
    pub arguments: String,
}

impl ScriptedToolCall {
    pub fn new(
        id: impl Into<String>,
        name: impl Into<String>,
        arguments: impl Into<String>,
    ) -> Self {
        Self {
            id: id.into(),
            name: name.into(),
            arguments: arguments.into(),
        }
    }
}

/// The token counts put in the final usage chunk.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Usage {
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
}

impl Default for Usage {
    fn default() -> Self {
        Self {
            prompt_tokens: 120,
            completion_tokens: 30,
        }
    }
}

/// A reply ready to send: either SSE `data:` payloads or a plain HTTP answer.
#[derive(Clone, Debug, PartialEq)]
pub enum RenderedReply {
    /// `data:` payloads in order (including `[DONE]` where the reply has one).
    Stream(Vec<String>),
    Status {
        status: u16,
        headers: Vec<(String, String)>,
        body: String,
    },
}

/// The model name put in chunks when the request did not name one.
pub const DEFAULT_MODEL: &str = "gpt-test-1";

/// Renders a reply. `model` is echoed in every chunk as the real gateway does; `usage`
/// `None` leaves out the usage chunk (the runtime must then fall back to its own estimate).
pub fn render_reply(reply: &GatewayReply, model: &str, usage: Option<Usage>) -> RenderedReply {
    match reply {
        GatewayReply::Text(text) => RenderedReply::Stream(text_stream(text, "stop", model, usage)),
        GatewayReply::ToolCalls { text, calls } => {
            RenderedReply::Stream(tool_call_stream(text.as_deref(), calls, model, usage))
        }
        GatewayReply::Status {
            status,
            headers,
            body,
        } => RenderedReply::Status {
            status: *status,
            headers: headers.clone(),
            body: body.clone(),
        },
        GatewayReply::RawSse(payloads) => RenderedReply::Stream(payloads.clone()),
    }
}

/// A complete text stream with any `finish_reason` (`"length"`, `"content_filter"`, ...):
/// handy for building `RawSse` variations of a well-formed stream. Ends with `[DONE]`.
pub fn text_stream(
    text: &str,
    finish_reason: &str,
    model: &str,
    usage: Option<Usage>,
) -> Vec<String> {
    let mut chunks = ChunkWriter::new(model);
    chunks.text(text, true);
    chunks.finish(finish_reason, usage)
}

fn tool_call_stream(
    text: Option<&str>,
    calls: &[ScriptedToolCall],
    model: &str,
    usage: Option<Usage>,
) -> Vec<String> {
    let mut chunks = ChunkWriter::new(model);
    if let Some(text) = text {
        chunks.text(text, false);
    }
    for (index, call) in calls.iter().enumerate() {
        chunks.delta(json!({"tool_calls": [{
            "index": index,
            "id": call.id,
            "type": "function",
            "function": {"name": call.name, "arguments": ""},
        }]}));
        for fragment in split_arguments(&call.arguments) {
            chunks.delta(json!({"tool_calls": [{
                "index": index,
                "function": {"arguments": fragment},
            }]}));
        }
    }
    chunks.finish("tool_calls", usage)
}

/// Builds the chunk objects of one completion, sharing its id, timestamp and model.
struct ChunkWriter {
    id: String,
    created: i64,
    model: String,
    payloads: Vec<String>,
}

impl ChunkWriter {
    fn new(model: &str) -> Self {
        Self {
            id: format!("chatcmpl-{}", uuid::Uuid::new_v4().simple()),
            created: time::OffsetDateTime::now_utc().unix_timestamp(),
            model: model.to_string(),
            payloads: Vec::new(),
        }
    }

    fn envelope(&self, choices: Value) -> Value {
        json!({
            "id": self.id,
            "object": "chat.completion.chunk",
            "created": self.created,
            "model": self.model,
            "choices": choices,
        })
    }

    /// One delta; the first delta of the completion also carries `role: "assistant"`, as
    /// OpenAI does.
    fn delta(&mut self, mut delta: Value) {
        if self.payloads.is_empty()
            && let Some(object) = delta.as_object_mut()
        {
            object.insert("role".into(), json!("assistant"));
        }
        let chunk = self.envelope(json!([{"index": 0, "delta": delta, "finish_reason": null}]));
        self.payloads.push(chunk.to_string());
    }

    /// Text deltas; `always` sends one empty delta for empty text so a text reply is never
    /// just a finish chunk.
    fn text(&mut self, text: &str, always: bool) {
        let pieces = split_text(text);
        if pieces.is_empty() && always {
            self.delta(json!({"content": ""}));
        }
        for piece in pieces {
            self.delta(json!({"content": piece}));
        }
    }

    fn finish(mut self, finish_reason: &str, usage: Option<Usage>) -> Vec<String> {
        let finish =
            self.envelope(json!([{"index": 0, "delta": {}, "finish_reason": finish_reason}]));
        self.payloads.push(finish.to_string());
        if let Some(usage) = usage {
            let mut chunk = self.envelope(json!([]));
            chunk["usage"] = json!({
                "prompt_tokens": usage.prompt_tokens,
                "completion_tokens": usage.completion_tokens,
                "total_tokens": usage.prompt_tokens.saturating_add(usage.completion_tokens),
            });
            self.payloads.push(chunk.to_string());
        }
        self.payloads.push("[DONE]".to_string());
        self.payloads
    }
}

/// Splits text into pieces that end on whitespace boundaries and concatenate back to the
/// exact text: one piece per word when there are at most 3 words, otherwise about 4 words
/// per piece but never fewer than 3 pieces. Empty text gives no piece.
pub fn split_text(text: &str) -> Vec<String> {
    // A token is a run of non-whitespace plus the whitespace after it; leading whitespace
    // belongs to the first token.
    let mut tokens: Vec<&str> = Vec::new();
    let mut start = 0;
    let mut previous_was_space = false;
    for (offset, character) in text.char_indices() {
        let is_space = character.is_whitespace();
        if previous_was_space && !is_space && offset > 0 && !text[start..offset].trim().is_empty() {
            tokens.push(&text[start..offset]);
            start = offset;
        }
        previous_was_space = is_space;
    }
    if start < text.len() {
        tokens.push(&text[start..]);
    }
    let count = tokens.len();
    if count <= 3 {
        return tokens.into_iter().map(str::to_string).collect();
    }
    let pieces = count.div_ceil(4).max(3);
    (0..pieces)
        .map(|piece| tokens[piece * count / pieces..(piece + 1) * count / pieces].concat())
        .collect()
}

/// Splits tool-call arguments into up to 3 fragments on character boundaries (at least 2
/// when there are 2 characters), so a runtime must accumulate them.
pub fn split_arguments(arguments: &str) -> Vec<String> {
    let boundaries: Vec<usize> = arguments
        .char_indices()
        .map(|(offset, _)| offset)
        .chain(std::iter::once(arguments.len()))
        .collect();
    let characters = boundaries.len() - 1;
    if characters == 0 {
        return Vec::new();
    }
    let fragments = characters.min(3);
    (0..fragments)
        .map(|fragment| {
            let from = boundaries[fragment * characters / fragments];
            let to = boundaries[(fragment + 1) * characters / fragments];
            arguments[from..to].to_string()
        })
        .collect()
}

/// One SSE event: `data: <payload>` and a blank line.
pub fn sse_event(payload: &str) -> String {
    format!("data: {payload}\n\n")
}

/// A whole SSE body for the given payloads.
pub fn sse_body(payloads: &[String]) -> String {
    payloads.iter().map(|payload| sse_event(payload)).collect()
}

/// The model named in a request body, echoed in the chunks.
pub(crate) fn requested_model(body: &Value) -> String {
    body.get("model")
        .and_then(Value::as_str)
        .unwrap_or(DEFAULT_MODEL)
        .to_string()
}
