//! StartTask and CancelTask: the guards of §3.3 before a loop starts or is told to stop.

use super::*;

impl Host {
    pub(super) async fn start_task(
        self: &Arc<Self>,
        params: StartTaskParams,
    ) -> Result<Value, RpcError> {
        let session = self.session_for(&params.session_id)?;
        match session.status() {
            SessionStatus::SessionRunning => {}
            SessionStatus::SessionPaused => {
                return Err(RpcError::new(
                    ErrorCode::InvalidRequest,
                    format!(
                        "Session {} is paused; resume it with ResumeSession before starting a task.",
                        session.id()
                    ),
                ));
            }
            other => {
                return Err(RpcError::new(
                    ErrorCode::InvalidRequest,
                    format!(
                        "Session {} has ended ({other:?}); start a new session.",
                        session.id()
                    ),
                ));
            }
        }
        if params.prompt.trim().is_empty() {
            return Err(RpcError::invalid_params(
                Some("prompt"),
                "Invalid params for StartTask: prompt must not be empty.",
            ));
        }
        let options = params.task_options.clone().unwrap_or_default();
        let max_steps = match options.max_steps {
            None => self.config.default_max_steps,
            Some(steps) if steps >= 1 && steps <= i64::from(self.config.max_steps_limit) => {
                u32::try_from(steps).unwrap_or(self.config.default_max_steps)
            }
            Some(steps) => {
                return Err(RpcError::invalid_params(
                    Some("taskOptions.maxSteps"),
                    format!(
                        "Invalid params for StartTask: taskOptions.maxSteps must be between 1 and {}, got {steps}.",
                        self.config.max_steps_limit
                    ),
                ));
            }
        };
        let task_id = params
            .task_id
            .clone()
            .unwrap_or_else(|| format!("task_{}", uuid::Uuid::new_v4().simple()));
        let cancel = CancellationToken::new();
        let mut first_task = false;
        let (prompt, max_steps, options, continues) = {
            let mut inner = session.lock();
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
            // The same taskId as the last task: continue it if it is incomplete.
            let previous = inner.task.as_ref().filter(|task| task.task_id == task_id);
            if previous.is_some_and(|task| !task.incomplete) {
                return Err(RpcError::new(
                    ErrorCode::InvalidRequest,
                    format!(
                        "Task {task_id} has already finished; start a new task with a new taskId."
                    ),
                ));
            }
            let (prompt, step_count, step_cursor, max_steps, continues, options) = match previous {
                Some(task) => (
                    task.prompt.clone(),
                    task.step_count,
                    task.step_cursor.clone(),
                    if options.max_steps.is_some() {
                        max_steps
                    } else {
                        task.max_steps
                    },
                    true,
                    // The app continues a task with its taskId and prompt only (INTEROP.md
                    // §1): an option it does not repeat keeps the task's own value, so a
                    // pause or a crash never loosens approvalMode or allowNetwork.
                    TaskOptions {
                        max_steps: options.max_steps.or(task.options.max_steps),
                        allow_network: options.allow_network.or(task.options.allow_network),
                        approval_mode: options.approval_mode.or(task.options.approval_mode),
                    },
                ),
                // A secret typed in the prompt never reaches the thread in clear, so history,
                // checkpoints, events, logs and the run store never hold it; the model saw
                // it redacted anyway (the whole request is), so nothing is lost.
                None => (
                    crate::redact::global().redact(&params.prompt).into_owned(),
                    0,
                    None,
                    max_steps,
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
                cancel: cancel.clone(),
                incomplete: false,
                step_cursor,
                options: options.clone(),
            });
            if !continues {
                inner.task_count += 1;
                first_task = inner.task_count == 1;
                inner.thread.add_user(
                    &prompt,
                    Origin {
                        task_id: &task_id,
                        step_id: None,
                    },
                );
            }
            (prompt, max_steps, options, continues)
        };
        // Checkpointed before the acknowledgement: once the app is told the task runs, a
        // crash can no longer lose it or its prompt.
        let backends = self.backends()?;
        agent_loop::checkpoint(&session, &backends.checkpoints).await;
        // A continued task was recorded as ended when it failed; recording it again makes
        // it running at the service until its new end.
        session.records.task_started(
            Arc::clone(&backends),
            session.id(),
            &task_id,
            &prompt,
            max_steps,
            first_task && !continues,
        );
        let run = TaskRun {
            session: Arc::clone(&session),
            backends,
            tools: Arc::clone(&self.tools),
            config: Arc::clone(&self.config),
            task_id: task_id.clone(),
            prompt,
            max_steps,
            options,
            cancel,
        };
        session.set_runner(tokio::spawn(agent_loop::run(run)));
        to_value(StartTaskResult {
            task_id,
            status: "running".to_owned(),
        })
    }

    pub(super) fn cancel_task(&self, params: CancelTaskParams) -> Result<Value, RpcError> {
        let session = self.session_for(&params.session_id)?;
        let Some((task_id, cancel)) = session.active_task() else {
            if let Some(task_id) = self.cancel_interrupted(&session, params.task_id.as_deref()) {
                return to_value(CancelTaskResult {
                    task_id,
                    status: "cancelling".to_owned(),
                });
            }
            return Err(RpcError::new(
                ErrorCode::InvalidRequest,
                format!(
                    "No task is running in session {}, so there is nothing to cancel.",
                    session.id()
                ),
            ));
        };
        if let Some(requested) = params
            .task_id
            .as_deref()
            .filter(|requested| *requested != task_id)
        {
            return Err(RpcError::new(
                ErrorCode::InvalidRequest,
                format!("Task {requested} is not running; the running task is {task_id}."),
            ));
        }
        cancel.cancel();
        session.approvals.cancel_all();
        to_value(CancelTaskResult {
            task_id,
            status: "cancelling".to_owned(),
        })
    }

    /// CancelTask of the task a crash interrupted (restored, not running, INTEROP.md §8):
    /// it ends as cancelled, saved like any ended task, with its `task_cancelled` — the
    /// app unlocks its prompt box only on a terminal event. `None` when there is none.
    fn cancel_interrupted(
        &self,
        session: &Arc<Session>,
        requested: Option<&str>,
    ) -> Option<String> {
        let (task_id, step_count) = {
            let mut inner = session.lock();
            let task = inner.task.as_mut().filter(|task| {
                task.incomplete && requested.is_none_or(|requested| requested == task.task_id)
            })?;
            task.incomplete = false;
            let mut machine = TaskMachine::new();
            let _ = machine.transition(TaskStatus::TaskRunning);
            let _ = machine.transition(TaskStatus::TaskCancelled);
            task.machine = machine;
            (task.task_id.clone(), task.step_count)
        };
        let backends = self.backends().ok();
        let session = Arc::clone(session);
        let ended = task_id.clone();
        tokio::spawn(async move {
            if let Some(backends) = &backends {
                agent_loop::checkpoint(&session, &backends.checkpoints).await;
                agent_loop::upload_history(&session, backends, Some(&ended), Some(&ended)).await;
                session.records.task_ended(
                    Arc::clone(backends),
                    session.id(),
                    &ended,
                    crate::session::records::Completion {
                        status: "cancelled",
                        step_count,
                        completion_reason: Some("cancelled_by_user".to_owned()),
                    },
                );
            }
            let mut inner = session.lock();
            session.events.emit(
                Scope::task(&ended),
                EventBody::TaskCancelled(agent_protocol::events::TaskCancelled {
                    step_count,
                    reason: "cancelled_by_user".to_owned(),
                }),
            );
            if let Some(task) = inner.task.as_mut() {
                let _ = task.machine.transition(TaskStatus::Idle);
            }
        });
        Some(task_id)
    }
}
