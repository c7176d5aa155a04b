//! The sandbox side of the fakes (INTEROP.md §9) answers with the real services' shapes:
//! registration (and its refusal), the Workspace Service's file list and upload.

use serde_json::{Value, json};

use super::shape_check::{assert_shape, fixture};
use super::support::client;
use crate::Fakes;

async fn answer(response: reqwest::Response) -> (u16, Value) {
    let status = response.status().as_u16();
    (status, response.json().await.unwrap())
}

#[tokio::test]
async fn registration_answers_have_the_real_shapes() {
    let fixture = fixture();
    let fakes = Fakes::start().await.unwrap();
    fakes
        .session
        .set_sandbox_workspace_service_url(&fakes.workspace.url());
    let launch = fakes.session.provision_sandbox("tenant_a", "user_b");
    let mut registered = fakes.session.watch_registrations();
    let url = format!(
        "{}/sessions/{}/register",
        fakes.session.url(),
        launch.session_id
    );
    let body = |token: &str| json!({"sandboxEndpoint": "http://127.0.0.1:9", "taskArn": "local:1", "registrationToken": token});
    let refused = answer(
        client()
            .post(&url)
            .json(&body("wrong"))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_shape(
        &fixture,
        "sandbox_registration_refused",
        refused.0,
        &refused.1,
    );
    assert_eq!(
        fakes.session.status(&launch.session_id).as_deref(),
        Some("SANDBOX_PROVISIONING")
    );
    let token = launch.registration_token.clone();
    let accepted = answer(
        client()
            .post(&url)
            .json(&body(&token))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_shape(&fixture, "sandbox_registered", accepted.0, &accepted.1);
    assert_eq!(
        accepted.1["policyBundle"]["sessionId"],
        json!(launch.session_id)
    );
    assert_eq!(
        fakes.session.status(&launch.session_id).as_deref(),
        Some("SANDBOX_READY")
    );
    assert_eq!(
        registered.borrow_and_update().as_deref(),
        Some("http://127.0.0.1:9")
    );
    // Registered once: a second registration is refused as the real service refuses it.
    let again = answer(
        client()
            .post(&url)
            .json(&body(&token))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_shape(&fixture, "sandbox_registration_refused", again.0, &again.1);
}

#[tokio::test]
async fn workspace_file_answers_have_the_real_shapes() {
    let fixture = fixture();
    let fakes = Fakes::start().await.unwrap();
    let base = format!("{}/workspaces/ws_1/files", fakes.workspace.url());
    let multipart = "--b\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.txt\"\r\n\r\nhello\r\n--b--\r\n";
    let uploaded = answer(
        client()
            .post(format!("{base}?path=docs/a.txt"))
            .header("content-type", "multipart/form-data; boundary=b")
            .body(multipart)
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_shape(&fixture, "workspace_file_uploaded", uploaded.0, &uploaded.1);
    assert_eq!(
        fakes.workspace.file("ws_1", "docs/a.txt").as_deref(),
        Some(&b"hello"[..])
    );
    let listed = answer(client().get(&base).send().await.unwrap()).await;
    assert_shape(&fixture, "workspace_files_listed", listed.0, &listed.1);
    let bytes = client()
        .get(format!("{base}/docs/a.txt"))
        .send()
        .await
        .unwrap()
        .bytes()
        .await
        .unwrap();
    assert_eq!(&bytes[..], b"hello");
    let missing = client()
        .get(format!("{base}/nope.txt"))
        .send()
        .await
        .unwrap();
    assert_eq!(missing.status().as_u16(), 404);
}
