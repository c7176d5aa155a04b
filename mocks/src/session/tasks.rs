//! Task records (cowork-session-service `routes/tasks.py` → `services/task_service.py`),
//! keyed by `taskId` alone like the real DynamoDB table.

use serde_json::{Value, json};
use time::OffsetDateTime;
use wiremock::{Request, ResponseTemplate};

use super::State;
use super::routes::{error, segment, session_id_of, session_not_found};
use crate::fastapi::{Fields, object_body};
use crate::faults::json_template;
use crate::util::python_iso;

pub(super) struct TaskRecord {
    task_id: String,
    pub(super) session_id: String,
    workspace_id: String,
    prompt: String,
    status: String,
    step_count: i64,
    max_steps: i64,
    completion_reason: Option<String>,
    created_at: OffsetDateTime,
    completed_at: Option<OffsetDateTime>,
}

impl TaskRecord {
    /// `_task_to_dict`: `completionReason` and `completedAt` only once set.
    pub(super) fn to_json(&self) -> Value {
        let mut record = json!({
            "taskId": self.task_id,
            "sessionId": self.session_id,
            "workspaceId": self.workspace_id,
            "prompt": self.prompt,
            "status": self.status,
            "stepCount": self.step_count,
            "maxSteps": self.max_steps,
            "createdAt": python_iso(self.created_at),
        });
        if let Some(reason) = self.completion_reason.as_ref().filter(|r| !r.is_empty()) {
            record["completionReason"] = json!(reason);
        }
        if let Some(at) = self.completed_at {
            record["completedAt"] = json!(python_iso(at));
        }
        record
    }
}

/// Sessions in these states take new tasks.
fn takes_tasks(status: &str) -> bool {
    matches!(
        status,
        "SANDBOX_READY" | "SESSION_RUNNING" | "WAITING_FOR_LLM" | "WAITING_FOR_TOOL"
    )
}

fn task_not_found(task_id: &str) -> ResponseTemplate {
    error(404, "TASK_NOT_FOUND", &format!("Task not found: {task_id}"))
}

pub(super) fn create(state: &mut State, request: &Request) -> ResponseTemplate {
    let body = match object_body(request) {
        Ok(body) => body,
        Err(answer) => return *answer,
    };
    let mut fields = Fields::new(&body);
    let task_id = fields.string("taskId", true, 1, None);
    let prompt = fields.string("prompt", true, 1, None);
    let max_steps = fields.int("maxSteps", 50, 1, Some(200));
    if let Err(answer) = fields.finish() {
        return *answer;
    }
    let session_id = session_id_of(request);
    let Some(session) = state.session(&session_id) else {
        return session_not_found(&session_id);
    };
    if !takes_tasks(&session.status) {
        let message = format!(
            "Cannot create task in session with status {}",
            session.status
        );
        return error(409, "INVALID_REQUEST", &message);
    }
    let task = TaskRecord {
        task_id: task_id.unwrap_or_default(),
        session_id: session_id.clone(),
        workspace_id: session.workspace_id.clone(),
        prompt: prompt.unwrap_or_default(),
        status: "running".into(),
        step_count: 0,
        max_steps,
        completion_reason: None,
        created_at: OffsetDateTime::now_utc(),
        completed_at: None,
    };
    let answer = json!({
        "taskId": task.task_id,
        "sessionId": task.session_id,
        "status": task.status,
        "createdAt": python_iso(task.created_at),
    });
    state.tasks.retain(|old| old.task_id != task.task_id);
    state.tasks.push(task);
    json_template(201, &answer)
}

pub(super) fn complete(state: &mut State, request: &Request) -> ResponseTemplate {
    let body = match object_body(request) {
        Ok(body) => body,
        Err(answer) => return *answer,
    };
    let mut fields = Fields::new(&body);
    let status = fields.literal("status", &["completed", "failed", "cancelled"], None);
    let step_count = fields.int("stepCount", 0, 0, None);
    let reason = fields.optional_string("completionReason");
    if let Err(answer) = fields.finish() {
        return *answer;
    }
    let session_id = session_id_of(request);
    let task_id = segment(request, 3);
    let Some(task) = state
        .tasks
        .iter_mut()
        .find(|task| task.task_id == task_id && task.session_id == session_id)
    else {
        return task_not_found(&task_id);
    };
    if task.status != "running" {
        let message = format!("Cannot complete task in {} state", task.status);
        return error(409, "INVALID_REQUEST", &message);
    }
    let status = status.unwrap_or_default();
    task.status = status.clone();
    task.step_count = step_count;
    task.completion_reason = reason.clone();
    task.completed_at = Some(OffsetDateTime::now_utc());
    let mut answer = json!({
        "taskId": task_id,
        "status": status,
        "stepCount": step_count,
        "completionReason": reason,
    });
    state.nulls.apply(&mut answer, &[]);
    json_template(200, &answer)
}

pub(super) fn list(state: &mut State, request: &Request) -> ResponseTemplate {
    let session_id = session_id_of(request);
    let mut records: Vec<Value> = state
        .tasks
        .iter()
        .filter(|task| task.session_id == session_id)
        .map(TaskRecord::to_json)
        .collect();
    records
        .iter_mut()
        .for_each(|record| state.nulls.apply(record, &OPTIONAL));
    json_template(200, &Value::Array(records))
}

pub(super) fn get(state: &mut State, request: &Request) -> ResponseTemplate {
    let session_id = session_id_of(request);
    let task_id = segment(request, 3);
    match state
        .tasks
        .iter()
        .find(|task| task.task_id == task_id && task.session_id == session_id)
    {
        Some(task) => {
            let mut record = task.to_json();
            state.nulls.apply(&mut record, &OPTIONAL);
            json_template(200, &record)
        }
        None => task_not_found(&task_id),
    }
}

/// Members of a listed task record the real service adds only once set.
const OPTIONAL: [&str; 2] = ["completionReason", "completedAt"];
