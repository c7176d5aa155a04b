//! WebSearch (INTEROP.md §11): a web search through the search endpoint the runtime is
//! configured with (`AGENT_RUNTIME_WEB_SEARCH_URL`), never a hard-wired third-party
//! service; without one the tool is not offered at all.
//!
//! The endpoint speaks the JSON search API of SearxNG, which teams host themselves:
//! `GET {endpoint}?q={query}&format=json` (added to the endpoint's own query), answered
//! with `{"results": [{"title", "url", "content"}]}` (`snippet` is read where `content` is
//! missing; other members are ignored). The endpoint is the operator's, so the address rules
//! of HttpRequest do not apply to it; no redirect is followed.
//!
//! The result lists the first `max_results` (1–10, default 5) as
//!
//! ```text
//! 1. {title}
//!    {url}
//!    {snippet}
//! ```
//!
//! each snippet at most [`MAX_SNIPPET_BYTES`], the whole cut to `limits.maxOutputBytes`.
//! An unreachable endpoint, an error status or an answer that is not such JSON is
//! `TOOL_EXECUTION_FAILED`; the call is bounded by `limits.timeoutMs`
//! (`TOOL_EXECUTION_TIMEOUT`) and the answer by [`MAX_ANSWER_BYTES`].

use std::sync::OnceLock;
use std::time::Duration;

use agent_protocol::{ErrorCode, ToolDefinition, ToolRequest, ToolResult};
use async_trait::async_trait;
use serde::Deserialize;
use serde_json::json;
use url::Url;

use crate::args::Args;
use crate::output;
use crate::tool::Tool;

pub(crate) const DEFAULT_MAX_RESULTS: u64 = 5;
/// INTEROP.md §11: `max_results (default 5, max 10)`.
pub(crate) const MAX_RESULTS: u64 = 10;
/// The longest snippet shown of one result.
pub(crate) const MAX_SNIPPET_BYTES: usize = 1000;
/// The largest answer read from the endpoint.
pub(crate) const MAX_ANSWER_BYTES: usize = 2 * 1024 * 1024;
/// A search's deadline when the request carries no `timeoutMs`.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

pub(crate) struct WebSearch {
    endpoint: Url,
    client: OnceLock<Result<reqwest::Client, String>>,
}

impl WebSearch {
    /// The tool for `endpoint`, or why that is no usable URL.
    pub(crate) fn new(endpoint: &str) -> Result<Self, String> {
        let endpoint = Url::parse(endpoint.trim()).map_err(|error| {
            format!("the web search endpoint \"{endpoint}\" is not a valid URL: {error}")
        })?;
        if !matches!(endpoint.scheme(), "http" | "https") {
            return Err(format!(
                "the web search endpoint must be an http or https URL, not {}:",
                endpoint.scheme()
            ));
        }
        Ok(Self {
            endpoint,
            client: OnceLock::new(),
        })
    }

    fn client(&self) -> Result<&reqwest::Client, &str> {
        self.client
            .get_or_init(|| {
                agent_tls::client_builder()
                    .redirect(reqwest::redirect::Policy::none())
                    .build()
                    .map_err(|error| format!("WebSearch: could not build the HTTP client: {error}"))
            })
            .as_ref()
            .map_err(String::as_str)
    }

    fn url(&self, query: &str) -> Url {
        let mut url = self.endpoint.clone();
        url.query_pairs_mut()
            .append_pair("q", query)
            .append_pair("format", "json");
        url
    }
}

#[derive(Debug, Deserialize)]
struct Answer {
    results: Vec<Hit>,
}

#[derive(Debug, Deserialize)]
struct Hit {
    #[serde(default)]
    title: Option<String>,
    #[serde(default)]
    url: Option<String>,
    #[serde(default)]
    content: Option<String>,
    #[serde(default)]
    snippet: Option<String>,
}

#[async_trait]
impl Tool for WebSearch {
    fn definition(&self) -> ToolDefinition {
        ToolDefinition {
            tool_name: "WebSearch".to_owned(),
            description: "Search the web and return the top results".to_owned(),
            input_schema: json!({
                "type": "object",
                "required": ["query"],
                "additionalProperties": false,
                "properties": {
                    "query": { "type": "string", "minLength": 1, "description": "What to search for" },
                    "max_results": {
                        "type": "integer",
                        "minimum": 1,
                        "maximum": MAX_RESULTS,
                        "default": DEFAULT_MAX_RESULTS,
                        "description": "How many results to return (1-10). Default: 5"
                    }
                }
            }).into(),
        }
    }

    async fn run(&self, request: &ToolRequest) -> ToolResult {
        let args = Args::new("WebSearch", &request.arguments);
        let parsed = args.only(&["query", "max_results"]).and_then(|()| {
            Ok((
                args.required_str("query")?,
                args.optional_u64_between("max_results", 1, MAX_RESULTS)?,
            ))
        });
        let (query, max_results) = match parsed {
            Ok(parsed) => parsed,
            Err(error) => return ToolResult::failed(request, ErrorCode::InvalidRequest, error.0),
        };
        let query = query.trim();
        if query.is_empty() {
            return ToolResult::failed(
                request,
                ErrorCode::InvalidRequest,
                "WebSearch: the query is empty",
            );
        }
        let max_results =
            usize::try_from(max_results.unwrap_or(DEFAULT_MAX_RESULTS)).unwrap_or(usize::MAX);
        let client = match self.client() {
            Ok(client) => client,
            Err(message) => {
                return ToolResult::failed(request, ErrorCode::ToolExecutionFailed, message);
            }
        };
        let timeout = request
            .limits
            .timeout_ms
            .map_or(DEFAULT_TIMEOUT, Duration::from_millis);
        match tokio::time::timeout(timeout, search(client, self.url(query))).await {
            Err(_) => ToolResult::failed(
                request,
                ErrorCode::ToolExecutionTimeout,
                format!(
                    "WebSearch timed out after {} seconds",
                    output::format_seconds(timeout)
                ),
            ),
            Ok(Err(message)) => ToolResult::failed(
                request,
                ErrorCode::ToolExecutionFailed,
                format!("WebSearch: {message}"),
            ),
            Ok(Ok(hits)) => {
                let text = listing(query, &hits, max_results);
                let max_output = output::max_output_bytes(request.limits.max_output_bytes);
                ToolResult::succeeded(request, output::truncate(&text, max_output).into_owned())
            }
        }
    }
}

/// One search on the wire: the answer's results, or what went wrong, for people.
async fn search(client: &reqwest::Client, url: Url) -> Result<Vec<Hit>, String> {
    let mut response = client
        .get(url)
        .header(reqwest::header::ACCEPT, "application/json")
        .send()
        .await
        .map_err(|error| format!("the search endpoint could not be reached ({error})"))?;
    let status = response.status();
    let mut body = Vec::new();
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|error| format!("reading the search endpoint's answer: {error}"))?
    {
        if body.len().saturating_add(chunk.len()) > MAX_ANSWER_BYTES {
            return Err(format!(
                "the search endpoint's answer passed {MAX_ANSWER_BYTES} bytes; it was abandoned"
            ));
        }
        body.extend_from_slice(&chunk);
    }
    if !status.is_success() {
        let said: String = String::from_utf8_lossy(&body).chars().take(300).collect();
        return Err(format!(
            "the search endpoint answered HTTP {}: {said}",
            status.as_u16()
        ));
    }
    serde_json::from_slice::<Answer>(&body)
        .map(|answer| answer.results)
        .map_err(|error| {
            format!(
                "the search endpoint's answer is not a JSON object with a results list ({error})"
            )
        })
}

/// The numbered listing of the first `max_results` hits.
fn listing(query: &str, hits: &[Hit], max_results: usize) -> String {
    if hits.is_empty() {
        return format!("No results for \"{query}\".\n");
    }
    let mut text = String::new();
    for (number, hit) in hits.iter().take(max_results).enumerate() {
        let title = hit.title.as_deref().map(str::trim).unwrap_or_default();
        let url = hit.url.as_deref().map(str::trim).unwrap_or_default();
        let snippet = hit
            .content
            .as_deref()
            .or(hit.snippet.as_deref())
            .map(|snippet| snippet.split_whitespace().collect::<Vec<_>>().join(" "))
            .unwrap_or_default();
        let snippet = if snippet.len() > MAX_SNIPPET_BYTES {
            let end = output::floor_char_boundary(&snippet, MAX_SNIPPET_BYTES);
            format!("{}…", &snippet[..end])
        } else {
            snippet
        };
        if number > 0 {
            text.push('\n');
        }
        text.push_str(&format!(
            "{}. {}\n",
            number + 1,
            if title.is_empty() {
                "(untitled)"
            } else {
                title
            }
        ));
        for line in [url, snippet.as_str()] {
            if !line.is_empty() {
                text.push_str("   ");
                text.push_str(line);
                text.push('\n');
            }
        }
    }
    text
}

#[cfg(test)]
mod tests;
