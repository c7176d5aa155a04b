//! A tiny SSE parser and chunk accumulator (what a runtime does with the stream), and a
//! client that reports each streamed event on a channel, so tests can assert on order.

use std::time::Instant;

use futures::StreamExt;
use serde_json::Value;
use tokio::sync::mpsc;

/// `data:` payloads of a whole SSE body.
pub(super) fn parse_sse(body: &str) -> Vec<String> {
    body.split("\n\n")
        .filter(|event| !event.trim().is_empty())
        .map(|event| {
            event
                .lines()
                .filter_map(|line| line.strip_prefix("data:"))
                .map(|data| data.strip_prefix(' ').unwrap_or(data))
                .collect::<Vec<_>>()
                .join("\n")
        })
        .collect()
}

#[derive(Debug, Default, PartialEq)]
pub(super) struct Call {
    pub id: String,
    pub kind: String,
    pub name: String,
    pub arguments: String,
    /// Argument fragments after the opening delta.
    pub fragments: usize,
    /// The opening delta had id, type, name and `arguments: ""`.
    pub opened_properly: bool,
}

#[derive(Debug, Default)]
pub(super) struct Accumulated {
    pub text: String,
    pub content_deltas: usize,
    pub calls: Vec<Call>,
    pub finish_reason: Option<String>,
    pub usage: Option<Value>,
    pub done: bool,
    pub models: Vec<String>,
}

/// Accumulates chunks like an OpenAI client: text by concatenation, tool calls by index.
pub(super) fn accumulate(payloads: &[String]) -> Accumulated {
    let mut out = Accumulated::default();
    for payload in payloads {
        assert!(!out.done, "data after [DONE]: {payload}");
        if payload == "[DONE]" {
            out.done = true;
            continue;
        }
        let chunk: Value = serde_json::from_str(payload).unwrap();
        assert_eq!(chunk["object"], "chat.completion.chunk");
        out.models
            .push(chunk["model"].as_str().unwrap().to_string());
        if let Some(usage) = chunk.get("usage").filter(|usage| !usage.is_null()) {
            assert_eq!(
                chunk["choices"],
                serde_json::json!([]),
                "usage chunk has no choices"
            );
            out.usage = Some(usage.clone());
        }
        let Some(choice) = chunk["choices"].get(0) else {
            continue;
        };
        if let Some(reason) = choice["finish_reason"].as_str() {
            out.finish_reason = Some(reason.to_string());
        }
        let delta = &choice["delta"];
        if let Some(content) = delta["content"].as_str() {
            out.text.push_str(content);
            out.content_deltas += 1;
        }
        for call in delta["tool_calls"].as_array().into_iter().flatten() {
            let index = call["index"].as_u64().unwrap() as usize;
            if index == out.calls.len() {
                out.calls.push(Call {
                    id: call["id"].as_str().unwrap_or_default().to_string(),
                    kind: call["type"].as_str().unwrap_or_default().to_string(),
                    name: call["function"]["name"]
                        .as_str()
                        .unwrap_or_default()
                        .to_string(),
                    opened_properly: call["id"].is_string()
                        && call["type"] == "function"
                        && call["function"]["name"].is_string()
                        && call["function"]["arguments"] == "",
                    ..Call::default()
                });
                continue;
            }
            let entry = &mut out.calls[index];
            entry
                .arguments
                .push_str(call["function"]["arguments"].as_str().unwrap());
            entry.fragments += 1;
        }
    }
    out
}

#[derive(Debug)]
pub(super) enum Event {
    Payload(String, Instant),
    /// The body failed (connection aborted).
    Error,
    /// The body ended cleanly.
    End,
}

/// Sends a completions request and reports each SSE payload as it arrives.
pub(super) async fn stream_events(url: &str) -> (u16, mpsc::UnboundedReceiver<Event>) {
    let response = reqwest::Client::new()
        .post(format!("{url}/chat/completions"))
        .json(&serde_json::json!({"model": "gpt-test-1", "stream": true, "messages": []}))
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    let (sender, receiver) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        let mut body = response.bytes_stream();
        let mut buffer = String::new();
        loop {
            match body.next().await {
                Some(Ok(bytes)) => {
                    buffer.push_str(std::str::from_utf8(&bytes).unwrap());
                    while let Some(end) = buffer.find("\n\n") {
                        let event: String = buffer.drain(..end + 2).collect();
                        for payload in parse_sse(&event) {
                            let _ = sender.send(Event::Payload(payload, Instant::now()));
                        }
                    }
                }
                Some(Err(_)) => {
                    let _ = sender.send(Event::Error);
                    return;
                }
                None => {
                    let _ = sender.send(Event::End);
                    return;
                }
            }
        }
    });
    (status, receiver)
}

/// The next event, failing the test after 10 s rather than hanging.
pub(super) async fn next_event(receiver: &mut mpsc::UnboundedReceiver<Event>) -> Event {
    tokio::time::timeout(std::time::Duration::from_secs(10), receiver.recv())
        .await
        .expect("no stream event within 10 s")
        .expect("event channel closed")
}

pub(super) fn client() -> reqwest::Client {
    reqwest::Client::new()
}

/// POSTs `body` as JSON to `url` and returns the status.
pub(super) async fn post_status(url: &str, body: &Value) -> u16 {
    client()
        .post(url)
        .json(body)
        .send()
        .await
        .unwrap()
        .status()
        .as_u16()
}
