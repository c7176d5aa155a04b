//! The message thread (local-agent-host.md §5): earlier turns, cutting to the request limits,
//! truncation markers and orphan tool results.

use agent_mocks::GatewayReply;
use anyhow::Context;
use cucumber::{given, then};
use serde_json::{Value, json};

use crate::steps::llm::script::model_reads_n_times;
use crate::steps::support::model::{
    model_requests, push_model_reply, read_call, request_messages, task_requests,
};
use crate::steps::support::task::this_task_events;
use crate::steps::support::{StepResult, at, of_type, show, str_at, u64_at};
use crate::steps::task::wait_task_end;
use crate::world::ConformanceWorld;

#[then(
    expr = "the first model request of the new task carries the earlier prompt {string} and answer {string}"
)]
async fn earlier_turns(world: &mut ConformanceWorld, prompt: String, answer: String) -> StepResult {
    wait_task_end(world).await?;
    let new_prompt = world.task()?.prompt.clone();
    let requests = task_requests(world).await?;
    let first = requests
        .first()
        .context("the new task made no model request")?;
    let all = request_messages(first)?;
    let find = |role: &str, text: &str| {
        all.iter().position(|m| {
            str_at(m, &["role"]) == Some(role) && str_at(m, &["content"]) == Some(text)
        })
    };
    let (Some(p), Some(a), Some(n)) = (
        find("user", &prompt),
        find("assistant", &answer),
        find("user", &new_prompt),
    ) else {
        fail!(
            "the request must carry the earlier user prompt, the earlier answer and the new prompt: {}",
            show(first)
        );
    };
    check!(
        p < a && a < n,
        "the earlier prompt, its answer and the new prompt must come in that order: {}",
        show(first)
    );
    Ok(())
}

/// Messages of the last model request of the task.
async fn last_request(world: &ConformanceWorld) -> anyhow::Result<Value> {
    task_requests(world)
        .await?
        .pop()
        .context("the task made no model request")
}

#[then(
    regex = r"^the last model request replaces (\d+) earlier messages with the truncation marker$"
)]
async fn marker_present(world: &mut ConformanceWorld, dropped: usize) -> StepResult {
    wait_task_end(world).await?;
    let body = last_request(world).await?;
    let marker = format!("[Earlier conversation truncated — {dropped} messages removed]");
    let found = request_messages(&body)?
        .iter()
        .any(|m| str_at(m, &["content"]).is_some_and(|c| c.contains(&marker)));
    check!(
        found,
        "no message {marker:?} in the last request: {}",
        show(&body)
    );
    Ok(())
}

#[then("the last model request still starts the conversation with the task's prompt")]
async fn first_user_kept(world: &mut ConformanceWorld) -> StepResult {
    let prompt = world.task()?.prompt.clone();
    let body = last_request(world).await?;
    let first_user = request_messages(&body)?
        .iter()
        .find(|m| str_at(m, &["role"]) == Some("user"));
    check!(
        first_user.and_then(|m| str_at(m, &["content"])) == Some(prompt.as_str()),
        "the first user message of the last request must be the opening prompt {prompt:?}: {}",
        show(&body)
    );
    Ok(())
}

#[then(expr = "the last model request ends with the latest tool call and its result")]
async fn latest_kept(world: &mut ConformanceWorld) -> StepResult {
    let body = last_request(world).await?;
    let all = request_messages(&body)?;
    let n = all.len();
    check!(n >= 2, "the last request is too short: {}", show(&body));
    let call = &all[n - 2];
    let result = &all[n - 1];
    let id = str_at(result, &["tool_call_id"]).unwrap_or("");
    check!(
        str_at(result, &["role"]) == Some("tool")
            && at(call, &["tool_calls"])
                .and_then(Value::as_array)
                .is_some_and(|calls| calls.iter().any(|c| str_at(c, &["id"]) == Some(id))),
        "the last request must end with the latest assistant tool call and its tool result: {}",
        show(&body)
    );
    Ok(())
}

#[then(expr = "the runtime reports context_compacted with messagesDropped {int}")]
async fn compacted(world: &mut ConformanceWorld, dropped: u64) -> StepResult {
    wait_task_end(world).await?;
    let events = this_task_events(world)?;
    let compactions = of_type(&events, "context_compacted");
    check!(
        compactions
            .iter()
            .any(|e| u64_at(e.payload(), "messagesDropped") == Some(dropped)),
        "no context_compacted with messagesDropped {dropped}; reported: {}",
        if compactions.is_empty() {
            "none".to_owned()
        } else {
            compactions
                .iter()
                .map(|e| show(e.payload()))
                .collect::<Vec<_>>()
                .join(", ")
        }
    );
    Ok(())
}

#[then("no model request carries a tool result without the tool call it answers")]
async fn no_orphans(world: &mut ConformanceWorld) -> StepResult {
    wait_task_end(world).await?;
    let requests = model_requests(world.started_fakes()?).await;
    check!(!requests.is_empty(), "the model received no request");
    for (index, request) in requests.iter().enumerate() {
        let all = request_messages(&request.body)?;
        for (at_index, message) in all.iter().enumerate() {
            if str_at(message, &["role"]) != Some("tool") {
                continue;
            }
            let id = str_at(message, &["tool_call_id"]).unwrap_or("");
            let answered = all[..at_index].iter().any(|m| {
                str_at(m, &["role"]) == Some("assistant")
                    && m.get("tool_calls")
                        .and_then(Value::as_array)
                        .is_some_and(|calls| calls.iter().any(|c| str_at(c, &["id"]) == Some(id)))
            });
            check!(
                answered,
                "model request {} carries a tool result for {id:?} with no assistant tool call before it: {}",
                index + 1,
                show(&request.body)
            );
        }
    }
    Ok(())
}

#[then(expr = "no model request carries more than {int} messages")]
async fn at_most_messages(world: &mut ConformanceWorld, limit: usize) -> StepResult {
    wait_task_end(world).await?;
    let requests = model_requests(world.started_fakes()?).await;
    check!(!requests.is_empty(), "the model received no request");
    for (index, request) in requests.iter().enumerate() {
        let count = request_messages(&request.body)?.len();
        check!(
            count <= limit,
            "model request {} carries {count} messages; the gateway rejects more than {limit}",
            index + 1
        );
    }
    Ok(())
}

#[given(expr = "the policy allows requests of at most {int} input tokens")]
async fn max_input_tokens(world: &mut ConformanceWorld, tokens: u64) -> StepResult {
    world
        .fakes()
        .await?
        .session
        .update_policy(|bundle| bundle["llmPolicy"]["maxInputTokens"] = json!(tokens));
    Ok(())
}

#[given(expr = "the workspace file {string} holds {int} distinct words")]
async fn big_file(world: &mut ConformanceWorld, name: String, words: usize) -> StepResult {
    let text: Vec<String> = (0..words).map(|i| format!("marker{i:05}")).collect();
    let path = world.dirs()?.workspace.join(&name);
    std::fs::write(&path, text.join(" "))
        .with_context(|| format!("cannot write {}", path.display()))?;
    Ok(())
}

#[given(
    expr = "the model will call ReadFile on {string} once, then on {string} {int} times, then answer {string}"
)]
async fn model_reads_big_then_small(
    world: &mut ConformanceWorld,
    first: String,
    then: String,
    times: usize,
    answer: String,
) -> StepResult {
    let call = read_call(world, "call_read_first", &first)?;
    push_model_reply(
        world.fakes().await?,
        GatewayReply::ToolCalls {
            text: None,
            calls: vec![call],
        },
    );
    model_reads_n_times(world, then, times, answer).await
}

#[then("the last model request carries a truncation marker where messages were dropped")]
async fn some_marker(world: &mut ConformanceWorld) -> StepResult {
    wait_task_end(world).await?;
    let body = last_request(world).await?;
    let found = request_messages(&body)?.iter().any(|m| {
        str_at(m, &["content"]).is_some_and(|c| {
            c.split("[Earlier conversation truncated — ")
                .nth(1)
                .and_then(|rest| rest.split(' ').next())
                .is_some_and(|n| n.parse::<u64>().is_ok_and(|n| n > 0))
                && c.contains(" messages removed]")
        })
    });
    check!(
        found,
        "no \"[Earlier conversation truncated — N messages removed]\" marker in the last request: {}",
        show(&body)
    );
    Ok(())
}

#[then(expr = "the last model request no longer carries the content of {string}")]
async fn content_dropped(world: &mut ConformanceWorld, name: String) -> StepResult {
    wait_task_end(world).await?;
    let path = world.dirs()?.workspace.join(&name);
    let content = std::fs::read_to_string(&path)
        .with_context(|| format!("cannot read {}", path.display()))?;
    let probe: String = content.chars().take(40).collect();
    let body = last_request(world).await?;
    let carried = request_messages(&body)?
        .iter()
        .any(|m| str_at(m, &["content"]).is_some_and(|c| c.contains(&probe)));
    check!(
        !carried,
        "the last request still carries {name}, which cannot fit within llmPolicy.maxInputTokens"
    );
    Ok(())
}
