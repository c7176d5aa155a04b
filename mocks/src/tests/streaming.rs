//! The axum gateway really streams: ordering is asserted through channels, never by
//! sleeping until something should have happened.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::support::{Event, accumulate, client, next_event, parse_sse, stream_events};
use crate::{GatewayFake, GatewayReply, ScriptedToolCall, StreamStep, StreamingGateway};

fn chunk(text: &str) -> StreamStep {
    StreamStep::Chunk(text.to_string())
}

fn payload(event: Event) -> String {
    match event {
        Event::Payload(payload, _) => payload,
        other => panic!("expected a payload, got {other:?}"),
    }
}

#[tokio::test]
async fn a_chunk_arrives_before_a_later_delay_elapses() {
    let gateway = StreamingGateway::start().await.unwrap();
    gateway.push_stream(vec![
        chunk("first"),
        StreamStep::Delay(Duration::from_secs(60)),
        chunk("second"),
    ]);
    let (status, mut events) = stream_events(&gateway.url()).await;
    assert_eq!(status, 200);
    // A buffering server could not deliver this before the 60 s delay (next_event gives up
    // after 10 s).
    assert_eq!(payload(next_event(&mut events).await), "first");
    assert_eq!(
        gateway.chunks_sent().await,
        1,
        "the second chunk is still behind the delay"
    );
}

#[tokio::test]
async fn delays_separate_chunks() {
    let gateway = StreamingGateway::start().await.unwrap();
    let delay = Duration::from_millis(300);
    gateway.push_stream(vec![
        chunk("a"),
        StreamStep::Delay(delay),
        chunk("b"),
        StreamStep::done(),
    ]);
    let started = Instant::now();
    let (_, mut events) = stream_events(&gateway.url()).await;
    let Event::Payload(first, _) = next_event(&mut events).await else {
        panic!()
    };
    let Event::Payload(second, second_at) = next_event(&mut events).await else {
        panic!()
    };
    assert_eq!((first.as_str(), second.as_str()), ("a", "b"));
    assert!(
        second_at - started >= delay,
        "b came {:?} after the request",
        second_at - started
    );
    assert_eq!(payload(next_event(&mut events).await), "[DONE]");
    assert!(matches!(next_event(&mut events).await, Event::End));
}

#[tokio::test]
async fn a_stall_holds_the_stream_until_released() {
    let gateway = StreamingGateway::start().await.unwrap();
    gateway.push_stream(vec![
        chunk("before"),
        StreamStep::StallUntilReleased,
        chunk("after"),
        StreamStep::done(),
    ]);
    let (_, mut events) = stream_events(&gateway.url()).await;
    assert_eq!(payload(next_event(&mut events).await), "before");
    // Absence can only be checked over some window: nothing may come while stalled.
    let during_stall = tokio::time::timeout(Duration::from_millis(300), events.recv()).await;
    assert!(
        during_stall.is_err(),
        "got {during_stall:?} during the stall"
    );
    assert_eq!(gateway.chunks_sent().await, 1);
    gateway.release();
    assert_eq!(payload(next_event(&mut events).await), "after");
    assert_eq!(payload(next_event(&mut events).await), "[DONE]");
    assert!(matches!(next_event(&mut events).await, Event::End));
    assert_eq!(gateway.chunks_sent().await, 3);
}

#[tokio::test]
async fn a_release_before_the_stall_lets_it_pass() {
    let gateway = StreamingGateway::start().await.unwrap();
    gateway.release();
    gateway.push_stream(vec![
        StreamStep::StallUntilReleased,
        chunk("x"),
        StreamStep::done(),
    ]);
    let (_, mut events) = stream_events(&gateway.url()).await;
    assert_eq!(payload(next_event(&mut events).await), "x");
}

#[tokio::test]
async fn disconnect_aborts_the_body_without_done() {
    let gateway = StreamingGateway::start().await.unwrap();
    gateway.push_stream(vec![
        chunk("partial"),
        StreamStep::Disconnect,
        StreamStep::done(),
    ]);
    let (_, mut events) = stream_events(&gateway.url()).await;
    assert_eq!(payload(next_event(&mut events).await), "partial");
    assert!(
        matches!(next_event(&mut events).await, Event::Error),
        "the body must fail, not end cleanly"
    );
    assert_eq!(gateway.chunks_sent().await, 1);
}

#[tokio::test]
async fn a_stream_without_done_ends_cleanly() {
    let gateway = StreamingGateway::start().await.unwrap();
    gateway.push_stream(vec![chunk("only")]);
    let (_, mut events) = stream_events(&gateway.url()).await;
    assert_eq!(payload(next_event(&mut events).await), "only");
    assert!(matches!(next_event(&mut events).await, Event::End));
}

#[tokio::test]
async fn replies_render_like_the_wiremock_gateway() {
    let streaming = StreamingGateway::start().await.unwrap();
    let plain = GatewayFake::start().await.unwrap();
    let replies = [
        GatewayReply::text("same words on both gateways, streamed"),
        GatewayReply::ToolCalls {
            text: Some("Reading.".into()),
            calls: vec![ScriptedToolCall::new("c1", "ReadFile", r#"{"path":"x"}"#)],
        },
    ];
    for reply in replies {
        streaming.push_reply(reply.clone());
        plain.push_reply(reply);
        let (_, mut events) = stream_events(&streaming.url()).await;
        let mut streamed = Vec::new();
        loop {
            match next_event(&mut events).await {
                Event::Payload(payload, _) => streamed.push(payload),
                Event::End => break,
                Event::Error => panic!("stream failed"),
            }
        }
        let body = client()
            .post(format!("{}/chat/completions", plain.url()))
            .json(&json!({"model": "gpt-test-1"}))
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        let (streamed, buffered) = (accumulate(&streamed), accumulate(&parse_sse(&body)));
        assert_eq!(streamed.text, buffered.text);
        assert_eq!(streamed.calls, buffered.calls);
        assert_eq!(streamed.content_deltas, buffered.content_deltas);
        assert_eq!(
            (streamed.finish_reason, streamed.usage, streamed.done),
            (buffered.finish_reason, buffered.usage, true)
        );
    }
}

#[tokio::test]
async fn status_replies_empty_script_and_recording() {
    let gateway = StreamingGateway::start().await.unwrap();
    gateway.push_reply(GatewayReply::Status {
        status: 429,
        headers: vec![("Retry-After".into(), "1".into())],
        body: r#"{"error":"slow"}"#.into(),
    });
    let url = format!("{}/chat/completions", gateway.url());
    let response = client()
        .post(&url)
        .bearer_auth("t")
        .json(&json!({"a": 1}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 429);
    assert_eq!(response.headers()["retry-after"], "1");
    assert_eq!(response.headers()["content-type"], "application/json");

    let response = client()
        .post(&url)
        .json(&json!({"a": 2}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 500);
    assert_eq!(
        response.json::<Value>().await.unwrap(),
        json!({"error": "no scripted reply left"})
    );

    let response = client()
        .get(format!("{}/models", gateway.url()))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 404);

    let requests = gateway.requests().await;
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[0].header("Authorization"), Some("Bearer t"));
    assert_eq!(requests[0].raw_body, br#"{"a":1}"#);
    assert_eq!(
        (requests[0].body["a"].clone(), requests[1].body["a"].clone()),
        (json!(1), json!(2))
    );
    assert_eq!(gateway.all_requests().await.len(), 3);
}

#[tokio::test]
async fn from_reply_allows_interleaving_stalls_in_a_well_formed_stream() {
    let gateway = StreamingGateway::start().await.unwrap();
    let mut steps =
        StreamStep::from_reply(&GatewayReply::text("one two three four"), None).unwrap();
    let total = steps.len();
    steps.insert(1, StreamStep::StallUntilReleased);
    gateway.push_stream(steps);
    let (_, mut events) = stream_events(&gateway.url()).await;
    let first: Value = serde_json::from_str(&payload(next_event(&mut events).await)).unwrap();
    assert!(first["choices"][0]["delta"]["content"].is_string());
    assert!(
        gateway.chunks_sent().await < total,
        "first text arrived before the last chunk was sent"
    );
    gateway.release();
    let mut rest = 1;
    while let Event::Payload(..) = next_event(&mut events).await {
        rest += 1;
    }
    assert_eq!(rest, total);
}
