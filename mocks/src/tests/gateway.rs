//! The wiremock gateway over HTTP.

use serde_json::{Value, json};

use super::support::{accumulate, client, parse_sse};
use crate::{GatewayFake, GatewayReply, ScriptedToolCall};

async fn post(fake: &GatewayFake, body: Value) -> reqwest::Response {
    client()
        .post(format!("{}/chat/completions", fake.url()))
        .bearer_auth("tok")
        .header("X-Session-Id", "sess_1")
        .json(&body)
        .send()
        .await
        .unwrap()
}

#[tokio::test]
async fn scripted_replies_are_served_in_order_and_requests_recorded() {
    let fake = GatewayFake::start().await.unwrap();
    assert!(fake.url().ends_with("/v1"));
    fake.push_reply(GatewayReply::text("Hello there, how are you today?"));
    fake.push_reply(GatewayReply::ToolCalls {
        text: None,
        calls: vec![ScriptedToolCall::new(
            "call_9",
            "ReadFile",
            r#"{"path":"README.md"}"#,
        )],
    });
    fake.set_usage(42, 9);
    assert_eq!(fake.remaining_replies(), 2);

    let response = post(&fake, json!({"model": "gpt-test-1", "stream": true, "messages": [{"role": "user", "content": "hi"}]})).await;
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["content-type"], "text/event-stream");
    let first = accumulate(&parse_sse(&response.text().await.unwrap()));
    assert_eq!(first.text, "Hello there, how are you today?");
    assert_eq!(first.usage.unwrap()["prompt_tokens"], 42);
    assert!(
        first.models.iter().all(|model| model == "gpt-test-1"),
        "model echoed"
    );
    assert_eq!(fake.remaining_replies(), 1);

    let response = post(&fake, json!({"model": "other-model", "messages": []})).await;
    let second = accumulate(&parse_sse(&response.text().await.unwrap()));
    assert_eq!(second.calls[0].name, "ReadFile");
    assert_eq!(second.calls[0].arguments, r#"{"path":"README.md"}"#);
    assert_eq!(fake.remaining_replies(), 0);

    let requests = fake.requests().await;
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[0].method, "POST");
    assert_eq!(requests[0].path, "/v1/chat/completions");
    assert_eq!(requests[0].header("authorization"), Some("Bearer tok"));
    assert_eq!(requests[0].header("X-SESSION-ID"), Some("sess_1"));
    assert!(
        requests[0]
            .headers
            .iter()
            .any(|(name, _)| name == "x-session-id"),
        "names lower-case"
    );
    assert_eq!(requests[0].body["messages"][0]["content"], "hi");
    assert_eq!(requests[1].body["model"], "other-model");
}

#[tokio::test]
async fn status_replies_carry_headers_and_body() {
    let fake = GatewayFake::start().await.unwrap();
    fake.push_reply(GatewayReply::Status {
        status: 429,
        headers: vec![("Retry-After".into(), "2".into())],
        body: r#"{"error":"rate limited"}"#.into(),
    });
    fake.push_reply(GatewayReply::status(400, r#"{"error":"blocked"}"#));
    fake.push_reply(GatewayReply::status(502, "<html>bad gateway</html>"));

    let response = post(&fake, json!({})).await;
    assert_eq!(response.status(), 429);
    assert_eq!(response.headers()["retry-after"], "2");
    assert_eq!(response.headers()["content-type"], "application/json");
    assert_eq!(
        response.json::<Value>().await.unwrap(),
        json!({"error": "rate limited"})
    );

    let response = post(&fake, json!({})).await;
    assert_eq!(response.status(), 400);
    assert_eq!(
        response.json::<Value>().await.unwrap(),
        json!({"error": "blocked"})
    );

    let response = post(&fake, json!({})).await;
    assert_eq!(response.status(), 502);
    assert!(
        response.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/plain")
    );
}

#[tokio::test]
async fn empty_script_answers_500_and_still_records() {
    let fake = GatewayFake::start().await.unwrap();
    let response = post(&fake, json!({"n": 1})).await;
    assert_eq!(response.status(), 500);
    assert_eq!(
        response.json::<Value>().await.unwrap(),
        json!({"error": "no scripted reply left"})
    );
    let requests = fake.requests().await;
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].body, json!({"n": 1}));
}

#[tokio::test]
async fn usage_can_be_omitted_and_raw_sse_is_verbatim() {
    let fake = GatewayFake::start().await.unwrap();
    fake.omit_usage();
    fake.push_reply(GatewayReply::text("no usage here at all"));
    fake.push_reply(GatewayReply::RawSse(vec![r#"{"error":"boom"}"#.into()]));
    let out = accumulate(&parse_sse(
        &post(&fake, json!({})).await.text().await.unwrap(),
    ));
    assert_eq!(out.usage, None);
    assert!(out.done);
    let body = post(&fake, json!({})).await.text().await.unwrap();
    assert_eq!(body, "data: {\"error\":\"boom\"}\n\n");
}

#[tokio::test]
async fn unknown_paths_get_404_and_non_json_bodies_are_kept_raw() {
    let fake = GatewayFake::start().await.unwrap();
    fake.push_reply(GatewayReply::text("unused"));
    let response = client()
        .get(format!("{}/models", fake.url()))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 404);
    assert!(response.json::<Value>().await.unwrap()["error"].is_string());
    assert_eq!(
        fake.remaining_replies(),
        1,
        "a 404 does not consume the script"
    );

    let response = client()
        .post(format!("{}/chat/completions", fake.url()))
        .body("not json")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let requests = fake.requests().await;
    assert_eq!(
        requests.len(),
        1,
        "only chat/completions posts: {requests:?}"
    );
    assert_eq!(requests[0].body, Value::Null);
    assert_eq!(requests[0].raw_body, b"not json");
    assert_eq!(fake.all_requests().await.len(), 2);
}

#[tokio::test]
async fn fallback_reply_replaces_the_500() {
    let fake = GatewayFake::start().await.unwrap();
    fake.set_fallback_reply(Some(GatewayReply::text("default answer")));
    let out = accumulate(&parse_sse(
        &post(&fake, json!({})).await.text().await.unwrap(),
    ));
    assert_eq!(out.text, "default answer");
    fake.set_fallback_reply(None);
    assert_eq!(post(&fake, json!({})).await.status(), 500);
}
