//! JSON-RPC 2.0 envelopes as the desktop app speaks them: one compact object per line.

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

use crate::error::ErrorShape;

pub const VERSION: &str = "2.0";

/// Standard JSON-RPC error codes.
pub mod codes {
    pub const PARSE_ERROR: i64 = -32700;
    pub const INVALID_REQUEST: i64 = -32600;
    pub const METHOD_NOT_FOUND: i64 = -32601;
    pub const INVALID_PARAMS: i64 = -32602;
    pub const INTERNAL_ERROR: i64 = -32603;
    /// Implementation-defined server error: the request was well formed but the runtime
    /// refused or failed it. The spec's string code is in `error.data.code`.
    pub const SERVER_ERROR: i64 = -32000;
}

/// A request id, echoed with its JSON type (INTEROP.md §1).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Id {
    Number(serde_json::Number),
    String(String),
}

impl From<i64> for Id {
    fn from(value: i64) -> Self {
        Id::Number(value.into())
    }
}

impl From<&str> for Id {
    fn from(value: &str) -> Self {
        Id::String(value.to_owned())
    }
}

/// A request or notification (no `id`) from client to runtime.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Request {
    pub jsonrpc: String,
    /// Absent for a notification; `Some(None)` would be an explicit `null` id, which the
    /// server answers with `id: null`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<Id>,
    pub method: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<Value>,
}

impl Request {
    pub fn new(id: impl Into<Id>, method: impl Into<String>, params: Value) -> Self {
        Self {
            jsonrpc: VERSION.to_owned(),
            id: Some(id.into()),
            method: method.into(),
            params: Some(params),
        }
    }
}

/// A notification from runtime to client (`SessionEvent`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Notification<P> {
    pub jsonrpc: String,
    pub method: String,
    pub params: P,
}

impl<P> Notification<P> {
    pub fn new(method: impl Into<String>, params: P) -> Self {
        Self {
            jsonrpc: VERSION.to_owned(),
            method: method.into(),
            params,
        }
    }
}

/// `error` member of a response. `data` carries the spec's error shape.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ErrorObject {
    pub code: i64,
    pub message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<ErrorShape>,
}

/// A response. Exactly one of `result` and `error` is present; `id` is `null` only when
/// the request's id could not be read.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Response {
    pub jsonrpc: String,
    pub id: Option<Id>,
    /// `"result": null` is a success whose result is null, so it reads as `Some(Null)`.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "present"
    )]
    pub result: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ErrorObject>,
}

/// A member that is present is `Some`, even when it is `null`.
fn present<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(deserializer).map(Some)
}

impl Response {
    pub fn success(id: Option<Id>, result: Value) -> Self {
        Self {
            jsonrpc: VERSION.to_owned(),
            id,
            result: Some(result),
            error: None,
        }
    }

    pub fn failure(id: Option<Id>, error: ErrorObject) -> Self {
        Self {
            jsonrpc: VERSION.to_owned(),
            id,
            result: None,
            error: Some(error),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn ids_keep_their_json_type() {
        let request: Request =
            serde_json::from_value(json!({"jsonrpc":"2.0","id":7,"method":"Shutdown"})).unwrap();
        let response = Response::success(request.id, json!({}));
        assert_eq!(serde_json::to_value(&response).unwrap()["id"], json!(7));
        let response = Response::success(Some(Id::from("7")), json!({}));
        assert_eq!(serde_json::to_value(&response).unwrap()["id"], json!("7"));
        let response = Response::success(None, json!({}));
        assert_eq!(serde_json::to_value(&response).unwrap()["id"], json!(null));
    }
}
