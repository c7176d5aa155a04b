//! The session's checkpoint in the Local State Store (local-agent-host.md §9.2): written
//! after every step, before StartTask is acknowledged, while an approval is pending and
//! when a task ends. A failed write is a log line; the next one tries again.

use agent_protocol::checkpoint::{
    CHECKPOINT_TASK_RUNNING, CHECKPOINT_VERSION, Checkpoint, CheckpointTask,
};
use agent_protocol::state::TaskStatus;

use super::Session;
use crate::state::CheckpointStore;
use crate::time::now_rfc3339;

fn task_status_word(status: TaskStatus, incomplete: bool) -> &'static str {
    if incomplete {
        // Paused by a recoverable failure: not over, a resumed session continues it.
        return CHECKPOINT_TASK_RUNNING;
    }
    match status {
        TaskStatus::TaskCompleted | TaskStatus::Idle => "completed",
        TaskStatus::TaskFailed => "failed",
        TaskStatus::TaskCancelled => "cancelled",
        _ => CHECKPOINT_TASK_RUNNING,
    }
}

/// Writes the session's checkpoint; the step cursor is the task's last completed step.
/// Only the small head is serialised per step; the thread goes in as each message's JSON,
/// serialised when the message was added (`Thread::stored`): copied from the thread's
/// spill file, never serialised again nor held whole in memory. A durable
/// write (with its fsyncs) runs on the blocking pool: the runtime has one thread, which
/// must go on answering the client meanwhile. The caller goes on only once the checkpoint
/// is on disk, so a crash never loses what the app was told.
pub(crate) async fn checkpoint(session: &Session, store: &CheckpointStore) {
    let _turn = store.turn().await;
    let redactor = crate::redact::global();
    let (head, thread) = {
        let mut guard = session.lock();
        let inner = &mut *guard;
        let policy = session.policy();
        let head = Checkpoint {
            checkpoint_version: CHECKPOINT_VERSION.to_owned(),
            session_id: session.identity.session_id.clone(),
            workspace_id: session.identity.workspace_id.clone(),
            tenant_id: session.identity.tenant_id.clone(),
            user_id: session.identity.user_id.clone(),
            session_status: inner.machine.status(),
            task: inner.task.as_ref().map(|task| CheckpointTask {
                task_id: task.task_id.clone(),
                prompt: task.prompt.clone(),
                status: task_status_word(task.machine.status(), task.incomplete).to_owned(),
                step_count: task.step_count,
                max_steps: task.max_steps,
                task_options: (task.options != Default::default()).then(|| task.options.clone()),
            }),
            step_cursor: inner
                .task
                .as_ref()
                .and_then(|task| task.step_cursor.clone()),
            thread: Vec::new(),
            session_tokens_used: inner.tokens_used,
            policy_bundle_version: policy.bundle().policy_bundle_version.clone(),
            checkpointed_at: now_rfc3339(),
            pending_approvals: session.approvals.pending(),
            workspace_root: session
                .identity
                .workspace_root
                .as_ref()
                .map(|root| root.display().to_string()),
            event_id_epoch: session.events.epoch(),
            file_changes: inner
                .task
                .as_ref()
                .map(|task| inner.patches.changes(&task.task_id).to_vec())
                .unwrap_or_default(),
            name: session.identity.name.clone(),
            feature_flags: inner.feature_flags.clone(),
            execution_environment: Some(session.identity.execution_environment.clone()),
            os_family: Some(session.identity.os_family.clone()).filter(|os| !os.is_empty()),
            continued_from: session.identity.continued_from.clone(),
        };
        (head, inner.thread.stored(&redactor))
    };
    // The fsyncs wait for the disk (milliseconds, on a slow disk much more): they run on
    // the blocking pool. A write without them only copies into the page cache, which is
    // cheaper than the hand-off.
    let written = if store.durable() {
        let writer = store.clone();
        tokio::task::spawn_blocking(move || writer.write_with_thread(&head, thread, &redactor))
            .await
    } else {
        Ok(store.write_with_thread(&head, thread, &redactor))
    };
    match written {
        Ok(Ok(_)) => {}
        Ok(Err(error)) => {
            tracing::warn!(%error, "checkpoint write failed; the next step will try again");
        }
        Err(error) => {
            tracing::warn!(%error, "checkpoint writer stopped; the next step will try again");
        }
    }
}
