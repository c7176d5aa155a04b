//! The Workspace Service fake over HTTP.

use crate::FaultControl;
use serde_json::{Value, json};

use super::support::client;
use crate::WorkspaceFake;

async fn upload(fake: &WorkspaceFake, workspace_id: &str, body: &Value) -> (u16, Value) {
    let response = client()
        .post(format!(
            "{}/workspaces/{workspace_id}/artifacts",
            fake.url()
        ))
        .json(body)
        .send()
        .await
        .unwrap();
    (
        response.status().as_u16(),
        response.json().await.unwrap_or(Value::Null),
    )
}

async fn fetch_history(fake: &WorkspaceFake, workspace_id: &str, session_id: &str) -> (u16, Value) {
    let url = format!(
        "{}/workspaces/{workspace_id}/sessions/{session_id}/history",
        fake.url()
    );
    let response = client().get(url).send().await.unwrap();
    (
        response.status().as_u16(),
        response.json().await.unwrap_or(Value::Null),
    )
}

fn history_upload(session_id: &str, messages: Value) -> Value {
    json!({
        "sessionId": session_id, "taskId": "task_1", "artifactType": "session_history",
        "artifactName": "history.json", "contentType": "application/json", "messages": messages,
    })
}

#[tokio::test]
async fn uploads_are_kept_in_order_and_answered_with_an_uri() {
    let fake = WorkspaceFake::start().await.unwrap();
    let output = json!({
        "sessionId": "sess_1", "taskId": "task_1", "artifactType": "tool_output",
        "artifactName": "out.txt", "contentType": "text/plain", "contentBase64": "aGk=",
    });
    let (status, answer) = upload(&fake, "ws_1", &output).await;
    assert_eq!(status, 201);
    let artifact_id = answer["artifactId"].as_str().unwrap();
    assert!(uuid::Uuid::parse_str(artifact_id).is_ok(), "{artifact_id}");
    assert_eq!(
        answer["artifactUri"],
        format!("s3://ws_1/sess_1/tool_output/{artifact_id}")
    );
    let history = history_upload("sess_1", json!([{"role": "user", "content": "hi"}]));
    assert_eq!(upload(&fake, "ws_1", &history).await.0, 201);
    assert_eq!(fake.uploads().await, vec![output, history]);
    assert_eq!(fake.requests().await.len(), 2);
}

#[tokio::test]
async fn the_last_history_upload_wins() {
    let fake = WorkspaceFake::start().await.unwrap();
    assert_eq!(fake.history("sess_1").await, None);
    assert_eq!(
        fetch_history(&fake, "ws_1", "sess_1").await,
        (200, json!([])),
        "no history is an empty one, not a 404"
    );
    upload(&fake, "ws_1", &history_upload("sess_1", json!([{"n": 1}]))).await;
    upload(
        &fake,
        "ws_1",
        &history_upload("sess_1", json!([{"n": 1}, {"n": 2}])),
    )
    .await;
    upload(
        &fake,
        "ws_1",
        &history_upload("sess_2", json!([{"other": true}])),
    )
    .await;
    assert_eq!(
        fake.history("sess_1").await,
        Some(vec![json!({"n": 1}), json!({"n": 2})])
    );
    assert_eq!(
        fetch_history(&fake, "ws_1", "sess_1").await,
        (200, json!([{"n": 1}, {"n": 2}]))
    );
    assert_eq!(
        fetch_history(&fake, "ws_other", "sess_1").await,
        (200, json!([])),
        "history belongs to its workspace"
    );

    fake.set_history("ws_9", "sess_9", vec![json!({"seeded": true})]);
    assert_eq!(
        fetch_history(&fake, "ws_9", "sess_9").await,
        (200, json!([{"seeded": true}]))
    );
}

#[tokio::test]
async fn faults_size_limit_and_validation() {
    let fake = WorkspaceFake::start().await.unwrap();
    let body = history_upload("sess_1", json!([]));
    fake.fail_next(
        1,
        404,
        json!({"code": "WORKSPACE_NOT_FOUND", "message": "gone", "retryable": false}),
    );
    let (status, answer) = upload(&fake, "ws_1", &body).await;
    assert_eq!(
        (status, answer["code"].as_str()),
        (404, Some("WORKSPACE_NOT_FOUND"))
    );
    assert!(
        fake.uploads().await.is_empty(),
        "a failed upload is not stored"
    );
    fake.fail_next(1, 500, Value::Null);
    assert_eq!(
        fetch_history(&fake, "ws_1", "sess_1").await.0,
        500,
        "faults hit any endpoint"
    );

    fake.set_max_artifact_bytes(Some(1));
    let (status, answer) = upload(&fake, "ws_1", &body).await;
    assert_eq!(
        (status, answer["code"].as_str()),
        (413, Some("FILE_TOO_LARGE"))
    );
    fake.set_max_artifact_bytes(None);

    assert_eq!(
        upload(&fake, "ws_1", &json!({"artifactType": "tool_output"}))
            .await
            .0,
        422
    );
    assert_eq!(
        upload(
            &fake,
            "ws_1",
            &json!({"sessionId": "s", "artifactType": "session_history"})
        )
        .await
        .0,
        400,
        "a history without messages is the service's own 400"
    );
    assert_eq!(upload(&fake, "ws_1", &body).await.0, 201);
    assert_eq!(fake.uploads().await.len(), 1);
    let response = client()
        .get(format!("{}/workspaces", fake.url()))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 404);
    assert_eq!(fake.requests().await.len(), 7);
}
