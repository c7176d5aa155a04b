//! Scripting what the model will answer: text with a finish reason, tool calls (one, several,
//! forever), and a model that waits before answering.

use agent_mocks::{
    GatewayReply, ScriptedToolCall, StreamStep, Usage,
    sse::{DEFAULT_MODEL, text_stream},
};
use anyhow::Context;
use cucumber::{gherkin::Step, given};
use serde_json::json;

use crate::steps::support::model::{
    EVERY_CALL_ID, ensure_workspace_file, multi_call_id, push_model_reply, push_model_stream,
    read_call, rendered, with_finish_reason,
};
use crate::steps::support::{StepResult, quoted_names};
use crate::steps::task::READ_CALL_ID;
use crate::steps::tools::files::expand_path;
use crate::steps::tools::{SCRIPTED_CALLS, arguments_for_os, call_id};
use crate::world::ConformanceWorld;

#[given(expr = "the model will call ReadFile on {string} in every answer")]
async fn model_reads_forever(world: &mut ConformanceWorld, name: String) -> StepResult {
    ensure_workspace_file(world, &name, "Nothing new in here.")?;
    let call = read_call(world, EVERY_CALL_ID, &name)?;
    world
        .fakes()
        .await?
        .streaming_gateway
        .set_fallback_reply(Some(GatewayReply::ToolCalls {
            text: None,
            calls: vec![call],
        }));
    Ok(())
}

#[given(expr = "the model will call ReadFile on {string} {int} times, then answer {string}")]
pub(crate) async fn model_reads_n_times(
    world: &mut ConformanceWorld,
    name: String,
    times: usize,
    answer: String,
) -> StepResult {
    ensure_workspace_file(world, &name, "Line one.\nLine two.\n")?;
    for n in 1..=times {
        let call = read_call(world, &format!("call_read_{n:02}"), &name)?;
        push_model_reply(
            world.fakes().await?,
            GatewayReply::ToolCalls {
                text: None,
                calls: vec![call],
            },
        );
    }
    push_model_reply(world.fakes().await?, GatewayReply::text(answer));
    Ok(())
}

#[given(expr = "the model will stop with finish reason {string} after answering {string}")]
async fn model_answers_with(
    world: &mut ConformanceWorld,
    finish_reason: String,
    answer: String,
) -> StepResult {
    let payloads = text_stream(
        &answer,
        &finish_reason,
        DEFAULT_MODEL,
        Some(Usage::default()),
    );
    push_model_reply(world.fakes().await?, GatewayReply::RawSse(payloads));
    Ok(())
}

#[given(
    expr = "the model will stop with finish reason {string} after answering {string}, {int} times in a row"
)]
async fn model_answers_with_n(
    world: &mut ConformanceWorld,
    finish_reason: String,
    answer: String,
    times: usize,
) -> StepResult {
    for _ in 0..times {
        model_answers_with(world, finish_reason.clone(), answer.clone()).await?;
    }
    Ok(())
}

#[given(expr = "the model will call ReadFile on {string} with finish reason {string}")]
async fn model_reads_with(
    world: &mut ConformanceWorld,
    name: String,
    finish_reason: String,
) -> StepResult {
    ensure_workspace_file(world, &name, "Line one.\nLine two.\n")?;
    let call = read_call(world, READ_CALL_ID, &name)?;
    let reply = GatewayReply::ToolCalls {
        text: None,
        calls: vec![call],
    };
    let payloads = with_finish_reason(rendered(&reply)?, &finish_reason)?;
    push_model_reply(world.fakes().await?, GatewayReply::RawSse(payloads));
    Ok(())
}

#[given(expr = "the model will call the tool {string} with the arguments {string}")]
async fn model_calls_tool(
    world: &mut ConformanceWorld,
    tool: String,
    arguments: String,
) -> StepResult {
    push_model_reply(
        world.fakes().await?,
        GatewayReply::tool_call("call_tool_1", tool, arguments),
    );
    Ok(())
}

#[given(regex = r#"^the model will read (".+") in one answer$"#)]
async fn model_reads_several(world: &mut ConformanceWorld, list: String) -> StepResult {
    let mut calls = Vec::new();
    for (index, name) in quoted_names(&list).iter().enumerate() {
        calls.push(read_call(world, &multi_call_id(index), name)?);
    }
    check!(calls.len() > 1, "name at least two files: {list}");
    push_model_reply(
        world.fakes().await?,
        GatewayReply::ToolCalls { text: None, calls },
    );
    Ok(())
}

#[given("the model will wait before answering")]
async fn model_waits(world: &mut ConformanceWorld) -> StepResult {
    let mut steps = vec![StreamStep::StallUntilReleased];
    steps.extend(
        StreamStep::from_reply(
            &GatewayReply::text("Sorry for the wait, here I am."),
            Some(Usage::default()),
        )
        .context("a text reply is a stream")?,
    );
    push_model_stream(world.fakes().await?, steps);
    Ok(())
}

/// One model answer with several tool calls, one per table row (`| tool | arguments |`), with
/// the ids `call_tool_n` continuing the numbering of `the model will call {word} with:`.
#[given("the model will call these tools in one answer:")]
async fn model_calls_several(world: &mut ConformanceWorld, step: &Step) -> StepResult {
    let table = step
        .table
        .as_ref()
        .context("the step needs a table | tool | arguments |")?;
    let mut calls = Vec::new();
    for row in table.rows.iter().skip(1) {
        let [tool, arguments] = row.as_slice() else {
            fail!("each row needs a tool and its JSON arguments: {row:?}");
        };
        let arguments = arguments_for_os(world, arguments).await?;
        let n = world.marks.get(SCRIPTED_CALLS).copied().unwrap_or(0) + 1;
        world.marks.insert(SCRIPTED_CALLS, n);
        calls.push(ScriptedToolCall::new(call_id(n), tool.clone(), arguments));
    }
    check!(calls.len() > 1, "list at least two calls");
    push_model_reply(
        world.fakes().await?,
        GatewayReply::ToolCalls { text: None, calls },
    );
    Ok(())
}

/// The id policy.rs gives the RunCommand call, so that its "the RunCommand call is denied"
/// and "… runs" judge the call scripted here too.
const RUN_CALL_ID: &str = "call_run_1";

#[given(expr = "the model will run {string} with the working directory {string}")]
async fn run_in(world: &mut ConformanceWorld, command: String, cwd: String) -> StepResult {
    let cwd = expand_path(world, &cwd).await?;
    let arguments = json!({"command": command, "cwd": cwd}).to_string();
    push_model_reply(
        world.fakes().await?,
        GatewayReply::ToolCalls {
            text: None,
            calls: vec![ScriptedToolCall::new(RUN_CALL_ID, "RunCommand", arguments)],
        },
    );
    Ok(())
}

#[given(expr = "the model will call ReadFile on a path of {int} characters in the workspace")]
async fn model_reads_long_path(world: &mut ConformanceWorld, length: usize) -> StepResult {
    let workspace = world.dirs()?.workspace.display().to_string();
    // Folders of 100 characters: every component stays under NAME_MAX, only the whole is long.
    let mut path = workspace;
    while path.len() < length {
        path.push('/');
        path.push_str(&"d".repeat(100));
    }
    path.truncate(length);
    let n = world.marks.get(SCRIPTED_CALLS).copied().unwrap_or(0) + 1;
    world.marks.insert(SCRIPTED_CALLS, n);
    let arguments = json!({ "path": path }).to_string();
    push_model_reply(
        world.fakes().await?,
        GatewayReply::tool_call(call_id(n), "ReadFile", arguments),
    );
    Ok(())
}
