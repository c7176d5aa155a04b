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
pub struct Outcome {
    pub reply: Option<Reply>,
    pub shutdown_requested: bool,
}

/// One response, or the array answering a batch.
#[derive(Debug, serde::Serialize)]
#[serde(untagged)]
pub enum Reply {
    Single(Response),
    Batch(Vec<Response>),
}

pub async fn handle_line(host: &Arc<Host>, line: &[u8]) -> Outcome {
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
    // `None`: a notification, answered never, not even with an error.
    let reply = |result: Result<Value, RpcError>| {
        id.clone().map(|id| match result {
            Ok(value) => Response::success(id, value),
            Err(error) => Response::failure(id, error.into_object()),
        })
    };
    if object.get("jsonrpc").and_then(Value::as_str) != Some(VERSION) {
        return (
            reply(Err(RpcError::invalid_request(
                "Invalid request: \"jsonrpc\" must be exactly \"2.0\".",
            ))),
            false,
        );
    }
    let Some(method) = object.get("method").and_then(Value::as_str) else {
        return (
            reply(Err(RpcError::invalid_request(
                "Invalid request: \"method\" must be a string naming the method to call.",
            ))),
            false,
        );
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
        Some(_) => {
            return (
                reply(Err(RpcError::invalid_request(
                    "Invalid request: \"params\" must be an object.",
                ))),
                false,
            );
        }
    };
    let result = host.handle(method, params).await;
    let shutdown_requested = method == methods::SHUTDOWN && result.is_ok();
    (reply(result), shutdown_requested)
}
