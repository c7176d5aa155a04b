//! Turns one input line into at most one output line, per JSON-RPC 2.0: single requests,
//! notifications (never answered), batches, and every malformed case answered with the
//! right standard code.

use std::sync::Arc;

use agent_protocol::jsonrpc::{Id, Response, VERSION};
use agent_protocol::methods;
use serde_json::{Map, Value};

use crate::error::RpcError;
use crate::host::Host;

/// What handling a line produced: the reply to write (if any) and whether a Shutdown
/// request was accepted, so teardown starts only after the reply is queued.
#[derive(Debug, Default)]
pub(crate) struct Outcome {
    pub reply: Option<Reply>,
    pub shutdown_requested: bool,
}

/// One response, or the array answering a batch.
#[derive(Debug, serde::Serialize)]
#[serde(untagged)]
pub(crate) enum Reply {
    Single(Response),
    Batch(Vec<Response>),
}

pub(crate) async fn handle_line(host: &Arc<Host>, line: &[u8]) -> Outcome {
    let text = match std::str::from_utf8(line) {
        Ok(text) => text,
        Err(error) => {
            return reply_error(
                None,
                RpcError::parse_error(format!(
                    "Parse error: the request is not valid UTF-8 (invalid byte at offset {}).",
                    error.valid_up_to()
                )),
            );
        }
    };
    let value: Value = match serde_json::from_str(text) {
        Ok(value) => value,
        Err(error) => {
            return reply_error(
                None,
                RpcError::parse_error(format!(
                    "Parse error: the request is not valid JSON ({error})."
                )),
            );
        }
    };
    match value {
        Value::Array(items) if items.is_empty() => reply_error(
            None,
            RpcError::invalid_request(
                "Invalid request: a batch must contain at least one request.",
            ),
        ),
        Value::Array(items) => {
            let outcomes =
                futures::future::join_all(items.into_iter().map(|item| handle_single(host, item)))
                    .await;
            let shutdown_requested = outcomes.iter().any(|(_, shutdown)| *shutdown);
            let replies: Vec<Response> = outcomes
                .into_iter()
                .filter_map(|(reply, _)| reply)
                .collect();
            Outcome {
                reply: (!replies.is_empty()).then_some(Reply::Batch(replies)),
                shutdown_requested,
            }
        }
        single => {
            let (reply, shutdown_requested) = handle_single(host, single).await;
            Outcome {
                reply: reply.map(Reply::Single),
                shutdown_requested,
            }
        }
    }
}

fn reply_error(id: Option<Id>, error: RpcError) -> Outcome {
    Outcome {
        reply: Some(Reply::Single(Response::failure(id, error.into_object()))),
        shutdown_requested: false,
    }
}

/// A request's id as far as it can be read: `None` for `null` or an unreadable id.
enum IdField {
    Absent,
    Present(Option<Id>),
    Invalid,
}

fn read_id(object: &Map<String, Value>) -> IdField {
    match object.get("id") {
        None => IdField::Absent,
        Some(Value::Null) => IdField::Present(None),
        Some(Value::String(text)) => IdField::Present(Some(Id::String(text.clone()))),
        Some(Value::Number(number)) => IdField::Present(Some(Id::Number(number.clone()))),
        Some(_) => IdField::Invalid,
    }
}

async fn handle_single(host: &Arc<Host>, value: Value) -> (Option<Response>, bool) {
    let Value::Object(object) = value else {
        let error = RpcError::invalid_request(
            "Invalid request: expected a JSON object with \"jsonrpc\", \"method\" and optional \"id\" and \"params\".",
        );
        return (Some(Response::failure(None, error.into_object())), false);
    };
    let id = match read_id(&object) {
        IdField::Invalid => {
            let error = RpcError::invalid_request(
                "Invalid request: \"id\" must be a string, a number or null.",
            );
            return (Some(Response::failure(None, error.into_object())), false);
        }
        IdField::Absent => None,
        IdField::Present(id) => Some(id),
    };
    // An invalid request is answered even without an id (JSON-RPC 2.0 §5: id null);
    // only a well-formed notification is never answered.
    let invalid = |message: &str| {
        let error = RpcError::invalid_request(message.to_owned());
        (
            Some(Response::failure(id.clone().flatten(), error.into_object())),
            false,
        )
    };
    if object.get("jsonrpc").and_then(Value::as_str) != Some(VERSION) {
        return invalid("Invalid request: \"jsonrpc\" must be exactly \"2.0\".");
    }
    let Some(method) = object.get("method").and_then(Value::as_str) else {
        return invalid("Invalid request: \"method\" must be a string naming the method to call.");
    };
    // `None`: a notification, answered never, not even with an error.
    let reply = |result: Result<Value, RpcError>| {
        id.clone().map(|id| match result {
            Ok(value) => Response::success(id, value),
            Err(error) => Response::failure(id, error.into_object()),
        })
    };
    let params = match object.get("params") {
        None | Some(Value::Null) => Value::Object(Map::new()),
        Some(Value::Object(params)) => Value::Object(params.clone()),
        Some(Value::Array(_)) => {
            return (
                reply(Err(RpcError::invalid_params(
                    Some("params"),
                    format!(
                        "Invalid params for {method}: params must be an object with named fields, not an array."
                    ),
                ))),
                false,
            );
        }
        Some(_) => return invalid("Invalid request: \"params\" must be an object."),
    };
    let result = host.handle(method, params).await;
    let shutdown_requested = method == methods::SHUTDOWN && result.is_ok();
    (reply(result), shutdown_requested)
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_protocol::{ToolDefinition, ToolRequest, ToolResult, ToolRouter};
    use serde_json::json;

    struct NoTools;

    #[async_trait::async_trait]
    impl ToolRouter for NoTools {
        async fn execute(&self, request: ToolRequest) -> ToolResult {
            ToolResult::succeeded(&request, "")
        }
        fn available_tools(&self) -> Vec<ToolDefinition> {
            Vec::new()
        }
    }

    fn host() -> Arc<Host> {
        let outbound = crate::testing::discarding_outbound();
        let config = crate::HostConfig::with_endpoints(
            "http://127.0.0.1:9/v1",
            "t",
            "http://127.0.0.1:9",
            "http://127.0.0.1:9",
        );
        Host::new(config, Arc::new(NoTools), outbound)
    }

    async fn answer(line: &[u8]) -> Value {
        let outcome = handle_line(&host(), line).await;
        outcome
            .reply
            .map(|reply| serde_json::to_value(reply).unwrap())
            .unwrap_or(Value::Null)
    }

    #[tokio::test]
    async fn malformed_input_gets_the_standard_codes() {
        assert_eq!(answer(b"{oops").await["error"]["code"], json!(-32700));
        assert_eq!(answer(b"{oops").await["id"], json!(null));
        assert_eq!(answer(b"\xff\xfe").await["error"]["code"], json!(-32700));
        assert_eq!(answer(b"[]").await["error"]["code"], json!(-32600));
        assert_eq!(answer(b"42").await["error"]["code"], json!(-32600));
        assert_eq!(
            answer(br#"{"jsonrpc":"1.0","id":1,"method":"Shutdown"}"#).await["id"],
            json!(1)
        );
        assert_eq!(
            answer(br#"{"jsonrpc":"2.0","id":{},"method":"Shutdown"}"#).await["error"]["code"],
            json!(-32600)
        );
        let unknown = answer(br#"{"jsonrpc":"2.0","id":"x","method":"Nope"}"#).await;
        assert_eq!(unknown["error"]["code"], json!(-32601));
        assert_eq!(unknown["id"], json!("x"));
        assert_eq!(unknown["error"]["data"]["code"], json!("INVALID_REQUEST"));
    }

    #[tokio::test]
    async fn notifications_are_never_answered_and_batches_answer_the_rest() {
        assert_eq!(
            answer(br#"{"jsonrpc":"2.0","method":"Nope"}"#).await,
            Value::Null
        );
        let batch = answer(br#"[{"jsonrpc":"2.0","method":"GetEvents"},{"jsonrpc":"2.0","id":7,"method":"GetEvents"},1]"#).await;
        let replies = batch.as_array().unwrap();
        assert_eq!(replies.len(), 2);
        assert_eq!(replies[0]["id"], json!(7));
        assert_eq!(replies[0]["result"]["latestId"], json!(0));
        assert_eq!(replies[1]["error"]["code"], json!(-32600));
        assert_eq!(
            answer(br#"[{"jsonrpc":"2.0","method":"GetEvents"}]"#).await,
            Value::Null
        );
    }

    #[tokio::test]
    async fn invalid_params_name_the_field_and_missing_params_mean_empty() {
        let reply = answer(br#"{"jsonrpc":"2.0","id":1,"method":"StartTask","params":{"sessionId":"s","prompt":"p","taskOptions":{"maxSteps":"many"}}}"#).await;
        assert_eq!(reply["error"]["code"], json!(-32602));
        assert_eq!(
            reply["error"]["data"]["details"]["field"],
            json!("taskOptions.maxSteps")
        );
        assert!(
            reply["error"]["message"]
                .as_str()
                .unwrap()
                .contains("taskOptions.maxSteps")
        );
        let shutdown = answer(br#"{"jsonrpc":"2.0","id":2,"method":"Shutdown"}"#).await;
        assert_eq!(shutdown["result"]["status"], json!("shutting_down"));
    }
}
