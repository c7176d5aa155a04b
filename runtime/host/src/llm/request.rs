//! Builds the Chat Completions request body from the thread (local-agent-host.md §6.2,
//! INTEROP.md §2): model and max_tokens from `llmPolicy`, the system prompt first, tools
//! as `{type:"function", function:{...}}`, assistant tool calls and tool results paired by
//! id, every `content` a string.
//!
//! Every request repeats the thread, so each message is redacted (§8.7) and serialised
//! when it enters the context window and kept in a [`WireCache`] while it stays there; a
//! step then copies bytes instead of building, scanning and escaping the whole thread
//! again, which would be most of a step's instructions once the thread grows.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Arc;

use agent_protocol::ToolDefinition;
use agent_protocol::extensions::to_wire_name;
use agent_protocol::message::{ConversationMessage, Role};
use agent_protocol::policy::LlmPolicy;
use serde::Serialize;
use serde_json::value::RawValue;

use crate::redact::{MARKER, Redactor};
use crate::thread::window::Sent;

/// A serialised request body and whether it carries redacted content — replaced now, or
/// earlier when a tool result entered the thread — which the client announces in the
/// [`REDACTION_HEADER`](crate::redact::REDACTION_HEADER) header.
pub struct RequestBody {
    pub json: bytes::Bytes,
    pub redaction_applied: bool,
}

/// The wire form of the messages the last request sent, by their place in the thread (a
/// cache lives for one task run, and a thread is only ever replaced between runs), bound to the
/// redactor that produced them: when the process-wide redactor is replaced (rules or
/// credentials added) everything is redacted afresh.
///
/// Only the last request's messages are kept. The context window moves forward, so a
/// message it has left is not sent again; keeping every message a long task ever sent
/// held a third copy of the thread.
#[derive(Default)]
pub struct WireCache {
    redactor: Option<Arc<Redactor>>,
    messages: HashMap<usize, Wire>,
    system: Option<(String, Wire)>,
    tools: Option<ToolsWire>,
    /// Counts requests; a message sent in the current one carries its number.
    request: u64,
}

/// The offered tools as the last request sent them. The same tools are offered at nearly
/// every step, and serialising their schemas (for the body and for the token estimate)
/// was a quarter of a step's instructions; comparing them with the last step's is a
/// pointer comparison per schema ([`ToolDefinition::input_schema`] is shared).
struct ToolsWire {
    offered: Vec<ToolDefinition>,
    /// `None` when no tool is offered (the body then has no `tools`).
    json: Option<Box<RawValue>>,
    /// Counted at the first [`WireCache::tools_tokens`] for these tools.
    tokens: Option<u64>,
}

struct Wire {
    json: Box<RawValue>,
    redacted: bool,
    sent_in: u64,
}

impl WireCache {
    /// The token estimate of `tools`, from `count` over their JSON; the tools' wire form
    /// for [`WireCache::body`] is made at the same time. Both are remade only when the
    /// offered tools differ from the last call's.
    pub fn tools_tokens(
        &mut self,
        tools: &[ToolDefinition],
        count: impl FnOnce(&str) -> u64,
    ) -> Result<u64, serde_json::Error> {
        let cached = self.tools_wire(tools)?;
        if let Some(tokens) = cached.tokens {
            return Ok(tokens);
        }
        let tokens = serde_json::to_string(tools).map_or(0, |json| count(&json));
        cached.tokens = Some(tokens);
        Ok(tokens)
    }

    fn tools_wire(
        &mut self,
        tools: &[ToolDefinition],
    ) -> Result<&mut ToolsWire, serde_json::Error> {
        if let Some(cached) = self.tools.take_if(|cached| cached.offered == tools) {
            return Ok(self.tools.insert(cached));
        }
        let wire: Vec<WireTool<'_>> = tools
            .iter()
            .map(|tool| WireTool {
                kind: "function",
                function: WireFunction {
                    name: to_wire_name(&tool.tool_name),
                    description: &tool.description,
                    parameters: &tool.input_schema,
                },
            })
            .collect();
        let json = if wire.is_empty() {
            None
        } else {
            Some(serde_json::value::to_raw_value(&wire)?)
        };
        Ok(self.tools.insert(ToolsWire {
            offered: tools.to_vec(),
            json,
            tokens: None,
        }))
    }

    /// The body for `messages`: thread messages by their index, each made by `thread`
    /// only when its wire form is not cached; the context marker made afresh each time.
    pub fn body<'t>(
        &mut self,
        redactor: &Arc<Redactor>,
        system_prompt: &str,
        messages: &[Sent],
        thread: impl Fn(usize) -> Option<Cow<'t, ConversationMessage>>,
        tools: &[ToolDefinition],
        policy: &LlmPolicy,
    ) -> Result<RequestBody, serde_json::Error> {
        if !self
            .redactor
            .as_ref()
            .is_some_and(|known| Arc::ptr_eq(known, redactor))
        {
            // Messages are redacted by the redactor; the tools' wire form is not.
            *self = Self {
                redactor: Some(Arc::clone(redactor)),
                tools: self.tools.take(),
                ..Self::default()
            };
        }
        self.tools_wire(tools)?;
        if self
            .system
            .as_ref()
            .is_none_or(|(text, _)| text != system_prompt)
        {
            let system = wire(redactor, Role::System, system_prompt, None, &[], &[])?;
            self.system = Some((system_prompt.to_owned(), system));
        }
        // The cache is filled first, so the body can then borrow from it. Synthetic
        // messages (the context marker) are serialised afresh each time.
        self.request += 1;
        let request = self.request;
        let mut synthetic = Vec::new();
        for message in messages {
            match message {
                Sent::Thread(index) => match self.messages.get_mut(index) {
                    Some(wire) => wire.sent_in = request,
                    None => {
                        let message = thread(*index).ok_or_else(|| {
                            <serde_json::Error as serde::de::Error>::custom(format!(
                                "message {index} of the conversation could not be read back from its file in the checkpoint directory (the runtime's log says why)"
                            ))
                        })?;
                        let mut wire = wire_of(redactor, &message)?;
                        wire.sent_in = request;
                        self.messages.insert(*index, wire);
                    }
                },
                Sent::Marker(message) => synthetic.push(wire_of(redactor, message)?),
            }
        }
        self.messages.retain(|_, wire| wire.sent_in == request);
        let mut synthetic = synthetic.iter();
        let mut parts: Vec<&Wire> = Vec::with_capacity(messages.len() + 1);
        parts.extend(self.system.as_ref().map(|(_, wire)| wire));
        for message in messages {
            parts.extend(match message {
                Sent::Thread(index) => self.messages.get(index),
                Sent::Marker(_) => synthetic.next(),
            });
        }
        let redaction_applied = parts.iter().any(|wire| wire.redacted);
        let wires: Vec<&RawValue> = parts.iter().map(|wire| &*wire.json).collect();
        let tools = self
            .tools
            .as_ref()
            .and_then(|cached| cached.json.as_deref());
        let body = Body {
            model: policy.allowed_models.first().map_or("", String::as_str),
            stream: true,
            stream_options: StreamOptions {
                include_usage: true,
            },
            messages: wires,
            max_tokens: policy.max_output_tokens,
            tools,
        };
        Ok(RequestBody {
            json: serde_json::to_vec(&body)?.into(),
            redaction_applied,
        })
    }

    /// Thread messages held in wire form.
    pub fn len(&self) -> usize {
        self.messages.len()
    }

    pub fn is_empty(&self) -> bool {
        self.messages.is_empty()
    }
}

fn wire_of(redactor: &Redactor, message: &ConversationMessage) -> Result<Wire, serde_json::Error> {
    let tool_call_id =
        (message.role == Role::Tool).then(|| message.tool_call_id.as_deref().unwrap_or_default());
    wire(
        redactor,
        message.role,
        &message.content,
        tool_call_id,
        &message.tool_calls,
        &message.image_urls,
    )
}

/// One message redacted and serialised: contents by every rule, tool-call arguments
/// (JSON text) by exact values only, which keeps them valid.
fn wire(
    redactor: &Redactor,
    role: Role,
    content: &str,
    tool_call_id: Option<&str>,
    calls: &[agent_protocol::message::MessageToolCall],
    image_urls: &[String],
) -> Result<Wire, serde_json::Error> {
    let content = redactor.redact(content);
    let mut redacted = matches!(content, Cow::Owned(_)) || content.contains(MARKER);
    let tool_calls = if role == Role::Assistant {
        calls
            .iter()
            .map(|call| {
                let arguments = redactor.redact_values(&call.arguments);
                redacted |= matches!(arguments, Cow::Owned(_)) || arguments.contains(MARKER);
                WireCall {
                    id: &call.id,
                    kind: "function",
                    function: WireCallFunction {
                        name: to_wire_name(&call.name),
                        arguments,
                    },
                }
            })
            .collect()
    } else {
        Vec::new()
    };
    let message = WireMessage {
        role: match role {
            Role::System => "system",
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::Tool => "tool",
        },
        tool_call_id,
        // Plain text unless the message shows images: the real gateway refuses any other
        // content (INTEROP.md §2), so parts go only where ViewImage was offered.
        content: if image_urls.is_empty() {
            WireContent::Text(&content)
        } else {
            WireContent::Parts(
                std::iter::once(WirePart::Text { text: &content })
                    .chain(image_urls.iter().map(|url| WirePart::ImageUrl {
                        image_url: WireImageUrl { url },
                    }))
                    .collect(),
            )
        },
        tool_calls,
    };
    Ok(Wire {
        json: serde_json::value::to_raw_value(&message)?,
        redacted,
        sent_in: 0,
    })
}

#[derive(Serialize)]
struct Body<'a> {
    model: &'a str,
    stream: bool,
    stream_options: StreamOptions,
    messages: Vec<&'a RawValue>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_tokens: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tools: Option<&'a RawValue>,
}

#[derive(Serialize)]
struct StreamOptions {
    include_usage: bool,
}

#[derive(Serialize)]
struct WireMessage<'a> {
    role: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_call_id: Option<&'a str>,
    content: WireContent<'a>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tool_calls: Vec<WireCall<'a>>,
}

/// A message's content: a string, or OpenAI's content parts when it shows images.
#[derive(Serialize)]
#[serde(untagged)]
enum WireContent<'a> {
    Text(&'a str),
    Parts(Vec<WirePart<'a>>),
}

#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum WirePart<'a> {
    Text { text: &'a str },
    ImageUrl { image_url: WireImageUrl<'a> },
}

#[derive(Serialize)]
struct WireImageUrl<'a> {
    url: &'a str,
}

#[derive(Serialize)]
struct WireCall<'a> {
    id: &'a str,
    #[serde(rename = "type")]
    kind: &'static str,
    function: WireCallFunction<'a>,
}

#[derive(Serialize)]
struct WireCallFunction<'a> {
    name: String,
    arguments: Cow<'a, str>,
}

#[derive(Serialize)]
struct WireTool<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    function: WireFunction<'a>,
}

#[derive(Serialize)]
struct WireFunction<'a> {
    name: String,
    description: &'a str,
    parameters: &'a serde_json::Value,
}

#[cfg(test)]
mod tests;
