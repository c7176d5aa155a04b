//! Steps for statements of local-agent-host.md and INTEROP.md found by the spec walk
//! (`features/walk/local-agent-host.toml`, `features/walk/INTEROP.toml`) that no scenario
//! certified yet: how a session ends (session_cancelled from SESSION_PAUSED, the values of
//! session_completed), a session without a project folder, token accounting in
//! GetSessionState, `max_tokens` from the policy, the guardrail note in the thread, and tool
//! dispatch only after the whole answer.

use agent_mocks::FaultControl;
use cucumber::{given, then, when};
use serde_json::{Value, json};

use super::errors::last_error;
use super::lifecycle::{messages, task_requests};
use super::session::create_session_params;
use super::{StepResult, event_types, expect_result, model_requests, show, str_at, task_events};
use crate::world::{ConformanceWorld, SessionInfo};

// ---- Given -----------------------------------------------------------------------------------

/// FastAPI's validation error shape (INTEROP.md §7): `422 {detail: [{loc, msg, type}]}`.
#[given(
    expr = "the Session Service answers the next request with FastAPI's validation error {string} for the field {string}"
)]
async fn fastapi_error(world: &mut ConformanceWorld, msg: String, field: String) -> StepResult {
    let body =
        json!({"detail": [{"loc": ["body", field], "msg": msg, "type": "value_error.missing"}]});
    world.fakes().await?.session.fail_next(1, 422, body);
    Ok(())
}

/// A file capability scoped by one allowed and one blocked path, no approval.
#[given(expr = "the policy grants {word} under {string} but blocks {string}")]
async fn grants_scoped(
    world: &mut ConformanceWorld,
    capability: String,
    allowed: String,
    blocked: String,
) -> StepResult {
    super::common::edit_policy(world, |bundle| {
        agent_mocks::policy::set_capability(
            bundle,
            agent_mocks::policy::capability_entry(
                &capability,
                json!({"allowedPaths": [allowed], "blockedPaths": [blocked]}),
            ),
        );
    })
    .await?;
    Ok(())
}

/// The shape upstream providers' errors reach the runtime in (INTEROP.md §2).
#[given(
    expr = "the gateway answers the next request with status {int} and the upstream error {string}"
)]
async fn upstream_error(world: &mut ConformanceWorld, status: u16, message: String) -> StepResult {
    let body =
        json!({"error": {"message": message, "type": "invalid_request_error", "code": "upstream"}});
    super::push_model_reply(
        world.fakes().await?,
        agent_mocks::GatewayReply::Status {
            status,
            headers: Vec::new(),
            body: body.to_string(),
        },
    );
    Ok(())
}

// ---- When ------------------------------------------------------------------------------------

/// A general chat: the desktop app sends no `workspaceHint` (INTEROP.md §1).
#[when("the client creates a session without a project folder")]
async fn create_without_folder(world: &mut ConformanceWorld) -> StepResult {
    let workspace = world.dirs()?.workspace.clone();
    let mut params = create_session_params(&workspace);
    if let Some(object) = params.as_object_mut() {
        object.remove("workspaceHint");
    }
    let response = world
        .runtime()
        .await?
        .request("CreateSession", Some(params))
        .await?;
    let result = expect_result(&response, "CreateSession without a workspaceHint")?.clone();
    world.session = Some(SessionInfo::from_result(result));
    world.last_response = Some(response);
    world.last_method = Some("CreateSession".to_owned());
    Ok(())
}

// ---- Then ------------------------------------------------------------------------------------

/// The session's end event, whichever it is (waits for it).
async fn session_end(world: &ConformanceWorld) -> anyhow::Result<crate::driver::ReceivedEvent> {
    let session_id = world.session()?.session_id.clone();
    let runtime = world.started_runtime()?;
    let event = runtime
        .wait_for_event("the session's end", world.timeout(), |e| {
            matches!(
                e.event_type(),
                "session_completed" | "session_cancelled" | "session_failed"
            ) && e.str_field("sessionId") == Some(session_id.as_str())
        })
        .await?;
    Ok(event)
}

#[then("the runtime reports session_cancelled for the session")]
async fn reports_session_cancelled(world: &mut ConformanceWorld) -> StepResult {
    let event = session_end(world).await?;
    // The documents name no event for SESSION_CANCELLED and INTEROP.md §8 asks for no
    // Session Service cancel without a running task: for another runtime the session's end
    // is all there is to see; `session_cancelled` is the reference runtime's.
    if !super::errors::declares_reference(world)? {
        return Ok(());
    }
    check!(
        event.event_type() == "session_cancelled",
        "a paused session that is shut down ends SESSION_CANCELLED (local-agent-host.md §3.3: PAUSED → CANCELLED); the runtime reported {}",
        event.event_type()
    );
    Ok(())
}

#[then(expr = "session_completed counts {int} task(s) and {int} tokens")]
async fn session_completed_counts(
    world: &mut ConformanceWorld,
    tasks: u64,
    tokens: u64,
) -> StepResult {
    let event = session_end(world).await?;
    check!(
        event.event_type() == "session_completed",
        "an idle session ends with session_completed, the runtime reported {}",
        event.event_type()
    );
    let payload = event.payload();
    let number = |field: &str| payload.get(field).and_then(Value::as_u64);
    // A payload without the members is REQ-MSG-102's finding; the counts are this one's.
    if ["taskCount", "totalTokens"]
        .iter()
        .any(|m| payload.get(*m).is_none())
    {
        fail!(
            "{} session_completed carries no taskCount/totalTokens to count with; that is REQ-MSG-102's finding: {}",
            crate::report::NOT_JUDGED,
            show(payload)
        );
    }
    check!(
        number("taskCount") == Some(tasks),
        "session_completed.taskCount is {:?}, expected {tasks}: {}",
        number("taskCount"),
        show(payload)
    );
    check!(
        number("totalTokens") == Some(tokens),
        "session_completed.totalTokens is {:?}, expected {tokens} (the gateway's usage, input plus output): {}",
        number("totalTokens"),
        show(payload)
    );
    Ok(())
}

#[then(expr = "the session state reports {int} session tokens used of {int}")]
async fn state_tokens(world: &mut ConformanceWorld, used: u64, max: u64) -> StepResult {
    let result = expect_result(world.last_response()?, "GetSessionState")?;
    let number = |field: &str| result.get(field).and_then(Value::as_u64);
    check!(
        number("sessionTokensUsed") == Some(used),
        "GetSessionState sessionTokensUsed is {:?}, expected {used} (the gateway's usage, input plus output): {}",
        number("sessionTokensUsed"),
        show(result)
    );
    check!(
        number("maxSessionTokens") == Some(max),
        "GetSessionState maxSessionTokens is {:?}, expected the policy's {max}: {}",
        number("maxSessionTokens"),
        show(result)
    );
    Ok(())
}

#[then(expr = "every model request asks for at most {int} output tokens")]
async fn max_tokens(world: &mut ConformanceWorld, limit: u64) -> StepResult {
    let requests = model_requests(world.started_fakes()?).await;
    check!(!requests.is_empty(), "the model received no request");
    for request in &requests {
        let got = request.body.get("max_tokens").and_then(Value::as_u64);
        check!(
            got == Some(limit),
            "a model request has max_tokens {got:?}, expected llmPolicy.maxOutputTokens {limit}: {}",
            show(&request.body)
        );
    }
    Ok(())
}

/// §6.4: after a 400 the thread gets a note, so the model knows on the next attempt.
#[then("the new task's first model request tells the model the earlier request was blocked")]
async fn guardrail_note(world: &mut ConformanceWorld) -> StepResult {
    super::task::wait_task_end(world).await?;
    let requests = task_requests(world).await?;
    let first = requests
        .first()
        .ok_or_else(|| anyhow::anyhow!("the new task made no model request"))?;
    let all = messages(first)?;
    let noted = all.iter().skip(1).any(|m| {
        str_at(m, &["content"]).is_some_and(|c| {
            let c = c.to_lowercase();
            c.contains("blocked") || c.contains("guardrail")
        })
    });
    check!(
        noted,
        "no message of the new task's first model request tells the model that the earlier request was blocked: {}",
        show(first)
    );
    Ok(())
}

/// §6.3: tool calls are dispatched only after the full response is received — every
/// tool_requested of a step comes after that step's llm_request_completed.
#[then("every tool call of the task is requested only after the model's answer is complete")]
async fn tools_after_answer(world: &mut ConformanceWorld) -> StepResult {
    super::task::wait_task_end(world).await?;
    let task_id = world.task()?.task_id.clone();
    let events = task_events(&world.started_runtime()?.events(), &task_id);
    if !events
        .iter()
        .any(|e| e.event_type() == "llm_request_completed")
    {
        fail!(
            "{} the runtime reports no llm_request_completed, so the end of the model's answer cannot be seen; that is REQ-TASK-013's finding",
            crate::report::NOT_JUDGED
        );
    }
    let mut requested = 0;
    for (index, event) in events.iter().enumerate() {
        if event.event_type() != "tool_requested" {
            continue;
        }
        requested += 1;
        let step = event.str_field("stepId");
        let answered = events[..index]
            .iter()
            .any(|e| e.event_type() == "llm_request_completed" && e.str_field("stepId") == step);
        check!(
            answered,
            "tool_requested of step {step:?} came before the step's llm_request_completed: {}",
            event_types(&events)
        );
    }
    check!(
        requested > 0,
        "the task requested no tool: {}",
        event_types(&events)
    );
    Ok(())
}

/// INTEROP.md §1: the app shows error.message to people — a service's structured error is
/// put in words, not quoted as JSON.
#[then("the error message quotes no JSON")]
async fn no_json_in_message(world: &mut ConformanceWorld) -> StepResult {
    let error = last_error(world)?;
    let message = error.get("message").and_then(Value::as_str).unwrap_or("");
    check!(
        !message.contains('{') && !message.contains('['),
        "error.message {message:?} quotes structured data instead of saying it in words"
    );
    Ok(())
}

/// The first scripted call was denied by the policy and left the file as it was.
#[then(expr = "the {word} call is denied and the workspace file {string} still contains {string}")]
async fn denied_and_kept(
    world: &mut ConformanceWorld,
    tool: String,
    name: String,
    content: String,
) -> StepResult {
    let id = super::tools::call_id(1);
    let payload = super::common::tool_completed(world, &id).await?;
    check!(
        str_at(&payload, &["toolName"]) == Some(tool.as_str())
            && str_at(&payload, &["status"]) == Some("denied")
            && super::optional_code(&payload, "errorCode", "CAPABILITY_DENIED"),
        "the {tool} call must end with tool_completed {{status: \"denied\", errorCode: \"CAPABILITY_DENIED\"}}: {}",
        show(&payload)
    );
    let path = world.dirs()?.workspace.join(&name);
    let now = std::fs::read_to_string(&path).unwrap_or_default();
    check!(
        now == content,
        "{} should still hold {content:?}, it holds {now:?}",
        path.display()
    );
    Ok(())
}

#[then("the task_failed message quotes no JSON")]
async fn task_failed_plain(world: &mut ConformanceWorld) -> StepResult {
    let end = super::task::wait_task_end(world).await?;
    check!(
        end.event_type() == "task_failed",
        "the task ended with {}, not task_failed",
        end.event_type()
    );
    let message = str_at(end.payload(), &["message"]).unwrap_or_default();
    check!(
        !message.contains('{') && !message.contains('['),
        "task_failed.message {message:?} quotes structured data instead of saying it in words"
    );
    Ok(())
}
