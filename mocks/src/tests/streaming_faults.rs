//! The streaming gateway's faults: the shared [`FaultControl`] vocabulary and stalls.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::support::{Event, accumulate, client, next_event, stream_events};
use crate::{FaultControl, GatewayReply, StreamingGateway};

async fn payloads_until_end(url: &str) -> Vec<String> {
    let (status, mut events) = stream_events(url).await;
    assert_eq!(status, 200);
    let mut payloads = Vec::new();
    loop {
        match next_event(&mut events).await {
            Event::Payload(payload, _) => payloads.push(payload),
            Event::End => return payloads,
            Event::Error => panic!("the stream broke after {payloads:?}"),
        }
    }
}

#[tokio::test]
async fn a_stall_sends_n_chunks_holds_the_stream_and_leaves_the_reply_for_the_retry() {
    let gateway = StreamingGateway::start().await.unwrap();
    gateway.push_reply(GatewayReply::text("one two three four five"));
    gateway.stall_next_after(2);

    let (status, mut events) = stream_events(&gateway.url()).await;
    assert_eq!(status, 200);
    for _ in 0..2 {
        assert!(matches!(next_event(&mut events).await, Event::Payload(..)));
    }
    assert_eq!(gateway.chunks_sent().await, 2, "nothing after the stall");
    assert!(
        events.try_recv().is_err(),
        "the stream neither ended nor broke"
    );
    assert_eq!(
        gateway.remaining_replies(),
        1,
        "the stalled request took no reply"
    );

    // The retry gets the scripted reply whole while the first stream is still stalled.
    let retried = accumulate(&payloads_until_end(&gateway.url()).await);
    assert_eq!(retried.text, "one two three four five");
    assert!(retried.done);
    assert_eq!(gateway.remaining_replies(), 0);

    // The stall ends with the gateway (the end of a scenario).
    drop(gateway);
    assert!(matches!(next_event(&mut events).await, Event::End));
}

#[tokio::test]
async fn failures_come_before_the_script_and_slowness_holds_back_the_head() {
    let gateway = StreamingGateway::start().await.unwrap();
    gateway.push_reply(GatewayReply::text("after the failure"));
    gateway.fail_next(1, 503, json!({"error": "Injected failure"}));
    let url = format!("{}/chat/completions", gateway.url());
    let response = client().post(&url).json(&json!({})).send().await.unwrap();
    assert_eq!(response.status(), 503);
    assert_eq!(
        response.json::<Value>().await.unwrap(),
        json!({"error": "Injected failure"})
    );
    assert_eq!(gateway.remaining_replies(), 1);

    let delay = Duration::from_millis(300);
    gateway.slow_by(Some(delay));
    let started = Instant::now();
    let text = accumulate(&payloads_until_end(&gateway.url()).await).text;
    assert_eq!(text, "after the failure");
    assert!(
        started.elapsed() >= delay,
        "answered after {:?}",
        started.elapsed()
    );
    assert_eq!(FaultControl::requests(&gateway).await.len(), 2);
}
