//! A session continued from an ended one, as the real desktop app goes on using it
//! (INTEROP.md §8, "Continued sessions"): after "Continue Conversation" the app still names
//! the ended session in its follow-up requests, and a history read back and uploaded again
//! must keep every message's id, also the ids another client gave a history it wrote.

use cucumber::{given, then, when};
use serde_json::{Value, json};

use crate::steps::support::{StepResult, eventually, expect_result, show, str_at};
use crate::steps::task::{Remember, send_start_task};
use crate::world::ConformanceWorld;

/// The ended session the current one continues, as its ResumeSession answer named it.
fn ended_session(world: &ConformanceWorld) -> anyhow::Result<String> {
    let session = world.session()?;
    str_at(&session.result, &["continuedFromSessionId"])
        .map(str::to_owned)
        .ok_or_else(|| {
            anyhow::anyhow!(
                "the session does not continue an ended one: {}",
                show(&session.result)
            )
        })
}

#[when("the client asks for the state of the ended session")]
async fn state_of_ended(world: &mut ConformanceWorld) -> StepResult {
    let ended = ended_session(world)?;
    let response = world
        .runtime()
        .await?
        .request("GetSessionState", Some(json!({"sessionId": ended})))
        .await?;
    world.last_response = Some(response);
    world.last_method = Some("GetSessionState".to_owned());
    Ok(())
}

#[then("the state answered is the continuing session's")]
async fn state_is_continuations(world: &mut ConformanceWorld) -> StepResult {
    let continuing = world.session()?.session_id.clone();
    let response = world.last_response()?.clone();
    let result = expect_result(&response, "GetSessionState naming the ended session")?;
    check!(
        str_at(result, &["sessionId"]) == Some(continuing.as_str()),
        "GetSessionState naming the ended session must answer with the state of session {continuing}, which continues it: {}",
        show(result)
    );
    Ok(())
}

#[when(expr = "the client starts the task {string} naming the ended session")]
async fn start_naming_ended(world: &mut ConformanceWorld, prompt: String) -> StepResult {
    let ended = ended_session(world)?;
    send_start_task(
        world,
        &prompt,
        json!({"sessionId": ended}),
        Remember::Always,
    )
    .await?;
    Ok(())
}

/// The ids of a history's messages, in order.
fn ids(messages: &[Value]) -> Vec<String> {
    messages
        .iter()
        .map(|message| str_at(message, &["messageId"]).unwrap_or("").to_owned())
        .collect()
}

#[then("the history saved last keeps the ids the earlier history gave its messages")]
async fn ids_kept(world: &mut ConformanceWorld) -> StepResult {
    let session_id = world.session()?.session_id.clone();
    let prompt = world.task()?.prompt.clone();
    let timeout = world.timeout();
    let fakes = world.started_fakes()?;
    // The earlier history is the last one saved before the latest task's prompt appears;
    // the history saved last is the one after it.
    let (earlier, last) = eventually(timeout, "a history holding the latest task", || async {
        let histories: Vec<Vec<Value>> = fakes
            .workspace
            .uploads()
            .await
            .into_iter()
            .filter(|upload| {
                str_at(upload, &["artifactType"]) == Some("session_history")
                    && str_at(upload, &["sessionId"]) == Some(session_id.as_str())
            })
            .filter_map(|upload| upload.get("messages").and_then(Value::as_array).cloned())
            .collect();
        let holds_prompt = |messages: &Vec<Value>| {
            messages
                .iter()
                .any(|m| str_at(m, &["content"]) == Some(prompt.as_str()))
        };
        let earlier = histories.iter().rev().find(|m| !holds_prompt(m)).cloned();
        match (earlier, histories.last()) {
            (Some(earlier), Some(last)) if holds_prompt(last) => Ok((earlier, last.clone())),
            _ => Err(format!(
                "no history of session {session_id} saved both before and after the task {prompt:?} ({} saved)",
                histories.len()
            )),
        }
    })
    .await?;
    let (earlier, last) = (ids(&earlier), ids(&last));
    check!(
        last.len() >= earlier.len() && last[..earlier.len()] == earlier[..],
        "the history saved again must keep the ids of the messages read back: they were {earlier:?}, the history saved last begins {:?}",
        &last[..earlier.len().min(last.len())]
    );
    Ok(())
}

/// The ids of the history another client wrote, in order: a question, two calls of one
/// turn (one message each), their results, the answer. Shaped like that client's ids, none
/// of them of the `<message>_call_<n>` form.
const HELD_IDS: [&str; 6] = [
    "3f1c9a52-0001-4c1e-9d3a-5b7e2f000001",
    "3f1c9a52-0002-4c1e-9d3a-5b7e2f000002",
    "3f1c9a52-0003-4c1e-9d3a-5b7e2f000003",
    "3f1c9a52-0004-4c1e-9d3a-5b7e2f000004",
    "3f1c9a52-0005-4c1e-9d3a-5b7e2f000005",
    "3f1c9a52-0006-4c1e-9d3a-5b7e2f000006",
];

/// The session's history as another client stores it (INTEROP.md §8): one `role:"tool"`
/// message per call and per result. The desktop app's form names each call (`id`, the
/// arguments an object); the Python runtime's names none (its results pair by order) and
/// writes the arguments as a JSON string.
fn held_history(form: &str, session_id: &str, workspace_id: &str) -> anyhow::Result<Vec<Value>> {
    let named = match form {
        "app" => true,
        "Python" => false,
        other => {
            anyhow::bail!("no history form {other:?} with one message per call (app or Python)")
        }
    };
    let card = |kind: &str, call: &str, tool: &str, arguments: Value, output: &str| {
        let mut card = json!({"type": kind, "toolName": tool});
        if named {
            card["id"] = json!(call);
        }
        if kind == "tool_call" {
            card["arguments"] = if named {
                arguments
            } else {
                json!(arguments.to_string())
            };
        } else {
            card["output"] = json!(output);
        }
        card.to_string()
    };
    let contents = [
        ("user", "What is in this project?".to_owned()),
        (
            "tool",
            card(
                "tool_call",
                "call_held_read",
                "ReadFile",
                json!({"path": "notes.txt"}),
                "",
            ),
        ),
        (
            "tool",
            card(
                "tool_call",
                "call_held_list",
                "ListDirectory",
                json!({"path": "."}),
                "",
            ),
        ),
        (
            "tool",
            card(
                "tool_result",
                "call_held_read",
                "ReadFile",
                json!({}),
                "The launch code is 4-8-15-16.",
            ),
        ),
        (
            "tool",
            card(
                "tool_result",
                "call_held_list",
                "ListDirectory",
                json!({}),
                "notes.txt",
            ),
        ),
        (
            "assistant",
            "A notes file holding the launch code.".to_owned(),
        ),
    ];
    Ok(HELD_IDS
        .iter()
        .zip(contents)
        .map(|(id, (role, content))| {
            json!({
                "messageId": id, "sessionId": session_id, "taskId": "task_held", "stepId": "step_001",
                "role": role, "content": content, "timestamp": "2026-11-25T10:00:00Z",
                "workspaceId": workspace_id,
            })
        })
        .collect())
}

#[given(
    expr = "the Workspace Service holds the session's history in the {word} form, two calls in one turn"
)]
async fn history_held(world: &mut ConformanceWorld, form: String) -> StepResult {
    let session = world.session()?;
    let history = held_history(&form, &session.session_id, &session.workspace_id)?;
    let (session_id, workspace_id) = (session.session_id.clone(), session.workspace_id.clone());
    world
        .fakes()
        .await?
        .workspace
        .set_history(&workspace_id, &session_id, history);
    Ok(())
}

#[then("the history saved last begins with the ids of the history the Workspace Service held")]
async fn held_ids_kept(world: &mut ConformanceWorld) -> StepResult {
    let session_id = world.session()?.session_id.clone();
    let prompt = world.task()?.prompt.clone();
    let timeout = world.timeout();
    let fakes = world.started_fakes()?;
    let last = eventually(timeout, "a history holding the latest task", || async {
        fakes
            .workspace
            .history(&session_id)
            .await
            .filter(|messages| {
                messages
                    .iter()
                    .any(|m| str_at(m, &["content"]) == Some(prompt.as_str()))
            })
            .ok_or_else(|| {
                format!("no history of session {session_id} saved after the task {prompt:?}")
            })
    })
    .await?;
    let last = ids(&last);
    check!(
        last.len() >= HELD_IDS.len() && last[..HELD_IDS.len()] == HELD_IDS[..],
        "the history read back and saved again must keep every id it held, one message per call included: it held {HELD_IDS:?}, the history saved last begins {:?}",
        &last[..HELD_IDS.len().min(last.len())]
    );
    Ok(())
}
