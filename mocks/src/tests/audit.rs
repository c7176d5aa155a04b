//! The Audit and Telemetry Service fakes over HTTP.

use crate::FaultControl;
use serde_json::{Value, json};

use super::support::{client, post_status};
use crate::{EventService, EventServiceFake};

fn envelope(n: u64) -> Value {
    json!({
        "eventId": format!("evt_{n}"), "eventType": "session_started",
        "timestamp": "2026-11-25T00:00:00Z", "component": "LocalAgentHost",
        "boundedContext": "SessionCoordination", "severity": "info", "payload": {},
    })
}

async fn post(fake: &EventServiceFake, body: &Value) -> u16 {
    post_status(&format!("{}{}", fake.url(), fake.kind().path()), body).await
}

#[tokio::test]
async fn batches_arrays_and_single_envelopes_are_recorded_in_order() {
    let fake = EventServiceFake::start(EventService::Audit).await.unwrap();
    assert_eq!(
        post(&fake, &json!({"events": [envelope(1), envelope(2)]})).await,
        202
    );
    assert_eq!(post(&fake, &json!([envelope(3)])).await, 202);
    assert_eq!(post(&fake, &envelope(4)).await, 202);
    assert_eq!(post(&fake, &json!({"nothing": true})).await, 422);
    let ids: Vec<Value> = fake
        .envelopes()
        .iter()
        .map(|e| e["eventId"].clone())
        .collect();
    assert_eq!(
        ids,
        vec![
            json!("evt_1"),
            json!("evt_2"),
            json!("evt_3"),
            json!("evt_4")
        ]
    );
    assert_eq!(fake.batches().len(), 3);
}

#[tokio::test]
async fn telemetry_listens_on_its_own_path_and_faults_come_first() {
    let fake = EventServiceFake::start(EventService::Telemetry)
        .await
        .unwrap();
    let wrong = client()
        .post(format!("{}/audit/events", fake.url()))
        .json(&envelope(1))
        .send()
        .await
        .unwrap();
    assert_eq!(wrong.status().as_u16(), 404);
    fake.fail_next(2, 500, json!({"code": "INTERNAL_ERROR", "message": "boom"}));
    assert_eq!(post(&fake, &envelope(1)).await, 500);
    assert_eq!(post(&fake, &envelope(1)).await, 500);
    assert_eq!(post(&fake, &envelope(1)).await, 202);
    assert_eq!(fake.envelopes().len(), 1);
    fake.go_down().await;
    let refused = client()
        .post(format!("{}/telemetry/events", fake.url()))
        .json(&envelope(2))
        .send()
        .await;
    assert!(refused.is_err());
}
