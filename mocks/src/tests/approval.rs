//! The Approval Service fake over HTTP.

use crate::FaultControl;
use serde_json::{Value, json};

use super::support::{client, post_status};
use crate::ApprovalServiceFake;

fn record() -> Value {
    json!({
        "approvalId": "appr_1", "sessionId": "sess_1", "taskId": "task_1", "stepId": "step_001",
        "userId": "u", "tenantId": "t", "workspaceId": "ws", "decision": "approved",
        "actionSummary": "Run: ls", "riskLevel": "medium",
        "clientTimestamp": "2026-11-25T00:00:00Z",
    })
}

async fn post(fake: &ApprovalServiceFake, body: &Value) -> u16 {
    post_status(&format!("{}/approvals", fake.url()), body).await
}

#[tokio::test]
async fn records_valid_decisions_and_refuses_incomplete_ones() {
    let fake = ApprovalServiceFake::start().await.unwrap();
    assert_eq!(post(&fake, &record()).await, 201);
    let mut incomplete = record();
    incomplete.as_object_mut().unwrap().remove("riskLevel");
    assert_eq!(post(&fake, &incomplete).await, 422);
    assert_eq!(fake.records(), vec![record()]);
    assert_eq!(fake.requests().await.len(), 2);
}

#[tokio::test]
async fn faults_come_first_and_down_refuses_connections() {
    let fake = ApprovalServiceFake::start().await.unwrap();
    fake.fail_next(1, 503, json!({"code": "UNAVAILABLE", "message": "busy"}));
    assert_eq!(post(&fake, &record()).await, 503);
    assert_eq!(post(&fake, &record()).await, 201);
    fake.go_down().await;
    let refused = client()
        .post(format!("{}/approvals", fake.url()))
        .json(&record())
        .send()
        .await;
    assert!(refused.is_err());
    assert_eq!(fake.records().len(), 1);
}

#[tokio::test]
async fn a_hung_service_answers_only_after_its_delay() {
    let fake = ApprovalServiceFake::start().await.unwrap();
    fake.slow_by(Some(std::time::Duration::from_secs(30)));
    let hung = client()
        .post(format!("{}/approvals", fake.url()))
        .json(&record())
        .timeout(std::time::Duration::from_millis(200))
        .send()
        .await;
    assert!(hung.is_err_and(|error| error.is_timeout()));
    fake.slow_by(None);
    assert_eq!(post(&fake, &record()).await, 201);
}
