//! The history uploaded at Shutdown (system-design.md §8a): which task it follows when no
//! task ran in this process (a session restored after a crash, or one that continues a
//! past conversation).

use cucumber::then;

use super::session::shutdown_history;
use super::{StepResult, str_at};
use crate::world::ConformanceWorld;

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
            crate::report::NOT_JUDGED
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
