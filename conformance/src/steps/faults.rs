//! One fault vocabulary for every service a runtime talks to: down, failing, slow.
//!
//! Every fake implements `agent_mocks::FaultControl`, the LLM Gateway (the streaming fake)
//! included: its failures are served before the scripted replies, and "slow" holds back the
//! head of every later answer. The gateway alone can also stall mid-stream. Adding a
//! service is one line in [`SERVICES`] and one arm in [`apply`].

use std::time::Duration;

use agent_mocks::FaultControl;
use anyhow::Context;
use cucumber::{given, then};
use serde_json::{Value, json};

use crate::steps::support::{StepResult, eventually, str_at};
use crate::steps::task::wait_task_end;
use crate::world::ConformanceWorld;

/// The services, by the name scenarios give them.
const SERVICES: &[(&str, Service)] = &[
    ("Session Service", Service::Session),
    ("Workspace Service", Service::Workspace),
    ("Approval Service", Service::Approval),
    ("Backend Tool Service", Service::BackendTool),
    ("Audit Service", Service::Audit),
    ("Telemetry Service", Service::Telemetry),
    ("LLM Gateway", Service::Gateway),
];

/// More failures than any sane retry policy makes attempts.
const EVERY_REQUEST: usize = 50;

#[derive(Clone, Copy, Debug)]
enum Service {
    Session,
    Workspace,
    Approval,
    BackendTool,
    Audit,
    Telemetry,
    Gateway,
}

enum Fault {
    Down,
    Fail { count: usize, status: u16 },
    Slow(Duration),
}

fn service(name: &str) -> anyhow::Result<Service> {
    SERVICES
        .iter()
        .find(|(known, _)| *known == name)
        .map(|(_, service)| *service)
        .with_context(|| {
            let names: Vec<&str> = SERVICES.iter().map(|(n, _)| *n).collect();
            format!("unknown service {name:?}; known: {}", names.join(", "))
        })
}

/// The error body a failing backend service sends (the services' error shape).
fn failure_body(status: u16) -> Value {
    json!({
        "code": "INTERNAL_ERROR",
        "message": format!("Injected failure with status {status}"),
        "retryable": status >= 500,
    })
}

/// The error body the gateway sends (INTEROP.md §2: `{"error": "<text>"}`).
fn gateway_failure_body(status: u16) -> Value {
    json!({"error": format!("Injected failure with status {status}")})
}

async fn inject(fake: &impl FaultControl, fault: Fault, body: fn(u16) -> Value) {
    match fault {
        Fault::Down => fake.go_down().await,
        Fault::Fail { count, status } => fake.fail_next(count, status, body(status)),
        Fault::Slow(delay) => fake.slow_by(Some(delay)),
    }
}

async fn wiremock_fault(fake: &impl FaultControl, fault: Fault) {
    inject(fake, fault, failure_body).await;
}

async fn apply(world: &mut ConformanceWorld, name: &str, fault: Fault) -> StepResult {
    let service = service(name)?;
    if let Service::BackendTool = service {
        let fake = world.backend_tools.as_ref().context(
            "the Backend Tool Service fake starts with the step that scripts a backend tool; put that step first",
        )?;
        wiremock_fault(fake, fault).await;
        return Ok(());
    }
    let fakes = world.fakes().await?;
    match service {
        Service::Session => wiremock_fault(&fakes.session, fault).await,
        Service::Workspace => wiremock_fault(&fakes.workspace, fault).await,
        Service::Approval => wiremock_fault(&fakes.approvals, fault).await,
        Service::Audit => wiremock_fault(&fakes.audit, fault).await,
        Service::Telemetry => wiremock_fault(&fakes.telemetry, fault).await,
        Service::BackendTool => {}
        Service::Gateway => inject(&fakes.streaming_gateway, fault, gateway_failure_body).await,
    }
    Ok(())
}

#[given(
    regex = r"^the (Session Service|Workspace Service|Approval Service|Backend Tool Service|Audit Service|Telemetry Service|LLM Gateway) is down$"
)]
async fn is_down(world: &mut ConformanceWorld, name: String) -> StepResult {
    apply(world, &name, Fault::Down).await
}

/// "to every request" or "to the next <n> request(s)".
#[given(
    regex = r"^the (Session Service|Workspace Service|Approval Service|Backend Tool Service|Audit Service|Telemetry Service|LLM Gateway) answers (\d{3}) to (every request|the next \d+ requests?)$"
)]
async fn answers(
    world: &mut ConformanceWorld,
    name: String,
    status: u16,
    which: String,
) -> StepResult {
    let count = match which.strip_prefix("the next ") {
        Some(rest) => rest
            .split(' ')
            .next()
            .unwrap_or_default()
            .parse()
            .context("a number of requests")?,
        None => EVERY_REQUEST,
    };
    if name == "LLM Gateway" && (status == 429 || status >= 500) {
        world.allow_default_timing("LLM_RETRY_BASE_DELAY", default_backoff(count));
    }
    apply(world, &name, Fault::Fail { count, status }).await
}

/// How long the spec's default back-off takes over `failures` failed gateway calls, with
/// room for jitter: local-agent-host.md §6.4 and ARCHITECTURE.md (LLM_MAX_RETRIES 3,
/// LLM_RETRY_BASE_DELAY 1 s doubling, LLM_RETRY_MAX_DELAY 30 s).
fn default_backoff(failures: usize) -> Duration {
    const RETRIES: u32 = 3;
    let retries = u32::try_from(failures).unwrap_or(RETRIES).min(RETRIES);
    let total: u64 = (0..retries).map(|n| (1_u64 << n).min(30)).sum();
    Duration::from_millis(total * 1500)
}

#[given(
    regex = r"^the (Session Service|Workspace Service|Approval Service|Backend Tool Service|Audit Service|Telemetry Service|LLM Gateway) is slow by (\d+) ?(ms|s)$"
)]
async fn is_slow(
    world: &mut ConformanceWorld,
    name: String,
    amount: u64,
    unit: String,
) -> StepResult {
    let delay = match unit.as_str() {
        "ms" => Duration::from_millis(amount),
        _ => Duration::from_secs(amount),
    };
    apply(world, &name, Fault::Slow(delay)).await
}

/// A stream that goes silent: the next model request gets the first `n` events of its
/// scripted reply, then nothing, with the connection held open until the scenario ends. The
/// reply stays scripted, so the request's retry gets it whole.
#[given(regex = r"^the LLM Gateway stalls after (\d+) chunks?$")]
async fn stalls_after(world: &mut ConformanceWorld, chunks: usize) -> StepResult {
    world
        .fakes()
        .await?
        .streaming_gateway
        .stall_next_after(chunks);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The alternation every step pattern above spells out.
    const SERVICE_NAMES: &str = "Session Service|Workspace Service|Approval Service|Backend Tool Service|Audit Service|Telemetry Service|LLM Gateway";

    #[test]
    fn the_step_patterns_name_every_service() {
        let names: Vec<&str> = SERVICES.iter().map(|(n, _)| *n).collect();
        assert_eq!(names.join("|"), SERVICE_NAMES);
        let pattern = format!("regex = r\"^the ({SERVICE_NAMES})");
        assert_eq!(include_str!("faults.rs").matches(&pattern).count(), 3);
    }

    #[test]
    fn waits_allow_the_default_back_off_unless_the_manifest_sets_the_knob() {
        // 1 + 2 + 4 s for three retries, half as much again for jitter.
        assert_eq!(default_backoff(10), Duration::from_millis(10_500));
        assert_eq!(default_backoff(1), Duration::from_millis(1_500));
        let bare = crate::runtime_manifest::RuntimeManifest::default();
        assert!(!bare.sets_knob("LLM_RETRY_BASE_DELAY"));
        let variance = crate::runtime_manifest::RuntimeManifest::load(
            &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("manifests/variance.toml"),
        )
        .unwrap();
        assert!(variance.sets_knob("LLM_RETRY_BASE_DELAY"));
    }
}

#[then(expr = "the Session Service received exactly {int} session creation requests")]
async fn creation_attempts(world: &mut ConformanceWorld, count: usize) -> StepResult {
    let requests = world.started_fakes()?.session.requests().await;
    let attempts = requests
        .iter()
        .filter(|r| r.method == "POST" && r.path == "/sessions")
        .count();
    check!(
        attempts == count,
        "expected {count} attempts at POST /sessions, the Session Service saw {attempts}"
    );
    Ok(())
}

#[then(expr = "the Workspace Service received {int} session_history upload attempts")]
async fn history_attempts(world: &mut ConformanceWorld, count: usize) -> StepResult {
    wait_task_end(world).await?;
    let fakes = world.started_fakes()?;
    let timeout = world.timeout();
    let attempts = || async {
        let seen = fakes
            .workspace
            .requests()
            .await
            .iter()
            .filter(|r| str_at(&r.body, &["artifactType"]) == Some("session_history"))
            .count();
        if seen >= count {
            Ok(seen)
        } else {
            Err(format!("{seen} so far"))
        }
    };
    let seen = eventually(timeout, "the history upload attempts", attempts).await?;
    check!(
        seen == count,
        "expected {count} session_history upload attempts, the Workspace Service saw {seen}"
    );
    Ok(())
}

/// FastAPI's validation error shape (INTEROP.md §7): `422 {detail: [{loc, msg, type}]}`.
#[given(
    expr = "the Session Service answers the next request with FastAPI's validation error {string} for the field {string}"
)]
async fn fastapi_error(world: &mut ConformanceWorld, msg: String, field: String) -> StepResult {
    let body =
        json!({"detail": [{"loc": ["body", field], "msg": msg, "type": "value_error.missing"}]});
    world.fakes().await?.session.fail_next(1, 422, body);
    Ok(())
}
