//! Several tool calls in one answer (local-agent-host.md §4.2): results reach the model in
//! call order whatever the completion order.

use anyhow::Context;
use cucumber::{then, when};
use serde_json::Value;

use crate::steps::support::model::{multi_call_id, request_messages, task_requests};
use crate::steps::support::task::{completed_event, event_types, this_task_events};
use crate::steps::support::{StepResult, quoted_names, show, str_at};
use crate::steps::task::wait_task_end;
use crate::steps::tools::call_id;
use crate::world::ConformanceWorld;

#[then(regex = r#"^the next model request carries the results of (".+") in the call order$"#)]
async fn results_in_order(world: &mut ConformanceWorld, list: String) -> StepResult {
    wait_task_end(world).await?;
    let names = quoted_names(&list);
    let mut contents = Vec::new();
    for name in &names {
        let path = world.dirs()?.workspace.join(name);
        contents.push(
            std::fs::read_to_string(&path)
                .with_context(|| format!("cannot read {}", path.display()))?,
        );
    }
    let requests = task_requests(world).await?;
    let second = requests
        .get(1)
        .with_context(|| format!("the model received {} request(s)", requests.len()))?;
    let all = request_messages(second)?;
    let call_at = all
        .iter()
        .position(|m| {
            m.get("tool_calls")
                .and_then(Value::as_array)
                .is_some_and(|c| c.len() == names.len())
        })
        .with_context(|| {
            format!(
                "no assistant message replays the {} calls: {}",
                names.len(),
                show(second)
            )
        })?;
    let tools: Vec<&Value> = all[call_at + 1..]
        .iter()
        .take_while(|m| str_at(m, &["role"]) == Some("tool"))
        .collect();
    let got: Vec<&str> = tools
        .iter()
        .map(|m| str_at(m, &["tool_call_id"]).unwrap_or(""))
        .collect();
    let want: Vec<String> = (0..names.len()).map(multi_call_id).collect();
    check!(
        got == want,
        "the tool messages after the calls answer {got:?}, expected {want:?} (the model's call order)"
    );
    for (index, tool) in tools.iter().enumerate() {
        let content = str_at(tool, &["content"]).unwrap_or("");
        check!(
            content.contains(contents[index].trim()),
            "the result for {} ({}) must carry that file's content {:?}, got {content:?}",
            want[index],
            names[index],
            contents[index]
        );
    }
    Ok(())
}

/// Waits for `tool_completed` of the `n`th scripted call (1-based).
#[when(expr = "the runtime has reported the result of call {int}")]
async fn call_reported(world: &mut ConformanceWorld, n: usize) -> StepResult {
    let id = call_id(n);
    let timeout = world.timeout();
    world
        .started_runtime()?
        .wait_for_event(&format!("tool_completed for {id}"), timeout, |e| {
            e.event_type() == "tool_completed"
                && str_at(e.payload(), &["toolCallId"]) == Some(id.as_str())
        })
        .await?;
    Ok(())
}

#[then("the tool calls complete in the reverse of the call order")]
async fn reverse_completion(world: &mut ConformanceWorld) -> StepResult {
    wait_task_end(world).await?;
    let events = this_task_events(world)?;
    let first = completed_event(&events, &call_id(1));
    let second = completed_event(&events, &call_id(2));
    let (Some(first), Some(second)) = (first, second) else {
        fail!(
            "both calls must be reported by tool_completed; events: {}",
            event_types(&events)
        );
    };
    check!(
        second.seq < first.seq,
        "the second call must finish first (the first waits for it)"
    );
    Ok(())
}

/// The tool messages of the task's second model request answer `call_tool_1`, `call_tool_2`
/// in that order, each with its own call's output (ids and contents both, so results paired
/// with the wrong call fail too).
#[then(
    expr = "the next model request carries the tool results {string} and {string} in the call order"
)]
async fn results_in_call_order(
    world: &mut ConformanceWorld,
    first: String,
    second: String,
) -> StepResult {
    wait_task_end(world).await?;
    let requests = task_requests(world).await?;
    let next = requests
        .get(1)
        .with_context(|| format!("the model received {} request(s)", requests.len()))?;
    let messages = next
        .get("messages")
        .and_then(Value::as_array)
        .context("the model request has no messages")?;
    let tools: Vec<(&str, &str)> = messages
        .iter()
        .filter(|m| str_at(m, &["role"]) == Some("tool"))
        .map(|m| {
            (
                str_at(m, &["tool_call_id"]).unwrap_or_default(),
                str_at(m, &["content"]).unwrap_or_default(),
            )
        })
        .collect();
    let ids: Vec<&str> = tools.iter().map(|(id, _)| *id).collect();
    let want = [call_id(1), call_id(2)];
    check!(
        ids == want,
        "the tool results must follow the call order {want:?}, got {ids:?}"
    );
    for ((id, content), needle) in tools.iter().zip([&first, &second]) {
        check!(
            content.contains(needle.as_str()),
            "the result of {id} must contain {needle:?}: {content:?}"
        );
    }
    Ok(())
}
