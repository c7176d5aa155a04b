//! The Workspace Service fake (INTEROP.md §4) on wiremock: accepts artifact uploads, keeps
//! the latest `session_history` per session (last writer wins) and serves it back.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use wiremock::matchers::{method, path_regex};
use wiremock::{Mock, Request, ResponseTemplate};

use crate::faults::{FaultQueue, json_template};
use crate::host::WiremockHost;
use crate::recording::RecordedRequest;
use crate::util::{lock, new_id, service_error, validation_error};

#[derive(Default)]
struct State {
    uploads: Vec<Value>,
    /// session id → (workspace id, messages).
    history: HashMap<String, (String, Vec<Value>)>,
    max_artifact_bytes: Option<usize>,
}

type Shared = Arc<Mutex<State>>;

/// The Workspace Service fake.
pub struct WorkspaceFake {
    host: WiremockHost,
    state: Shared,
    faults: Arc<FaultQueue>,
}

crate::faults::fault_control!(WorkspaceFake);

impl WorkspaceFake {
    /// Starts on a fresh ephemeral loopback port, with no artifacts.
    pub async fn start() -> anyhow::Result<Self> {
        let state: Shared = Arc::default();
        let faults = Arc::new(FaultQueue::default());
        let routes = vec![
            faults.route(
                Mock::given(method("POST")).and(path_regex(r"^/workspaces/[^/]+/artifacts$")),
                &state,
                upload,
            ),
            faults.route(
                Mock::given(method("GET"))
                    .and(path_regex(r"^/workspaces/[^/]+/sessions/[^/]+/history$")),
                &state,
                |state, request| history(state, request),
            ),
        ];
        let host = faults.serve(routes).await?;
        Ok(Self {
            host,
            state,
            faults,
        })
    }

    /// The service's base URL (no trailing slash), for `WORKSPACE_SERVICE_URL`.
    pub fn url(&self) -> String {
        self.host.base_url()
    }

    /// Uploads whose request body is larger than this answer 413 `FILE_TOO_LARGE`, like the
    /// real service's size limit. `None` (the default) accepts any size.
    pub fn set_max_artifact_bytes(&self, limit: Option<usize>) {
        lock(&self.state).max_artifact_bytes = limit;
    }

    /// Bodies of accepted `POST /workspaces/{id}/artifacts`, in order.
    pub async fn uploads(&self) -> Vec<Value> {
        lock(&self.state).uploads.clone()
    }

    /// The latest `session_history` messages uploaded for a session.
    pub async fn history(&self, session_id: &str) -> Option<Vec<Value>> {
        lock(&self.state)
            .history
            .get(session_id)
            .map(|(_, messages)| messages.clone())
    }

    /// Seeds a session's history, as if a past run had uploaded it (to test continuing a
    /// conversation).
    pub fn set_history(&self, workspace_id: &str, session_id: &str, messages: Vec<Value>) {
        lock(&self.state)
            .history
            .insert(session_id.to_string(), (workspace_id.to_string(), messages));
    }
}

fn upload(state: &mut State, request: &Request) -> ResponseTemplate {
    let segments = RecordedRequest::segments(request.url.path());
    let workspace_id = segments.get(1).copied().unwrap_or_default().to_string();
    if let Some(limit) = state.max_artifact_bytes
        && request.body.len() > limit
    {
        let message = format!("Artifact exceeds the {limit}-byte limit");
        return json_template(413, &service_error("FILE_TOO_LARGE", &message, false));
    }
    let body: Value = match serde_json::from_slice(&request.body) {
        Ok(body @ Value::Object(_)) => body,
        _ => return json_template(422, &validation_error("the body must be a JSON object")),
    };
    let (Some(session_id), Some(artifact_type)) = (
        body.get("sessionId").and_then(Value::as_str),
        body.get("artifactType").and_then(Value::as_str),
    ) else {
        return json_template(
            422,
            &validation_error("sessionId and artifactType are required strings"),
        );
    };
    if artifact_type == "session_history" {
        let Some(messages) = body.get("messages").and_then(Value::as_array) else {
            return json_template(
                422,
                &validation_error("a session_history artifact needs a messages array"),
            );
        };
        state.history.insert(
            session_id.to_string(),
            (workspace_id.clone(), messages.clone()),
        );
    }
    state.uploads.push(body);
    let artifact_id = new_id("art");
    json_template(
        201,
        &json!({
            "artifactId": artifact_id,
            "artifactUri": format!("workspace://{workspace_id}/artifacts/{artifact_id}"),
        }),
    )
}

fn history(state: &State, request: &Request) -> ResponseTemplate {
    let segments = RecordedRequest::segments(request.url.path());
    let workspace_id = segments.get(1).copied().unwrap_or_default();
    let session_id = segments.get(3).copied().unwrap_or_default();
    match state.history.get(session_id) {
        Some((stored_workspace, messages)) if stored_workspace == workspace_id => {
            json_template(200, &json!(messages))
        }
        _ => {
            let message =
                format!("No history for session {session_id} in workspace {workspace_id}");
            json_template(404, &service_error("NOT_FOUND", &message, false))
        }
    }
}
