//! The Backend Tool Service fake (local-agent-host.md §7.6) on wiremock:
//! `POST /tools/{toolName}/invoke` takes a `ToolRequest` and answers a `ToolResult`. Each
//! tool answers what it was scripted to ([`BackendToolServiceFake::script`]); an unscripted
//! tool answers 404 `TOOL_NOT_FOUND`. Every invocation is recorded.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use wiremock::matchers::{method, path_regex};
use wiremock::{Mock, Request, ResponseTemplate};

use crate::faults::{FaultQueue, json_template};
use crate::host::WiremockHost;
use crate::recording::RecordedRequest;
use crate::util::{lock, service_error};

/// What one tool answers.
#[derive(Clone, Debug)]
pub enum BackendToolReply {
    /// 200 with a `ToolResult` that succeeded with this text (identity fields echoed).
    Succeeded(String),
    /// 200 with a `ToolResult` that failed with this code and message.
    Failed { code: String, message: String },
    /// This status and body, as given.
    Raw { status: u16, body: Value },
}

type Script = Arc<Mutex<HashMap<String, BackendToolReply>>>;

pub struct BackendToolServiceFake {
    host: WiremockHost,
    script: Script,
    faults: Arc<FaultQueue>,
}

crate::faults::fault_control!(BackendToolServiceFake);

impl BackendToolServiceFake {
    pub async fn start() -> anyhow::Result<Self> {
        let script: Script = Arc::default();
        let faults = Arc::new(FaultQueue::default());
        let invoke_route = Mock::given(method("POST")).and(path_regex(r"^/tools/[^/]+/invoke$"));
        let routes = vec![faults.route(invoke_route, &script, |script, request| {
            invoke(script, request)
        })];
        Ok(Self {
            host: faults.serve(routes).await?,
            script,
            faults,
        })
    }

    /// The base URL, for `BACKEND_TOOL_SERVICE_URL`.
    pub fn url(&self) -> String {
        self.host.base_url()
    }

    /// From now on, `tool` answers `reply`.
    pub fn script(&self, tool: &str, reply: BackendToolReply) {
        lock(&self.script).insert(tool.to_owned(), reply);
    }

    /// Bodies of every invocation, with the tool name from the path, in order.
    pub async fn invocations(&self) -> Vec<(String, Value)> {
        self.host
            .requests()
            .await
            .into_iter()
            .filter(|request| request.method == "POST" && request.path.ends_with("/invoke"))
            .map(|request| {
                let tool = RecordedRequest::segments(&request.path)
                    .get(1)
                    .copied()
                    .unwrap_or_default()
                    .to_owned();
                (tool, request.body)
            })
            .collect()
    }
}

fn invoke(script: &HashMap<String, BackendToolReply>, request: &Request) -> ResponseTemplate {
    let segments = RecordedRequest::segments(request.url.path());
    let tool = segments.get(1).copied().unwrap_or_default();
    let body: Value = serde_json::from_slice(&request.body).unwrap_or(Value::Null);
    let result = |status: &str| {
        json!({
            "toolName": tool,
            "sessionId": body["sessionId"],
            "taskId": body["taskId"],
            "stepId": body["stepId"],
            "toolCallId": body["toolCallId"],
            "status": status,
            "artifactUris": [],
        })
    };
    match script.get(tool) {
        Some(BackendToolReply::Succeeded(text)) => {
            let mut answer = result("succeeded");
            answer["outputText"] = json!(text);
            json_template(200, &answer)
        }
        Some(BackendToolReply::Failed { code, message }) => {
            let mut answer = result("failed");
            answer["error"] = json!({"code": code, "message": message});
            json_template(200, &answer)
        }
        Some(BackendToolReply::Raw { status, body }) => json_template(*status, body),
        None => json_template(
            404,
            &service_error("TOOL_NOT_FOUND", &format!("No backend tool {tool}"), false),
        ),
    }
}
