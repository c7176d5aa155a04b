//! Task records and the session's automatic name at the Session Service (INTEROP.md §8):
//! what the app's sidebar lists. Every call is fire-and-forget: it runs beside the task,
//! the service client retries it a bounded number of times, and a failure is a log line —
//! never a reason for a task to fail. The calls of one session go out in order (a task is
//! created before it is completed), and teardown waits for what is still on its way.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use tokio::task::JoinHandle;

use crate::backends::Backends;

/// The longest automatic name, in characters.
pub(crate) const NAME_LIMIT: usize = 60;

/// The calls of one session, chained so they reach the service in the order made.
#[derive(Default)]
pub(crate) struct Records {
    last: Mutex<Option<JoinHandle<()>>>,
    /// The session took the name of the ended session it continues (INTEROP.md §8): its
    /// first task does not name it after its own prompt.
    named: AtomicBool,
}

/// How a task ended, as a task record says it.
pub(crate) struct Completion {
    pub status: &'static str,
    pub step_count: u32,
    pub completion_reason: Option<String>,
}

impl Records {
    fn chain<F>(&self, call: F)
    where
        F: std::future::Future<Output = ()> + Send + 'static,
    {
        let mut last = match self.last.lock() {
            Ok(last) => last,
            Err(poisoned) => poisoned.into_inner(),
        };
        let previous = last.take();
        *last = Some(tokio::spawn(async move {
            if let Some(previous) = previous {
                let _ = previous.await;
            }
            call.await;
        }));
    }

    /// `PATCH /sessions/{id}/name` with the name of the ended session this one continues
    /// (INTEROP.md §8), kept instead of a name made from the first prompt.
    pub(crate) fn keep_name(&self, backends: Arc<Backends>, session_id: &str, name: &str) {
        self.named.store(true, Ordering::SeqCst);
        let (session_id, name) = (session_id.to_owned(), name.to_owned());
        self.chain(async move {
            if let Err(error) = backends.sessions.rename_session(&session_id, &name).await {
                tracing::warn!(%error, "could not give the continued session its name at the Session Service");
            }
        });
    }

    /// `POST /sessions/{id}/tasks`, then for the session's first task its name. With
    /// `maybe_recorded` (sandbox mode: the browser makes the record before StartTask,
    /// INTEROP.md §10) the record is looked up first and not created a second time.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn task_started(
        &self,
        backends: Arc<Backends>,
        session_id: &str,
        task_id: &str,
        prompt: &str,
        max_steps: u32,
        first: bool,
        maybe_recorded: bool,
    ) {
        let (session_id, task_id, prompt) =
            (session_id.to_owned(), task_id.to_owned(), prompt.to_owned());
        let first = first && !self.named.load(Ordering::SeqCst);
        self.chain(async move {
            let recorded = maybe_recorded
                && backends
                    .sessions
                    .task_exists(&session_id, &task_id)
                    .await
                    .unwrap_or_else(|error| {
                        tracing::warn!(%error, task_id, "could not look up the task record");
                        false
                    });
            if !recorded
                && let Err(error) = backends
                    .sessions
                    .create_task(&session_id, &task_id, &prompt, max_steps)
                    .await
            {
                tracing::warn!(%error, task_id, "could not record the task at the Session Service");
            }
            if first {
                let name = auto_name(&prompt);
                if !name.is_empty()
                    && let Err(error) = backends.sessions.rename_session(&session_id, &name).await
                {
                    tracing::warn!(%error, "could not name the session at the Session Service");
                }
            }
        });
    }

    /// `POST /sessions/{id}/tasks/{taskId}/complete`.
    pub(crate) fn task_ended(
        &self,
        backends: Arc<Backends>,
        session_id: &str,
        task_id: &str,
        completion: Completion,
    ) {
        let (session_id, task_id) = (session_id.to_owned(), task_id.to_owned());
        self.chain(async move {
            if let Err(error) = backends
                .sessions
                .complete_task(
                    &session_id,
                    &task_id,
                    completion.status,
                    completion.step_count,
                    completion.completion_reason.as_deref(),
                )
                .await
            {
                tracing::warn!(%error, task_id, "could not complete the task record at the Session Service");
            }
        });
    }

    /// Waits for the calls made so far (teardown: the process must not end before them).
    pub(crate) async fn flush(&self) {
        let last = match self.last.lock() {
            Ok(mut last) => last.take(),
            Err(poisoned) => poisoned.into_inner().take(),
        };
        if let Some(last) = last {
            let _ = last.await;
        }
    }
}

/// The first prompt as a session name: one line, at most [`NAME_LIMIT`] characters, cut
/// at the last word boundary that fits (a single longer word is cut inside).
pub(crate) fn auto_name(prompt: &str) -> String {
    let words: Vec<&str> = prompt.split_whitespace().collect();
    let line = words.join(" ");
    if line.chars().count() <= NAME_LIMIT {
        return line;
    }
    let mut name = String::new();
    for word in words {
        let extra = usize::from(!name.is_empty()) + word.chars().count();
        if name.chars().count() + extra > NAME_LIMIT {
            break;
        }
        if !name.is_empty() {
            name.push(' ');
        }
        name.push_str(word);
    }
    if name.is_empty() {
        name = line.chars().take(NAME_LIMIT).collect();
    }
    name
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_prompt_is_cut_on_a_word_boundary() {
        assert_eq!(auto_name("  Fix the\nbuild  "), "Fix the build");
        let prompt =
            "Refactor the session module so that restarts keep every conversation resumable please";
        let name = auto_name(prompt);
        assert_eq!(
            name,
            "Refactor the session module so that restarts keep every"
        );
        assert!(name.chars().count() <= NAME_LIMIT);
        assert!(prompt.starts_with(&name));
        let word = "x".repeat(80);
        assert_eq!(auto_name(&word).chars().count(), NAME_LIMIT);
        let exact = "a".repeat(NAME_LIMIT);
        assert_eq!(auto_name(&exact), exact);
    }
}
