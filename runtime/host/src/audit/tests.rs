//! Batching, retries, drop-and-count and flush against a real HTTP server on loopback.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::delivery::EVENTS_DROPPED;
use agent_protocol::audit::{AuditEvent, Severity};
use agent_protocol::events::{EventBody, TextChunk, ToolCompleted, ToolRequested};
use agent_protocol::tool::ToolStatus;
use axum::Router;
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::post;
use serde_json::{Value, json};
use tokio::sync::{Notify, Semaphore};

use super::*;
use crate::testing::event;

#[derive(Default)]
struct Server {
    batches: Mutex<Vec<Value>>,
    /// Answer 500 to this many requests first.
    fail: Mutex<usize>,
    /// Requests wait for a permit when set (a slow service).
    gate: Option<Arc<Semaphore>>,
    arrived: Notify,
    entered: std::sync::atomic::AtomicUsize,
}

async fn events(State(server): State<Arc<Server>>, body: axum::Json<Value>) -> StatusCode {
    server
        .entered
        .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    server.arrived.notify_waiters();
    if let Some(gate) = &server.gate {
        let _permit = gate.acquire().await;
    }
    {
        let mut fail = server.fail.lock().unwrap();
        if *fail > 0 {
            *fail -= 1;
            server.arrived.notify_waiters();
            return StatusCode::INTERNAL_SERVER_ERROR;
        }
    }
    server.batches.lock().unwrap().push(body.0);
    server.arrived.notify_waiters();
    StatusCode::ACCEPTED
}

/// Each server answers under a path of its own: a port freed by another test can be handed
/// to this one while that test's channel still posts to it, and its batches must not count.
async fn serve(server: Arc<Server>) -> String {
    static SERVERS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let path = format!(
        "/{}/audit/events",
        SERVERS.fetch_add(1, std::sync::atomic::Ordering::SeqCst)
    );
    let app = Router::new().route(&path, post(events)).with_state(server);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    format!("http://{address}{path}")
}

fn config(endpoint: String) -> DeliveryConfig {
    DeliveryConfig {
        endpoint,
        tuning: DeliveryTuning {
            batch_size: 3,
            flush_interval: Duration::from_secs(60),
            queue_bound: 100,
            retries: 2,
            retry_delay: Duration::from_millis(1),
            request_timeout: Duration::from_secs(5),
        },
    }
}

fn ids() -> Ids {
    Ids {
        tenant_id: "tenant_abc".into(),
        user_id: "user_123".into(),
        workspace_id: "ws_456".into(),
        session_id: "sess_789".into(),
    }
}

fn envelope(n: u64) -> AuditEvent {
    envelope::own_event(&ids(), "test", Severity::Info, json!({"n": n}))
}

fn numbers(batches: &[Value]) -> Vec<Vec<Value>> {
    batches
        .iter()
        .map(|batch| {
            batch["events"]
                .as_array()
                .unwrap()
                .iter()
                .map(|e| e["payload"]["n"].clone())
                .collect()
        })
        .collect()
}

async fn batches_reach(server: &Server, count: usize) -> Vec<Value> {
    tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            let arrived = server.arrived.notified();
            let batches = server.batches.lock().unwrap().clone();
            if batches.len() >= count {
                return batches;
            }
            arrived.await;
        }
    })
    .await
    .expect("the batches never arrived")
}

#[tokio::test]
async fn batches_by_size_then_flush_sends_the_rest() {
    let server = Arc::new(Server::default());
    let channel = Channel::start(
        config(serve(Arc::clone(&server)).await),
        reqwest::Client::new(),
        ids(),
    );
    for n in 1..=4 {
        channel.offer(envelope(n));
    }
    let first = batches_reach(&server, 1).await;
    assert_eq!(numbers(&first), vec![vec![json!(1), json!(2), json!(3)]]);
    assert!(channel.flush(Duration::from_secs(5)).await);
    let all = server.batches.lock().unwrap().clone();
    assert_eq!(numbers(&all)[1], vec![json!(4)]);
    for event in all[0]["events"].as_array().unwrap() {
        agent_schemas::validate("audit/AuditEvent", event).unwrap();
    }
    agent_schemas::validate("audit/AuditEventBatch", &all[0]).unwrap();
}

#[tokio::test]
async fn the_flush_interval_sends_a_partial_batch() {
    let server = Arc::new(Server::default());
    let mut config = config(serve(Arc::clone(&server)).await);
    config.tuning.flush_interval = Duration::from_millis(20);
    let channel = Channel::start(config, reqwest::Client::new(), ids());
    channel.offer(envelope(7));
    let batches = batches_reach(&server, 1).await;
    assert_eq!(numbers(&batches), vec![vec![json!(7)]]);
}

#[tokio::test]
async fn a_failing_service_is_retried() {
    let server = Arc::new(Server {
        fail: Mutex::new(2),
        ..Server::default()
    });
    let channel = Channel::start(
        config(serve(Arc::clone(&server)).await),
        reqwest::Client::new(),
        ids(),
    );
    channel.offer(envelope(1));
    assert!(channel.flush(Duration::from_secs(5)).await);
    assert_eq!(
        numbers(&server.batches.lock().unwrap()),
        vec![vec![json!(1)]]
    );
}

#[tokio::test]
async fn a_full_queue_drops_counts_and_reports_in_the_next_batch() {
    let gate = Arc::new(Semaphore::new(0));
    let server = Arc::new(Server {
        gate: Some(Arc::clone(&gate)),
        ..Server::default()
    });
    let mut config = config(serve(Arc::clone(&server)).await);
    config.tuning.batch_size = 1;
    config.tuning.queue_bound = 2;
    let channel = Channel::start(config, reqwest::Client::new(), ids());
    channel.offer(envelope(1));
    // The worker holds event 1 in a POST the server does not answer; the queue takes two.
    tokio::time::timeout(Duration::from_secs(5), async {
        loop {
            let arrived = server.arrived.notified();
            if server.entered.load(std::sync::atomic::Ordering::SeqCst) > 0 {
                return;
            }
            arrived.await;
        }
    })
    .await
    .unwrap();
    for n in 2..=11 {
        channel.offer(envelope(n));
    }
    assert_eq!(channel.dropped(), 8, "two queued, eight dropped");
    let dropped = channel.dropped();
    gate.add_permits(1000);
    assert!(channel.flush(Duration::from_secs(5)).await);
    let batches = server.batches.lock().unwrap().clone();
    let report = batches
        .iter()
        .flat_map(|batch| batch["events"].as_array().unwrap().clone())
        .find(|event| event["eventType"] == EVENTS_DROPPED)
        .expect("no events_dropped envelope");
    assert!(report["payload"]["droppedCount"].as_u64().unwrap() >= dropped);
    agent_schemas::validate("audit/AuditEvent", &report).unwrap();
    assert_eq!(channel.dropped(), 0, "the count is reset once reported");
}

#[tokio::test]
async fn an_unreachable_service_never_blocks_the_producer() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap();
    drop(listener);
    let mut config = config(format!("http://{address}/audit/events"));
    config.tuning.queue_bound = 4;
    config.tuning.batch_size = 1;
    config.tuning.retries = 1000;
    let channel = Channel::start(config, reqwest::Client::new(), ids());
    for n in 0..10_000 {
        channel.offer(envelope(n));
    }
    assert!(channel.dropped() > 0);
    assert!(!channel.flush(Duration::from_millis(50)).await);
}

#[test]
fn routing_audits_risky_calls_and_denials_and_keeps_chunks_out() {
    let mut calls = std::collections::HashSet::new();
    let requested = |id: &str, capability: &str, arguments: Value| {
        EventBody::ToolRequested(ToolRequested {
            tool_call_id: id.into(),
            tool_name: "X".into(),
            capability: capability.into(),
            arguments,
        })
    };
    let completed = |id: &str, status| {
        EventBody::ToolCompleted(ToolCompleted {
            tool_call_id: id.into(),
            tool_name: "X".into(),
            status,
            latency_ms: 1,
            result: Some("file contents".into()),
            error: None,
            error_code: None,
            artifact_uris: vec![],
        })
    };
    let long = "x".repeat(1000);
    let read = envelope::route(
        &ids(),
        &event(1, requested("a", "File.Read", json!({}))),
        &mut calls,
    );
    assert!(read.audit.is_none() && read.telemetry.is_some());
    let read_done = envelope::route(
        &ids(),
        &event(2, completed("a", ToolStatus::Succeeded)),
        &mut calls,
    );
    assert!(read_done.audit.is_none());
    let shell = envelope::route(
        &ids(),
        &event(3, requested("b", "Shell.Exec", json!({"command": long}))),
        &mut calls,
    );
    let audit = shell.audit.unwrap();
    assert!(
        audit.payload["arguments"]["command"]
            .as_str()
            .unwrap()
            .len()
            < 400
    );
    assert_eq!(audit.payload["sessionEventId"], 3);
    assert_eq!(audit.tenant_id.as_deref(), Some("tenant_abc"));
    assert_eq!(audit.task_id.as_deref(), Some("task_001"));
    let shell_done = envelope::route(
        &ids(),
        &event(4, completed("b", ToolStatus::Succeeded)),
        &mut calls,
    );
    let done = shell_done.audit.unwrap();
    assert!(
        done.payload.get("result").is_none(),
        "tool output is content"
    );
    let denied = envelope::route(
        &ids(),
        &event(5, completed("c", ToolStatus::Denied)),
        &mut calls,
    );
    assert_eq!(denied.audit.unwrap().bounded_context, "PolicyGuardrails");
    let chunk = envelope::route(
        &ids(),
        &event(6, EventBody::TextChunk(TextChunk { text: "hi".into() })),
        &mut calls,
    );
    assert!(chunk.audit.is_none() && chunk.telemetry.is_none());
    for routed in [read.telemetry.unwrap(), audit] {
        agent_schemas::validate("audit/AuditEvent", &serde_json::to_value(routed).unwrap())
            .unwrap();
    }
}
