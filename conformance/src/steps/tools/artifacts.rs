//! Artifacts of tool calls (local-agent-host.md §7.5): what the Workspace Service received,
//! and the warning when an upload failed.

use agent_mocks::FaultControl;
use anyhow::Context;
use base64::Engine as _;
use cucumber::then;
use serde_json::Value;

use crate::driver::ReceivedEvent;
use crate::steps::support::os::as_written_on;
use crate::steps::support::task::this_task_events;
use crate::steps::support::{StepResult, at, check_service_body, declares_reference, show, str_at};
use crate::steps::task::wait_task_end;
use crate::steps::tools::{completed, unescape};
use crate::world::ConformanceWorld;

#[then(
    expr = "the Workspace Service receives a {word} artifact of the tool call containing {string}"
)]
async fn artifact_uploaded(
    world: &mut ConformanceWorld,
    artifact_type: String,
    needle: String,
) -> StepResult {
    let written = needle;
    let needle = unescape(&written);
    let payload = completed(world, 1).await?;
    let task_id = world.task()?.task_id.clone();
    let session_id = world.session()?.session_id.clone();
    let uploads = world.started_fakes()?.workspace.uploads().await;
    let mine: Vec<&Value> = uploads
        .iter()
        .filter(|u| str_at(u, &["artifactType"]) == Some(artifact_type.as_str()))
        .collect();
    let upload = mine.first().with_context(|| {
        format!(
            "no {artifact_type} artifact was uploaded (uploads: {})",
            uploads
                .iter()
                .map(|u| str_at(u, &["artifactType"]).unwrap_or("?"))
                .collect::<Vec<_>>()
                .join(", ")
        )
    })?;
    check_service_body(
        "services/workspace/ArtifactUploadRequest",
        upload,
        "the artifact upload",
    )?;
    check!(
        str_at(upload, &["sessionId"]) == Some(session_id.as_str())
            && str_at(upload, &["taskId"]) == Some(task_id.as_str())
            && str_at(upload, &["stepId"]).is_some_and(|s| !s.is_empty()),
        "the upload must name the session, the task and the step: {}",
        show(upload)
    );
    let content = str_at(upload, &["contentBase64"])
        .and_then(|b64| base64::engine::general_purpose::STANDARD.decode(b64).ok())
        .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
        .with_context(|| format!("the upload has no base64 content: {}", show(upload)))?;
    let content = as_written_on(world.runtime_os(), &written, &content);
    check!(
        content.contains(&needle),
        "the {artifact_type} artifact must contain {needle:?}: {}",
        crate::driver::excerpt(&content)
    );
    let uris = at(&payload, &["artifactUris"])
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let answered = world.started_fakes()?.workspace.artifact_uris();
    check!(
        uris.len() == mine.len()
            && uris
                .iter()
                .all(|u| u.as_str().is_some_and(|u| answered.iter().any(|a| a == u))),
        "tool_completed.artifactUris must list the URI the Workspace Service returned for each of the {} upload(s): {}",
        mine.len(),
        show(&payload)
    );
    Ok(())
}

#[then("the tool call reports no artifact URI")]
async fn no_artifact_uri(world: &mut ConformanceWorld) -> StepResult {
    let payload = completed(world, 1).await?;
    let uris = at(&payload, &["artifactUris"]).and_then(Value::as_array);
    check!(
        uris.is_none_or(Vec::is_empty),
        "an artifact that could not be uploaded has no URI: {}",
        show(&payload)
    );
    Ok(())
}

#[then(expr = "a warning with code {string} says the {word} artifact was not uploaded")]
async fn artifact_warning(
    world: &mut ConformanceWorld,
    code: String,
    artifact_type: String,
) -> StepResult {
    wait_task_end(world).await?;
    // "A warning is logged" (local-tool-runtime.md §7.5) has no form on the wire: the
    // `warning` event is the reference runtime's, judged only for a runtime claiming it.
    if !declares_reference(world)? {
        return Ok(());
    }
    let events = this_task_events(world)?;
    let warnings: Vec<&Value> = events
        .iter()
        .filter(|e| e.event_type() == "warning")
        .map(ReceivedEvent::payload)
        .collect();
    check!(
        warnings
            .iter()
            .any(|w| str_at(w, &["code"]) == Some(code.as_str())
                && str_at(w, &["message"]).is_some_and(|m| m.contains(&artifact_type))),
        "no warning with code {code:?} names the {artifact_type} artifact; the task's warnings: {}",
        warnings
            .iter()
            .map(|w| show(w))
            .collect::<Vec<_>>()
            .join(", ")
    );
    Ok(())
}

#[then(expr = "the Workspace Service received no request for {string}")]
async fn no_request_for(world: &mut ConformanceWorld, path: String) -> StepResult {
    wait_task_end(world).await?;
    let requests = world.started_fakes()?.workspace.requests().await;
    let hit = requests.iter().find(|r| r.path.starts_with(&path));
    check!(
        hit.is_none(),
        "the runtime reached the loopback service: {} {}",
        hit.map(|r| r.method.as_str()).unwrap_or_default(),
        path
    );
    Ok(())
}
