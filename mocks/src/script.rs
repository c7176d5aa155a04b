//! The JSON form of a gateway script, for `mock-services --script FILE`, so a human can drive
//! the runtime by hand without writing Rust. A script is a JSON array; each entry is one
//! reply, in the order requests will get them:
//!
//! ```json
//! [
//!   {"text": "Let me look at the README first."},
//!   {"toolCalls": [{"id": "call_1", "name": "ReadFile", "arguments": {"path": "README.md"}}],
//!    "text": "optional text before the calls"},
//!   {"status": 429, "headers": {"Retry-After": "1"}, "body": {"error": "rate limited"}},
//!   {"rawSse": ["{\"choices\":[{\"index\":0,\"delta\":{\"content\":\"cut\"}}]}"]}
//! ]
//! ```
//!
//! `arguments` may be a JSON string (sent verbatim) or any other JSON value (sent as its
//! compact text); a call without `id` gets `call_<n>`. `body` may be a string or JSON.

use anyhow::{Context, bail};
use serde_json::Value;

use crate::sse::{GatewayReply, ScriptedToolCall};

/// Parses a whole script (a JSON array of entries, see the module docs).
pub fn parse_script(text: &str) -> anyhow::Result<Vec<GatewayReply>> {
    let value: Value = serde_json::from_str(text).context("the script is not valid JSON")?;
    let Value::Array(entries) = value else {
        bail!("the script must be a JSON array of replies");
    };
    entries
        .iter()
        .enumerate()
        .map(|(index, entry)| parse_reply(entry).with_context(|| format!("script entry {index}")))
        .collect()
}

/// Parses one entry: `{"text"}`, `{"toolCalls", "text"?}`, `{"status", "headers"?, "body"?}`
/// or `{"rawSse"}`.
pub fn parse_reply(entry: &Value) -> anyhow::Result<GatewayReply> {
    let text = entry
        .get("text")
        .and_then(Value::as_str)
        .map(str::to_string);
    if let Some(calls) = entry.get("toolCalls") {
        let Value::Array(calls) = calls else {
            bail!("toolCalls must be an array");
        };
        let calls = calls
            .iter()
            .enumerate()
            .map(|(index, call)| parse_call(index, call))
            .collect::<anyhow::Result<Vec<_>>>()?;
        return Ok(GatewayReply::ToolCalls { text, calls });
    }
    if let Some(status) = entry.get("status") {
        let status = status
            .as_u64()
            .and_then(|status| u16::try_from(status).ok())
            .context("status must be an HTTP status number")?;
        let headers = match entry.get("headers") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Object(map)) => map
                .iter()
                .map(|(name, value)| {
                    (
                        name.clone(),
                        value
                            .as_str()
                            .map_or_else(|| value.to_string(), str::to_string),
                    )
                })
                .collect(),
            Some(_) => bail!("headers must be an object of name to value"),
        };
        let body = match entry.get("body") {
            None | Some(Value::Null) => String::new(),
            Some(Value::String(body)) => body.clone(),
            Some(other) => other.to_string(),
        };
        return Ok(GatewayReply::Status {
            status,
            headers,
            body,
        });
    }
    if let Some(raw) = entry.get("rawSse") {
        let Value::Array(payloads) = raw else {
            bail!("rawSse must be an array of strings");
        };
        let payloads = payloads
            .iter()
            .map(|payload| {
                payload
                    .as_str()
                    .map(str::to_string)
                    .context("rawSse entries must be strings")
            })
            .collect::<anyhow::Result<Vec<_>>>()?;
        return Ok(GatewayReply::RawSse(payloads));
    }
    match text {
        Some(text) => Ok(GatewayReply::Text(text)),
        None => bail!("an entry needs one of text, toolCalls, status or rawSse"),
    }
}

fn parse_call(index: usize, call: &Value) -> anyhow::Result<ScriptedToolCall> {
    let name = call
        .get("name")
        .and_then(Value::as_str)
        .with_context(|| format!("tool call {index} has no name"))?;
    let id = call
        .get("id")
        .and_then(Value::as_str)
        .map_or_else(|| format!("call_{}", index + 1), str::to_string);
    let arguments = match call.get("arguments") {
        None | Some(Value::Null) => "{}".to_string(),
        Some(Value::String(arguments)) => arguments.clone(),
        Some(other) => other.to_string(),
    };
    Ok(ScriptedToolCall::new(id, name, arguments))
}
