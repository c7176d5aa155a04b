//! A session continued from an ended one, as the real desktop app goes on using it
//! (INTEROP.md §8, "Continued sessions"): after "Continue Conversation" the app still names
//! the ended session in its follow-up requests, and a history read back and uploaded again
//! must keep every message's id.

use cucumber::{then, when};
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
