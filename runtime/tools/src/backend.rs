//! Remote tools of the Backend Tool Service (local-agent-host.md §7.6): a tool the policy
//! lists in `BackendTool.Invoke.allowedToolNames` is run by `POST
//! {BACKEND_TOOL_SERVICE_URL}/tools/{toolName}/invoke` with the `ToolRequest` as body; the
//! answer is a `ToolResult`, handled like a local one.
//!
//! The service publishes no tool manifests in this contract, so each allowed tool is
//! offered with a generic description and an open object schema. The answer's identity
//! fields (tool, session, task, step, call id) are taken from the request, never from the
//! service; its body is read with the 10 MB cap of every remote answer.

use std::sync::{OnceLock, RwLock};
use std::time::Duration;

use agent_protocol::{ErrorCode, ToolDefinition, ToolRequest, ToolResult};
use futures::StreamExt as _;
use serde_json::json;

/// Largest answer read from the service.
pub(crate) const MAX_RESPONSE_BYTES: usize = 10 * 1024 * 1024;
/// A call's deadline when the request carries no `timeoutMs` (§7.4: remote tools 120 s).
pub(crate) const DEFAULT_TIMEOUT: Duration = Duration::from_secs(120);

pub(crate) struct BackendTools {
    base_url: Option<String>,
    /// Built on first use: building a client loads the TLS roots, which has no place in
    /// the runtime's start-up when most sessions never call a backend tool.
    client: OnceLock<reqwest::Client>,
    allowed: RwLock<Vec<String>>,
}

impl BackendTools {
    /// `base_url`: `BACKEND_TOOL_SERVICE_URL`; without it no backend tool is offered.
    pub(crate) fn new(base_url: Option<String>) -> Self {
        Self {
            base_url: base_url.map(|url| url.trim_end_matches('/').to_owned()),
            client: OnceLock::new(),
            allowed: RwLock::new(Vec::new()),
        }
    }

    fn client(&self) -> &reqwest::Client {
        self.client.get_or_init(|| {
            agent_tls::client_builder()
                .redirect(reqwest::redirect::Policy::none())
                .build()
                .unwrap_or_default()
        })
    }

    pub(crate) fn set_allowed(&self, names: Vec<String>) {
        match self.allowed.write() {
            Ok(mut allowed) => *allowed = names,
            Err(poisoned) => *poisoned.into_inner() = names,
        }
    }

    fn allowed(&self) -> Vec<String> {
        match self.allowed.read() {
            Ok(allowed) => allowed.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }

    pub(crate) fn serves(&self, tool_name: &str) -> bool {
        self.base_url.is_some()
            && usable(tool_name)
            && self.allowed().iter().any(|name| name == tool_name)
    }

    pub(crate) fn tools(&self) -> Vec<ToolDefinition> {
        if self.base_url.is_none() {
            return Vec::new();
        }
        self.allowed()
            .into_iter()
            .filter(|name| usable(name))
            .map(|name| ToolDefinition {
                description: format!("Run the remote tool {name} on the Backend Tool Service"),
                tool_name: name,
                input_schema: json!({"type": "object"}).into(),
            })
            .collect()
    }

    pub(crate) async fn call(&self, request: &ToolRequest) -> ToolResult {
        let Some(base) = &self.base_url else {
            return ToolResult::failed(
                request,
                ErrorCode::ToolNotFound,
                format!(
                    "Unknown tool: {} (no Backend Tool Service is configured)",
                    request.tool_name
                ),
            );
        };
        let url = format!("{base}/tools/{}/invoke", encode_segment(&request.tool_name));
        let timeout = request
            .limits
            .timeout_ms
            .map_or(DEFAULT_TIMEOUT, Duration::from_millis);
        let exchange = async {
            let response = self
                .client()
                .post(&url)
                .json(request)
                .send()
                .await
                .map_err(|error| {
                    format!("the Backend Tool Service could not be reached ({error})")
                })?;
            let status = response.status();
            let body = read_capped(response).await?;
            if !status.is_success() {
                let text = String::from_utf8_lossy(&body);
                let detail = serde_json::from_slice::<serde_json::Value>(&body)
                    .ok()
                    .and_then(|value| {
                        value
                            .get("message")
                            .and_then(|m| m.as_str())
                            .map(str::to_owned)
                    })
                    .unwrap_or_else(|| text.chars().take(500).collect());
                return Err(format!(
                    "the Backend Tool Service answered HTTP {status}: {detail}"
                ));
            }
            serde_json::from_slice::<ToolResult>(&body).map_err(|error| {
                format!(
                    "the Backend Tool Service sent an answer that is not a ToolResult ({error})"
                )
            })
        };
        match tokio::time::timeout(timeout, exchange).await {
            Err(_) => ToolResult::failed(
                request,
                ErrorCode::ToolExecutionTimeout,
                format!(
                    "{} timed out after {} seconds",
                    request.tool_name,
                    crate::output::format_seconds(timeout)
                ),
            ),
            Ok(Err(message)) => ToolResult::failed(
                request,
                ErrorCode::ToolExecutionFailed,
                format!("{} failed: {message}", request.tool_name),
            ),
            Ok(Ok(mut result)) => {
                result.tool_name = request.tool_name.clone();
                result.session_id = request.session_id.clone();
                result.task_id = request.task_id.clone();
                result.step_id = request.step_id.clone();
                result.tool_call_id = request.tool_call_id.clone();
                // A remote tool changes no local file.
                result.file_changes.clear();
                result
            }
        }
    }
}

async fn read_capped(response: reqwest::Response) -> Result<Vec<u8>, String> {
    let mut body = Vec::new();
    let mut stream = response.bytes_stream();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|error| format!("reading the answer failed ({error})"))?;
        if body.len() + chunk.len() > MAX_RESPONSE_BYTES {
            return Err(format!(
                "its answer is larger than {MAX_RESPONSE_BYTES} bytes (10 MB) and was abandoned"
            ));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// Names the LLM tools API accepts and that cannot be mistaken for an MCP tool.
fn usable(name: &str) -> bool {
    agent_protocol::extensions::is_valid_wire_name(name)
        && !name.contains(agent_protocol::extensions::WIRE_NAME_SEPARATOR)
}

/// A tool name as one URL path segment.
fn encode_segment(name: &str) -> String {
    name.bytes()
        .map(|byte| match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (byte as char).to_string()
            }
            other => format!("%{other:02X}"),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_protocol::{ToolRouter as _, ToolStatus};
    use axum::extract::{Json, Path};
    use axum::routing::post;
    use serde_json::Value;
    use std::sync::{Arc, Mutex};

    const BOUND: Duration = Duration::from_secs(20);

    type Seen = Arc<Mutex<Vec<(String, Value)>>>;

    /// A Backend Tool Service on loopback: `Translate` answers, `Broken` fails, `Huge`
    /// answers with 11 MB, `Liar` claims another session.
    async fn service() -> (String, Seen) {
        let seen: Seen = Arc::default();
        let record = Arc::clone(&seen);
        let app = axum::Router::new().route(
            "/tools/{tool}/invoke",
            post(move |Path(tool): Path<String>, Json(body): Json<Value>| {
                let record = Arc::clone(&record);
                async move {
                    record.lock().unwrap().push((tool.clone(), body.clone()));
                    let answer = |status: u16, value: Value| {
                        (
                            axum::http::StatusCode::from_u16(status).unwrap(),
                            value.to_string(),
                        )
                    };
                    match tool.as_str() {
                        "Translate" => answer(
                            200,
                            json!({
                                "toolName": "Translate", "sessionId": body["sessionId"],
                                "taskId": body["taskId"], "stepId": body["stepId"],
                                "status": "succeeded", "outputText": "bonjour",
                                "artifactUris": ["artifact://remote/1"]
                            }),
                        ),
                        "Liar" => answer(
                            200,
                            json!({
                                "toolName": "ReadFile", "sessionId": "other", "taskId": "x",
                                "stepId": "y", "status": "succeeded", "outputText": "ok"
                            }),
                        ),
                        "Huge" => (axum::http::StatusCode::OK, "x".repeat(11 * 1024 * 1024)),
                        _ => answer(503, json!({"message": "translation backend is down"})),
                    }
                }
            }),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, app).await });
        (format!("http://{address}/"), seen)
    }

    fn request(tool: &str) -> ToolRequest {
        crate::testing::request(tool, std::path::Path::new("/"), json!({"text": "hello"}))
    }

    #[tokio::test]
    async fn allowed_tools_are_posted_and_their_tool_result_is_returned() {
        let (url, seen) = service().await;
        let router = crate::LocalToolRouter::with_options(crate::ToolOptions {
            backend_tool_service_url: Some(url),
            ..Default::default()
        });
        let config = agent_protocol::extensions::ExtensionConfig {
            backend_tools: vec![
                "Translate".into(),
                "Broken".into(),
                "Liar".into(),
                "Huge".into(),
                "ReadFile".into(),
            ],
            ..Default::default()
        };
        assert!(router.open_extensions(config).await.is_empty());
        let offered: Vec<String> = router
            .available_tools()
            .into_iter()
            .map(|tool| tool.tool_name)
            .collect();
        assert_eq!(offered.iter().filter(|name| *name == "ReadFile").count(), 1);
        assert!(offered.contains(&"Translate".to_owned()));

        let translated = tokio::time::timeout(BOUND, router.execute(request("Translate")))
            .await
            .unwrap();
        assert_eq!(translated.status, ToolStatus::Succeeded, "{translated:?}");
        assert_eq!(translated.output_text.as_deref(), Some("bonjour"));
        assert_eq!(translated.artifact_uris, ["artifact://remote/1"]);
        assert_eq!(translated.tool_call_id.as_deref(), Some("c1"));
        {
            let seen = seen.lock().unwrap();
            assert_eq!(seen[0].0, "Translate");
            assert_eq!(seen[0].1["toolName"], "Translate");
            assert_eq!(seen[0].1["arguments"]["text"], "hello");
        }

        let broken = tokio::time::timeout(BOUND, router.execute(request("Broken")))
            .await
            .unwrap();
        let error = broken.error.unwrap();
        assert_eq!(error.code, ErrorCode::ToolExecutionFailed);
        assert!(
            error.message.contains("503") && error.message.contains("translation backend is down"),
            "{}",
            error.message
        );

        let liar = tokio::time::timeout(BOUND, router.execute(request("Liar")))
            .await
            .unwrap();
        assert_eq!(
            (liar.tool_name.as_str(), liar.session_id.as_str()),
            ("Liar", "s")
        );

        let huge = tokio::time::timeout(BOUND, router.execute(request("Huge")))
            .await
            .unwrap();
        assert!(huge.error.unwrap().message.contains("10 MB"));

        // A built-in name is never sent away, and unlisted tools are unknown.
        let before = seen.lock().unwrap().len();
        let dir = tempfile::tempdir().unwrap();
        let local = router
            .execute(crate::testing::request(
                "ReadFile",
                dir.path(),
                json!({"path": "missing"}),
            ))
            .await;
        assert_eq!(local.error.unwrap().code, ErrorCode::FileNotFound);
        let unknown = router.execute(request("Other")).await;
        assert_eq!(unknown.error.unwrap().code, ErrorCode::ToolNotFound);
        assert_eq!(seen.lock().unwrap().len(), before);
        router.close_extensions().await;
        assert!(
            !router
                .available_tools()
                .iter()
                .any(|tool| tool.tool_name == "Translate")
        );
    }

    #[tokio::test]
    async fn without_a_service_url_nothing_is_offered() {
        let router = crate::LocalToolRouter::new();
        let config = agent_protocol::extensions::ExtensionConfig {
            backend_tools: vec!["Translate".into()],
            ..Default::default()
        };
        router.open_extensions(config).await;
        assert!(
            !router
                .available_tools()
                .iter()
                .any(|tool| tool.tool_name == "Translate")
        );
        assert_eq!(
            router
                .execute(request("Translate"))
                .await
                .error
                .unwrap()
                .code,
            ErrorCode::ToolNotFound
        );
    }
}
