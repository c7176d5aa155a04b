//! Every answer of the Session and Workspace fakes has the real services' shape
//! (`tests-data/real-shapes.json`): no invented member, none missing, the same types and
//! null-ness, in each null style.

use serde_json::{Value, json};

use super::shape_check::{assert_shape, fixture};
use super::support::client;
use crate::{Fakes, Nulls, SessionServiceFake};

async fn call(method: reqwest::Method, url: String, body: Option<Value>) -> (u16, Value) {
    let mut request = client().request(method, url);
    if let Some(body) = body {
        request = request.json(&body);
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    let text = response.text().await.unwrap();
    let body = if text.is_empty() {
        Value::Null
    } else {
        serde_json::from_str(&text).unwrap()
    };
    (status, body)
}

async fn post(base: &str, path: &str, body: Value) -> (u16, Value) {
    call(reqwest::Method::POST, format!("{base}{path}"), Some(body)).await
}

async fn get(base: &str, path: &str) -> (u16, Value) {
    call(reqwest::Method::GET, format!("{base}{path}"), None).await
}

fn create_body() -> Value {
    json!({
        "tenantId": "tenant_a", "userId": "user_b", "executionEnvironment": "desktop",
        "workspaceHint": {"localPaths": ["/tmp/project"]},
        "clientInfo": {"desktopAppVersion": "1.0.0", "localAgentHostVersion": "1.0.0"},
        "supportedCapabilities": ["File.Read"],
    })
}

#[tokio::test]
async fn session_service_answers_have_the_real_shapes() {
    let fixture = fixture();
    let fake = SessionServiceFake::start().await.unwrap();
    let base = fake.url();
    let (status, created) = post(&base, "/sessions", create_body()).await;
    assert_shape(&fixture, "create_compatible", status, &created);
    let id = created["sessionId"].as_str().unwrap().to_string();
    let bundle = &created["policyBundle"];
    assert_eq!(bundle["sessionId"], id.as_str());
    let expires = bundle["expiresAt"].as_str().unwrap();
    assert!(expires.ends_with('Z') && expires.len() == 27, "{expires}");

    let (status, session) = get(&base, &format!("/sessions/{id}")).await;
    assert_shape(&fixture, "get", status, &session);
    assert!(session["createdAt"].as_str().unwrap().ends_with("+00:00"));
    let (status, resumed) = post(&base, &format!("/sessions/{id}/resume"), json!({})).await;
    assert_shape(&fixture, "resume", status, &resumed);
    let rename = json!({"name": "Fix the build", "autoNamed": true});
    let answer = call(
        reqwest::Method::PATCH,
        format!("{base}/sessions/{id}/name"),
        Some(rename),
    )
    .await;
    assert_shape(&fixture, "rename", answer.0, &answer.1);
    assert_eq!(
        get(&base, &format!("/sessions/{id}")).await.1["name"],
        "Fix the build"
    );

    let task = json!({"taskId": "task-1", "prompt": "Fix it", "maxSteps": 10});
    let (status, created_task) = post(&base, &format!("/sessions/{id}/tasks"), task).await;
    assert_shape(&fixture, "task_created", status, &created_task);
    let done = json!({"status": "completed", "stepCount": 3});
    let complete = format!("/sessions/{id}/tasks/task-1/complete");
    let (status, completed) = post(&base, &complete, done.clone()).await;
    assert_shape(&fixture, "task_completed", status, &completed);
    assert_eq!(completed["completionReason"], Value::Null);
    let (status, conflict) = post(&base, &complete, done).await;
    assert_shape(&fixture, "task_conflict", status, &conflict);
    let failed = json!({"status": "failed"});
    let path = format!("/sessions/{id}/tasks/task-9/complete");
    let (status, missing) = post(&base, &path, failed).await;
    assert_shape(&fixture, "task_not_found", status, &missing);
    let reasoned = json!({"taskId": "task-2", "prompt": "Again"});
    post(&base, &format!("/sessions/{id}/tasks"), reasoned).await;
    let end = json!({"status": "cancelled", "stepCount": 0, "completionReason": "user"});
    post(&base, &format!("/sessions/{id}/tasks/task-2/complete"), end).await;
    let (status, record) = get(&base, &format!("/sessions/{id}/tasks/task-2")).await;
    assert_shape(&fixture, "task_record", status, &record);

    let (status, invalid) = post(&base, &format!("/sessions/{id}/tasks"), json!({})).await;
    assert_shape(&fixture, "validation", status, &invalid);
    assert_eq!(invalid["detail"][0]["loc"], json!(["body", "taskId"]));
    let (status, unknown) = post(&base, "/sessions/nope/resume", json!({})).await;
    assert_shape(&fixture, "session_not_found", status, &unknown);
    assert_eq!(unknown["message"], "Session not found: nope");
    let (status, nowhere) = get(&base, "/nowhere").await;
    assert_shape(&fixture, "unknown_route", status, &nowhere);

    let (status, cancelled) = post(&base, &format!("/sessions/{id}/cancel"), json!({})).await;
    assert_eq!((status, cancelled), (204, Value::Null));
    let (status, refused) = post(&base, &format!("/sessions/{id}/resume"), json!({})).await;
    assert_eq!(
        (status, refused["message"].as_str()),
        (
            409,
            Some("Cannot resume session in SESSION_CANCELLED state")
        )
    );
    let (_, again) = post(&base, "/sessions", create_body()).await;
    let again = again["sessionId"].as_str().unwrap();
    fake.expire_session(again);
    let (status, expired) = post(&base, &format!("/sessions/{again}/resume"), json!({})).await;
    assert_shape(&fixture, "resume_expired", status, &expired);
    assert_eq!(fake.status(again).as_deref(), Some("SESSION_FAILED"));

    let mut sandbox = create_body();
    sandbox["executionEnvironment"] = json!("cloud_sandbox");
    let (status, provisioning) = post(&base, "/sessions", sandbox).await;
    assert_shape(&fixture, "create_sandbox", status, &provisioning);
}

#[tokio::test]
async fn incompatible_answers_have_the_real_shapes() {
    let fixture = fixture();
    let fake = SessionServiceFake::start().await.unwrap();
    let (_, created) = post(&fake.url(), "/sessions", create_body()).await;
    let id = created["sessionId"].as_str().unwrap();
    fake.answer_incompatible("Desktop App version 0.0.1 < minimum 0.1.0");
    let (status, refused) = post(&fake.url(), "/sessions", create_body()).await;
    assert_shape(&fixture, "create_incompatible", status, &refused);
    let path = format!("/sessions/{id}/resume");
    let (status, refused) = post(&fake.url(), &path, json!({})).await;
    assert_shape(&fixture, "resume_incompatible", status, &refused);
    assert_eq!(
        refused["message"],
        "Desktop App version 0.0.1 < minimum 0.1.0"
    );
    let refused_id = fake.session_ids()[1].clone();
    assert_eq!(fake.status(&refused_id).as_deref(), Some("SESSION_CREATED"));
}

#[tokio::test]
async fn the_version_gate_gives_the_real_reasons() {
    let fake = SessionServiceFake::start().await.unwrap();
    fake.set_version_gate(true);
    let mut old = create_body();
    old["clientInfo"]["desktopAppVersion"] = json!("0.0.9");
    let (_, answer) = post(&fake.url(), "/sessions", old).await;
    assert_eq!(
        answer["incompatibilityReason"],
        "Desktop App version 0.0.9 < minimum 0.1.0"
    );
    let mut none = create_body();
    none["supportedCapabilities"] = json!([]);
    let (_, answer) = post(&fake.url(), "/sessions", none).await;
    assert_eq!(
        answer["incompatibilityReason"],
        "Client must support at least one capability"
    );
    let (_, answer) = post(&fake.url(), "/sessions", create_body()).await;
    assert_eq!(answer["compatibilityStatus"], "compatible");
}

/// Every object member at any depth, as `/a/b` paths, with its value.
fn members(value: &Value, at: &str, out: &mut Vec<(String, Value)>) {
    match value {
        Value::Object(object) => object.iter().for_each(|(name, member)| {
            let path = format!("{at}/{name}");
            out.push((path.clone(), member.clone()));
            members(member, &path, out);
        }),
        Value::Array(items) => items
            .iter()
            .enumerate()
            .for_each(|(index, item)| members(item, &format!("{at}/{index}"), out)),
        _ => {}
    }
}

#[tokio::test]
async fn the_null_styles_add_or_drop_only_optional_members() {
    let fake = SessionServiceFake::start().await.unwrap();
    let base = fake.url();
    fake.set_nulls(Nulls::Verbose);
    let (_, verbose) = post(&base, "/sessions", create_body()).await;
    assert_eq!(verbose["incompatibilityReason"], Value::Null);
    assert!(
        verbose
            .as_object()
            .unwrap()
            .contains_key("incompatibilityReason")
    );
    fake.answer_incompatible("too old");
    let (_, refused) = post(&base, "/sessions", create_body()).await;
    assert!(refused.as_object().unwrap().contains_key("policyBundle"));
    assert_eq!(refused["policyBundle"], Value::Null);
    fake.answer_compatible();

    fake.set_nulls(Nulls::Omitted);
    let (_, compact) = post(&base, "/sessions", create_body()).await;
    let mut found = Vec::new();
    members(&compact, "", &mut found);
    let nulls: Vec<_> = found.iter().filter(|(_, v)| v.is_null()).collect();
    assert!(nulls.is_empty(), "{nulls:?}");
    let read = &compact["policyBundle"]["capabilities"][0];
    assert_eq!(read["name"], "File.Read");
    assert!(read.get("allowedCommands").is_none() && read.get("allowedPaths").is_some());
    let id = compact["sessionId"].as_str().unwrap();
    let task = json!({"taskId": "t-1", "prompt": "p"});
    post(&base, &format!("/sessions/{id}/tasks"), task).await;
    let path = format!("/sessions/{id}/tasks/t-1/complete");
    let (_, done) = post(&base, &path, json!({"status": "completed"})).await;
    assert_eq!(
        done,
        json!({"taskId": "t-1", "status": "completed", "stepCount": 0})
    );

    fake.set_nulls(Nulls::AsServed);
    fake.set_resume_feature_flags(true);
    fake.set_feature_flag("mcpEnabled", json!(true));
    let (_, resumed) = post(&base, &format!("/sessions/{id}/resume"), json!({})).await;
    assert_eq!(
        resumed["featureFlags"],
        json!({"approvalUiEnabled": false, "mcpEnabled": true})
    );
}

#[tokio::test]
async fn workspace_service_answers_have_the_real_shapes() {
    let fixture = fixture();
    let fakes = Fakes::start().await.unwrap();
    let (_, created) = post(&fakes.session.url(), "/sessions", create_body()).await;
    let session_id = created["sessionId"].as_str().unwrap().to_string();
    let ws = created["workspaceId"].as_str().unwrap().to_string();
    let base = fakes.workspace.url();
    let artifacts = format!("/workspaces/{ws}/artifacts");

    let messages = json!([{"role": "user", "content": "hi"}]);
    let upload = json!({
        "sessionId": session_id, "taskId": "task-1", "artifactType": "session_history",
        "messages": messages, "snapshotAt": "2026-01-01T00:00:00Z", "metadata": {},
    });
    let (status, answer) = post(&base, &artifacts, upload).await;
    assert_shape(&fixture, "artifact_created", status, &answer);
    let uri = answer["artifactUri"].as_str().unwrap();
    assert!(uri.starts_with(&format!("s3://{ws}/{session_id}/session_history/")));
    let path = format!("/workspaces/{ws}/sessions/{session_id}/history");
    let (status, history) = get(&base, &path).await;
    assert_shape(&fixture, "history", status, &history);
    assert_eq!(history, messages);
    let (status, none) = get(&base, &format!("/workspaces/{ws}/sessions/other/history")).await;
    assert_eq!((status, none), (200, json!([])));

    let patch = format!("{}/sessions/{session_id}/name", fakes.session.url());
    let name = json!({"name": "Say hi"});
    call(reqwest::Method::PATCH, patch, Some(name)).await;
    let (status, listed) = get(&base, &format!("/workspaces/{ws}/sessions")).await;
    assert_shape(&fixture, "workspace_sessions", status, &listed);
    let first = &listed["sessions"][0];
    assert_eq!(
        (&first["name"], &first["taskCount"]),
        (&json!("Say hi"), &json!(1))
    );

    let missing = json!({"sessionId": session_id, "artifactType": "session_history"});
    let (status, refused) = post(&base, &artifacts, missing).await;
    assert_shape(&fixture, "history_missing_messages", status, &refused);
    fakes.workspace.set_max_artifact_bytes(Some(2));
    let output = json!({"sessionId": session_id, "artifactType": "tool_output", "contentBase64": "aGVsbG8="});
    let (status, refused) = post(&base, &artifacts, output).await;
    assert_shape(&fixture, "artifact_too_large", status, &refused);
    assert_eq!(refused["message"], "Artifact too large: 5 bytes (limit 2)");
    let (status, refused) = post(
        &base,
        "/workspaces/ws-unknown/artifacts",
        json!({"sessionId": "s", "artifactType": "tool_output", "contentBase64": "aGk="}),
    )
    .await;
    assert_shape(&fixture, "workspace_not_found", status, &refused);
    let (status, refused) = get(&base, "/workspaces/ws-unknown/sessions").await;
    assert_shape(&fixture, "workspace_not_found", status, &refused);
    let (status, invalid) = post(&base, &artifacts, json!({"artifactType": "movie"})).await;
    assert_shape(&fixture, "validation", status, &invalid);
    assert_eq!(invalid["detail"].as_array().map(Vec::len), Some(2));
}

#[tokio::test]
async fn the_session_list_pages_like_the_real_service() {
    let fakes = Fakes::start().await.unwrap();
    let ws = "ws-seeded";
    for index in 0..3 {
        fakes
            .workspace
            .set_history(ws, &format!("s-{index}"), vec![json!({"role": "user"})]);
    }
    let base = fakes.workspace.url();
    let (_, page) = get(&base, &format!("/workspaces/{ws}/sessions?limit=2")).await;
    let ids: Vec<_> = page["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["sessionId"].clone())
        .collect();
    assert_eq!(ids.len(), 2);
    let token = page["nextToken"].as_str().unwrap().to_string();
    let path = format!("/workspaces/{ws}/sessions?limit=2&nextToken={token}");
    let (_, rest) = get(&base, &path).await;
    assert_eq!(rest["sessions"].as_array().map(Vec::len), Some(1));
    assert!(rest.get("nextToken").is_none());
    let (status, _) = get(&base, &format!("/workspaces/{ws}/sessions?limit=0")).await;
    assert_eq!(status, 422);
}
