//! Secret redaction (local-agent-host.md §8.7 Phase 2): secrets the kit plants in
//! workspace files, in command output and in the runtime's environment must not leave the
//! runtime in clear. The kit looks for them in everything it can observe: the protocol
//! stream, stderr, the files under LOG_DIR and CHECKPOINT_DIR, and every request body the
//! fakes received (the LLM Gateway's, the Session, Workspace, Approval, Audit and Telemetry services' —
//! including the decoded content of uploaded artifacts).
//!
//! The redaction flag rides in the model request's headers (INTEROP.md §2 relays the body
//! upstream verbatim, so request context travels in headers): `x-redaction-applied: true`.
//! Extra rules: the reference runtime reads them from the file named by
//! `AGENT_RUNTIME_REDACTION_RULES_FILE` (one `kind = regex` per line).

use std::path::{Path, PathBuf};

use agent_mocks::FaultControl;
use anyhow::Context as _;
use base64::Engine as _;
use cucumber::{gherkin::Step, given, then};
use serde_json::Value;

use crate::steps::support::model::model_requests;
use crate::steps::support::{StepResult, eventually};
use crate::steps::task::wait_task_end;
use crate::world::ConformanceWorld;

/// The variable naming the reference runtime's extra rules file.
pub(crate) const RULES_FILE_ENV: &str = "AGENT_RUNTIME_REDACTION_RULES_FILE";

#[given("the runtime is started with the redaction rules file:")]
async fn rules_file(world: &mut ConformanceWorld, step: &Step) -> StepResult {
    let text = step
        .docstring
        .as_deref()
        .context("the step needs the rules as a doc string")?;
    let path = world.dirs()?.root().join("redaction-rules.txt");
    std::fs::write(&path, text.trim_start_matches('\n'))
        .with_context(|| format!("cannot write {}", path.display()))?;
    world.set_runtime_env(RULES_FILE_ENV, &path.display().to_string())?;
    Ok(())
}

#[given(expr = "the policy's llmPolicy has the redaction rule {string} for {string}")]
async fn policy_rule(world: &mut ConformanceWorld, kind: String, pattern: String) -> StepResult {
    check!(
        world.session.is_none(),
        "the policy must be shaped before the session is created (put this step before \"a running session\")"
    );
    world.fakes().await?.session.update_policy(|bundle| {
        let rule = serde_json::json!({"kind": kind, "pattern": pattern});
        match bundle
            .pointer_mut("/llmPolicy/redactionRules")
            .and_then(Value::as_array_mut)
        {
            Some(rules) => rules.push(rule),
            None => bundle["llmPolicy"]["redactionRules"] = serde_json::json!([rule]),
        }
    });
    Ok(())
}

/// Every regular file under `dir`, recursively (a missing dir is empty).
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(dir) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                pending.push(path);
            } else {
                found.push(path);
            }
        }
    }
    found
}

/// The texts of a request body: itself, and the decoded `contentBase64` of an artifact
/// upload (a secret must not hide in base64 either).
fn body_texts(body_text: String, body: &Value) -> Vec<String> {
    let mut texts = vec![body_text];
    if let Some(encoded) = body.get("contentBase64").and_then(Value::as_str)
        && let Ok(bytes) = base64::engine::general_purpose::STANDARD.decode(encoded)
    {
        texts.push(String::from_utf8_lossy(&bytes).into_owned());
    }
    texts
}

/// `(where, text)` of everything the runtime produced that the kit can observe. Waits for
/// the task's end and its history upload first, and insists that the sinks it names are not
/// empty, so a runtime that writes nothing cannot pass by accident.
async fn observed_outputs(world: &mut ConformanceWorld) -> anyhow::Result<Vec<(String, String)>> {
    wait_task_end(world).await?;
    let timeout = world.timeout();
    let fakes = world.started_fakes()?;
    eventually(timeout, "the session history upload", || async {
        let uploaded = fakes.workspace.uploads().await.iter().any(|body| {
            body.get("artifactType").and_then(Value::as_str) == Some("session_history")
        });
        if uploaded {
            Ok(())
        } else {
            Err("the Workspace Service received no session_history upload".to_owned())
        }
    })
    .await?;
    let mut outputs = Vec::new();
    for (index, request) in model_requests(fakes).await.iter().enumerate() {
        for text in body_texts(request.body_text(), &request.body) {
            outputs.push((format!("the body of model request {}", index + 1), text));
        }
    }
    check!(!outputs.is_empty(), "the model received no request");
    let services = [
        ("Workspace Service", fakes.workspace.requests().await),
        ("Session Service", fakes.session.requests().await),
        ("Approval Service", fakes.approvals.requests().await),
        ("Audit Service", fakes.audit.requests().await),
        ("Telemetry Service", fakes.telemetry.requests().await),
    ];
    for (service, requests) in services {
        for request in requests {
            for text in body_texts(request.body_text(), &request.body) {
                outputs.push((
                    format!(
                        "the body of {} {} to the {service}",
                        request.method, request.path
                    ),
                    text,
                ));
            }
        }
    }
    let runtime = world.started_runtime()?;
    for event in runtime.events() {
        outputs.push((
            format!("the SessionEvent {} on stdout", event.event_type()),
            event.params.to_string(),
        ));
    }
    if let Some(response) = &world.last_response {
        outputs.push((
            "the last JSON-RPC response".to_owned(),
            response.to_string(),
        ));
    }
    outputs.push(("stderr".to_owned(), runtime.stderr_tail(usize::MAX)));
    let dirs = world.dirs()?;
    let checkpoints = files_under(&dirs.checkpoints);
    check!(
        !checkpoints.is_empty(),
        "CHECKPOINT_DIR holds no checkpoint while the session is live"
    );
    for (label, files) in [
        ("CHECKPOINT_DIR", checkpoints),
        ("LOG_DIR", files_under(&dirs.logs)),
    ] {
        for path in files {
            let bytes =
                std::fs::read(&path).with_context(|| format!("cannot read {}", path.display()))?;
            outputs.push((
                format!("{label} file {}", path.display()),
                String::from_utf8_lossy(&bytes).into_owned(),
            ));
        }
    }
    Ok(outputs)
}

#[then(expr = "the secret {string} appears in none of the runtime's outputs")]
async fn secret_nowhere(world: &mut ConformanceWorld, secret: String) -> StepResult {
    let outputs = observed_outputs(world).await?;
    let leaks: Vec<&str> = outputs
        .iter()
        .filter(|(_, text)| text.contains(&secret))
        .map(|(place, _)| place.as_str())
        .collect();
    check!(
        leaks.is_empty(),
        "the secret {secret:?} left the runtime in clear, in: {}",
        leaks.join("; ")
    );
    Ok(())
}

#[then(expr = "the last model request has the header {string} set to {string}")]
async fn last_request_header(
    world: &mut ConformanceWorld,
    name: String,
    value: String,
) -> StepResult {
    wait_task_end(world).await?;
    let requests = model_requests(world.started_fakes()?).await;
    let last = requests.last().context("the model received no request")?;
    check!(
        last.header(&name) == Some(value.as_str()),
        "the last model request has {name}: {:?}, expected {value:?} (a request carrying redacted content says so in its headers)",
        last.header(&name)
    );
    Ok(())
}

#[then(expr = "the first model request has no header {string}")]
async fn first_request_without_header(world: &mut ConformanceWorld, name: String) -> StepResult {
    wait_task_end(world).await?;
    let requests = model_requests(world.started_fakes()?).await;
    let first = requests.first().context("the model received no request")?;
    check!(
        first.header(&name).is_none(),
        "the first model request carries nothing redacted, yet has {name}: {:?}",
        first.header(&name)
    );
    Ok(())
}
