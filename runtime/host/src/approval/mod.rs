//! Approvals (local-agent-host.md §10) in one place: the flow of one approval — the
//! request checkpointed and announced, the wait, the decision recorded at the Approval
//! Service and announced — and what each decision makes of the tool call; the
//! [`broker`] of pending requests that ApproveAction resolves; the Approval Service
//! client in [`service`].

use std::time::{Duration, Instant};

use agent_protocol::approval::{ApprovalRequest, Decision};
use agent_protocol::events::{ApprovalResolved, ApprovalTimeout, EventBody};
use agent_protocol::services::ApprovalDecisionRecord;
use agent_protocol::{ErrorCode, ToolRequest, ToolResult};
use serde_json::{Value, json};

use crate::backends::Backends;
use crate::events::Scope;
use crate::session::Session;
use crate::time::millis;

/// Who asks: the session and task the approval belongs to, and how long the user has.
pub(crate) struct Asking<'a> {
    pub session: &'a Session,
    pub backends: &'a Backends,
    pub task_id: &'a str,
    pub timeout: Duration,
}

/// Asks the user about `request` and waits for the decision (or the timeout, or the task's
/// cancellation); the decision and the user's reason. The request is registered before
/// `approval_requested` goes out (the app may answer at once) and checkpointed (a crash
/// while the user decides keeps it, §9.2); the decision is recorded at the Approval Service
/// and announced with `approval_resolved`.
pub(crate) async fn ask(
    asking: &Asking<'_>,
    request: &ToolRequest,
    rule_id: Option<&str>,
    risk: agent_protocol::approval::RiskLevel,
    scope: &Scope,
) -> (Decision, Option<String>) {
    let policy = asking.session.policy();
    let rule = rule_id.and_then(|id| policy.approval_rule(id));
    let approval = ApprovalRequest {
        approval_id: format!("appr_{}", uuid::Uuid::new_v4().simple()),
        session_id: asking.session.id().to_owned(),
        task_id: asking.task_id.to_owned(),
        step_id: Some(request.step_id.clone()),
        title: rule
            .and_then(|rule| rule.title.clone())
            .unwrap_or_else(|| format!("Allow {}?", request.tool_name)),
        action_summary: action_summary(request),
        risk_level: risk,
        details: json!({
            "toolName": request.tool_name,
            "capability": request.capability,
            "arguments": request.arguments,
            "description": rule.and_then(|rule| rule.description.clone()),
        }),
    };
    let approval_id = approval.approval_id.clone();
    let (action_summary, risk_level) = (approval.action_summary.clone(), approval.risk_level);
    // Registered before the event: the app may answer the moment it sees it.
    let pending = asking.session.approvals.register_request(&approval);
    // A crash while the user decides keeps the request (§9.2 pending approvals).
    crate::session::checkpoint(asking.session, &asking.backends.checkpoints).await;
    asking
        .session
        .events
        .emit(scope.clone(), EventBody::ApprovalRequested(approval));
    let started = Instant::now();
    let resolution = asking
        .session
        .approvals
        .wait_for(pending, asking.timeout)
        .await;
    if resolution.decision == Decision::TimedOut {
        asking.session.events.emit(
            scope.clone(),
            EventBody::ApprovalTimeout(ApprovalTimeout {
                approval_id: approval_id.clone(),
            }),
        );
    }
    let identity = &asking.session.identity;
    asking.backends.approvals.record(ApprovalDecisionRecord {
        approval_id: approval_id.clone(),
        session_id: identity.session_id.clone(),
        task_id: asking.task_id.to_owned(),
        step_id: Some(request.step_id.clone()),
        user_id: identity.user_id.clone(),
        tenant_id: identity.tenant_id.clone(),
        workspace_id: identity.workspace_id.clone(),
        decision: resolution.decision,
        reason: resolution.reason.clone(),
        action_summary,
        risk_level,
        client_timestamp: crate::time::now_rfc3339(),
    });
    asking.session.events.emit(
        scope.clone(),
        EventBody::ApprovalResolved(ApprovalResolved {
            approval_id,
            decision: resolution.decision,
            latency_ms: millis(started.elapsed()),
            reason: resolution.reason.clone(),
        }),
    );
    (resolution.decision, resolution.reason)
}

/// The tool result a decision other than approval makes of the call (§10.3): denied, with
/// the user's reason when they gave one; `None` for an approval.
pub(crate) fn refusal(
    request: &ToolRequest,
    (decision, reason): (Decision, Option<String>),
    timeout: Duration,
) -> Option<ToolResult> {
    let message = match decision {
        Decision::Approved => return None,
        Decision::Denied => match reason {
            Some(reason) => format!("The user denied this action: {reason}"),
            None => "The user denied this action.".to_owned(),
        },
        Decision::TimedOut => format!(
            "No approval decision arrived in time (the limit is {} seconds), so the action was not run; nobody refused it.",
            timeout.as_secs_f64()
        ),
        Decision::Cancelled => "The task was cancelled before the action was approved.".to_owned(),
    };
    Some(ToolResult::denied(
        request,
        ErrorCode::ApprovalDenied,
        message,
    ))
}

/// What a person reads in the approval dialog.
fn action_summary(request: &ToolRequest) -> String {
    let arg = |name: &str| {
        request
            .arguments
            .get(name)
            .and_then(Value::as_str)
            .unwrap_or("")
    };
    match request.tool_name.as_str() {
        "RunCommand" => format!("Run: {}", arg("command")),
        "ReadFile" => format!("Read file: {}", arg("path")),
        "WriteFile" => format!("Write file: {}", arg("path")),
        "DeleteFile" => format!("Delete file: {}", arg("path")),
        "EditFile" | "MultiEdit" => format!("Edit file: {}", arg("path")),
        "CreateDirectory" => format!("Create folder: {}", arg("path")),
        "MoveFile" => format!("Move: {} -> {}", arg("source"), arg("destination")),
        "HttpRequest" => format!(
            "{} {}",
            request
                .arguments
                .get("method")
                .and_then(Value::as_str)
                .unwrap_or("GET"),
            arg("url")
        ),
        // INTEROP.md §11: the person sees the whole code that would run.
        "FetchUrl" => format!("Fetch: {}", arg("url")),
        "WebSearch" => format!("Search the web: {}", arg("query")),
        "ExecuteCode" => {
            let language = match arg("language") {
                "" => crate::policy::code::DEFAULT_LANGUAGE,
                language => language,
            };
            match arg("description") {
                "" => format!("Run {language} code:\n{}", arg("code")),
                why => format!("Run {language} code ({why}):\n{}", arg("code")),
            }
        }
        other => format!("{other} {}", Value::Object(request.arguments.clone())),
    }
}

#[cfg(test)]
mod summary_tests {
    use super::*;
    use serde_json::json;

    fn summary(tool: &str, arguments: Value) -> String {
        // Built from its JSON form, so fields the request gains later need no edit here.
        let request: ToolRequest = serde_json::from_value(json!({
            "toolName": tool, "arguments": arguments,
            "sessionId": "s", "taskId": "t", "stepId": "step_001"
        }))
        .unwrap();
        action_summary(&request)
    }

    /// INTEROP.md §11: a person approving ExecuteCode reads the whole code and its language.
    #[test]
    fn the_network_execution_and_search_tools_are_summarised_for_a_person() {
        assert_eq!(
            summary("FetchUrl", json!({"url": "https://example.com/"})),
            "Fetch: https://example.com/"
        );
        assert_eq!(
            summary("WebSearch", json!({"query": "tokio"})),
            "Search the web: tokio"
        );
        assert_eq!(
            summary(
                "ExecuteCode",
                json!({"code": "print(1)\nprint(2)", "description": "Count"})
            ),
            "Run python code (Count):\nprint(1)\nprint(2)"
        );
        assert_eq!(
            summary(
                "ExecuteCode",
                json!({"code": "console.log(1)", "language": "javascript"})
            ),
            "Run javascript code:\nconsole.log(1)"
        );
    }
}
