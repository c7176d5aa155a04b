//! The Workspace Service fake (INTEROP.md §4, §8) on wiremock, answering like the real one
//! (suman724/cowork-workspace-service `routes/artifacts.py`, `routes/workspaces.py`,
//! `services/artifact_service.py`, `services/workspace_service.py`): artifact uploads (a
//! `session_history` replaces the session's previous one), the history read-back and the
//! desktop sidebar's `GET /workspaces/{ws}/sessions`.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE;
use serde_json::{Map, Value, json};
use time::OffsetDateTime;
use wiremock::matchers::{method, path_regex};
use wiremock::{Mock, Request, ResponseTemplate};

use crate::fastapi::{Fields, object_body};
use crate::faults::{FaultQueue, json_template};
use crate::host::WiremockHost;
use crate::nulls::Nulls;
use crate::recording::RecordedRequest;
use crate::session::Directory;
use crate::util::{lock, new_uuid, python_iso, service_error};

/// The real service's `max_artifact_size_bytes` (50 MB).
const MAX_ARTIFACT_BYTES: usize = 52_428_800;

struct Artifact {
    workspace_id: String,
    session_id: String,
    task_id: Option<String>,
    artifact_type: String,
    created_at: OffsetDateTime,
    /// `session_history` only: the messages, served back as they came.
    messages: Option<Vec<Value>>,
}

struct State {
    uploads: Vec<Value>,
    /// `artifactUri` answered to each accepted upload, in order.
    uris: Vec<String>,
    artifacts: Vec<Artifact>,
    max_artifact_bytes: Option<usize>,
    /// The Session Service fake, for session names and which workspaces exist.
    directory: Option<Arc<dyn Directory>>,
    /// Workspaces made known by [`WorkspaceFake::set_history`].
    seeded: HashSet<String>,
    nulls: Nulls,
}

impl State {
    /// Unlinked, every workspace exists; linked, those the Session Service fake created.
    fn workspace_exists(&self, workspace_id: &str) -> bool {
        match &self.directory {
            None => true,
            Some(directory) => {
                self.seeded.contains(workspace_id) || directory.knows_workspace(workspace_id)
            }
        }
    }

    fn latest_history(&self, workspace_id: &str, session_id: &str) -> Option<&Artifact> {
        self.artifacts.iter().rev().find(|artifact| {
            artifact.artifact_type == "session_history"
                && artifact.workspace_id == workspace_id
                && artifact.session_id == session_id
        })
    }
}

type Shared = Arc<Mutex<State>>;

/// The Workspace Service fake.
pub struct WorkspaceFake {
    host: WiremockHost,
    state: Shared,
    files: crate::workspace_files::Files,
    faults: Arc<FaultQueue>,
}

crate::faults::fault_control!(WorkspaceFake);

impl WorkspaceFake {
    /// Starts on a fresh ephemeral loopback port, with no artifacts.
    pub async fn start() -> anyhow::Result<Self> {
        let state: Shared = Arc::new(Mutex::new(State {
            uploads: Vec::new(),
            uris: Vec::new(),
            artifacts: Vec::new(),
            max_artifact_bytes: Some(MAX_ARTIFACT_BYTES),
            directory: None,
            seeded: HashSet::new(),
            nulls: Nulls::default(),
        }));
        let faults = Arc::new(FaultQueue::default());
        let workspace = r"^/workspaces/[^/]+";
        let files: crate::workspace_files::Files = Arc::default();
        let routes = vec![
            faults.route(
                Mock::given(method("POST")).and(path_regex(format!("{workspace}/files$"))),
                &files,
                crate::workspace_files::upload,
            ),
            faults.route(
                Mock::given(method("GET")).and(path_regex(format!("{workspace}/files$"))),
                &files,
                crate::workspace_files::list,
            ),
            faults.route(
                Mock::given(method("GET")).and(path_regex(format!("{workspace}/files/.+$"))),
                &files,
                crate::workspace_files::download,
            ),
            faults.route(
                Mock::given(method("POST")).and(path_regex(format!("{workspace}/artifacts$"))),
                &state,
                upload,
            ),
            faults.route(
                Mock::given(method("GET"))
                    .and(path_regex(format!("{workspace}/sessions/[^/]+/history$"))),
                &state,
                |state, request| history(state, request),
            ),
            faults.route(
                Mock::given(method("GET")).and(path_regex(format!("{workspace}/sessions$"))),
                &state,
                |state, request| sessions(state, request),
            ),
        ];
        let host = faults.serve(routes).await?;
        Ok(Self {
            host,
            state,
            files,
            faults,
        })
    }

    /// Stores a file of a cloud workspace, as an upload through the service would.
    pub fn put_file(&self, workspace_id: &str, path: &str, content: &[u8]) {
        lock(&self.files)
            .entry(workspace_id.to_owned())
            .or_default()
            .insert(path.to_owned(), content.to_vec());
    }

    /// A file of a cloud workspace, if stored.
    pub fn file(&self, workspace_id: &str, path: &str) -> Option<Vec<u8>> {
        lock(&self.files)
            .get(workspace_id)
            .and_then(|files| files.get(path).cloned())
    }

    /// The service's base URL (no trailing slash), for `WORKSPACE_SERVICE_URL`.
    pub fn url(&self) -> String {
        self.host.base_url()
    }

    /// Takes session names from this Session Service fake and knows only the workspaces it
    /// created (others answer 404 `WORKSPACE_NOT_FOUND`), as the real pair does. Unlinked,
    /// names are `""` (what the real service lists when the Session Service fails) and every
    /// workspace exists.
    pub fn link_sessions(&self, sessions: &crate::SessionServiceFake) {
        lock(&self.state).directory = Some(sessions.directory());
    }

    /// Artifacts whose content (decoded `contentBase64`, or the history's JSON) is larger
    /// than this answer 413 `FILE_TOO_LARGE`. Default 50 MB, the real limit; `None` accepts
    /// any size.
    pub fn set_max_artifact_bytes(&self, limit: Option<usize>) {
        lock(&self.state).max_artifact_bytes = limit;
    }

    /// The null style of the answers (default [`Nulls::AsServed`]): `Verbose` adds
    /// `nextToken: null` to the last page of a session list.
    pub fn set_nulls(&self, nulls: Nulls) {
        lock(&self.state).nulls = nulls;
    }

    /// Bodies of accepted `POST /workspaces/{id}/artifacts`, in order.
    pub async fn uploads(&self) -> Vec<Value> {
        lock(&self.state).uploads.clone()
    }

    /// The `artifactUri` of every accepted upload, in order (`s3://{ws}/{session}/{type}/{id}`).
    pub fn artifact_uris(&self) -> Vec<String> {
        lock(&self.state).uris.clone()
    }

    /// The latest `session_history` messages uploaded for a session.
    pub async fn history(&self, session_id: &str) -> Option<Vec<Value>> {
        lock(&self.state)
            .artifacts
            .iter()
            .rev()
            .find(|artifact| {
                artifact.artifact_type == "session_history" && artifact.session_id == session_id
            })
            .and_then(|artifact| artifact.messages.clone())
    }

    /// Seeds a session's history, as if a past run had uploaded it (to test continuing a
    /// conversation); the workspace then exists.
    pub fn set_history(&self, workspace_id: &str, session_id: &str, messages: Vec<Value>) {
        let mut state = lock(&self.state);
        state.seeded.insert(workspace_id.to_string());
        store(
            &mut state,
            Artifact {
                workspace_id: workspace_id.to_string(),
                session_id: session_id.to_string(),
                task_id: None,
                artifact_type: "session_history".into(),
                created_at: OffsetDateTime::now_utc(),
                messages: Some(messages),
            },
        );
    }
}

/// Keeps an artifact; a `session_history` replaces the session's previous ones.
fn store(state: &mut State, artifact: Artifact) {
    if artifact.artifact_type == "session_history" {
        state.artifacts.retain(|old| {
            !(old.artifact_type == "session_history"
                && old.workspace_id == artifact.workspace_id
                && old.session_id == artifact.session_id)
        });
    }
    state.artifacts.push(artifact);
}

fn error(status: u16, code: &str, message: &str) -> ResponseTemplate {
    json_template(status, &service_error(code, message, status >= 500))
}

fn workspace_not_found(workspace_id: &str) -> ResponseTemplate {
    let message = format!("Workspace not found: {workspace_id}");
    error(404, "WORKSPACE_NOT_FOUND", &message)
}

fn segment(request: &Request, index: usize) -> String {
    RecordedRequest::segments(request.url.path())
        .get(index)
        .map(|segment| (*segment).to_string())
        .unwrap_or_default()
}

fn is_object_list(value: &Value) -> bool {
    value
        .as_array()
        .is_some_and(|items| items.iter().all(Value::is_object))
}

fn upload(state: &mut State, request: &Request) -> ResponseTemplate {
    let body = match object_body(request) {
        Ok(body) => body,
        Err(answer) => return *answer,
    };
    let mut fields = Fields::new(&body);
    let session_id = fields.string("sessionId", true, 1, None);
    let task_id = fields.optional_string("taskId");
    for name in ["stepId", "artifactName", "contentType"] {
        fields.optional_string(name);
    }
    let content_base64 = fields.optional_string("contentBase64");
    let artifact_type = fields.literal(
        "artifactType",
        &["session_history", "tool_output", "file_diff"],
        None,
    );
    fields.nullable_kind("messages", is_object_list, "list");
    if let Err(answer) = fields.finish() {
        return *answer;
    }
    let (Some(session_id), Some(artifact_type)) = (session_id, artifact_type) else {
        return error(500, "INTERNAL_ERROR", "Internal server error");
    };
    let workspace_id = segment(request, 1);
    if !state.workspace_exists(&workspace_id) {
        return workspace_not_found(&workspace_id);
    }
    let messages = body.get("messages").and_then(Value::as_array).cloned();
    let size = if artifact_type == "session_history" {
        let Some(messages) = &messages else {
            let message = "messages required for session_history artifact";
            return error(400, "INVALID_REQUEST", message);
        };
        // Compact JSON: a little shorter than Python's json.dumps, which the limit measures.
        serde_json::to_vec(messages).map_or(0, |bytes| bytes.len())
    } else {
        match content_base64.as_deref().filter(|text| !text.is_empty()) {
            None => {
                let message = "contentBase64 required for non-history artifacts";
                return error(400, "INVALID_REQUEST", message);
            }
            Some(text) => match decoded_len(text) {
                Some(size) => size,
                None => {
                    let message = "contentBase64 is not valid base64";
                    return error(400, "INVALID_REQUEST", message);
                }
            },
        }
    };
    if let Some(limit) = state.max_artifact_bytes
        && size > limit
    {
        let message = format!("Artifact too large: {size} bytes (limit {limit})");
        return error(413, "FILE_TOO_LARGE", &message);
    }
    let artifact_id = new_uuid();
    let uri = format!("s3://{workspace_id}/{session_id}/{artifact_type}/{artifact_id}");
    store(
        state,
        Artifact {
            workspace_id,
            session_id,
            task_id,
            artifact_type: artifact_type.clone(),
            created_at: OffsetDateTime::now_utc(),
            messages: messages.filter(|_| artifact_type == "session_history"),
        },
    );
    state.uploads.push(Value::Object(body));
    state.uris.push(uri.clone());
    json_template(201, &json!({"artifactId": artifact_id, "artifactUri": uri}))
}

/// Decoded length of base64 as Python's lenient `b64decode` reads it: characters outside the
/// alphabet are skipped; only bad padding fails.
fn decoded_len(text: &str) -> Option<usize> {
    let significant: Vec<u8> = text
        .bytes()
        .filter(|byte| byte.is_ascii_alphanumeric() || matches!(byte, b'+' | b'/' | b'='))
        .collect();
    if !significant.len().is_multiple_of(4) {
        return None;
    }
    let padding = significant.iter().rev().take_while(|b| **b == b'=').count();
    Some((significant.len() / 4 * 3).saturating_sub(padding.min(2)))
}

/// The latest `session_history`'s messages, or `[]` (200) when there is none: the real route
/// neither checks the workspace nor answers 404.
fn history(state: &State, request: &Request) -> ResponseTemplate {
    let workspace_id = segment(request, 1);
    let session_id = segment(request, 3);
    let messages = state
        .latest_history(&workspace_id, &session_id)
        .and_then(|artifact| artifact.messages.clone())
        .unwrap_or_default();
    json_template(200, &Value::Array(messages))
}

/// `{sessions: [{sessionId, createdAt, lastTaskAt, taskCount, name, autoNamed}], nextToken?}`
/// aggregated from the workspace's artifacts, most recent first, 20 a page.
fn sessions(state: &State, request: &Request) -> ResponseTemplate {
    let query: Map<String, Value> = request
        .url
        .query_pairs()
        .map(|(key, value)| (key.into_owned(), Value::String(value.into_owned())))
        .collect();
    let limit = match query
        .get("limit")
        .and_then(Value::as_str)
        .map(str::parse::<i64>)
    {
        None => 20,
        Some(Ok(limit)) if (1..=100).contains(&limit) => limit,
        Some(_) => return bad_limit(query.get("limit")),
    };
    let workspace_id = segment(request, 1);
    if !state.workspace_exists(&workspace_id) {
        return workspace_not_found(&workspace_id);
    }
    let offset = query
        .get("nextToken")
        .and_then(Value::as_str)
        .and_then(token_offset)
        .unwrap_or(0);
    let mut summaries: Vec<(OffsetDateTime, Value)> = Vec::new();
    let mut seen: Vec<&str> = Vec::new();
    for artifact in state
        .artifacts
        .iter()
        .filter(|a| a.workspace_id == workspace_id)
    {
        if seen.contains(&artifact.session_id.as_str()) {
            continue;
        }
        seen.push(&artifact.session_id);
        let group: Vec<&Artifact> = state
            .artifacts
            .iter()
            .filter(|a| a.workspace_id == workspace_id && a.session_id == artifact.session_id)
            .collect();
        let created = group.iter().map(|a| a.created_at).min();
        let last = group.iter().map(|a| a.created_at).max();
        let (Some(created), Some(last)) = (created, last) else {
            continue;
        };
        let tasks: HashSet<&str> = group.iter().filter_map(|a| a.task_id.as_deref()).collect();
        let (name, auto_named) = state
            .directory
            .as_ref()
            .and_then(|directory| directory.name_of(&artifact.session_id))
            .unwrap_or_else(|| (String::new(), true));
        summaries.push((
            last,
            json!({
                "sessionId": artifact.session_id,
                "createdAt": python_iso(created),
                "lastTaskAt": python_iso(last),
                "taskCount": tasks.len(),
                "name": name,
                "autoNamed": auto_named,
            }),
        ));
    }
    summaries.sort_by_key(|summary| std::cmp::Reverse(summary.0));
    let total = summaries.len();
    let start = usize::try_from(offset).unwrap_or(0).min(total);
    let end = start.saturating_add(usize::try_from(limit).unwrap_or(20));
    let page: Vec<Value> = summaries
        .into_iter()
        .skip(start)
        .take(end - start)
        .map(|(_, summary)| summary)
        .collect();
    let mut answer = json!({ "sessions": page });
    if end < total {
        let token = URL_SAFE.encode(format!("{{\"offset\": {end}}}"));
        answer["nextToken"] = json!(token);
    }
    state.nulls.apply(&mut answer, &["nextToken"]);
    json_template(200, &answer)
}

/// The offset in a `nextToken` (`base64url({"offset": n})`); a bad token reads as 0.
fn token_offset(token: &str) -> Option<i64> {
    let bytes = URL_SAFE.decode(token).ok()?;
    let value: Value = serde_json::from_slice(&bytes).ok()?;
    value.get("offset")?.as_i64()
}

fn bad_limit(given: Option<&Value>) -> ResponseTemplate {
    let input = given.cloned().unwrap_or(Value::Null);
    let parsed = input.as_str().and_then(|text| text.parse::<i64>().ok());
    let (kind, msg, ctx) = match parsed {
        None => (
            "int_parsing",
            "Input should be a valid integer, unable to parse string as an integer".to_string(),
            None,
        ),
        Some(value) if value < 1 => (
            "greater_than_equal",
            "Input should be greater than or equal to 1".to_string(),
            Some(json!({"ge": 1})),
        ),
        Some(_) => (
            "less_than_equal",
            "Input should be less than or equal to 100".to_string(),
            Some(json!({"le": 100})),
        ),
    };
    let mut item = json!({"type": kind, "loc": ["query", "limit"], "msg": msg, "input": input});
    if let Some(ctx) = ctx {
        item["ctx"] = ctx;
    }
    json_template(422, &json!({ "detail": [item] }))
}
