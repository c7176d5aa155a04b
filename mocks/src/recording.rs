//! What a fake saw: every request, kept in arrival order so tests can assert on exactly
//! what the runtime sent (headers, ID chain, bodies) rather than on what the fake answered.

use axum::http::{HeaderMap, Method, Uri};
use serde_json::Value;

/// One request as a fake received it.
#[derive(Clone, Debug)]
pub struct RecordedRequest {
    /// Upper-case method, e.g. `POST`.
    pub method: String,
    /// The path without the query string, e.g. `/v1/chat/completions`.
    pub path: String,
    /// The raw query string, if any.
    pub query: Option<String>,
    /// Header names in lower case, values as received (lossy UTF-8), in arrival order.
    pub headers: Vec<(String, String)>,
    /// The body parsed as JSON, or `Null` when it is empty or not JSON.
    pub body: Value,
    /// The body exactly as received.
    pub raw_body: Vec<u8>,
}

impl RecordedRequest {
    /// The first value of a header, looked up case-insensitively.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(key, _)| key.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.as_str())
    }

    /// Every value of a header (a header may be repeated).
    pub fn header_values(&self, name: &str) -> Vec<&str> {
        self.headers
            .iter()
            .filter(|(key, _)| key.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.as_str())
            .collect()
    }

    /// The body as text (lossy), for messages and non-JSON assertions.
    pub fn body_text(&self) -> String {
        String::from_utf8_lossy(&self.raw_body).into_owned()
    }

    pub(crate) fn from_parts(method: &Method, uri: &Uri, headers: &HeaderMap, body: &[u8]) -> Self {
        Self {
            method: method.as_str().to_ascii_uppercase(),
            path: uri.path().to_string(),
            query: uri.query().map(str::to_string),
            headers: header_pairs(headers),
            body: serde_json::from_slice(body).unwrap_or(Value::Null),
            raw_body: body.to_vec(),
        }
    }

    pub(crate) fn from_wiremock(request: &wiremock::Request) -> Self {
        Self {
            method: request.method.as_str().to_ascii_uppercase(),
            path: request.url.path().to_string(),
            query: request.url.query().map(str::to_string),
            headers: header_pairs(&request.headers),
            body: serde_json::from_slice(&request.body).unwrap_or(Value::Null),
            raw_body: request.body.clone(),
        }
    }

    /// The path's segments, without the empty leading one.
    pub(crate) fn segments(path: &str) -> Vec<&str> {
        path.split('/')
            .filter(|segment| !segment.is_empty())
            .collect()
    }
}

fn header_pairs(headers: &HeaderMap) -> Vec<(String, String)> {
    headers
        .iter()
        .map(|(name, value)| {
            (
                name.as_str().to_ascii_lowercase(),
                String::from_utf8_lossy(value.as_bytes()).into_owned(),
            )
        })
        .collect()
}
