//! An MCP server fake (local-tool-runtime.md §9) on the official SDK `rmcp`, streamable
//! HTTP on a loopback port (`{url}` ends in `/mcp`). It offers `echo` (answers
//! `echo: {text}`), `secret` (answers `the secret is 4-8-15-16`), `fail` (an `isError`
//! result: `the fake failed on purpose`), `pages` (two text blocks, `first page` and
//! `second page`, and a PNG image block whose bytes are [`PAGES_IMAGE_BYTES`]) and
//! `broken` (whose input schema is an array, which a client must reject at ingress), `hang`
//! (never answers), `flood` (answers [`FLOOD_BYTES`] of text, over the 10 MB cap) and
//! `shape` (declares an output schema with an integer `count`, answers `{"count": "many"}`). It
//! records every `tools/call` it receives, the `Authorization` header of every request and
//! how many HTTP requests reached it.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::{
    StreamableHttpServerConfig, StreamableHttpService, session::local::LocalSessionManager,
};
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::util::lock;

type Calls = Arc<Mutex<Vec<(String, Value)>>>;
type Tokens = Arc<Mutex<Vec<String>>>;

/// The bytes of the image the `pages` tool returns, and their base64 (as on the wire).
pub const PAGES_IMAGE_BYTES: &[u8] = b"walk-mcp-image-bytes";
/// The size of the `flood` tool's text: 11 MiB.
pub(crate) const FLOOD_BYTES: usize = 11 * 1024 * 1024;
const PAGES_IMAGE_BASE64: &str = "d2Fsay1tY3AtaW1hZ2UtYnl0ZXM=";

#[derive(Clone)]
struct Handler {
    calls: Calls,
}

fn tool(name: &str, description: &str) -> Tool {
    let schema = json!({"type": "object", "properties": {"text": {"type": "string"}}});
    tool_with_schema(name, description, schema)
}

fn tool_with_schema(name: &str, description: &str, schema: Value) -> Tool {
    Tool::new(
        name.to_owned(),
        description.to_owned(),
        Arc::new(schema.as_object().cloned().unwrap_or_default()),
    )
}

impl ServerHandler for Handler {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(vec![
            tool("echo", "Echo the text back"),
            tool("secret", "Tell the secret"),
            tool("fail", "Fail on purpose"),
            tool("pages", "Answer with two text blocks and an image"),
            tool("hang", "Never answer"),
            tool("flood", "Answer with 11 MiB of text"),
            tool("shape", "Answer structured content that breaks its output schema")
                .with_raw_output_schema(Arc::new(
                    json!({"type": "object", "properties": {"count": {"type": "integer"}}, "required": ["count"]})
                        .as_object()
                        .cloned()
                        .unwrap_or_default(),
                )),
            tool_with_schema("broken", "A tool whose input schema is not an object", json!({"type": "array"})),
        ]))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let arguments = Value::Object(request.arguments.clone().unwrap_or_default());
        lock(&self.calls).push((request.name.to_string(), arguments.clone()));
        let text = match request.name.as_ref() {
            "echo" => format!("echo: {}", arguments["text"].as_str().unwrap_or_default()),
            "secret" => "the secret is 4-8-15-16".to_owned(),
            "fail" => {
                return Ok(CallToolResult::error(vec![ContentBlock::text(
                    "the fake failed on purpose",
                )])
                .into());
            }
            "hang" => {
                // Until the client gives up on the call (or the fake stops).
                return std::future::pending().await;
            }
            "flood" => "x".repeat(FLOOD_BYTES),
            "shape" => return Ok(CallToolResult::structured(json!({"count": "many"})).into()),
            "pages" => {
                return Ok(CallToolResult::success(vec![
                    ContentBlock::text("first page"),
                    ContentBlock::text("second page"),
                    ContentBlock::image(PAGES_IMAGE_BASE64, "image/png"),
                ])
                .into());
            }
            other => return Err(ErrorData::invalid_params(format!("no tool {other}"), None)),
        };
        Ok(CallToolResult::success(vec![ContentBlock::text(text)]).into())
    }
}

pub struct McpServerFake {
    url: String,
    calls: Calls,
    tokens: Tokens,
    requests: Arc<AtomicUsize>,
    stop: CancellationToken,
}

impl McpServerFake {
    pub async fn start() -> anyhow::Result<Self> {
        let calls: Calls = Arc::default();
        let tokens: Tokens = Arc::default();
        let handler = Handler {
            calls: Arc::clone(&calls),
        };
        let stop = CancellationToken::new();
        let service: StreamableHttpService<Handler, LocalSessionManager> =
            StreamableHttpService::new(
                move || Ok(handler.clone()),
                Arc::default(),
                StreamableHttpServerConfig::default().with_cancellation_token(stop.child_token()),
            );
        let seen = Arc::clone(&tokens);
        let requests = Arc::new(AtomicUsize::new(0));
        let counted = Arc::clone(&requests);
        let router =
            axum::Router::new()
                .nest_service("/mcp", service)
                .layer(axum::middleware::from_fn(
                    move |request: axum::extract::Request, next: axum::middleware::Next| {
                        let seen = Arc::clone(&seen);
                        counted.fetch_add(1, Ordering::SeqCst);
                        async move {
                            if let Some(value) = request.headers().get("authorization") {
                                lock(&seen)
                                    .push(String::from_utf8_lossy(value.as_bytes()).into_owned());
                            }
                            next.run(request).await
                        }
                    },
                ));
        let (address, _) = crate::loopback::serve(router, stop.clone(), "MCP server fake").await?;
        Ok(Self {
            url: format!("http://{address}/mcp"),
            calls,
            tokens,
            requests,
            stop,
        })
    }

    /// The streamable-HTTP endpoint.
    pub fn url(&self) -> String {
        self.url.clone()
    }

    /// `(tool, arguments)` of every `tools/call`, in order.
    pub fn calls(&self) -> Vec<(String, Value)> {
        lock(&self.calls).clone()
    }

    /// How many HTTP requests reached the server, of any kind.
    pub fn request_count(&self) -> usize {
        self.requests.load(Ordering::SeqCst)
    }

    /// Every `Authorization` header received.
    pub fn authorizations(&self) -> Vec<String> {
        lock(&self.tokens).clone()
    }
}

impl Drop for McpServerFake {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}
