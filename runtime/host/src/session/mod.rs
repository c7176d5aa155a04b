//! One session: its identity, policy, thread, events and the state of both levels of the
//! state machine. One runtime process serves one session (local-agent-host.md §1).

mod approvals;
mod checkpoint;
pub(crate) mod machine;
pub(crate) mod patches;
mod progress;
pub(crate) mod records;
mod task_state;

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard, RwLock};
use std::time::Instant;

use agent_protocol::checkpoint::{CHECKPOINT_TASK_RUNNING, Checkpoint};
use agent_protocol::message::ConversationMessage;
use agent_protocol::methods::{IncompleteTask, SessionStateResult, TaskOptions, TaskState};
use agent_protocol::policy::PolicyBundle;
use agent_protocol::state::{SessionStatus, TaskStatus};
use serde_json::{Map, Value};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::events::EventSink;
use crate::policy::PolicyEnforcer;
use crate::thread::Thread;
pub(crate) use approvals::ApprovalBroker;
pub(crate) use checkpoint::checkpoint;
use machine::{IllegalTransition, SessionMachine, TaskMachine};
pub(crate) use task_state::{Begun, TaskStart};

/// Who the session is, fixed at creation.
#[derive(Debug, Clone)]
pub(crate) struct Identity {
    pub session_id: String,
    pub workspace_id: String,
    pub tenant_id: String,
    pub user_id: String,
    pub name: Option<String>,
    pub execution_environment: String,
    pub workspace_root: Option<PathBuf>,
    pub os_family: String,
    /// The ended session this one continues (INTEROP.md §8): requests that still name it
    /// are answered for this one, since the app goes on naming it after "Continue
    /// Conversation".
    pub continued_from: Option<String>,
}

/// The task currently occupying the session, or the last one.
pub(crate) struct TaskRecord {
    pub task_id: String,
    pub prompt: String,
    pub machine: TaskMachine,
    pub step_count: u32,
    pub max_steps: u32,
    pub cancel: CancellationToken,
    /// Ended by a recoverable failure (gateway down, policy expired): StartTask with the
    /// same taskId continues it.
    pub incomplete: bool,
    /// The last completed step, where a continued task picks up.
    pub step_cursor: Option<String>,
    /// The task's own options (system-design.md §2a), kept for a continued task.
    pub options: TaskOptions,
    /// Why the task was cancelled, when the session's end cancelled it (`shutdown`,
    /// `terminated`, …); a CancelTask is the user's.
    pub cancel_reason: Option<String>,
}

struct Inner {
    machine: SessionMachine,
    task: Option<TaskRecord>,
    thread: Thread,
    tokens_used: u64,
    task_count: u64,
    /// Messages left out of the last LLM request, to report changes only.
    last_dropped: usize,
    patches: patches::Patches,
    /// As the Session Service last sent them: at creation, or with a fresh bundle on resume.
    feature_flags: Map<String, Value>,
}

pub(crate) struct Session {
    pub identity: Identity,
    pub events: EventSink,
    pub approvals: ApprovalBroker,
    pub started: Instant,
    /// Task records and the name at the Session Service (INTEROP.md §8).
    pub records: records::Records,
    policy: RwLock<Arc<PolicyEnforcer>>,
    inner: Mutex<Inner>,
    runner: Mutex<Option<JoinHandle<()>>>,
}

impl Inner {
    /// A thread of `messages` in place of the current one, spilling where it did.
    fn replace_thread(&mut self, session_id: &str, messages: Vec<ConversationMessage>) {
        let spill = self.thread.spill_dir().cloned();
        self.thread = Thread::restore(session_id, messages);
        self.thread.spill_into(spill);
    }
}

impl Session {
    /// `spill_dir` is where the thread keeps its checked messages rather than in memory
    /// (see `thread::spill`): the checkpoint directory, whose files hold the same bytes.
    pub(crate) fn new(
        identity: Identity,
        policy: PolicyBundle,
        feature_flags: Map<String, Value>,
        events: EventSink,
        spill_dir: PathBuf,
    ) -> Self {
        let mut thread = Thread::new(&identity.session_id);
        thread.spill_into(Some(spill_dir));
        let enforcer = PolicyEnforcer::new(policy, identity.workspace_root.clone());
        Self {
            identity,
            events,
            approvals: ApprovalBroker::default(),
            started: Instant::now(),
            records: records::Records::default(),
            policy: RwLock::new(Arc::new(enforcer)),
            inner: Mutex::new(Inner {
                machine: SessionMachine::new(),
                task: None,
                thread,
                tokens_used: 0,
                task_count: 0,
                last_dropped: 0,
                patches: patches::Patches::default(),
                feature_flags,
            }),
            runner: Mutex::new(None),
        }
    }

    /// Takes over what a checkpoint saved (§9.5): the thread, the tokens used and the last
    /// task. A task that was still running (or paused) when the process died comes back
    /// incomplete, so StartTask with its taskId continues after the step cursor.
    pub(crate) fn restore(&self, checkpoint: Checkpoint) {
        let mut inner = self.lock();
        let task_ids: HashSet<&str> = checkpoint
            .thread
            .iter()
            .filter_map(|message| message.task_id.as_deref())
            .collect();
        inner.task_count = task_ids.len() as u64;
        inner.tokens_used = checkpoint.session_tokens_used;
        let mut thread = checkpoint.thread;
        if let Some(task) = checkpoint
            .task
            .as_ref()
            .filter(|task| task.status == CHECKPOINT_TASK_RUNNING)
        {
            thread = completed_steps_only(thread, &task.task_id, checkpoint.step_cursor.as_deref());
        }
        if let Some(task) = &checkpoint.task {
            inner
                .patches
                .record(&task.task_id, &checkpoint.file_changes);
        }
        inner.task = checkpoint.task.map(|task| TaskRecord {
            incomplete: task.status == CHECKPOINT_TASK_RUNNING,
            task_id: task.task_id,
            prompt: task.prompt,
            machine: TaskMachine::new(),
            step_count: task.step_count,
            max_steps: task.max_steps,
            cancel: CancellationToken::new(),
            step_cursor: checkpoint.step_cursor,
            options: task.task_options.unwrap_or_default(),
            cancel_reason: None,
        });
        inner.replace_thread(&self.identity.session_id, thread);
    }

    /// Seeds the thread of a new session with a past session's history (system-design.md
    /// §2a): the model sees the earlier conversation; no task of it is resumable.
    pub(crate) fn continue_conversation(&self, history: Vec<ConversationMessage>) {
        self.lock()
            .replace_thread(&self.identity.session_id, history);
    }

    /// Seeds the thread of this same session from its uploaded history (ResumeSession with
    /// no checkpoint, INTEROP.md §8): its tasks count as this session's, none is resumable.
    pub(crate) fn reopen(&self, history: Vec<ConversationMessage>) {
        let mut inner = self.lock();
        inner.task_count = history
            .iter()
            .filter(|message| message.session_id == self.identity.session_id)
            .filter_map(|message| message.task_id.as_deref())
            .collect::<HashSet<_>>()
            .len() as u64;
        inner.replace_thread(&self.identity.session_id, history);
    }

    pub(crate) fn id(&self) -> &str {
        &self.identity.session_id
    }

    /// Whether a request naming `session_id` means this session: its own id, or the ended
    /// session it continues (INTEROP.md §8).
    pub(crate) fn answers_to(&self, session_id: &str) -> bool {
        self.id() == session_id || self.identity.continued_from.as_deref() == Some(session_id)
    }

    /// The state, locked. Held only for short, non-async sections.
    fn lock(&self) -> MutexGuard<'_, Inner> {
        match self.inner.lock() {
            Ok(inner) => inner,
            Err(poisoned) => poisoned.into_inner(),
        }
    }

    /// Replaces the policy (ResumeSession with a fresh bundle).
    pub(crate) fn set_policy(&self, bundle: PolicyBundle) {
        let enforcer = Arc::new(PolicyEnforcer::new(
            bundle,
            self.identity.workspace_root.clone(),
        ));
        match self.policy.write() {
            Ok(mut policy) => *policy = enforcer,
            Err(poisoned) => *poisoned.into_inner() = enforcer,
        }
    }

    pub(crate) fn feature_flags(&self) -> Map<String, Value> {
        self.lock().feature_flags.clone()
    }

    pub(crate) fn policy(&self) -> Arc<PolicyEnforcer> {
        match self.policy.read() {
            Ok(policy) => Arc::clone(&policy),
            Err(poisoned) => Arc::clone(&poisoned.into_inner()),
        }
    }

    pub(crate) fn status(&self) -> SessionStatus {
        self.lock().machine.status()
    }

    pub(crate) fn transition(&self, to: SessionStatus) -> Result<(), IllegalTransition> {
        let result = self.lock().machine.transition(to);
        if let Err(error) = &result {
            tracing::error!(%error, "refused a session transition");
        }
        result
    }

    /// Moves the current task's machine; an illegal arrow is logged and refused.
    pub(crate) fn task_transition(&self, to: TaskStatus) -> Result<(), IllegalTransition> {
        let mut inner = self.lock();
        let Some(task) = inner.task.as_mut() else {
            return Err(IllegalTransition {
                level: "task",
                from: "none".to_owned(),
                to: format!("{to:?}"),
            });
        };
        let result = task.machine.transition(to);
        if let Err(error) = &result {
            tracing::error!(%error, "refused a task transition");
        }
        result
    }

    pub(crate) fn set_runner(&self, handle: JoinHandle<()>) {
        if let Ok(mut runner) = self.runner.lock() {
            *runner = Some(handle);
        }
    }

    pub(crate) fn take_runner(&self) -> Option<JoinHandle<()>> {
        self.runner.lock().ok().and_then(|mut runner| runner.take())
    }

    /// The running task's cancellation token, if a task is active.
    pub(crate) fn active_task(&self) -> Option<(String, CancellationToken)> {
        let inner = self.lock();
        inner
            .task
            .as_ref()
            .filter(|task| task.machine.status().is_active())
            .map(|task| (task.task_id.clone(), task.cancel.clone()))
    }

    pub(crate) fn state(&self) -> SessionStateResult {
        let inner = self.lock();
        let policy = self.policy();
        let status = inner.machine.status();
        let task = inner.task.as_ref().map(|task| TaskState {
            task_id: task.task_id.clone(),
            status: task.machine.status(),
            step_count: task.step_count,
            max_steps: task.max_steps,
        });
        SessionStateResult {
            session_id: Some(self.identity.session_id.clone()),
            workspace_id: Some(self.identity.workspace_id.clone()),
            session_status: status,
            status,
            current_task_id: inner
                .task
                .as_ref()
                .filter(|task| task.machine.status().is_active())
                .map(|task| task.task_id.clone()),
            step_count: inner.task.as_ref().map_or(0, |task| task.step_count),
            task,
            session_tokens_used: inner.tokens_used,
            max_session_tokens: policy.bundle().llm_policy.max_session_tokens,
            incomplete_task: inner
                .task
                .as_ref()
                .filter(|task| task.incomplete)
                .map(|task| IncompleteTask {
                    task_id: task.task_id.clone(),
                    prompt: task.prompt.clone(),
                    last_step: task.step_count,
                    max_steps: task.max_steps,
                }),
            // The tool runtime's to tell; the host fills it in (`host::session_state`).
            sandbox: None,
        }
    }
}

/// The thread without what an interrupted task wrote after its last completed step (a
/// checkpoint taken while an approval was pending holds the step's tool calls but not yet
/// their results): the task resumes with the step after the cursor (§9.5), and an orphan
/// tool call would make the gateway reject the request.
fn completed_steps_only(
    thread: Vec<ConversationMessage>,
    task_id: &str,
    cursor: Option<&str>,
) -> Vec<ConversationMessage> {
    let number = |step: &str| step.strip_prefix("step_")?.parse::<u32>().ok();
    let last = cursor.and_then(number).unwrap_or(0);
    thread
        .into_iter()
        .filter(|message| {
            message.task_id.as_deref() != Some(task_id)
                || message
                    .step_id
                    .as_deref()
                    .and_then(number)
                    .is_none_or(|step| step <= last)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_protocol::message::Role;

    fn message(task: &str, step: Option<&str>) -> ConversationMessage {
        ConversationMessage {
            message_id: format!("{task}-{}", step.unwrap_or("prompt")),
            session_id: "s".into(),
            task_id: Some(task.into()),
            step_id: step.map(str::to_owned),
            role: Role::User,
            content: String::new(),
            token_count: None,
            timestamp: String::new(),
            tool_calls: Vec::new(),
            tool_call_id: None,
            tool_name: None,
            image_urls: Vec::new(),
        }
    }

    #[test]
    fn an_interrupted_step_is_dropped_and_everything_else_kept() {
        let thread = vec![
            message("t1", None),
            message("t1", Some("step_001")),
            message("t2", None),
            message("t2", Some("step_001")),
            message("t2", Some("step_002")),
            message("t2", Some("step_003")),
        ];
        let kept: Vec<String> = completed_steps_only(thread.clone(), "t2", Some("step_002"))
            .into_iter()
            .map(|m| m.message_id)
            .collect();
        assert_eq!(
            kept,
            [
                "t1-prompt",
                "t1-step_001",
                "t2-prompt",
                "t2-step_001",
                "t2-step_002"
            ]
        );
        let kept = completed_steps_only(thread, "t2", None);
        assert_eq!(kept.len(), 3, "no cursor: only the prompt of t2 stays");
    }
}
