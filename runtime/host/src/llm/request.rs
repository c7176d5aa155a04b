//! Builds the Chat Completions request body from the thread (local-agent-host.md §6.2,
//! INTEROP.md §2): model and max_tokens from `llmPolicy`, the system prompt first, tools
//! as `{type:"function", function:{...}}`, assistant tool calls and tool results paired by
//! id, every `content` a string.

use agent_protocol::ToolDefinition;
use agent_protocol::extensions::to_wire_name;
use agent_protocol::message::{ConversationMessage, Role};
use agent_protocol::policy::LlmPolicy;
use serde_json::{Value, json};

pub fn build_body<'a>(
    system_prompt: &str,
    messages: impl IntoIterator<Item = &'a ConversationMessage>,
    tools: &[ToolDefinition],
    policy: &LlmPolicy,
) -> Value {
    let mut wire = vec![json!({ "role": "system", "content": system_prompt })];
    wire.extend(messages.into_iter().map(to_wire));
    let mut body = json!({
        "model": policy.allowed_models.first().cloned().unwrap_or_default(),
        "stream": true,
        "stream_options": { "include_usage": true },
        "messages": wire,
    });
    if let Some(max_tokens) = policy.max_output_tokens {
        body["max_tokens"] = json!(max_tokens);
    }
    if !tools.is_empty() {
        body["tools"] = Value::Array(
            tools
                .iter()
                .map(|tool| {
                    json!({
                        "type": "function",
                        "function": {
                            "name": to_wire_name(&tool.tool_name),
                            "description": tool.description,
                            "parameters": tool.input_schema,
                        }
                    })
                })
                .collect(),
        );
    }
    body
}

fn to_wire(message: &ConversationMessage) -> Value {
    match message.role {
        Role::System => json!({ "role": "system", "content": message.content }),
        Role::User => json!({ "role": "user", "content": message.content }),
        Role::Assistant if message.tool_calls.is_empty() => {
            json!({ "role": "assistant", "content": message.content })
        }
        Role::Assistant => json!({
            "role": "assistant",
            "content": message.content,
            "tool_calls": message.tool_calls.iter().map(|call| json!({
                "id": call.id,
                "type": "function",
                "function": { "name": to_wire_name(&call.name), "arguments": call.arguments },
            })).collect::<Vec<_>>(),
        }),
        Role::Tool => json!({
            "role": "tool",
            "tool_call_id": message.tool_call_id.clone().unwrap_or_default(),
            "content": message.content,
        }),
    }
}
