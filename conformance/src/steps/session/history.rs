//! The session history the Workspace Service receives (system-design.md §8a): what it holds,
//! which task it follows and when it was taken.

use agent_mocks::FaultControl;
use cucumber::then;
use serde_json::Value;

use crate::steps::session::end::shutdown_history;
use crate::steps::support::{
    StepResult, check_service_body, eventually, parse_rfc3339, show, str_at,
};
use crate::steps::task::wait_task_end;
use crate::world::ConformanceWorld;

#[then(regex = r#"^the session history saved last holds (".+") in order$"#)]
async fn history_holds(world: &mut ConformanceWorld, list: String) -> StepResult {
    wait_task_end(world).await?;
    let wanted: Vec<String> = list
        .split('"')
        .skip(1)
        .step_by(2)
        .map(str::to_owned)
        .collect();
    let session_id = world.session()?.session_id.clone();
    let fakes = world.started_fakes()?;
    let timeout = world.timeout();
    let last = wanted.last().cloned().unwrap_or_default();
    let history = eventually(timeout, "a history carrying the last message", || async {
        match fakes.workspace.history(&session_id).await {
            Some(messages) if serde_json::to_string(&messages).is_ok_and(|t| t.contains(&last)) => {
                Ok(messages)
            }
            other => Err(format!("the saved history: {other:?}")),
        }
    })
    .await?;
    let contents: Vec<String> = history
        .iter()
        .filter_map(|m| str_at(m, &["content"]).map(str::to_owned))
        .collect();
    let mut from = 0;
    for text in &wanted {
        let found = contents[from..]
            .iter()
            .position(|c| c.contains(text.as_str()));
        let Some(at) = found else {
            fail!("the saved history must hold {wanted:?} in order; it holds {contents:?}");
        };
        from += at + 1;
    }
    Ok(())
}

#[then(
    expr = "the Workspace Service receives a session_history holding the prompt and the answer {string}"
)]
async fn history_uploaded(world: &mut ConformanceWorld, answer: String) -> StepResult {
    wait_task_end(world).await?;
    let session = world.session()?.clone();
    let prompt = world.task()?.prompt.clone();
    let path = format!("/workspaces/{}/artifacts", session.workspace_id);
    let fakes = world.started_fakes()?;
    let upload = eventually(world.timeout(), "no fitting session_history upload", || async {
        let requests = fakes.workspace.requests().await;
        let histories: Vec<_> = requests
            .iter()
            .filter(|r| r.method == "POST" && r.path == path && str_at(&r.body, &["artifactType"]) == Some("session_history"))
            .collect();
        let fitting = histories.iter().rev().find(|r| {
            let messages = r.body.get("messages").and_then(Value::as_array);
            let has = |role: &str, text: &str| {
                messages.is_some_and(|ms| {
                    ms.iter().any(|m| str_at(m, &["role"]) == Some(role) && str_at(m, &["content"]).is_some_and(|c| c.contains(text)))
                })
            };
            has("user", &prompt) && has("assistant", &answer)
        });
        match fitting {
            Some(request) => Ok(request.body.clone()),
            None => Err(format!(
                "{} session_history upload(s) to POST {path}; none holds the user prompt and the assistant answer{}",
                histories.len(),
                histories.last().map(|r| format!(" (last: {})", show(&r.body))).unwrap_or_default()
            )),
        }
    })
    .await?;
    check_service_body(
        "services/workspace/ArtifactUploadRequest",
        &upload,
        "the session_history upload",
    )?;
    for (index, message) in upload
        .get("messages")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .enumerate()
    {
        check_service_body(
            "message/ConversationMessage",
            message,
            &format!("session_history message {index}"),
        )?;
    }
    check!(
        str_at(&upload, &["sessionId"]) == Some(session.session_id.as_str()),
        "the session_history upload names session {:?}, expected {:?}",
        str_at(&upload, &["sessionId"]),
        session.session_id
    );
    Ok(())
}

#[then("the session_history uploaded after Shutdown follows the task that ran before the crash")]
async fn follows_task_before_crash(world: &mut ConformanceWorld) -> StepResult {
    follows_last_task(world, true).await
}

/// A session that continues a past conversation and runs no task of its own: its snapshot
/// follows the last task of the thread it continues.
#[then("the session_history uploaded after Shutdown follows the conversation's last task")]
async fn follows_conversations_last_task(world: &mut ConformanceWorld) -> StepResult {
    follows_last_task(world, false).await
}

/// The last session_history of the current session, uploaded after Shutdown, names the
/// last task the kit ran (`world.task()`), in this process or an earlier one. `own`: that
/// task belongs to this session, so the upload is also filed under it (`taskId`); a task
/// of another session (a continued conversation) must not be.
async fn follows_last_task(world: &mut ConformanceWorld, own: bool) -> StepResult {
    let task_id = world.task()?.task_id.clone();
    // No upload at Shutdown at all is REQ-SES-014's finding; which task an upload follows is
    // this one's.
    let upload = shutdown_history(world).await.map_err(|failure| {
        anyhow::anyhow!(
            "{} {failure:#}; uploading at Shutdown is REQ-SES-014's finding",
            crate::contract::NOT_JUDGED
        )
    })?;
    let after = str_at(&upload, &["snapshotAfterTaskId"]);
    check!(
        after == Some(task_id.as_str()),
        "the session_history uploaded at Shutdown must follow the last task {task_id} (run before the crash, or in the conversation this session continues), its snapshotAfterTaskId is {after:?}"
    );
    let filed_under = str_at(&upload, &["taskId"]);
    if own {
        check!(
            filed_under == Some(task_id.as_str()),
            "the session_history uploaded at Shutdown belongs to this session's task {task_id}, its taskId is {filed_under:?}"
        );
    } else {
        check!(
            filed_under != Some(task_id.as_str()),
            "the session_history uploaded at Shutdown must not be filed under {task_id}, a task of the session this one continues"
        );
    }
    Ok(())
}

#[then("every session_history upload names the task it follows and when it was taken")]
async fn history_snapshot_fields(world: &mut ConformanceWorld) -> StepResult {
    let latest = world.task()?.task_id.clone();
    let mut tasks: Vec<String> = Vec::new();
    for event in world.started_runtime()?.events() {
        if event.event_type() == "task_started"
            && let Some(id) = event.str_field("taskId")
            && !tasks.iter().any(|t| t == id)
        {
            tasks.push(id.to_owned());
        }
    }
    let uploads: Vec<Value> = world
        .started_fakes()?
        .workspace
        .uploads()
        .await
        .into_iter()
        .filter(|u| str_at(u, &["artifactType"]) == Some("session_history"))
        .collect();
    check!(
        uploads.len() >= tasks.len() && !tasks.is_empty(),
        "expected a session_history upload after each of the {} task(s), got {}",
        tasks.len(),
        uploads.len()
    );
    let mut named = Vec::new();
    for upload in &uploads {
        let after = str_at(upload, &["snapshotAfterTaskId"]);
        check!(
            after.is_some_and(|id| tasks.iter().any(|t| t == id)),
            "a session_history upload must name the task it follows as snapshotAfterTaskId (one of {tasks:?}), got {:?}",
            after
        );
        let at = str_at(upload, &["snapshotAt"]).unwrap_or_default();
        check!(
            parse_rfc3339(at).is_some(),
            "a session_history upload must carry snapshotAt as an RFC 3339 time, got {at:?}"
        );
        named.extend(after.map(str::to_owned));
    }
    for task in &tasks {
        check!(
            named.contains(task),
            "no session_history upload follows task {task}: {named:?}"
        );
    }
    check!(
        named.last() == Some(&latest),
        "the latest session_history must follow the latest task {latest}, it follows {:?}",
        named.last()
    );
    Ok(())
}
