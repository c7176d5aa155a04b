//! Teardown (local-agent-host.md §3.4): Shutdown, end of input and SIGTERM take one path.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use agent_protocol::events::{EventBody, SessionEnded};
use agent_protocol::state::SessionStatus;

use crate::agent_loop;
use crate::events::Scope;
use crate::host::{Host, extension_tools};
use crate::session::Session;
use crate::time::now_rfc3339;

impl Host {
    /// Teardown in the spec's order (§3.4); the same path for Shutdown, input EOF and
    /// SIGTERM. Runs once; later calls are no-ops.
    pub fn begin_shutdown(self: &Arc<Self>, reason: &'static str) {
        if self.shutdown_started.swap(true, Ordering::SeqCst) {
            return;
        }
        let host = Arc::clone(self);
        tokio::spawn(async move {
            if let Some(session) = host.current() {
                host.teardown(&session, reason).await;
                // The session's last events (its end included) go out before the process
                // does, within the configured bound.
                if let Some(outlets) = session.events.outlets() {
                    outlets.flush().await;
                }
            }
            host.shutdown_done.send_replace(true);
        });
    }

    async fn teardown(&self, session: &Arc<Session>, reason: &str) {
        let had_task = session.cancel_for_end(reason);
        if had_task {
            session.approvals.cancel_all();
        }
        if let Some(runner) = session.take_runner() {
            let _ = runner.await;
        }
        // The cancelled task's record is completed before the process goes.
        session.records.flush().await;
        extension_tools::close(self.tools.as_ref()).await;
        let Ok(backends) = self.backends() else {
            return;
        };
        // The last snapshot follows the session's last task (system-design.md §8a), also
        // when that task was just cancelled and its messages were never uploaded; in a
        // session that ran none it follows the last task of the thread it continues, and
        // when there is none at all it follows no task.
        let (own_task, last_task) = session.last_tasks();
        agent_loop::upload_history(
            session,
            &backends,
            own_task.as_deref(),
            last_task.as_deref(),
        )
        .await;
        // §3.3: RUNNING → CANCELLED when a task was running, PAUSED → CANCELLED always (a
        // paused session has no arrow to COMPLETED); RUNNING → COMPLETED otherwise.
        let paused = session.status() == SessionStatus::SessionPaused;
        let (to, body_of): (SessionStatus, fn(SessionEnded) -> EventBody) = if had_task || paused {
            (SessionStatus::SessionCancelled, EventBody::SessionCancelled)
        } else {
            (SessionStatus::SessionCompleted, EventBody::SessionCompleted)
        };
        // The slot holds only RUNNING or PAUSED sessions and teardown runs once, so both
        // arrows are in the table; a refusal is logged by the session.
        let ended = session.transition(to);
        debug_assert!(
            ended.is_ok(),
            "a session ends from RUNNING or PAUSED: {ended:?}"
        );
        let (task_count, total_tokens) = session.totals();
        session.events.emit(
            Scope::session(),
            body_of(SessionEnded {
                task_count,
                total_tokens,
                duration_ms: u64::try_from(session.started.elapsed().as_millis())
                    .unwrap_or(u64::MAX),
            }),
        );
        // Only a session whose task was cut short is cancelled at the service (INTEROP.md
        // §8): the real service refuses to resume a cancelled session and has no
        // "complete" call, so cancelling an idle one would make the conversation
        // impossible to continue from the app's sidebar. A sandbox's end is always told
        // (§10, `sandbox_ended`): otherwise the service's proxy goes on forwarding to a
        // dead endpoint.
        let sandbox = self.sandbox.get().is_some();
        let reason = if sandbox { "sandbox_ended" } else { reason };
        if (had_task || sandbox)
            && let Err(error) = backends.sessions.cancel_session(session.id(), reason).await
        {
            tracing::warn!(%error, "could not tell the Session Service that the session ended");
        }
        backends.checkpoints.delete(session.id());
        tracing::info!(session_id = session.id(), at = %now_rfc3339(), "session ended");
    }
}
