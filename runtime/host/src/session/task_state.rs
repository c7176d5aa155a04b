//! The session's task slot as the methods and the loop change it: a task begins (or an
//! incomplete one continues), ends — forced into its terminal state when it has no arrow
//! there —, goes back to IDLE with its terminal event, and a task a crash interrupted is
//! cancelled. The rules live here so that `Inner`'s fields change in one module.

use agent_protocol::ErrorCode;
use agent_protocol::methods::TaskOptions;
use agent_protocol::state::TaskStatus;
use tokio_util::sync::CancellationToken;

use super::machine::TaskMachine;
use super::{Session, TaskRecord};
use crate::error::RpcError;
use crate::thread::Origin;

/// What StartTask asks for.
pub(crate) struct TaskStart {
    pub task_id: String,
    pub prompt: String,
    pub max_steps: u32,
    /// Whether the request named `maxSteps` itself (a continued task keeps its own else).
    pub max_steps_given: bool,
    pub options: TaskOptions,
    pub cancel: CancellationToken,
}

/// The task as it begins.
pub(crate) struct Begun {
    pub prompt: String,
    pub max_steps: u32,
    pub options: TaskOptions,
    /// An incomplete task continued with its taskId.
    pub continues: bool,
    /// The session's first task.
    pub first: bool,
}

impl Session {
    /// Occupies the task slot: a new task (its prompt, scrubbed of secrets, enters the
    /// thread) or, with the taskId of an incomplete task, that task continued. Refused
    /// while a task runs or for a task that has finished.
    pub(crate) fn begin_task(&self, start: TaskStart) -> Result<Begun, RpcError> {
        let mut inner = self.lock();
        if let Some(running) = inner
            .task
            .as_ref()
            .filter(|task| task.machine.status().is_active())
        {
            return Err(RpcError::new(
                ErrorCode::InvalidRequest,
                format!(
                    "Task {} is still running in this session; cancel it or wait for it to finish before starting another.",
                    running.task_id
                ),
            ));
        }
        let task_id = start.task_id;
        // The same taskId as the last task: continue it if it is incomplete.
        let previous = inner.task.as_ref().filter(|task| task.task_id == task_id);
        if previous.is_some_and(|task| !task.incomplete) {
            return Err(RpcError::new(
                ErrorCode::InvalidRequest,
                format!("Task {task_id} has already finished; start a new task with a new taskId."),
            ));
        }
        let options = start.options;
        let (prompt, step_count, step_cursor, max_steps, continues, options) = match previous {
            Some(task) => (
                task.prompt.clone(),
                task.step_count,
                task.step_cursor.clone(),
                if start.max_steps_given {
                    start.max_steps
                } else {
                    task.max_steps
                },
                true,
                // The app continues a task with its taskId and prompt only (INTEROP.md §1):
                // an option it does not repeat keeps the task's own value, so a pause or a
                // crash never loosens approvalMode or allowNetwork.
                TaskOptions {
                    max_steps: options.max_steps.or(task.options.max_steps),
                    allow_network: options.allow_network.or(task.options.allow_network),
                    approval_mode: options.approval_mode.or(task.options.approval_mode),
                },
            ),
            // A secret typed in the prompt never reaches the thread in clear, so history,
            // checkpoints, events, logs and the run store never hold it; the model saw it
            // redacted anyway (the whole request is), so nothing is lost.
            None => (
                crate::redact::global().redact(&start.prompt).into_owned(),
                0,
                None,
                start.max_steps,
                false,
                options,
            ),
        };
        let mut machine = TaskMachine::new();
        machine
            .transition(TaskStatus::TaskRunning)
            .map_err(|error| RpcError::internal(error.to_string()))?;
        inner.task = Some(TaskRecord {
            task_id: task_id.clone(),
            prompt: prompt.clone(),
            machine,
            step_count,
            max_steps,
            cancel: start.cancel,
            incomplete: false,
            step_cursor,
            options: options.clone(),
            cancel_reason: None,
        });
        let mut first = false;
        if !continues {
            inner.task_count += 1;
            first = inner.task_count == 1;
            inner.thread.add_user(
                &prompt,
                Origin {
                    task_id: &task_id,
                    step_id: None,
                },
            );
        }
        Ok(Begun {
            prompt,
            max_steps,
            options,
            continues,
            first,
        })
    }

    /// Puts the current task in `terminal` even from a state with no arrow there (a panic
    /// mid-tools): the task must end whatever happened. `recoverable` leaves it incomplete,
    /// to be continued with the same taskId.
    pub(crate) fn end_task(&self, terminal: TaskStatus, recoverable: bool) {
        if self.task_transition(terminal).is_err()
            && let Some(task) = self.lock().task.as_mut()
        {
            task.machine = TaskMachine::new();
            let running = task.machine.transition(TaskStatus::TaskRunning);
            let ended = task.machine.transition(terminal);
            debug_assert!(
                running.is_ok() && ended.is_ok(),
                "a task ends from TASK_RUNNING: {running:?} {ended:?}"
            );
        }
        if recoverable && let Some(task) = self.lock().task.as_mut() {
            task.incomplete = true;
        }
    }

    /// Sends the ended task's terminal event (`announce`) and returns the task to IDLE
    /// under the session lock, so GetSessionState sees the ended task either before its
    /// terminal event is out or IDLE after it — never "event out, still TASK_COMPLETED".
    pub(crate) fn announce_end(&self, announce: impl FnOnce()) {
        let mut inner = self.lock();
        announce();
        if let Some(task) = inner.task.as_mut()
            && let Err(error) = task.machine.transition(TaskStatus::Idle)
        {
            tracing::error!(%error, "refused a task transition");
        }
    }

    /// Cancels the running task because the session is ending for `reason`; whether one
    /// was running.
    pub(crate) fn cancel_for_end(&self, reason: &str) -> bool {
        let mut inner = self.lock();
        let Some(task) = inner
            .task
            .as_mut()
            .filter(|task| task.machine.status().is_active())
        else {
            return false;
        };
        task.cancel_reason = Some(reason.to_owned());
        task.cancel.cancel();
        true
    }

    /// Why the current task was cancelled: `cancelled_by_user` unless the session's end
    /// cancelled it.
    pub(crate) fn cancel_reason(&self) -> String {
        self.lock()
            .task
            .as_ref()
            .and_then(|task| task.cancel_reason.clone())
            .unwrap_or_else(|| "cancelled_by_user".to_owned())
    }

    /// CancelTask of the task a crash interrupted (restored, not running): it is cancelled
    /// in place; its taskId and completed steps. `None` when there is no such task (or it
    /// is not `requested`).
    pub(crate) fn cancel_interrupted_task(&self, requested: Option<&str>) -> Option<(String, u32)> {
        let mut inner = self.lock();
        let task = inner.task.as_mut().filter(|task| {
            task.incomplete && requested.is_none_or(|requested| requested == task.task_id)
        })?;
        task.incomplete = false;
        let mut machine = TaskMachine::new();
        let running = machine.transition(TaskStatus::TaskRunning);
        let cancelled = machine.transition(TaskStatus::TaskCancelled);
        debug_assert!(
            running.is_ok() && cancelled.is_ok(),
            "a task is cancelled from TASK_RUNNING: {running:?} {cancelled:?}"
        );
        task.machine = machine;
        Some((task.task_id.clone(), task.step_count))
    }
}
