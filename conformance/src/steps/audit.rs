//! Audit and telemetry delivery (local-agent-host.md §12, system-design.md §14, §18) and the
//! local run store (agent-run-plan.md): what reaches the Audit and Telemetry Service fakes,
//! in the shared envelope, and that neither service can hold up a task.

use std::path::Path;

use agent_mocks::{EventServiceFake, FaultControl};
use cucumber::{then, when};
use serde_json::Value;

use crate::contract::{TENANT_ID, USER_ID};
use crate::steps::support::{StepResult, eventually, show, str_at};
use crate::steps::task::wait_task_end;
use crate::world::ConformanceWorld;

/// The envelope schema every delivered record must satisfy.
const ENVELOPE: &str = "audit/AuditEvent";

#[derive(Clone, Copy)]
enum Service {
    Audit,
    Telemetry,
}

impl Service {
    fn name(self) -> &'static str {
        match self {
            Service::Audit => "Audit Service",
            Service::Telemetry => "Telemetry Service",
        }
    }

    fn fake(self, world: &ConformanceWorld) -> anyhow::Result<&EventServiceFake> {
        let fakes = world.started_fakes()?;
        Ok(match self {
            Service::Audit => &fakes.audit,
            Service::Telemetry => &fakes.telemetry,
        })
    }
}

#[when("the Audit Service answers at once again")]
async fn audit_fast(world: &mut ConformanceWorld) -> StepResult {
    world.started_fakes()?.audit.slow_by(None);
    Ok(())
}

/// What an envelope must carry besides its own fields.
#[derive(Clone, Copy, PartialEq)]
enum Scope {
    Session,
    Task,
}

/// Validates an envelope against the schema and checks its id chain against the scenario's.
fn check_envelope(
    world: &ConformanceWorld,
    envelope: &Value,
    scope: Scope,
    what: &str,
) -> anyhow::Result<()> {
    crate::validation::check(ENVELOPE, envelope)
        .map_err(|problem| anyhow::anyhow!("{what} does not match {ENVELOPE}: {problem}"))?;
    let session = world.session()?;
    let mut expected = vec![
        ("tenantId", TENANT_ID.to_owned()),
        ("userId", USER_ID.to_owned()),
        ("workspaceId", session.workspace_id.clone()),
        ("sessionId", session.session_id.clone()),
    ];
    if scope == Scope::Task {
        expected.push(("taskId", world.task()?.task_id.clone()));
    }
    for (field, want) in expected {
        anyhow::ensure!(
            str_at(envelope, &[field]) == Some(want.as_str()),
            "{what}: the envelope's {field} should be {want:?}: {}",
            show(envelope)
        );
    }
    Ok(())
}

/// Waits (bounded) for an envelope matching `wanted`; the recorded ones are quoted on failure.
async fn wait_envelope(
    world: &ConformanceWorld,
    service: Service,
    what: &str,
    wanted: impl Fn(&Value) -> bool,
) -> anyhow::Result<Value> {
    let fake = service.fake(world)?;
    eventually(
        world.timeout(),
        &format!("the {} never received {what}", service.name()),
        || async {
            let envelopes = fake.envelopes();
            envelopes
                .iter()
                .find(|e| wanted(e))
                .cloned()
                .ok_or_else(|| {
                    let types: Vec<&str> = envelopes
                        .iter()
                        .filter_map(|e| str_at(e, &["eventType"]))
                        .collect();
                    format!("event types received so far: {types:?}")
                })
        },
    )
    .await
}

fn of_task(envelope: &Value, task_id: &str) -> bool {
    str_at(envelope, &["taskId"]) == Some(task_id)
}

async fn receives(
    world: &mut ConformanceWorld,
    service: Service,
    event_type: &str,
    scope: Scope,
) -> StepResult {
    let task_id = match scope {
        Scope::Task => Some(world.task()?.task_id.clone()),
        Scope::Session => None,
    };
    let envelope = wait_envelope(world, service, &format!("a {event_type:?} envelope"), |e| {
        str_at(e, &["eventType"]) == Some(event_type)
            && task_id.as_deref().is_none_or(|task| of_task(e, task))
    })
    .await?;
    check_envelope(
        world,
        &envelope,
        scope,
        &format!("the {event_type} envelope"),
    )?;
    Ok(())
}

#[then(expr = "the Audit Service receives {string} for the task")]
async fn audit_receives_task(world: &mut ConformanceWorld, event_type: String) -> StepResult {
    receives(world, Service::Audit, &event_type, Scope::Task).await
}

/// Retrying a failing Audit Service can only be judged for a runtime that delivers to it at
/// all: one that sends it nothing (delivery is REQ-AUD-005's, a SHOULD of Phase 3) leaves
/// this scenario not judged.
#[then(expr = "the Audit Service, after its failures, receives {string} for the task")]
async fn audit_receives_after_failures(
    world: &mut ConformanceWorld,
    event_type: String,
) -> StepResult {
    let Err(failure) = receives(world, Service::Audit, &event_type, Scope::Task).await else {
        return Ok(());
    };
    if Service::Audit.fake(world)?.requests().await.is_empty() {
        fail!(
            "{} the runtime sent the Audit Service nothing at all, so its retry cannot be seen; delivery is REQ-AUD-005's finding\n{failure}",
            crate::contract::NOT_JUDGED
        );
    }
    Err(failure)
}

#[then(expr = "the Audit Service receives {string} for the session")]
async fn audit_receives_session(world: &mut ConformanceWorld, event_type: String) -> StepResult {
    receives(world, Service::Audit, &event_type, Scope::Session).await
}

#[then(expr = "the Telemetry Service receives {string} for the task")]
async fn telemetry_receives_task(world: &mut ConformanceWorld, event_type: String) -> StepResult {
    receives(world, Service::Telemetry, &event_type, Scope::Task).await
}

/// Whether some string inside `value` equals `text`.
fn mentions(value: &Value, text: &str) -> bool {
    match value {
        Value::String(s) => s == text,
        Value::Array(items) => items.iter().any(|v| mentions(v, text)),
        Value::Object(map) => map.values().any(|v| mentions(v, text)),
        _ => false,
    }
}

#[then(expr = "the Audit Service receives a record of the {word} call")]
async fn audit_records_call(world: &mut ConformanceWorld, tool: String) -> StepResult {
    let task_id = world.task()?.task_id.clone();
    let envelope = wait_envelope(world, Service::Audit, &format!("a record of {tool}"), |e| {
        of_task(e, &task_id) && e.get("payload").is_some_and(|p| mentions(p, &tool))
    })
    .await?;
    check_envelope(world, &envelope, Scope::Task, &format!("the {tool} record"))?;
    Ok(())
}

#[then(expr = "the Audit Service receives the policy denial of the {word} call")]
async fn audit_records_denial(world: &mut ConformanceWorld, tool: String) -> StepResult {
    let task_id = world.task()?.task_id.clone();
    let envelope = wait_envelope(
        world,
        Service::Audit,
        &format!("the denial of {tool}"),
        |e| {
            let Some(payload) = e.get("payload") else {
                return false;
            };
            let text = payload.to_string().to_lowercase();
            of_task(e, &task_id) && mentions(payload, &tool) && text.contains("denied")
        },
    )
    .await?;
    check_envelope(world, &envelope, Scope::Task, &format!("the {tool} denial"))?;
    Ok(())
}

#[then("the Audit Service receives the LLM request metadata: model and token counts")]
async fn audit_llm_metadata(world: &mut ConformanceWorld) -> StepResult {
    let task_id = world.task()?.task_id.clone();
    let envelope = wait_envelope(world, Service::Audit, "llm_request_completed", |e| {
        of_task(e, &task_id) && str_at(e, &["eventType"]) == Some("llm_request_completed")
    })
    .await?;
    check_envelope(world, &envelope, Scope::Task, "the LLM metadata envelope")?;
    let payload = envelope.get("payload").cloned().unwrap_or(Value::Null);
    check!(
        payload.get("model").is_some_and(Value::is_string)
            && payload.get("inputTokens").is_some_and(Value::is_u64)
            && payload.get("outputTokens").is_some_and(Value::is_u64),
        "the LLM metadata must name the model and the token counts (local-agent-host.md §12): {}",
        show(&envelope)
    );
    Ok(())
}

#[then(expr = "no audit or telemetry envelope contains {string}")]
async fn no_content(world: &mut ConformanceWorld, text: String) -> StepResult {
    wait_task_end(world).await?;
    let fakes = world.started_fakes()?;
    for (service, fake) in [("Audit", &fakes.audit), ("Telemetry", &fakes.telemetry)] {
        for envelope in fake.envelopes() {
            check!(
                !envelope.to_string().contains(&text),
                "the {service} Service received content it must not ({text:?}): {}",
                show(&envelope)
            );
        }
    }
    Ok(())
}

#[then("every envelope the Audit and Telemetry Services received is valid and names this session")]
async fn all_valid(world: &mut ConformanceWorld) -> StepResult {
    let fakes = world.started_fakes()?;
    let all: Vec<(&str, Value)> = fakes
        .audit
        .envelopes()
        .into_iter()
        .map(|e| ("Audit", e))
        .chain(
            fakes
                .telemetry
                .envelopes()
                .into_iter()
                .map(|e| ("Telemetry", e)),
        )
        .collect();
    check!(!all.is_empty(), "neither service received any envelope");
    let mut ids = std::collections::BTreeSet::new();
    for (service, envelope) in &all {
        check_envelope(
            world,
            envelope,
            Scope::Session,
            &format!("a {service} envelope"),
        )?;
        let id = str_at(envelope, &["eventId"])
            .unwrap_or_default()
            .to_owned();
        check!(
            ids.insert((*service, id.clone())),
            "the {service} Service received the eventId {id:?} twice: envelope ids must be unique"
        );
    }
    Ok(())
}

#[then("the Audit Service is told how many events were dropped")]
async fn drops_reported(world: &mut ConformanceWorld) -> StepResult {
    let envelope = wait_envelope(world, Service::Audit, "an events_dropped report", |e| {
        str_at(e, &["eventType"]) == Some("events_dropped")
    })
    .await?;
    check_envelope(
        world,
        &envelope,
        Scope::Session,
        "the events_dropped report",
    )?;
    let count = envelope
        .get("payload")
        .and_then(|p| p.get("droppedCount"))
        .and_then(Value::as_u64)
        .unwrap_or(0);
    check!(
        count > 0,
        "the events_dropped report must carry a positive payload.droppedCount: {}",
        show(&envelope)
    );
    Ok(())
}

fn run_files(dir: &Path) -> Result<Vec<(String, u64)>, String> {
    let entries = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut files: Vec<(String, u64)> = entries
        .filter_map(Result::ok)
        .filter(|e| e.path().is_file())
        .map(|e| {
            let len = e.metadata().map_or(0, |m| m.len());
            (e.file_name().to_string_lossy().into_owned(), len)
        })
        .collect();
    files.sort();
    Ok(files)
}

#[then(
    expr = "the run store under LOG_DIR\\/runs has rotated files of at most {int} bytes, {int} bytes in all"
)]
async fn run_store_caps(world: &mut ConformanceWorld, file_cap: u64, total_cap: u64) -> StepResult {
    wait_task_end(world).await?;
    let dir = world.dirs()?.logs.join("runs");
    let timeout = world.timeout();
    // Written asynchronously: wait (bounded) for a rotation to show.
    let files = eventually(timeout, "the run store never rotated a file", || async {
        let files = run_files(&dir)?;
        if files.len() >= 2 {
            Ok(files)
        } else {
            Err(format!("files so far: {files:?}"))
        }
    })
    .await?;
    let total: u64 = files.iter().map(|(_, len)| len).sum();
    check!(
        files.iter().all(|(_, len)| *len <= file_cap) && total <= total_cap,
        "the run store exceeds its caps ({file_cap} per file, {total_cap} in all): {files:?}"
    );
    let mut event_lines = 0;
    for (name, _) in &files {
        let text = std::fs::read_to_string(dir.join(name)).unwrap_or_default();
        for line in text.lines() {
            let parsed: Value = serde_json::from_str(line).map_err(|e| {
                anyhow::anyhow!("{name}: a line of the run store is not JSON ({e}): {line}")
            })?;
            event_lines += usize::from(parsed.get("eventType").is_some());
        }
    }
    check!(
        event_lines > 0,
        "the run store holds no SessionEvent: {files:?}"
    );
    Ok(())
}
