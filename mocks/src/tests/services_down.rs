//! `go_down`: connection refused afterwards, the port stays reserved, recordings survive;
//! and `Fakes::start` wiring.

use crate::FaultControl;
use std::net::SocketAddr;

use serde_json::json;

use super::support::client;
use crate::{Fakes, GatewayReply, StreamStep};

fn addr_of(url: &str) -> SocketAddr {
    let authority = url.trim_start_matches("http://").split('/').next().unwrap();
    authority.parse().unwrap()
}

/// Refused, not hanging: a connect error at once.
async fn assert_refused(url: &str) {
    let error = tokio::net::TcpStream::connect(addr_of(url))
        .await
        .unwrap_err();
    assert_eq!(error.kind(), std::io::ErrorKind::ConnectionRefused, "{url}");
    let error = client().get(url).send().await.unwrap_err();
    assert!(error.is_connect(), "{error:?}");
}

/// A bind without SO_REUSEADDR fails while the fake holds the port. (Only meaningful for a
/// fake that served no connection: TIME_WAIT sockets would block it too.)
fn assert_reserved(url: &str) {
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    assert!(
        socket.bind(addr_of(url)).is_err(),
        "{url} is free for anyone to take"
    );
}

#[tokio::test]
async fn every_fake_can_go_down() {
    let fakes = Fakes::start().await.unwrap();
    let urls = [
        fakes.gateway.url(),
        fakes.streaming_gateway.url(),
        fakes.session.url(),
        fakes.workspace.url(),
    ];
    let ports: std::collections::HashSet<_> = urls.iter().map(|url| addr_of(url).port()).collect();
    assert_eq!(ports.len(), 4, "each fake on its own port: {urls:?}");

    fakes.session.go_down().await;
    fakes.workspace.go_down().await;
    fakes.gateway.go_down().await;
    fakes.streaming_gateway.go_down().await;
    for url in &urls {
        assert_refused(url).await;
        assert_reserved(url);
    }
    fakes.session.go_down().await;
}

#[tokio::test]
async fn recordings_survive_an_outage_and_kept_alive_connections_are_closed() {
    let fakes = Fakes::start().await.unwrap();
    let http = client();
    let created = http
        .post(format!("{}/sessions", fakes.session.url()))
        .json(&json!({"tenantId": "t", "userId": "u"}))
        .send()
        .await
        .unwrap();
    assert_eq!(created.status(), 201);
    fakes.gateway.push_reply(GatewayReply::text("hi"));
    let reply = http
        .post(format!("{}/chat/completions", fakes.gateway.url()))
        .send()
        .await
        .unwrap();
    assert_eq!(reply.text().await.unwrap().lines().last(), Some(""));
    fakes
        .streaming_gateway
        .push_stream(vec![StreamStep::done()]);
    let streamed = http
        .post(format!(
            "{}/chat/completions",
            fakes.streaming_gateway.url()
        ))
        .send()
        .await
        .unwrap();
    assert_eq!(streamed.text().await.unwrap(), "data: [DONE]\n\n");

    fakes.session.go_down().await;
    fakes.gateway.go_down().await;
    fakes.streaming_gateway.go_down().await;
    // The same client, whose pooled keep-alive connections were open, now fails to connect.
    for url in [
        fakes.session.url(),
        fakes.gateway.url(),
        fakes.streaming_gateway.url(),
    ] {
        let error = http
            .post(format!("{url}/sessions"))
            .send()
            .await
            .unwrap_err();
        assert!(error.is_connect() || error.is_request(), "{url}: {error:?}");
    }
    assert_eq!(fakes.session.requests().await.len(), 1);
    assert_eq!(fakes.session.session_ids().len(), 1);
    assert_eq!(fakes.gateway.requests().await.len(), 1);
    assert_eq!(fakes.streaming_gateway.requests().await.len(), 1);
}

#[test]
fn env_vars_name_the_runtime_variables() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let fakes = runtime.block_on(Fakes::start()).unwrap();
    let vars = fakes.env_vars();
    let names: Vec<_> = vars.iter().map(|(name, _)| *name).collect();
    assert_eq!(
        names,
        [
            "LLM_GATEWAY_ENDPOINT",
            "LLM_GATEWAY_AUTH_TOKEN",
            "SESSION_SERVICE_URL",
            "WORKSPACE_SERVICE_URL",
            "APPROVAL_SERVICE_URL",
            "AUDIT_SERVICE_URL",
            "TELEMETRY_SERVICE_URL"
        ]
    );
    assert_eq!(vars[0].1, fakes.gateway.url());
    assert_eq!(vars[4].1, fakes.approvals.url());
    assert_eq!(vars[5].1, fakes.audit.url());
    assert_eq!(vars[6].1, fakes.telemetry.url());
    runtime.block_on(async move { drop(fakes) });
}
