//! How a running task changes the session, as the agent loop reports it: the model's
//! answer and the tokens it cost, the tools' results, and the completed steps that make
//! the resume cursor (local-agent-host.md §4.2, §9.2).

use agent_protocol::message::MessageToolCall;

use super::Session;
use crate::llm::{LlmResponse, ToolCall};
use crate::thread::{Origin, Thread, ToolReply};

impl Session {
    /// The model's answer into the thread (its tool calls with it) and `tokens` onto the
    /// session's budget.
    pub(crate) fn record_answer(&self, response: &LlmResponse, tokens: u64, origin: Origin<'_>) {
        let calls = response
            .tool_calls
            .iter()
            .map(|call| MessageToolCall {
                id: call.id.clone(),
                name: call.name.clone(),
                arguments: call.arguments.clone(),
                message_id: None,
            })
            .collect();
        let mut inner = self.lock();
        inner.thread.add_assistant(
            &response.text,
            calls,
            response.usage.map(|usage| usage.output_tokens),
            origin,
        );
        inner.tokens_used = inner.tokens_used.saturating_add(tokens);
    }

    /// Each call's result into the thread, answering its call, in the calls' order.
    pub(crate) fn record_tool_results(
        &self,
        calls: &[ToolCall],
        results: Vec<ToolReply>,
        origin: Origin<'_>,
    ) {
        let mut inner = self.lock();
        for (call, reply) in calls.iter().zip(results) {
            inner
                .thread
                .add_tool_result(&call.id, &call.name, reply, origin);
        }
    }

    /// Counts a step of the current task as completed and makes it the resume cursor;
    /// the task's completed steps.
    pub(crate) fn complete_step(&self, step_id: &str) -> u32 {
        let mut inner = self.lock();
        inner.task.as_mut().map_or(0, |task| {
            task.step_count += 1;
            task.step_cursor = Some(step_id.to_owned());
            task.step_count
        })
    }

    /// The current task's last completed step, where a continued task picks up.
    pub(crate) fn step_cursor(&self) -> Option<String> {
        self.lock()
            .task
            .as_ref()
            .and_then(|task| task.step_cursor.clone())
    }

    /// The current task's completed steps.
    pub(crate) fn step_count(&self) -> u32 {
        self.lock().task.as_ref().map_or(0, |task| task.step_count)
    }

    /// The number in the current task's step cursor `step_NNN`, 0 when there is none.
    pub(crate) fn cursor_number(&self) -> u32 {
        self.lock()
            .task
            .as_ref()
            .and_then(|task| {
                task.step_cursor
                    .as_deref()?
                    .strip_prefix("step_")?
                    .parse()
                    .ok()
            })
            .unwrap_or(0)
    }
}

impl Session {
    /// A note of the runtime's in the thread (a withheld or blocked answer).
    pub(crate) fn add_system_note(&self, note: &str, origin: Origin<'_>) {
        self.lock().thread.add_system_note(note, origin);
    }

    /// Tokens the session's model calls have used.
    pub(crate) fn tokens_used(&self) -> u64 {
        self.lock().tokens_used
    }

    /// Tasks started and tokens used, for `session_completed`/`session_cancelled`.
    pub(crate) fn totals(&self) -> (u64, u64) {
        let inner = self.lock();
        (inner.task_count, inner.tokens_used)
    }

    /// Reads the thread (a request's messages, the history upload) under the lock.
    pub(crate) fn with_thread<R>(&self, read: impl FnOnce(&Thread) -> R) -> R {
        read(&self.lock().thread)
    }

    /// Records how many messages the last request left out; the number when it changed.
    pub(crate) fn note_dropped(&self, dropped: usize) -> Option<usize> {
        let mut inner = self.lock();
        let changed = (dropped != inner.last_dropped).then_some(dropped);
        inner.last_dropped = dropped;
        changed
    }

    /// Whether `task_id` is a task of this session (its thread, or the task slot).
    pub(crate) fn knows_task(&self, task_id: &str) -> bool {
        let inner = self.lock();
        inner.thread.has_task(task_id)
            || inner
                .task
                .as_ref()
                .is_some_and(|task| task.task_id == task_id)
    }

    /// The task of the session's last snapshot (system-design.md §8a) and whether it is
    /// the session's own: the task in the slot; else the last task of the thread — this
    /// session's own when restored after a crash, or of the conversation it continues.
    pub(crate) fn last_tasks(&self) -> (Option<String>, Option<String>) {
        let inner = self.lock();
        match inner.task.as_ref() {
            Some(task) => (Some(task.task_id.clone()), Some(task.task_id.clone())),
            None => {
                let last = inner.thread.last_tasked();
                let own = last
                    .as_ref()
                    .filter(|message| message.session_id == self.identity.session_id)
                    .and_then(|message| message.task_id.clone());
                (own, last.and_then(|message| message.task_id.clone()))
            }
        }
    }

    /// The patch preview of a task's file changes, paths relative to the project folder.
    pub(crate) fn patch_preview(&self, task_id: &str) -> Vec<agent_protocol::methods::FilePatch> {
        self.lock()
            .patches
            .preview(task_id, self.identity.workspace_root.as_deref())
    }

    /// Records the file changes a tool reported, for the task's patch preview.
    pub(crate) fn record_file_changes(
        &self,
        task_id: &str,
        changes: &[agent_protocol::FileChange],
    ) {
        self.lock().patches.record(task_id, changes);
    }

    /// The feature flags of a fresh bundle's resume answer, in place of the session's.
    pub(crate) fn set_feature_flags(&self, flags: serde_json::Map<String, serde_json::Value>) {
        self.lock().feature_flags = flags;
    }
}
