//! HttpRequest (local-tool-runtime.md §4.5, §7, §8.3): one HTTP(S) request, its response
//! returned as
//!
//! ```text
//! HTTP {statusCode} {statusText}
//! Content-Type: {contentType}
//! Content-Length: {contentLength}
//!
//! {response body}
//! ```
//!
//! - `Content-Type` is the response's header, `(none)` when it sent none; `Content-Length` is
//!   the number of body bytes actually received. Any status — 404 and 500 included — is a
//!   succeeded call: the request ran, and the model reads the outcome from the status line.
//! - The body is cut to `limits.maxOutputBytes` by §7.1 (the three header lines always
//!   remain). A body over 10 KB is also returned whole as a `tool_output` artifact (§7.2):
//!   the full text response (`response.txt`), or the raw bytes of a binary one
//!   (`response.bin`, with the response's content type).
//! - A body that is not UTF-8 text (nor latin-1 text its `charset` announces), or that
//!   contains NUL bytes, is described (`[binary response body, N bytes, not shown]`), never
//!   dumped.
//! - Bodies over 10 MB are aborted — refused on a larger `Content-Length`, otherwise stopped
//!   as soon as the running count passes the cap — with `TOOL_EXECUTION_FAILED` (not
//!   `FILE_TOO_LARGE`, which §7.3 reserves for files over `maxFileSizeBytes`).
//! - The `timeout` argument (default 30 s, 1–600), lowered to `limits.timeoutMs` when that is
//!   shorter, bounds the whole call — every hop and the body — and ends it with
//!   `TOOL_EXECUTION_TIMEOUT`.
//! - URLs other than http/https, and hosts that are or resolve to local or internal addresses
//!   ([`ssrf`], shared with the sandbox's egress proxy), on the first hop or any redirect, are refused with `INVALID_REQUEST`. At most
//!   5 redirects are followed ([`fetch`]); a 6th is `TOOL_EXECUTION_FAILED`.
//!
//! Loopback is refused unless the router was built with
//! `ToolOptions { allow_loopback_http: true }` (tests and the conformance kit, whose fakes
//! listen on `127.0.0.1`).

pub(crate) mod fetch;
pub(crate) mod fetch_url;
pub(crate) mod search;

use std::sync::OnceLock;
use std::time::Duration;

use agent_protocol::{ErrorCode, ToolDefinition, ToolRequest, ToolResult};
use async_trait::async_trait;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use reqwest::{Client, Method};
use serde_json::{Map, Value, json};
use url::Url;

use self::fetch::{FetchError, Incoming, Outgoing};
use crate::args::Args;
use crate::output;
use crate::platform::ssrf::AddressPolicy;
use crate::tool::Tool;

/// §4.5: "Default: 30".
pub(crate) const DEFAULT_TIMEOUT_SECONDS: u64 = 30;
pub(crate) const MIN_TIMEOUT_SECONDS: u64 = 1;
pub(crate) const MAX_TIMEOUT_SECONDS: u64 = 600;

/// §4.5: "Response body size is capped (even before truncation) at 10MB".
pub(crate) const MAX_BODY_BYTES: usize = 10 * 1024 * 1024;

/// The methods a model may use (any case).
pub(crate) const METHODS: &[&str] = &["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"];

/// Headers the client sets itself from the URL and the body; a model's value would only
/// desynchronise the request.
const MANAGED_HEADERS: &[&str] = &[
    "host",
    "content-length",
    "transfer-encoding",
    "connection",
    "upgrade",
    "te",
    "trailer",
    "keep-alive",
    "proxy-connection",
];

/// How much of the start of a body is inspected for NUL bytes to call it binary.
const BINARY_SNIFF_BYTES: usize = 8000;

pub(crate) struct HttpRequest {
    policy: AddressPolicy,
    /// Built on first use: most routers never make a request.
    client: OnceLock<Result<Client, String>>,
}

impl HttpRequest {
    pub(crate) fn new(policy: AddressPolicy) -> Self {
        Self {
            policy,
            client: OnceLock::new(),
        }
    }

    fn client(&self) -> Result<&Client, &str> {
        self.client
            .get_or_init(|| fetch::client(self.policy))
            .as_ref()
            .map_err(String::as_str)
    }
}

impl Default for HttpRequest {
    fn default() -> Self {
        Self::new(AddressPolicy::default())
    }
}

#[async_trait]
impl Tool for HttpRequest {
    fn definition(&self) -> ToolDefinition {
        ToolDefinition {
            tool_name: "HttpRequest".to_owned(),
            description: "Make an HTTP request and return the response".to_owned(),
            input_schema: json!({
                "type": "object",
                "required": ["url"],
                "additionalProperties": false,
                "properties": {
                    "url": { "type": "string", "description": "Request URL (http or https)" },
                    "method": { "type": "string", "enum": METHODS, "default": "GET", "description": "HTTP method. Default: GET" },
                    "headers": {
                        "type": "object",
                        "additionalProperties": { "type": "string" },
                        "description": "Request headers"
                    },
                    "body": { "type": "string", "description": "Request body" },
                    "timeout": {
                        "type": "integer",
                        "minimum": MIN_TIMEOUT_SECONDS,
                        "maximum": MAX_TIMEOUT_SECONDS,
                        "default": DEFAULT_TIMEOUT_SECONDS,
                        "description": "Timeout in seconds (1-600). Default: 30"
                    }
                }
            }).into(),
        }
    }

    async fn run(&self, request: &ToolRequest) -> ToolResult {
        let (outgoing, timeout) = match parse(request) {
            Ok(parsed) => parsed,
            Err(message) => return ToolResult::failed(request, ErrorCode::InvalidRequest, message),
        };
        let client = match self.client() {
            Ok(client) => client,
            Err(message) => {
                return ToolResult::failed(request, ErrorCode::ToolExecutionFailed, message);
            }
        };
        let call = fetch::fetch(
            client,
            self.policy,
            outgoing,
            MAX_BODY_BYTES,
            request.limits.url_check.as_ref(),
        );
        match tokio::time::timeout(timeout, call).await {
            Err(_) => ToolResult::failed(
                request,
                ErrorCode::ToolExecutionTimeout,
                format!("HTTP request timed out after {} seconds", seconds(timeout)),
            ),
            Ok(Err(error)) => {
                let code = match error {
                    FetchError::Refused { .. } => ErrorCode::InvalidRequest,
                    FetchError::Denied { .. } => ErrorCode::CapabilityDenied,
                    _ => ErrorCode::ToolExecutionFailed,
                };
                ToolResult::failed(request, code, format!("HttpRequest: {error}"))
            }
            Ok(Ok(incoming)) => result(request, &incoming),
        }
    }
}

/// The arguments as a request to send, and the call's timeout; `Err` names what is wrong.
fn parse(request: &ToolRequest) -> Result<(Outgoing, Duration), String> {
    let args = Args::new("HttpRequest", &request.arguments);
    let parsed = args
        .only(&["url", "method", "headers", "body", "timeout"])
        .and_then(|()| {
            Ok((
                args.required_str("url")?,
                args.optional_str("method")?,
                args.optional_object("headers")?,
                args.optional_str("body")?,
                args.optional_u64_between("timeout", MIN_TIMEOUT_SECONDS, MAX_TIMEOUT_SECONDS)?,
            ))
        });
    let (raw_url, method, headers, body, timeout) = parsed.map_err(|error| error.0)?;
    let url = Url::parse(raw_url.trim())
        .map_err(|error| format!("HttpRequest: \"{raw_url}\" is not a valid URL: {error}"))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(format!(
            "HttpRequest: only http and https URLs are allowed, not {}:",
            url.scheme()
        ));
    }
    let outgoing = Outgoing {
        method: method_of(method)?,
        url,
        headers: headers_of(headers)?,
        body: body.map(str::to_owned),
    };
    Ok((
        outgoing,
        effective_timeout(timeout, request.limits.timeout_ms),
    ))
}

fn method_of(method: Option<&str>) -> Result<Method, String> {
    let name = method.unwrap_or("GET").trim().to_ascii_uppercase();
    if !METHODS.contains(&name.as_str()) {
        return Err(format!(
            "HttpRequest: unsupported method \"{}\" (supported: {})",
            method.unwrap_or_default(),
            METHODS.join(", ")
        ));
    }
    Method::from_bytes(name.as_bytes()).map_err(|error| format!("HttpRequest: method: {error}"))
}

fn headers_of(headers: Option<&Map<String, Value>>) -> Result<HeaderMap, String> {
    let mut map = HeaderMap::new();
    for (name, value) in headers.into_iter().flatten() {
        let Value::String(value) = value else {
            return Err(format!(
                "HttpRequest: header \"{name}\" must have a string value, got {value}"
            ));
        };
        let header = HeaderName::from_bytes(name.trim().as_bytes())
            .map_err(|_| format!("HttpRequest: \"{name}\" is not a valid header name"))?;
        if MANAGED_HEADERS.contains(&header.as_str()) {
            return Err(format!(
                "HttpRequest: header \"{name}\" is set by the client and cannot be given"
            ));
        }
        let value = HeaderValue::from_str(value)
            .map_err(|_| format!("HttpRequest: header \"{name}\" has an invalid value"))?;
        map.append(header, value);
    }
    Ok(map)
}

/// The argument's timeout (default 30 s), capped by the host's `limits.timeoutMs`.
fn effective_timeout(seconds: Option<u64>, limit_ms: Option<u64>) -> Duration {
    crate::output::effective_timeout(seconds, DEFAULT_TIMEOUT_SECONDS, limit_ms)
}

use crate::output::format_seconds as seconds;

/// The body as text, or `None` when it is binary: UTF-8 (BOM stripped), or latin-1 when the
/// content type says so; any NUL byte near the start makes it binary.
fn body_text(body: &[u8], content_type: Option<&str>) -> Option<String> {
    if body[..body.len().min(BINARY_SNIFF_BYTES)].contains(&0) {
        return None;
    }
    let bytes = body.strip_prefix(&[0xEF, 0xBB, 0xBF]).unwrap_or(body);
    if let Ok(text) = std::str::from_utf8(bytes) {
        return Some(text.to_owned());
    }
    let charset = content_type.map(str::to_ascii_lowercase).and_then(|ct| {
        Some(
            ct.split("charset=")
                .nth(1)?
                .trim_matches(['"', ' '])
                .to_owned(),
        )
    })?;
    matches!(
        charset.split(';').next().unwrap_or_default(),
        "iso-8859-1" | "latin1" | "latin-1" | "windows-1252" | "us-ascii"
    )
    .then(|| body.iter().map(|&byte| char::from(byte)).collect())
}

/// The §4.5 layout with `body` below the header lines.
fn layout(incoming: &Incoming, body: &str) -> String {
    let status = incoming.status;
    let reason = status
        .canonical_reason()
        .map(|reason| format!(" {reason}"))
        .unwrap_or_default();
    format!(
        "HTTP {}{reason}\nContent-Type: {}\nContent-Length: {}\n\n{body}",
        status.as_u16(),
        incoming.content_type.as_deref().unwrap_or("(none)"),
        incoming.body.len(),
    )
}

fn result(request: &ToolRequest, incoming: &Incoming) -> ToolResult {
    let max_output = output::max_output_bytes(request.limits.max_output_bytes);
    let large = incoming.body.len() > output::ARTIFACT_THRESHOLD_BYTES;
    match body_text(&incoming.body, incoming.content_type.as_deref()) {
        Some(text) => {
            let shown = output::truncate(&text, max_output);
            let mut result = ToolResult::succeeded(request, layout(incoming, &shown));
            if large {
                let full = layout(incoming, &text);
                result.artifacts.push(output::tool_output_artifact(
                    "response.txt",
                    full.as_bytes(),
                ));
            }
            result
        }
        None => {
            let mut description = format!(
                "[binary response body, {} bytes, not shown",
                incoming.body.len()
            );
            description.push_str(if large {
                "; the full body is attached as an artifact]"
            } else {
                "]"
            });
            let mut result = ToolResult::succeeded(request, layout(incoming, &description));
            if large {
                let content_type = incoming
                    .content_type
                    .as_deref()
                    .filter(|ct| !ct.is_empty())
                    .unwrap_or("application/octet-stream");
                result.artifacts.push(output::artifact(
                    "tool_output",
                    "response.bin",
                    content_type,
                    &incoming.body,
                ));
            }
            result
        }
    }
}

#[cfg(test)]
mod tests;
