//! StartTask and CancelTask: the guards of §3.3 before a loop starts or is told to stop.

use std::sync::Arc;

use agent_protocol::ErrorCode;
use agent_protocol::events::EventBody;
use agent_protocol::methods::{
    CancelTaskParams, CancelTaskResult, StartTaskParams, StartTaskResult,
};
use agent_protocol::state::SessionStatus;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::agent_loop::{self, TaskRun};
use crate::error::RpcError;
use crate::events::Scope;
use crate::host::{Host, to_value};
use crate::session::{Begun, Session, TaskStart};

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
            None => self.config.agent_loop.default_max_steps,
            Some(steps)
                if steps >= 1 && steps <= i64::from(self.config.agent_loop.max_steps_limit) =>
            {
                u32::try_from(steps).unwrap_or(self.config.agent_loop.default_max_steps)
            }
            Some(steps) => {
                return Err(RpcError::invalid_params(
                    Some("taskOptions.maxSteps"),
                    format!(
                        "Invalid params for StartTask: taskOptions.maxSteps must be between 1 and {}, got {steps}.",
                        self.config.agent_loop.max_steps_limit
                    ),
                ));
            }
        };
        let task_id = params
            .task_id
            .clone()
            .unwrap_or_else(|| format!("task_{}", uuid::Uuid::new_v4().simple()));
        let cancel = CancellationToken::new();
        let Begun {
            prompt,
            max_steps,
            options,
            continues,
            first: first_task,
        } = session.begin_task(TaskStart {
            task_id: task_id.clone(),
            prompt: params.prompt.clone(),
            max_steps,
            max_steps_given: options.max_steps.is_some(),
            options,
            cancel: cancel.clone(),
        })?;
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
            self.sandbox.get().is_some(),
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
        let (task_id, step_count) = session.cancel_interrupted_task(requested)?;
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
            session.announce_end(|| {
                session.events.emit(
                    Scope::task(&ended),
                    EventBody::TaskCancelled(agent_protocol::events::TaskCancelled {
                        step_count,
                        reason: "cancelled_by_user".to_owned(),
                    }),
                );
            });
        });
        Some(task_id)
    }
}
