//! The permissible-variance runtime: a wrapper around another runtime (the reference one in
//! CI) that changes everything the documents leave open, so the kit proves it judges the
//! spec and not the runtime it grew up with. It must certify `core+interop` with the
//! manifest `conformance/manifests/variance.toml`, which declares none of the reference
//! runtime's `AGENT_RUNTIME_*` knobs.
//!
//! What it changes, line by line, between the kit and the wrapped runtime:
//! - **task ids**: a StartTask naming a task the wrapper has never answered gets a UUID the
//!   wrapper makes itself (the app's `task-<ms>` is a suggestion);
//! - **events**: extra envelope members (`tenantId`, `userId`, `component`, `severity`, as
//!   architecture.md §6.3 lists them), an extra event type (`runtime_note`) before every
//!   `task_started`, event ids renumbered to make room for it (`GetEvents.sinceId` mapped
//!   back), optional payload members dropped (`task_completed.result` and `stepCount`,
//!   `tool_completed.errorCode`);
//! - **errors**: other wording around the same facts (JSON-RPC errors and tool errors);
//! - **key order**: every object it writes has its keys sorted (serde_json's map order).
//!
//! Knobs arrive under the manifest's own names (`VARIANCE_*`) and are passed on under the
//! wrapped runtime's; a knob declared as whole seconds proves the kit's "not applicable".

use std::collections::HashSet;

use serde_json::{Map, Value, json};

/// `VARIANCE_*` variable (the manifest's name) → the wrapped reference runtime's variable.
pub const RENAMED_KNOBS: &[(&str, &str)] = &[
    ("VARIANCE_RETRY_BASE_DELAY", "LLM_RETRY_BASE_DELAY"),
    ("VARIANCE_RETRY_MAX_DELAY", "LLM_RETRY_MAX_DELAY"),
    ("VARIANCE_MAX_RETRIES", "LLM_MAX_RETRIES"),
    ("VARIANCE_APPROVAL_TIMEOUT", "APPROVAL_TIMEOUT_SECONDS"),
    ("VARIANCE_MAX_STEPS", "DEFAULT_MAX_STEPS"),
    ("VARIANCE_GATEWAY_HEADERS", "LLM_GATEWAY_HEADERS"),
    (
        "VARIANCE_SERVICE_TIMEOUT",
        "AGENT_RUNTIME_SERVICE_TIMEOUT_SECONDS",
    ),
    ("VARIANCE_SERVICE_RETRIES", "AGENT_RUNTIME_SERVICE_RETRIES"),
    (
        "VARIANCE_SERVICE_RETRY_DELAY",
        "AGENT_RUNTIME_SERVICE_RETRY_DELAY_SECONDS",
    ),
    (
        "VARIANCE_LLM_CONNECT_TIMEOUT",
        "AGENT_RUNTIME_LLM_CONNECT_TIMEOUT_SECONDS",
    ),
    (
        "VARIANCE_LLM_IDLE_TIMEOUT",
        "AGENT_RUNTIME_LLM_IDLE_TIMEOUT_SECONDS",
    ),
    (
        "VARIANCE_AUDIT_FLUSH_INTERVAL",
        "AGENT_RUNTIME_AUDIT_FLUSH_INTERVAL_SECONDS",
    ),
    (
        "VARIANCE_AUDIT_RETRY_DELAY",
        "AGENT_RUNTIME_AUDIT_RETRY_DELAY_SECONDS",
    ),
    (
        "VARIANCE_AUDIT_SHUTDOWN_FLUSH",
        "AGENT_RUNTIME_AUDIT_SHUTDOWN_FLUSH_SECONDS",
    ),
];

/// The extra event type the wrapper adds; no document defines it.
const EXTRA_EVENT: &str = "runtime_note";

/// Event ids: the wrapped runtime's `n` becomes `n * STRIDE`, the extra event before it
/// `n * STRIDE - 1`, so ids still increase by session.
const STRIDE: u64 = 2;

/// Runs the wrapper: `program args…` is the wrapped runtime. Returns its exit code.
pub async fn run(program: &str, args: &[String]) -> anyhow::Result<i32> {
    let mut env = Vec::new();
    for (ours, theirs) in RENAMED_KNOBS {
        env.push(((*theirs).to_owned(), None));
        if let Ok(value) = std::env::var(ours) {
            env.push(((*theirs).to_owned(), Some(value)));
        }
    }
    crate::proxy::run(program, args, &env, Rewriter::default()).await
}

impl crate::proxy::LineRewriter for Rewriter {
    fn request(&mut self, line: Vec<u8>) -> Vec<Vec<u8>> {
        vec![Rewriter::request(self, line)]
    }

    fn response(&mut self, line: Vec<u8>) -> Vec<Vec<u8>> {
        Rewriter::response(self, line)
    }
}

/// The line rewriting, kept apart from the pipes so it can be tested.
#[derive(Debug, Default)]
pub struct Rewriter {
    /// Task ids the wrapped runtime answered with: a StartTask naming one continues it.
    known_tasks: HashSet<String>,
}

impl Rewriter {
    /// A line from the kit on its way to the wrapped runtime.
    pub fn request(&mut self, line: Vec<u8>) -> Vec<u8> {
        let Ok(mut value) = serde_json::from_slice::<Value>(&line) else {
            return line; // Not JSON: the wrapped runtime answers it as it would.
        };
        match &mut value {
            Value::Array(items) => items.iter_mut().for_each(|item| self.one_request(item)),
            item => self.one_request(item),
        }
        serde_json::to_vec(&value).unwrap_or(line)
    }

    fn one_request(&mut self, request: &mut Value) {
        let method = request
            .get("method")
            .and_then(Value::as_str)
            .map(str::to_owned);
        let Some(params) = request.get_mut("params").and_then(Value::as_object_mut) else {
            return;
        };
        match method.as_deref() {
            Some("StartTask") => {
                // Its own ids are UUIDs: one it made before a restart still continues.
                let named = params.get("taskId").and_then(Value::as_str);
                let own =
                    |id: &str| self.known_tasks.contains(id) || uuid::Uuid::parse_str(id).is_ok();
                if !named.is_some_and(own) {
                    params.insert("taskId".to_owned(), json!(uuid::Uuid::new_v4().to_string()));
                }
            }
            Some("GetEvents") => {
                if let Some(since) = params.get("sinceId").and_then(Value::as_u64) {
                    params.insert("sinceId".to_owned(), json!(since / STRIDE));
                }
            }
            _ => {}
        }
    }

    /// A line from the wrapped runtime on its way to the kit: one or two lines out.
    pub fn response(&mut self, line: Vec<u8>) -> Vec<Vec<u8>> {
        let Ok(mut value) = serde_json::from_slice::<Value>(&line) else {
            return vec![line];
        };
        let mut extra = None;
        match &mut value {
            Value::Array(items) => items.iter_mut().for_each(|item| self.one_response(item)),
            Value::Object(map)
                if map.get("method").and_then(Value::as_str) == Some("SessionEvent") =>
            {
                if let Some(params) = map.get_mut("params") {
                    extra = vary_event(params);
                }
            }
            item => self.one_response(item),
        }
        let mut out = Vec::new();
        if let Some(extra) = extra {
            out.push(serde_json::to_vec(&extra).unwrap_or_default());
        }
        out.push(serde_json::to_vec(&value).unwrap_or(line));
        out
    }

    fn one_response(&mut self, response: &mut Value) {
        if let Some(result) = response.get_mut("result") {
            if let Some(task_id) = result.get("taskId").and_then(Value::as_str) {
                self.known_tasks.insert(task_id.to_owned());
            }
            if let Some(Value::Array(events)) = result.get_mut("events") {
                for event in events.iter_mut() {
                    let _ = vary_event(event);
                }
            }
            if let Some(latest) = result.get("latestId").and_then(Value::as_u64) {
                result["latestId"] = json!(latest * STRIDE);
            }
            if let Some(Value::Object(incomplete)) = result.get("incompleteTask")
                && let Some(task_id) = incomplete.get("taskId").and_then(Value::as_str)
            {
                self.known_tasks.insert(task_id.to_owned());
            }
        }
        if let Some(Value::Object(error)) = response.get_mut("error")
            && let Some(Value::String(message)) = error.get_mut("message")
        {
            *message = reword(message);
        }
    }
}

/// Other wording around the same facts.
fn reword(message: &str) -> String {
    format!("Request not completed. Details: {message}")
}

/// Varies one event's params in place; returns the extra notification to send before it.
fn vary_event(params: &mut Value) -> Option<Value> {
    let Value::Object(event) = params else {
        return None;
    };
    let id = event.get("eventId").and_then(Value::as_u64)?;
    event.insert("eventId".to_owned(), json!(id * STRIDE));
    for (key, value) in [
        ("tenantId", json!("tenant-variance")),
        ("userId", json!("user-variance")),
        ("component", json!("local_agent_host")),
        ("severity", json!("info")),
    ] {
        event.entry(key).or_insert(value);
    }
    let event_type = event
        .get("eventType")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned();
    if let Some(Value::Object(payload)) = event.get_mut("payload") {
        let dropped: &[&str] = match event_type.as_str() {
            "task_completed" => &["result", "stepCount"],
            "tool_completed" => &["errorCode"],
            _ => &[],
        };
        for key in dropped {
            payload.remove(*key);
        }
        if event_type == "tool_completed"
            && let Some(Value::String(error)) = payload.get_mut("error")
        {
            *error = reword(error);
        }
    }
    if event_type != "task_started" {
        return None;
    }
    let mut extra: Map<String, Value> = event.clone();
    extra.insert("eventId".to_owned(), json!(id * STRIDE - 1));
    extra.insert("eventType".to_owned(), json!(EXTRA_EVENT));
    extra.insert("payload".to_owned(), json!({"note": "a task is starting"}));
    Some(json!({"jsonrpc": "2.0", "method": "SessionEvent", "params": extra}))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(out: Vec<Vec<u8>>) -> Vec<Value> {
        out.iter()
            .map(|l| serde_json::from_slice(l).unwrap())
            .collect()
    }

    #[test]
    fn task_ids_are_the_wrappers_own_unless_a_known_task_continues() {
        let mut rewriter = Rewriter::default();
        let sent = rewriter.request(
            br#"{"jsonrpc":"2.0","id":1,"method":"StartTask","params":{"taskId":"task-1","prompt":"p"}}"#.to_vec(),
        );
        let sent: Value = serde_json::from_slice(&sent).unwrap();
        let made = sent["params"]["taskId"].as_str().unwrap().to_owned();
        assert_ne!(made, "task-1");
        rewriter.response(
            format!(
                r#"{{"jsonrpc":"2.0","id":1,"result":{{"taskId":"{made}","status":"running"}}}}"#
            )
            .into_bytes(),
        );
        let again = rewriter.request(
            format!(r#"{{"jsonrpc":"2.0","id":2,"method":"StartTask","params":{{"taskId":"{made}","prompt":"p"}}}}"#)
                .into_bytes(),
        );
        let again: Value = serde_json::from_slice(&again).unwrap();
        assert_eq!(again["params"]["taskId"], json!(made));
    }

    #[test]
    fn events_gain_members_and_a_foreign_event_and_lose_optional_fields() {
        let mut rewriter = Rewriter::default();
        let out = lines(rewriter.response(
            br#"{"jsonrpc":"2.0","method":"SessionEvent","params":{"eventId":3,"eventType":"task_started","sessionId":"s","taskId":"t","timestamp":"2026-01-01T00:00:00Z","payload":{"prompt":"p"}}}"#.to_vec(),
        ));
        assert_eq!(out.len(), 2);
        assert_eq!(out[0]["params"]["eventType"], json!(EXTRA_EVENT));
        assert_eq!(out[0]["params"]["eventId"], json!(5));
        assert_eq!(out[1]["params"]["eventId"], json!(6));
        assert_eq!(out[1]["params"]["severity"], json!("info"));
        let done = lines(rewriter.response(
            br#"{"jsonrpc":"2.0","method":"SessionEvent","params":{"eventId":4,"eventType":"task_completed","sessionId":"s","taskId":"t","timestamp":"2026-01-01T00:00:00Z","payload":{"result":"r","stepCount":1}}}"#.to_vec(),
        ));
        assert_eq!(done.len(), 1);
        assert_eq!(done[0]["params"]["payload"], json!({}));
    }

    #[test]
    fn errors_are_reworded_and_get_events_is_mapped_back() {
        let mut rewriter = Rewriter::default();
        let out = lines(rewriter.response(
            br#"{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found: Foo"}}"#.to_vec(),
        ));
        assert_eq!(
            out[0]["error"]["message"],
            json!("Request not completed. Details: Method not found: Foo")
        );
        let sent = rewriter.request(
            br#"{"jsonrpc":"2.0","id":2,"method":"GetEvents","params":{"sinceId":10}}"#.to_vec(),
        );
        let sent: Value = serde_json::from_slice(&sent).unwrap();
        assert_eq!(sent["params"]["sinceId"], json!(5));
    }
}
