//! Sessions across app restarts, as the real desktop app uses them (INTEROP.md §8):
//! "Continue Conversation" sends ResumeSession to a fresh runtime that usually holds no
//! checkpoint; after a crash the app keeps naming the old session in every request; the
//! Session Service keeps task records and the session's name for the app's sidebar; the
//! Workspace Service keeps the history the app renders.

use agent_mocks::FaultControl;
use anyhow::Context;
use cucumber::{given, then, when};
use serde_json::{Value, json};

use crate::steps::session::pause::resume_session;
use crate::steps::support::model::model_requests;
use crate::steps::support::{StepResult, eventually, expect_result, show, str_at};
use crate::world::{ConformanceWorld, SessionInfo};

/// The past session a seeded history belongs to.
const PAST_SESSION: &str = "sess_past_conversation";

const PAST_CALL_ID: &str = "call_past_read";

const PAST_RESULT: &str = "The launch code is 4-8-15-16.";

/// A past conversation: a question, a ReadFile call with its result, the answer; in one of
/// the three forms a history is stored in (INTEROP.md §8).
fn past_history(form: &str, workspace_id: &str) -> anyhow::Result<Vec<Value>> {
    let base = |id: &str, role: &str, content: String| {
        json!({
            "messageId": id, "sessionId": PAST_SESSION, "taskId": "task_past", "stepId": "step_001",
            "role": role, "content": content, "timestamp": "2026-11-25T10:00:00Z",
            "workspaceId": workspace_id,
        })
    };
    let arguments = json!({"path": "notes.txt"});
    let question = base("msg_1", "user", "What is in notes.txt?".into());
    let answer = base("msg_9", "assistant", "It holds the launch code.".into());
    Ok(match form {
        "app" => vec![
            question,
            base(
                "msg_2",
                "tool",
                json!({"type": "tool_call", "id": PAST_CALL_ID, "toolName": "ReadFile", "arguments": arguments})
                    .to_string(),
            ),
            base(
                "msg_3",
                "tool",
                json!({"type": "tool_result", "id": PAST_CALL_ID, "toolName": "ReadFile", "output": PAST_RESULT})
                    .to_string(),
            ),
            answer,
        ],
        "Python" => vec![
            question,
            base(
                "msg_2",
                "tool",
                json!({"type": "tool_call", "toolName": "ReadFile", "arguments": arguments.to_string()})
                    .to_string(),
            ),
            base(
                "msg_3",
                "tool",
                json!({"type": "tool_result", "toolName": "ReadFile", "output": PAST_RESULT})
                    .to_string(),
            ),
            answer,
        ],
        "spec" => {
            let mut call = base("msg_2", "assistant", String::new());
            call["toolCalls"] = json!([{"id": PAST_CALL_ID, "name": "ReadFile", "arguments": arguments.to_string()}]);
            let mut result = base("msg_3", "tool", PAST_RESULT.to_owned());
            result["toolCallId"] = json!(PAST_CALL_ID);
            result["toolName"] = json!("ReadFile");
            vec![question, call, result, answer]
        }
        other => anyhow::bail!("no history form {other:?} (app, Python or spec)"),
    })
}

#[given(expr = "the Workspace Service holds a past conversation in the {word} form")]
async fn past_conversation(world: &mut ConformanceWorld, form: String) -> StepResult {
    let workspace_id = world.session()?.workspace_id.clone();
    let history = past_history(&form, &workspace_id)?;
    world
        .fakes()
        .await?
        .workspace
        .set_history(&workspace_id, PAST_SESSION, history);
    Ok(())
}

#[given("the Session Service refuses task records and names")]
async fn records_refused(world: &mut ConformanceWorld) -> StepResult {
    // Every later request fails; CreateSession already happened. 400 is not retried, so
    // the refusal is final at once.
    world.fakes().await?.session.fail_next(
        1000,
        400,
        json!({"code": "INVALID_REQUEST", "message": "refused by the scenario", "retryable": false}),
    );
    Ok(())
}

#[when("the client continues the conversation of the session")]
async fn continue_conversation(world: &mut ConformanceWorld) -> StepResult {
    // The app's "Continue Conversation" is a plain ResumeSession of the session.
    resume_session(world).await?;
    Ok(())
}

#[when("the client creates a session continuing the past conversation")]
async fn continue_past(world: &mut ConformanceWorld) -> StepResult {
    let workspace = world.dirs()?.workspace.display().to_string();
    let response = world
        .runtime()
        .await?
        .request(
            "CreateSession",
            Some(json!({
                "userId": "user_conformance",
                "tenantId": "tenant_conformance",
                "workspaceHint": {"localPaths": [workspace]},
                "continueFromSessionId": PAST_SESSION,
            })),
        )
        .await?;
    let result = expect_result(&response, "CreateSession continuing a past conversation")?.clone();
    world.session = Some(SessionInfo::from_result(result));
    world.last_response = Some(response);
    world.last_method = Some("CreateSession".to_owned());
    Ok(())
}

#[then("the conversation continues in the same session")]
async fn same_session(world: &mut ConformanceWorld) -> StepResult {
    let session_id = world.session()?.session_id.clone();
    let response = world.last_response()?.clone();
    let result = expect_result(&response, "ResumeSession without a checkpoint")?;
    check!(
        str_at(result, &["sessionId"]) == Some(session_id.as_str())
            && result.get("continuedFromSessionId").is_none(),
        "ResumeSession must resume session {session_id} itself: {}",
        show(result)
    );
    Ok(())
}

#[then("the conversation continues in a new session that names the ended one")]
async fn new_session(world: &mut ConformanceWorld) -> StepResult {
    let ended = world.session()?.session_id.clone();
    let response = world.last_response()?.clone();
    let result = expect_result(&response, "ResumeSession of an ended session")?.clone();
    let new_id = str_at(&result, &["sessionId"])
        .unwrap_or_default()
        .to_owned();
    check!(
        !new_id.is_empty()
            && new_id != ended
            && str_at(&result, &["continuedFromSessionId"]) == Some(ended.as_str()),
        "ResumeSession of the ended session {ended} must answer with a new sessionId and continuedFromSessionId {ended:?}: {}",
        show(&result)
    );
    let known = world.fakes().await?.session.session_ids();
    check!(
        known.contains(&new_id),
        "the new session {new_id} must have been created at the Session Service (it knows {known:?})"
    );
    world.session = Some(SessionInfo::from_result(result));
    Ok(())
}

/// The premise of judging the new session's create: the runtime did try one (not trying is
/// REQ-RST-002's finding, not this scenario's).
#[then("the runtime asked the Session Service for a new session to continue the ended one")]
async fn asked_for_new_session(world: &mut ConformanceWorld) -> StepResult {
    let creates = world
        .fakes()
        .await?
        .session
        .requests()
        .await
        .iter()
        .filter(|r| r.method == "POST" && r.path == "/sessions")
        .count();
    check!(
        creates >= 2,
        "{} the runtime did not ask the Session Service for a new session to continue the ended one; that is REQ-RST-002's finding",
        crate::contract::NOT_JUDGED
    );
    Ok(())
}

/// Usable again: CreateSession answers with the session the service issued (its full shape
/// is REQ-MSG-001's, its event REQ-SES-003's).
#[then("CreateSession answers with the session the Session Service issued")]
async fn created_anyway(world: &mut ConformanceWorld) -> StepResult {
    let response = world.last_response()?.clone();
    let result = expect_result(&response, "CreateSession after the failed continue")?;
    let issued = world.fakes().await?.session.session_ids();
    let answered = str_at(result, &["sessionId"]).unwrap_or_default();
    check!(
        issued.last().is_some_and(|last| last == answered),
        "CreateSession answered sessionId {answered:?}; the Session Service issued {:?} last",
        issued.last()
    );
    Ok(())
}

#[then(expr = "the model received the earlier prompt {string}")]
async fn earlier_prompt(world: &mut ConformanceWorld, prompt: String) -> StepResult {
    let requests = model_requests(world.fakes().await?).await;
    let last = requests.last().context("the model received no request")?;
    let users: Vec<&str> = last
        .body
        .get("messages")
        .and_then(Value::as_array)
        .map(|messages| {
            messages
                .iter()
                .filter(|m| str_at(m, &["role"]) == Some("user"))
                .filter_map(|m| str_at(m, &["content"]))
                .collect()
        })
        .unwrap_or_default();
    check!(
        users.iter().any(|text| text.contains(&prompt)),
        "the last model request must carry the earlier prompt {prompt:?} as a user message; its user messages: {users:?}"
    );
    Ok(())
}

#[then("the model received the past tool call answered by its result")]
async fn past_call_answered(world: &mut ConformanceWorld) -> StepResult {
    let requests = model_requests(world.fakes().await?).await;
    let last = requests.last().context("the model received no request")?;
    let messages = last
        .body
        .get("messages")
        .and_then(Value::as_array)
        .context("the model request has no messages")?;
    let call = messages.iter().enumerate().find_map(|(at, m)| {
        let calls = m.get("tool_calls")?.as_array()?;
        let call = calls
            .iter()
            .find(|c| str_at(c, &["function", "name"]) == Some("ReadFile"))?;
        (str_at(m, &["role"]) == Some("assistant"))
            .then(|| (at, str_at(call, &["id"]).unwrap_or_default().to_owned()))
    });
    let Some((at, id)) = call else {
        fail!(
            "the past ReadFile call must reach the model as an assistant tool call: {}",
            show(&Value::Array(messages.clone()))
        );
    };
    let answered = messages.iter().skip(at + 1).any(|m| {
        str_at(m, &["role"]) == Some("tool")
            && str_at(m, &["tool_call_id"]) == Some(id.as_str())
            && str_at(m, &["content"]).is_some_and(|c| c.contains(PAST_RESULT))
    });
    check!(
        answered,
        "the past ReadFile result must reach the model as the tool message answering call {id:?}: {}",
        show(&Value::Array(messages.clone()))
    );
    Ok(())
}

/// The Session Service requests under `/sessions/{id}` plus `suffix`, with `method`.
async fn session_calls(
    world: &mut ConformanceWorld,
    method: &str,
    suffix: &str,
) -> anyhow::Result<Vec<Value>> {
    let session_id = world.session()?.session_id.clone();
    let path = format!("/sessions/{session_id}{suffix}");
    Ok(world
        .fakes()
        .await?
        .session
        .requests()
        .await
        .into_iter()
        .filter(|r| r.method == method && r.path == path)
        .map(|r| r.body)
        .collect())
}

#[then("the Session Service received no cancel of the session")]
async fn no_cancel(world: &mut ConformanceWorld) -> StepResult {
    let cancels = session_calls(world, "POST", "/cancel").await?;
    check!(
        cancels.is_empty(),
        "Shutdown with no task running must leave the session resumable, but the session was cancelled: {cancels:?}"
    );
    Ok(())
}

#[then(expr = "the Session Service received a cancel of the session with reason {string}")]
async fn cancel_with_reason(world: &mut ConformanceWorld, reason: String) -> StepResult {
    let session_id = world.session()?.session_id.clone();
    let timeout = world.timeout();
    let fakes = world.fakes().await?;
    let path = format!("/sessions/{session_id}/cancel");
    // The cancel follows the session's last event: wait for it at the fake.
    eventually(
        timeout,
        "the session must be cancelled at the Session Service",
        || async {
            let cancels: Vec<Value> = fakes
                .session
                .requests()
                .await
                .into_iter()
                .filter(|r| r.method == "POST" && r.path == path)
                .map(|r| r.body)
                .collect();
            if cancels
                .iter()
                .any(|body| str_at(body, &["reason"]) == Some(reason.as_str()))
            {
                Ok(())
            } else {
                Err(format!(
                    "no cancel with reason {reason:?}; cancels received: {cancels:?}"
                ))
            }
        },
    )
    .await?;
    Ok(())
}

#[then(expr = "the Session Service recorded the task as {word} with its step count")]
async fn task_recorded(world: &mut ConformanceWorld, status: String) -> StepResult {
    let session_id = world.session()?.session_id.clone();
    let task = world.task()?.clone();
    let timeout = world.timeout();
    let fakes = world.fakes().await?;
    let created = format!("/sessions/{session_id}/tasks");
    let completed = format!("/sessions/{session_id}/tasks/{}/complete", task.task_id);
    eventually(timeout, "the task record must be created and completed", || async {
        let requests = fakes.session.requests().await;
        let create = requests
            .iter()
            .position(|r| r.method == "POST" && r.path == created)
            .ok_or("no POST /sessions/{id}/tasks")?;
        let body = &requests[create].body;
        if str_at(body, &["taskId"]) != Some(task.task_id.as_str())
            || str_at(body, &["prompt"]) != Some(task.prompt.as_str())
            || !body.get("maxSteps").is_some_and(Value::is_u64)
        {
            return Err(format!("the task record must carry taskId, prompt and maxSteps: {}", show(body)));
        }
        let complete = requests
            .iter()
            .position(|r| r.method == "POST" && r.path == completed)
            .ok_or("no POST /sessions/{id}/tasks/{taskId}/complete")?;
        if complete < create {
            return Err("the task was completed before it was created".to_owned());
        }
        let body = &requests[complete].body;
        if str_at(body, &["status"]) != Some(status.as_str())
            || !body.get("stepCount").is_some_and(Value::is_u64)
            || !body.get("completionReason").is_some_and(|r| r.is_string() || r.is_null())
        {
            return Err(format!(
                "the completion must carry status {status:?}, stepCount and completionReason: {}",
                show(body)
            ));
        }
        Ok(())
    })
    .await?;
    Ok(())
}

/// The record as the service holds it now: a task continued after a recoverable failure
/// is created and completed again.
#[then(expr = "the Session Service holds the task as {word}")]
async fn task_held(world: &mut ConformanceWorld, status: String) -> StepResult {
    let session_id = world.session()?.session_id.clone();
    let task_id = world.task()?.task_id.clone();
    let timeout = world.timeout();
    let fakes = world.fakes().await?;
    eventually(timeout, "the task record must reach its status", || async {
        let tasks = fakes.session.tasks(&session_id);
        let record = tasks
            .iter()
            .find(|task| str_at(task, &["taskId"]) == Some(task_id.as_str()))
            .ok_or_else(|| format!("the Session Service holds no record of task {task_id}"))?;
        match str_at(record, &["status"]) {
            Some(held) if held == status => Ok(()),
            held => Err(format!("the task record is {held:?}, not {status:?}")),
        }
    })
    .await?;
    Ok(())
}

#[then(expr = "the Session Service named the session {string}")]
async fn named(world: &mut ConformanceWorld, name: String) -> StepResult {
    let session_id = world.session()?.session_id.clone();
    let timeout = world.timeout();
    let fakes = world.fakes().await?;
    let path = format!("/sessions/{session_id}/name");
    eventually(timeout, "the session must be named", || async {
        let renames: Vec<Value> = fakes
            .session
            .requests()
            .await
            .into_iter()
            .filter(|r| r.method == "PATCH" && r.path == path)
            .map(|r| r.body)
            .collect();
        match renames.first() {
            Some(body)
                if str_at(body, &["name"]) == Some(name.as_str())
                    && body.get("autoNamed") == Some(&json!(true)) =>
            {
                Ok(())
            }
            Some(body) => Err(format!(
                "PATCH /sessions/{{id}}/name must send {{name: {name:?}, autoNamed: true}}: {}",
                show(body)
            )),
            None => Err("no PATCH /sessions/{id}/name".to_owned()),
        }
    })
    .await?;
    Ok(())
}

/// How the desktop app draws one history message, by its rules as INTEROP.md §8 states
/// them; an error for what it would draw wrongly.
fn app_draws(message: &Value) -> Result<(), String> {
    for key in ["messageId", "sessionId", "role", "content", "timestamp"] {
        if message.get(key).is_none() {
            return Err(format!("a message without {key}: {}", show(message)));
        }
    }
    let content = str_at(message, &["content"]).ok_or("a message whose content is no string")?;
    match str_at(message, &["role"]) {
        Some("tool") => {
            let card: Value = serde_json::from_str(content).map_err(|_| {
                format!(
                    "a tool message the app shows as raw text: {}",
                    show(message)
                )
            })?;
            let good = match str_at(&card, &["type"]) {
                Some("tool_call") => {
                    str_at(&card, &["id"]).is_some_and(|id| !id.is_empty())
                        && str_at(&card, &["toolName"]).is_some()
                        && card.get("arguments").is_some_and(Value::is_object)
                }
                Some("tool_result") => {
                    str_at(&card, &["id"]).is_some_and(|id| !id.is_empty())
                        && str_at(&card, &["toolName"]).is_some()
                        && card.get("output").is_some_and(Value::is_string)
                        && card.get("error").is_none_or(Value::is_string)
                }
                _ => false,
            };
            if good {
                Ok(())
            } else {
                Err(format!("a tool message that is no tool card: {content}"))
            }
        }
        Some("assistant") if content.trim().is_empty() => Err(format!(
            "an assistant message the app draws as an empty bubble: {}",
            show(message)
        )),
        _ => Ok(()),
    }
}

#[then(
    "the session_history uploaded last renders as the app draws it, with the tool call and its result"
)]
async fn history_renders(world: &mut ConformanceWorld) -> StepResult {
    let timeout = world.timeout();
    let fakes = world.fakes().await?;
    let messages = eventually(timeout, "a session_history upload", || async {
        fakes
            .workspace
            .uploads()
            .await
            .into_iter()
            .rev()
            .find(|u| str_at(u, &["artifactType"]) == Some("session_history"))
            .and_then(|u| u.get("messages").and_then(Value::as_array).cloned())
            .ok_or_else(|| "none yet".to_owned())
    })
    .await?;
    for message in &messages {
        app_draws(message).map_err(|problem| anyhow::anyhow!("{problem}"))?;
    }
    let cards: Vec<Value> = messages
        .iter()
        .filter(|m| str_at(m, &["role"]) == Some("tool"))
        .filter_map(|m| str_at(m, &["content"]).and_then(|c| serde_json::from_str(c).ok()))
        .collect();
    let call = cards
        .iter()
        .find(|c| str_at(c, &["type"]) == Some("tool_call"));
    let paired = call.is_some_and(|call| {
        cards.iter().any(|c| {
            str_at(c, &["type"]) == Some("tool_result")
                && str_at(c, &["id"]) == str_at(call, &["id"])
        })
    });
    check!(
        paired,
        "the history must hold the tool call and its result as cards with the same id: {}",
        show(&Value::Array(messages.clone()))
    );
    Ok(())
}

#[then(
    expr = "the patch preview names {string} relative to the project folder, its hunks ending without an empty line"
)]
async fn preview_relative(world: &mut ConformanceWorld, name: String) -> StepResult {
    let response = world.last_response()?.clone();
    let result = expect_result(&response, "GetPatchPreview")?;
    let files = result
        .get("files")
        .and_then(Value::as_array)
        .with_context(|| format!("the preview has no files array: {}", show(result)))?;
    let file = files
        .iter()
        .find(|f| str_at(f, &["filePath"]) == Some(name.as_str()))
        .with_context(|| {
            format!(
                "the preview must name {name:?} relative to the project folder: {}",
                show(result)
            )
        })?;
    let hunks = str_at(file, &["hunks"]).unwrap_or_default();
    check!(
        !hunks.is_empty() && !hunks.ends_with('\n'),
        "the hunks of {name} must not end with a line break (the app draws an empty last line): {hunks:?}"
    );
    Ok(())
}

#[then("the resumed session has the name the Session Service gave it")]
async fn resumed_name(world: &mut ConformanceWorld) -> StepResult {
    let created = world.session()?.result.get("name").cloned();
    let created = created.context("CreateSession answered without a name to compare with")?;
    let response = world.last_response()?;
    let result = expect_result(response, "ResumeSession")?;
    check!(
        result.get("name") == Some(&created),
        "ResumeSession must report the session's name {} as CreateSession did: {}",
        show(&created),
        show(result)
    );
    Ok(())
}
