//! The Session Service fake over HTTP.

use crate::FaultControl;
use serde_json::{Value, json};
use time::format_description::well_known::Rfc3339;

use super::support::client;
use crate::policy::{OMIT, capability_entry, set_capability};
use crate::{SessionServiceFake, default_policy_template};

fn create_body() -> Value {
    json!({
        "tenantId": "tenant_a",
        "userId": "user_b",
        "executionEnvironment": "desktop",
        "workspaceHint": {"localPaths": ["/tmp/project"]},
        "clientInfo": {"desktopAppVersion": "1.0.0"},
        "supportedCapabilities": ["File.Read"],
    })
}

async fn create(fake: &SessionServiceFake) -> (u16, Value) {
    let response = client()
        .post(format!("{}/sessions", fake.url()))
        .json(&create_body())
        .send()
        .await
        .unwrap();
    (
        response.status().as_u16(),
        response.json().await.unwrap_or(Value::Null),
    )
}

async fn post(fake: &SessionServiceFake, path: &str, body: Value) -> (u16, Value) {
    let response = client()
        .post(format!("{}{path}", fake.url()))
        .json(&body)
        .send()
        .await
        .unwrap();
    (
        response.status().as_u16(),
        response.json().await.unwrap_or(Value::Null),
    )
}

async fn get(fake: &SessionServiceFake, path: &str) -> (u16, Value) {
    let response = client()
        .get(format!("{}{path}", fake.url()))
        .send()
        .await
        .unwrap();
    (
        response.status().as_u16(),
        response.json().await.unwrap_or(Value::Null),
    )
}

#[tokio::test]
async fn create_serves_a_rendered_bundle() {
    let fake = SessionServiceFake::start().await.unwrap();
    let (status, answer) = create(&fake).await;
    assert_eq!(status, 201);
    let session_id = answer["sessionId"].as_str().unwrap();
    assert!(uuid::Uuid::parse_str(session_id).is_ok(), "{session_id}");
    assert!(uuid::Uuid::parse_str(answer["workspaceId"].as_str().unwrap()).is_ok());
    assert_eq!(answer["compatibilityStatus"], "compatible");
    assert_eq!(
        answer["featureFlags"],
        json!({"approvalUiEnabled": false, "mcpEnabled": false})
    );
    assert_eq!(answer["name"], "");
    assert!(answer.get("incompatibilityReason").is_none());
    assert_eq!(fake.session_ids(), vec![session_id.to_string()]);

    let bundle = &answer["policyBundle"];
    assert_eq!(bundle["sessionId"], session_id);
    assert_eq!(
        (bundle["tenantId"].as_str(), bundle["userId"].as_str()),
        (Some("tenant_a"), Some("user_b"))
    );
    assert_eq!(bundle["schemaVersion"], "1.0");
    let version = bundle["policyBundleVersion"].as_str().unwrap();
    let (date, hex) = version.split_once('.').unwrap();
    assert_eq!((date.len(), hex.len()), (10, 8), "{version}");
    let expires_at = bundle["expiresAt"].as_str().unwrap();
    assert!(
        expires_at.ends_with('Z') && expires_at.split('.').nth(1).unwrap().len() == 7,
        "{expires_at}"
    );
    let expires = time::OffsetDateTime::parse(expires_at, &Rfc3339).unwrap();
    let ahead = expires - time::OffsetDateTime::now_utc();
    assert!(
        ahead > time::Duration::hours(23) && ahead <= time::Duration::hours(24),
        "{ahead}"
    );

    let read = &bundle["capabilities"][0];
    assert_eq!(read["name"], "File.Read");
    assert_eq!(read["allowedPaths"], json!(["."]));
    assert_eq!(read["maxFileSizeBytes"], 10_485_760);
    assert_eq!(
        (
            read["blockedPaths"].clone(),
            read["requiresApproval"].clone()
        ),
        (Value::Null, Value::Null)
    );
    assert!(
        read.as_object().unwrap().contains_key("allowedCommands"),
        "unset scope fields are present as null"
    );
    assert_eq!(
        bundle["capabilities"][1]["blockedPaths"],
        json!([".env", ".git/"])
    );
    assert_eq!(bundle["capabilities"][2]["name"], "LLM.Call");
    assert_eq!(bundle["llmPolicy"]["allowedModels"], json!(["gpt-test-1"]));
    assert_eq!(
        bundle["approvalRules"][0]["approvalRuleId"],
        "approval_shell_exec"
    );
    assert!(
        !bundle.to_string().contains("{{"),
        "no placeholder left: {bundle}"
    );

    let recorded = fake.requests().await;
    assert_eq!(recorded.len(), 1);
    assert_eq!(
        (recorded[0].method.as_str(), recorded[0].path.as_str()),
        ("POST", "/sessions")
    );
    assert_eq!(
        recorded[0].body["workspaceHint"]["localPaths"][0],
        "/tmp/project"
    );
}

#[tokio::test]
async fn the_template_can_pin_or_omit_fields() {
    let fake = SessionServiceFake::start().await.unwrap();
    assert_eq!(fake.policy(), default_policy_template());
    let (_, before) = create(&fake).await;
    fake.update_policy(|template| {
        template["sessionId"] = json!("sess_someone_else");
        template["expiresAt"] = json!("2020-01-01T00:00:00.000000Z");
        template["schemaVersion"] = json!(OMIT);
        set_capability(
            template,
            capability_entry(
                "Shell.Exec",
                json!({"allowedCommands": ["git"], "requiresApproval": true}),
            ),
        );
    });
    let (_, after) = create(&fake).await;
    let bundle = &after["policyBundle"];
    assert_eq!(bundle["sessionId"], "sess_someone_else");
    assert_eq!(bundle["expiresAt"], "2020-01-01T00:00:00.000000Z");
    assert!(bundle.get("schemaVersion").is_none());
    assert_eq!(bundle["capabilities"][3]["allowedCommands"], json!(["git"]));
    assert_eq!(bundle["capabilities"][3]["blockedCommands"], Value::Null);
    assert_ne!(
        before["policyBundle"]["policyBundleVersion"], bundle["policyBundleVersion"],
        "a new template gets a new version"
    );

    // Keys left out of an object template are filled in; a non-object template is served as is.
    fake.set_policy(json!({"capabilities": []}));
    let (_, filled) = create(&fake).await;
    assert_eq!(filled["policyBundle"]["sessionId"], filled["sessionId"]);
    assert!(filled["policyBundle"]["expiresAt"].is_string());
    fake.set_policy(json!("garbage"));
    assert_eq!(create(&fake).await.1["policyBundle"], "garbage");
}

#[tokio::test]
async fn incompatible_answers_have_no_bundle() {
    let fake = SessionServiceFake::start().await.unwrap();
    fake.answer_incompatible("Desktop app 0.9 is too old");
    let (status, answer) = create(&fake).await;
    assert_eq!(status, 201);
    assert_eq!(answer["compatibilityStatus"], "incompatible");
    assert_eq!(
        answer["incompatibilityReason"],
        "Desktop app 0.9 is too old"
    );
    assert!(answer.get("policyBundle").is_none());
    fake.answer_compatible();
    assert_eq!(create(&fake).await.1["compatibilityStatus"], "compatible");
}

#[tokio::test]
async fn resume_cancel_get_and_tasks() {
    let fake = SessionServiceFake::start().await.unwrap();
    let (_, created) = create(&fake).await;
    let id = created["sessionId"].as_str().unwrap().to_string();

    let (status, resumed) = post(
        &fake,
        &format!("/sessions/{id}/resume"),
        json!({"checkpointCursor": "c1"}),
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(
        (&resumed["sessionId"], &resumed["workspaceId"]),
        (&created["sessionId"], &created["workspaceId"])
    );
    assert_eq!(resumed["compatibilityStatus"], "compatible");
    assert_eq!(resumed["policyBundle"]["sessionId"], id.as_str());
    assert_eq!(resumed["policyBundle"]["tenantId"], "tenant_a");

    let (status, missing) = post(&fake, "/sessions/sess_nope/resume", json!({})).await;
    assert_eq!(
        (status, missing["code"].as_str()),
        (404, Some("SESSION_NOT_FOUND"))
    );

    let (status, task) = post(
        &fake,
        &format!("/sessions/{id}/tasks"),
        json!({"taskId": "task_1", "prompt": "p", "maxSteps": 5}),
    )
    .await;
    assert_eq!(
        (status, task["taskId"].as_str(), task["status"].as_str()),
        (201, Some("task_1"), Some("running"))
    );
    let complete = json!({"status": "completed", "stepCount": 2, "completionReason": "end_turn"});
    let (status, done) = post(
        &fake,
        &format!("/sessions/{id}/tasks/task_1/complete"),
        complete,
    )
    .await;
    assert_eq!(
        (status, done["status"].as_str(), done["stepCount"].as_u64()),
        (200, Some("completed"), Some(2))
    );
    assert_eq!(fake.tasks(&id)[0]["completionReason"], "end_turn");
    let (status, _) = post(
        &fake,
        &format!("/sessions/{id}/tasks/task_x/complete"),
        json!({"status": "failed"}),
    )
    .await;
    assert_eq!(status, 404);

    let (status, metadata) = get(&fake, &format!("/sessions/{id}")).await;
    assert_eq!(
        (
            status,
            metadata["status"].as_str(),
            metadata["tenantId"].as_str()
        ),
        (200, Some("SESSION_RUNNING"), Some("tenant_a"))
    );

    let response = client()
        .post(format!("{}/sessions/{id}/cancel", fake.url()))
        .json(&json!({"reason": "user"}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 204);
    assert_eq!(
        get(&fake, &format!("/sessions/{id}")).await.1["status"],
        "SESSION_CANCELLED"
    );
    assert_eq!(get(&fake, "/sessions/sess_nope").await.0, 404);
}

#[tokio::test]
async fn an_expired_session_cannot_resume() {
    let fake = SessionServiceFake::start().await.unwrap();
    let (_, created) = create(&fake).await;
    let id = created["sessionId"].as_str().unwrap();
    fake.expire_session(id);
    let (status, body) = post(&fake, &format!("/sessions/{id}/resume"), json!({})).await;
    assert_eq!(status, 409);
    assert_eq!(
        (body["code"].as_str(), body["message"].as_str()),
        (Some("INVALID_REQUEST"), Some("Session has expired"))
    );
}

#[tokio::test]
async fn fail_next_hits_any_endpoint_then_recovers() {
    let fake = SessionServiceFake::start().await.unwrap();
    let error = json!({"code": "UNAVAILABLE", "message": "try later", "retryable": true});
    fake.fail_next(2, 503, error.clone());
    assert_eq!(create(&fake).await, (503, error.clone()));
    assert_eq!(get(&fake, "/sessions/anything").await, (503, error));
    let (status, _) = create(&fake).await;
    assert_eq!(status, 201);
    assert_eq!(fake.session_ids().len(), 1, "failed creates create nothing");
    assert_eq!(fake.requests().await.len(), 3, "failures are recorded too");

    fake.fail_next(1, 500, json!("plain text failure"));
    fake.fail_next(1, 502, Value::Null);
    let response = client()
        .post(format!("{}/sessions", fake.url()))
        .json(&create_body())
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 500);
    assert_eq!(response.text().await.unwrap(), "plain text failure");
    let response = client()
        .post(format!("{}/sessions", fake.url()))
        .json(&create_body())
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 502);
    fake.fail_next(3, 500, Value::Null);
    fake.clear_faults();
    assert_eq!(create(&fake).await.0, 201);
}

#[tokio::test]
async fn bad_requests_and_unknown_routes() {
    let fake = SessionServiceFake::start().await.unwrap();
    let (status, body) = post(&fake, "/sessions", json!({"userId": "u"})).await;
    assert_eq!(status, 422);
    assert!(body["detail"].is_array());
    let (status, body) = get(&fake, "/nowhere/at/all").await;
    assert_eq!((status, body), (404, json!({"detail": "Not Found"})));
    let paths: Vec<_> = fake
        .requests()
        .await
        .into_iter()
        .map(|request| request.path)
        .collect();
    assert_eq!(paths, ["/sessions", "/nowhere/at/all"]);
}

#[tokio::test]
async fn workspace_hints_are_read_like_python_reads_them() {
    let fake = SessionServiceFake::start().await.unwrap();
    let mut general = create_body();
    general["workspaceHint"] = json!({"localPaths": []});
    let (status, first) = post(&fake, "/sessions", general.clone()).await;
    assert_eq!(
        status, 201,
        "an empty localPaths is a general chat: {first}"
    );
    let (_, second) = post(&fake, "/sessions", general).await;
    assert_ne!(
        first["workspaceId"], second["workspaceId"],
        "general chats share nothing"
    );
    let (_, project) = create(&fake).await;
    let (_, again) = create(&fake).await;
    assert_eq!(
        project["workspaceId"], again["workspaceId"],
        "one project, one workspace"
    );
    let mut reuse = create_body();
    reuse["workspaceHint"] = json!({"workspaceId": "ws-given"});
    assert_eq!(
        post(&fake, "/sessions", reuse).await.1["workspaceId"],
        "ws-given"
    );
    let mut broken = create_body();
    broken["workspaceHint"] = json!({"localPaths": "/tmp/project"});
    let (status, refused) = post(&fake, "/sessions", broken).await;
    assert_eq!(
        (status, refused["code"].as_str()),
        (400, Some("INVALID_REQUEST"))
    );
}

#[tokio::test]
async fn the_policy_grants_only_what_the_create_asked_for_when_told_to() {
    let fake = SessionServiceFake::start().await.unwrap();
    let names = |answer: &Value| -> Vec<String> {
        answer["policyBundle"]["capabilities"]
            .as_array()
            .unwrap()
            .iter()
            .map(|capability| capability["name"].as_str().unwrap().to_owned())
            .collect()
    };
    let (_, answer) = create(&fake).await;
    assert!(names(&answer).len() > 1, "all granted by default: {answer}");
    fake.set_grant_only_requested(true);
    let (_, answer) = create(&fake).await;
    assert_eq!(names(&answer), ["File.Read"]);
}
