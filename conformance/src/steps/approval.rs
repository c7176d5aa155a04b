//! Approvals (local-agent-host.md §10; INTEROP.md §5): asking, deciding, timing out,
//! cancelling while waiting, and what the Approval Service records.

use agent_mocks::FaultControl;
use anyhow::Context;
use cucumber::{then, when};
use serde_json::{Value, json};

use crate::steps::policy::rules::tool_message;
use crate::steps::support::model::WRITE_CALL_ID;
use crate::steps::support::task::{
    barrier, task_events, task_request, this_task_events, tool_completed, wait_task_event,
};
use crate::steps::support::{
    StepResult, at, check_service_body, declares_reference, eventually, expect_result, show, str_at,
};
use crate::steps::task::{READ_CALL_ID, wait_task_end};
use crate::world::ConformanceWorld;

#[when("the runtime asks for approval")]
async fn asks_for_approval(world: &mut ConformanceWorld) -> StepResult {
    approval_request(world).await?;
    Ok(())
}

#[when("the user approves the action")]
async fn user_approves(world: &mut ConformanceWorld) -> StepResult {
    decide(world, "approved", None).await?;
    Ok(())
}

#[when(expr = "the user denies the action because {string}")]
async fn user_denies(world: &mut ConformanceWorld, reason: String) -> StepResult {
    decide(world, "denied", Some(&reason)).await?;
    Ok(())
}

#[when("the user approves the action twice")]
async fn user_approves_twice(world: &mut ConformanceWorld) -> StepResult {
    decide(world, "approved", None).await?;
    let first = world.last_response()?.clone();
    let status = at(&first, &["result", "status"]).cloned();
    // The status is an open set (INTEROP.md §1 "a status such as"); "accepted" is ours.
    let reference = declares_reference(world)?;
    check!(
        status == Some(json!("accepted")) || (!reference && status.is_some_and(|s| s.is_string())),
        "the first decision should have been accepted: {}",
        show(&first)
    );
    decide(world, "approved", None).await?;
    Ok(())
}

#[when("the user approves an approval id the runtime never issued")]
async fn user_approves_unknown(world: &mut ConformanceWorld) -> StepResult {
    approval_request(world).await?;
    let session_id = world.session()?.session_id.clone();
    approve_action(
        world,
        json!({"sessionId": session_id, "approvalId": "appr_never_issued", "decision": "approved"}),
    )
    .await?;
    Ok(())
}

#[when(expr = "the user answers the approval with the decision {string}")]
async fn user_answers_with(world: &mut ConformanceWorld, decision: String) -> StepResult {
    decide(world, &decision, None).await?;
    Ok(())
}

#[when("the approval times out")]
async fn approval_times_out(world: &mut ConformanceWorld) -> StepResult {
    approval_timeout(world).await
}

#[when("the client cancels the task while it waits for approval")]
async fn cancel_while_waiting(world: &mut ConformanceWorld) -> StepResult {
    approval_request(world).await?;
    let response = task_request(world, "CancelTask").await?;
    expect_result(&response, "CancelTask")?;
    Ok(())
}

#[then(expr = "the runtime asks for approval titled {string} to read {string}")]
async fn approval_payload(world: &mut ConformanceWorld, title: String, name: String) -> StepResult {
    let session_id = world.session()?.session_id.clone();
    let task_id = world.task()?.task_id.clone();
    let event = wait_task_event(world, "approval_requested", |e| {
        e.event_type() == "approval_requested"
    })
    .await?;
    let payload = event.payload();
    let text = |field: &str| str_at(payload, &[field]).unwrap_or("");
    check!(
        !text("approvalId").trim().is_empty(),
        "approval_requested.payload.approvalId is missing: {}",
        show(payload)
    );
    for (field, want) in [("sessionId", &session_id), ("taskId", &task_id)] {
        check!(
            text(field) == want,
            "approval_requested.payload.{field} is {:?}, expected {want:?}: {}",
            text(field),
            show(payload)
        );
    }
    check!(
        !text("stepId").is_empty() && event.str_field("stepId") == Some(text("stepId")),
        "approval_requested.payload.stepId must name the step asking (the envelope's stepId {:?}): {}",
        event.str_field("stepId"),
        show(payload)
    );
    check!(
        text("title") == title,
        "approval_requested.payload.title is {:?}, the policy's approval rule is titled {title:?}",
        text("title")
    );
    check!(
        text("actionSummary").contains(&name),
        "approval_requested.payload.actionSummary {:?} does not say which file is read ({name:?})",
        text("actionSummary")
    );
    check!(
        !text("riskLevel").is_empty() && payload.get("details").is_some_and(Value::is_object),
        "approval_requested.payload must carry riskLevel and a details object: {}",
        show(payload)
    );
    Ok(())
}

#[then(expr = "the approval request rates the risk {string}")]
async fn approval_risk(world: &mut ConformanceWorld, risk: String) -> StepResult {
    let payload = approval_request(world).await?;
    check!(
        str_at(&payload, &["riskLevel"]) == Some(risk.as_str()),
        "approval_requested.payload.riskLevel is {:?}, expected {risk:?}",
        str_at(&payload, &["riskLevel"])
    );
    Ok(())
}

#[then(expr = "ApproveAction answers {string} without an error")]
async fn approve_answers(world: &mut ConformanceWorld, status: String) -> StepResult {
    let response = world.last_response()?.clone();
    check!(
        response.get("error").is_none(),
        "ApproveAction must never answer with an error (the app's dialog would stay stuck), got: {}",
        show(&response)
    );
    let result = expect_result(&response, "ApproveAction")?;
    // INTEROP.md §1: a status "such as" not_found/expired — an open set. The exact word is
    // the reference runtime's; any other runtime needs a status, not that word.
    let exact = world
        .config()?
        .manifest
        .declares(crate::catalogue::Profile::Reference);
    let got = str_at(result, &["status"]);
    check!(
        if exact {
            got == Some(status.as_str())
        } else {
            got.is_some_and(|s| !s.trim().is_empty())
        },
        "ApproveAction result.status is {got:?}, expected {}: {}",
        if exact {
            format!("{status:?}")
        } else {
            "a status".to_owned()
        },
        show(result)
    );
    Ok(())
}

#[then(expr = "the runtime reports approval_resolved with decision {string}")]
async fn approval_resolved(world: &mut ConformanceWorld, decision: String) -> StepResult {
    let id = approval_id(world).await?;
    // approval_resolved follows the user's answer (local-agent-host.md §12) with decision
    // approved or denied; "cancelled" and "timed_out" are the reference runtime's. For another
    // runtime an approval nobody answered needs no approval_resolved, and one it sends must
    // not say the action was approved.
    if !matches!(decision.as_str(), "approved" | "denied") && !declares_reference(world)? {
        wait_task_end(world).await?;
        let approved = this_task_events(world)?.into_iter().find(|e| {
            e.event_type() == "approval_resolved"
                && str_at(e.payload(), &["approvalId"]) == Some(id.as_str())
                && str_at(e.payload(), &["decision"]) == Some("approved")
        });
        check!(
            approved.is_none(),
            "nobody approved the action, yet approval_resolved says approved: {}",
            approved.map(|e| show(e.payload())).unwrap_or_default()
        );
        return Ok(());
    }
    let event = wait_task_event(world, "approval_resolved", |e| {
        e.event_type() == "approval_resolved"
    })
    .await?;
    let payload = event.payload();
    check!(
        str_at(payload, &["approvalId"]) == Some(id.as_str())
            && str_at(payload, &["decision"]) == Some(decision.as_str())
            && payload.get("latencyMs").is_some_and(Value::is_u64),
        "approval_resolved must be {{approvalId: {id:?}, decision: {decision:?}, latencyMs: <integer>}}: {}",
        show(payload)
    );
    Ok(())
}

#[then("the runtime reports approval_timeout for the approval")]
async fn approval_timeout(world: &mut ConformanceWorld) -> StepResult {
    let id = approval_id(world).await?;
    wait_task_event(world, "approval_timeout for the approval", |e| {
        e.event_type() == "approval_timeout" && str_at(e.payload(), &["approvalId"]) == Some(&id)
    })
    .await?;
    Ok(())
}

#[then("the task ends cancelled")]
async fn task_ends_cancelled(world: &mut ConformanceWorld) -> StepResult {
    let end = wait_task_end(world).await?;
    check!(
        end.event_type() == "task_cancelled",
        "the cancelled task ended with {}: {}",
        end.event_type(),
        show(end.payload())
    );
    Ok(())
}

#[then("the ReadFile call completes while the WriteFile call waits for approval")]
async fn read_completes_first(world: &mut ConformanceWorld) -> StepResult {
    // No ApproveAction has been sent in this scenario: the write can only be waiting.
    let read = tool_completed(world, READ_CALL_ID).await?;
    check!(
        str_at(&read, &["status"]) == Some("succeeded"),
        "the ReadFile call needs no approval and should have run: {}",
        show(&read)
    );
    barrier(world).await?;
    let events = this_task_events(world)?;
    let write_done = events.iter().find(|e| {
        e.event_type() == "tool_completed"
            && str_at(e.payload(), &["toolCallId"]) == Some(WRITE_CALL_ID)
    });
    check!(
        write_done.is_none(),
        "the WriteFile call completed although nobody approved it: {}",
        write_done.map(|e| show(e.payload())).unwrap_or_default()
    );
    Ok(())
}

/// The approval_requested event of this task (waits for it).
pub(crate) async fn approval_request(world: &ConformanceWorld) -> anyhow::Result<Value> {
    let event = wait_task_event(world, "approval_requested", |e| {
        e.event_type() == "approval_requested"
    })
    .await?;
    Ok(event.payload().clone())
}

pub(crate) async fn approval_id(world: &ConformanceWorld) -> anyhow::Result<String> {
    let payload = approval_request(world).await?;
    str_at(&payload, &["approvalId"])
        .filter(|id| !id.trim().is_empty())
        .map(str::to_owned)
        .with_context(|| {
            format!(
                "approval_requested carries no approvalId in its payload: {}",
                show(&payload)
            )
        })
}

/// Sends ApproveAction and keeps its answer for the `Then` steps.
pub(crate) async fn approve_action(
    world: &mut ConformanceWorld,
    params: Value,
) -> anyhow::Result<()> {
    let response = world
        .runtime()
        .await?
        .request("ApproveAction", Some(params))
        .await?;
    world.last_response = Some(response);
    world.last_method = Some("ApproveAction".to_owned());
    Ok(())
}

pub(crate) async fn decide(
    world: &mut ConformanceWorld,
    decision: &str,
    reason: Option<&str>,
) -> anyhow::Result<()> {
    let id = approval_id(world).await?;
    let session_id = world.session()?.session_id.clone();
    let mut params = json!({"sessionId": session_id, "approvalId": id, "decision": decision});
    if let Some(reason) = reason {
        params["reason"] = json!(reason);
    }
    approve_action(world, params).await
}

#[then(expr = "the Approval Service records the decision {string} for the approval")]
async fn records_decision(world: &mut ConformanceWorld, decision: String) -> StepResult {
    let request = wait_task_event(world, "approval_requested", |e| {
        e.event_type() == "approval_requested"
    })
    .await?;
    let asked = request.payload().clone();
    let id = str_at(&asked, &["approvalId"]).unwrap_or("").to_owned();
    let session = world.session()?.clone();
    let task_id = world.task()?.task_id.clone();
    let fakes = world.started_fakes()?;
    let record = eventually(
        world.timeout(),
        "the Approval Service got no record",
        || async {
            fakes
                .approvals
                .records()
                .into_iter()
                .find(|r| str_at(r, &["approvalId"]) == Some(id.as_str()))
                .ok_or_else(|| {
                    format!(
                        "records so far: {}",
                        show(&json!(fakes.approvals.records()))
                    )
                })
        },
    )
    .await?;
    check_service_body(
        "services/approval/ApprovalDecisionRecord",
        &record,
        "POST /approvals",
    )?;
    for (field, want) in [
        ("decision", decision.as_str()),
        ("sessionId", session.session_id.as_str()),
        ("workspaceId", session.workspace_id.as_str()),
        ("taskId", task_id.as_str()),
        (
            "actionSummary",
            str_at(&asked, &["actionSummary"]).unwrap_or(""),
        ),
        ("riskLevel", str_at(&asked, &["riskLevel"]).unwrap_or("")),
    ] {
        check!(
            str_at(&record, &[field]) == Some(want),
            "the Approval Service record's {field} should be {want:?}: {}",
            show(&record)
        );
    }
    for field in ["userId", "tenantId", "clientTimestamp"] {
        check!(
            str_at(&record, &[field]).is_some_and(|v| !v.is_empty()),
            "the Approval Service record lacks {field}: {}",
            show(&record)
        );
    }
    Ok(())
}

#[then("the Approval Service received no request")]
async fn approvals_untouched(world: &mut ConformanceWorld) -> StepResult {
    wait_task_end(world).await?;
    barrier(world).await?;
    let requests = world.started_fakes()?.approvals.requests().await;
    check!(
        requests.is_empty(),
        "without APPROVAL_SERVICE_URL nothing may be sent, but the fake saw {} request(s)",
        requests.len()
    );
    Ok(())
}

#[then("the model is told no decision arrived in time, not that the user denied it")]
async fn told_timed_out(world: &mut ConformanceWorld) -> StepResult {
    let content = tool_message(world, READ_CALL_ID).await?;
    let lower = content.to_lowercase();
    check!(
        lower.contains("time")
            && !lower.contains("user denied")
            && !lower.contains("denied by the user"),
        "after an approval timeout the model must learn that nobody answered in time, not that the user refused: {content:?}"
    );
    Ok(())
}

#[then("the runtime asks for no approval")]
async fn no_approval(world: &mut ConformanceWorld) -> StepResult {
    wait_task_end(world).await?;
    barrier(world).await?;
    let task_id = world.task()?.task_id.clone();
    let asked: Vec<Value> = task_events(&world.started_runtime()?.events(), &task_id)
        .into_iter()
        .filter(|e| e.event_type() == "approval_requested")
        .map(|e| e.payload().clone())
        .collect();
    check!(
        asked.is_empty(),
        "no approval should have been asked for, but the runtime sent: {}",
        show(&json!(asked))
    );
    Ok(())
}
