//! FetchUrl (INTEROP.md §11): a web page for the model to read. The URL is fetched like
//! HttpRequest's GET — the same address rules ([`crate::platform::ssrf`]) and the host's
//! domain rules (`limits.urlCheck`) on every redirect hop, at most five redirects, the body
//! capped at 10 MB — and an HTML page comes back as Markdown (`htmd`), other text as it is:
//!
//! ```text
//! URL: {the last hop's URL}
//! Content-Type: {contentType}
//!
//! {Markdown or text}
//! ```
//!
//! - An error status (4xx, 5xx) is a failed call (`TOOL_EXECUTION_FAILED`) naming the status:
//!   there is no page to read. So is a binary body (an image, an archive), described, never
//!   dumped.
//! - The text is cut to `limits.maxOutputBytes` by §7.1; over 10 KB it is also returned
//!   whole as a `tool_output` artifact (`page.txt`).
//! - `timeout_seconds` (1–120, default 30), lowered to `limits.timeoutMs`, bounds the whole
//!   call, the conversion included: `TOOL_EXECUTION_TIMEOUT`.
//! - A refused address on any hop is `INVALID_REQUEST`, a hop the policy refuses
//!   `CAPABILITY_DENIED`, as for HttpRequest.
//!
//! A hostile page of elements nested without end would make the HTML parser quadratic and
//! the conversion's recursion deep: a page nesting deeper than [`MAX_NESTING`] elements is
//! shown as its text without markup instead, and the conversion runs on a thread of its own
//! with a generous stack.

use std::time::Duration;

use agent_protocol::{ErrorCode, ToolDefinition, ToolRequest, ToolResult};
use async_trait::async_trait;
use reqwest::Method;
use reqwest::header::{self, HeaderMap, HeaderValue};
use serde_json::json;
use url::Url;

use super::fetch::{self, FetchError, Incoming, Outgoing};
use super::{HttpRequest, MAX_BODY_BYTES, body_text};
use crate::args::Args;
use crate::output;
use crate::tool::Tool;

pub(crate) const DEFAULT_TIMEOUT_SECONDS: u64 = 30;
pub(crate) const MIN_TIMEOUT_SECONDS: u64 = 1;
/// INTEROP.md §11: `timeout_seconds (1–120)`.
pub(crate) const MAX_TIMEOUT_SECONDS: u64 = 120;

/// The converter's thread stack: the Markdown walk recurses once per nesting level.
const CONVERTER_STACK_BYTES: usize = 64 * 1024 * 1024;

/// Deeper than any real page nests; beyond it the page is shown as plain text.
pub(crate) const MAX_NESTING: usize = 512;

/// Elements that never hold others, or whose end the parser implies: they add no depth.
const FLAT_TAGS: &[&str] = &[
    "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param", "source",
    "track", "wbr", "p", "li", "dt", "dd", "option", "tr", "td", "th",
];

/// Elements whose content is no text for a reader.
const SKIPPED_TAGS: &[&str] = &[
    "script", "style", "noscript", "template", "iframe", "svg", "canvas", "head",
];

/// FetchUrl shares HttpRequest's client and address policy.
pub(crate) struct FetchUrl {
    http: HttpRequest,
}

impl FetchUrl {
    pub(crate) fn new(http: HttpRequest) -> Self {
        Self { http }
    }
}

#[async_trait]
impl Tool for FetchUrl {
    fn definition(&self) -> ToolDefinition {
        ToolDefinition {
            tool_name: "FetchUrl".to_owned(),
            description: "Fetch a web page and return its content as Markdown".to_owned(),
            input_schema: json!({
                "type": "object",
                "required": ["url"],
                "additionalProperties": false,
                "properties": {
                    "url": { "type": "string", "minLength": 1, "description": "URL of the page (http or https)" },
                    "timeout_seconds": {
                        "type": "integer",
                        "minimum": MIN_TIMEOUT_SECONDS,
                        "maximum": MAX_TIMEOUT_SECONDS,
                        "default": DEFAULT_TIMEOUT_SECONDS,
                        "description": "Timeout in seconds (1-120). Default: 30"
                    }
                }
            }).into(),
        }
    }

    async fn run(&self, request: &ToolRequest) -> ToolResult {
        let (url, timeout) = match parse(request) {
            Ok(parsed) => parsed,
            Err(message) => return ToolResult::failed(request, ErrorCode::InvalidRequest, message),
        };
        let client = match self.http.client() {
            Ok(client) => client,
            Err(message) => {
                return ToolResult::failed(request, ErrorCode::ToolExecutionFailed, message);
            }
        };
        let mut headers = HeaderMap::new();
        headers.insert(
            header::ACCEPT,
            HeaderValue::from_static("text/html, text/markdown, text/plain;q=0.9, */*;q=0.5"),
        );
        let outgoing = Outgoing {
            method: Method::GET,
            url,
            headers,
            body: None,
        };
        let call = async {
            let incoming = fetch::fetch(
                client,
                self.http.policy,
                outgoing,
                MAX_BODY_BYTES,
                request.limits.url_check.as_ref(),
            )
            .await?;
            Ok::<_, FetchError>(page(incoming).await)
        };
        match tokio::time::timeout(timeout, call).await {
            Err(_) => ToolResult::failed(
                request,
                ErrorCode::ToolExecutionTimeout,
                format!(
                    "FetchUrl timed out after {} seconds",
                    output::format_seconds(timeout)
                ),
            ),
            Ok(Err(error)) => {
                let code = match error {
                    FetchError::Refused { .. } => ErrorCode::InvalidRequest,
                    FetchError::Denied { .. } => ErrorCode::CapabilityDenied,
                    _ => ErrorCode::ToolExecutionFailed,
                };
                ToolResult::failed(request, code, format!("FetchUrl: {error}"))
            }
            Ok(Ok(Err(message))) => {
                ToolResult::failed(request, ErrorCode::ToolExecutionFailed, message)
            }
            Ok(Ok(Ok(page))) => result(request, &page),
        }
    }
}

/// The URL to fetch and the call's timeout; `Err` names what is wrong.
fn parse(request: &ToolRequest) -> Result<(Url, Duration), String> {
    let args = Args::new("FetchUrl", &request.arguments);
    let (raw_url, timeout) = args
        .only(&["url", "timeout_seconds"])
        .and_then(|()| {
            Ok((
                args.required_str("url")?,
                args.optional_u64_between(
                    "timeout_seconds",
                    MIN_TIMEOUT_SECONDS,
                    MAX_TIMEOUT_SECONDS,
                )?,
            ))
        })
        .map_err(|error| error.0)?;
    let url = Url::parse(raw_url.trim())
        .map_err(|error| format!("FetchUrl: \"{raw_url}\" is not a valid URL: {error}"))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(format!(
            "FetchUrl: only http and https URLs are allowed, not {}:",
            url.scheme()
        ));
    }
    let timeout =
        output::effective_timeout(timeout, DEFAULT_TIMEOUT_SECONDS, request.limits.timeout_ms);
    Ok((url, timeout))
}

/// A page ready for the model.
struct Page {
    url: Url,
    content_type: Option<String>,
    text: String,
}

/// The response as text for a reader, or why there is none.
async fn page(incoming: Incoming) -> Result<Page, String> {
    let status = incoming.status;
    if !status.is_success() {
        return Err(format!(
            "FetchUrl: {} answered HTTP {}{}",
            incoming.url,
            status.as_u16(),
            status
                .canonical_reason()
                .map(|reason| format!(" {reason}"))
                .unwrap_or_default()
        ));
    }
    let content_type = incoming.content_type.clone();
    let Some(text) = body_text(&incoming.body, content_type.as_deref()) else {
        return Err(format!(
            "FetchUrl: {} is not a text page ({}, {} bytes); it is not shown",
            incoming.url,
            content_type.as_deref().unwrap_or("no content type"),
            incoming.body.len()
        ));
    };
    let text = if !is_html(content_type.as_deref(), &text) {
        text
    } else if nests_deeper_than(&text, MAX_NESTING) {
        plain_text(&text)
    } else {
        to_markdown(text).await?
    };
    Ok(Page {
        url: incoming.url,
        content_type,
        text,
    })
}

/// HTML by its content type, or, without one, by how the text starts.
fn is_html(content_type: Option<&str>, text: &str) -> bool {
    match content_type {
        Some(content_type) => {
            let media = content_type
                .split(';')
                .next()
                .unwrap_or_default()
                .trim()
                .to_ascii_lowercase();
            media == "text/html" || media == "application/xhtml+xml"
        }
        None => {
            let start: String = text
                .trim_start()
                .chars()
                .take(15)
                .collect::<String>()
                .to_ascii_lowercase();
            start.starts_with("<!doctype html") || start.starts_with("<html")
        }
    }
}

/// The HTML as Markdown, converted on a thread of its own (see the module documentation).
async fn to_markdown(html: String) -> Result<String, String> {
    let (done, converted) = tokio::sync::oneshot::channel();
    std::thread::Builder::new()
        .name("fetch-url-markdown".to_owned())
        .stack_size(CONVERTER_STACK_BYTES)
        .spawn(move || {
            let converter = htmd::HtmlToMarkdown::builder()
                .skip_tags(SKIPPED_TAGS.to_vec())
                .build();
            let _ = done.send(converter.convert(&html).map_err(|error| error.to_string()));
        })
        .map_err(|error| format!("FetchUrl: the HTML converter could not start: {error}"))?;
    converted
        .await
        .map_err(|_| "FetchUrl: the HTML converter stopped without an answer".to_owned())?
        .map_err(|error| format!("FetchUrl: the page could not be converted to Markdown: {error}"))
}

/// Whether the elements of `html` nest deeper than `limit`, estimated from its tags alone
/// (a start tag opens unless it is flat or closes itself; an end tag closes).
fn nests_deeper_than(html: &str, limit: usize) -> bool {
    let mut depth: usize = 0;
    let mut rest = html;
    while let Some(at) = rest.find('<') {
        rest = &rest[at + 1..];
        if let Some(after) = rest.strip_prefix('/') {
            depth = depth.saturating_sub(usize::from(
                after.starts_with(|c: char| c.is_ascii_alphabetic()),
            ));
            continue;
        }
        let name: String = rest
            .chars()
            .take_while(char::is_ascii_alphanumeric)
            .collect::<String>()
            .to_ascii_lowercase();
        if name.is_empty() || FLAT_TAGS.contains(&name.as_str()) {
            continue;
        }
        let closes_itself = rest.find('>').is_some_and(|end| rest[..end].ends_with('/'));
        if !closes_itself {
            depth += 1;
            if depth > limit {
                return true;
            }
        }
    }
    false
}

/// The text of `html` without its markup, scripts and styles, for a page too deep to
/// convert: lines trimmed, runs of blank lines folded.
fn plain_text(html: &str) -> String {
    let mut text = String::with_capacity(html.len() / 2);
    let mut rest = html;
    while let Some(at) = rest.find('<') {
        text.push_str(&rest[..at]);
        rest = &rest[at..];
        let lower: String = rest
            .chars()
            .take(8)
            .collect::<String>()
            .to_ascii_lowercase();
        let skipped = ["<script", "<style"]
            .into_iter()
            .find(|tag| lower.starts_with(tag));
        let end = match skipped {
            Some(tag) => {
                let close = format!("</{}", &tag[1..]);
                find_ignoring_case(rest, &close).map_or(rest.len(), |close_at| {
                    rest[close_at..]
                        .find('>')
                        .map_or(rest.len(), |gt| close_at + gt + 1)
                })
            }
            None => rest.find('>').map_or(rest.len(), |gt| gt + 1),
        };
        rest = &rest[end..];
        text.push('\n');
    }
    text.push_str(rest);
    let mut out = String::new();
    let mut blank = true;
    for line in text.lines().map(str::trim) {
        if line.is_empty() {
            if !blank {
                out.push('\n');
            }
            blank = true;
        } else {
            out.push_str(line);
            out.push('\n');
            blank = false;
        }
    }
    let kept = out.trim_end().len();
    out.truncate(kept);
    out.push('\n');
    out
}

/// Where the ASCII `needle` first occurs in `haystack`, ignoring ASCII case.
fn find_ignoring_case(haystack: &str, needle: &str) -> Option<usize> {
    haystack
        .as_bytes()
        .windows(needle.len())
        .position(|window| window.eq_ignore_ascii_case(needle.as_bytes()))
}

fn layout(page: &Page, text: &str) -> String {
    format!(
        "URL: {}\nContent-Type: {}\n\n{text}",
        page.url,
        page.content_type.as_deref().unwrap_or("(none)")
    )
}

fn result(request: &ToolRequest, page: &Page) -> ToolResult {
    let max_output = output::max_output_bytes(request.limits.max_output_bytes);
    let shown = output::truncate(&page.text, max_output);
    let mut result = ToolResult::succeeded(request, layout(page, &shown));
    if page.text.len() > output::ARTIFACT_THRESHOLD_BYTES {
        result.artifacts.push(output::tool_output_artifact(
            "page.txt",
            layout(page, &page.text).as_bytes(),
        ));
    }
    result
}

#[cfg(test)]
mod tests;
