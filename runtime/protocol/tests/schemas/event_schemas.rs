//! 1. Rust values satisfy their schemas: events and errors.

use super::*;

#[test]
fn every_event_body_satisfies_its_payload_schema() {
    let bodies = every_event_body();
    let types: Vec<&str> = bodies.iter().map(EventBody::event_type).collect();
    assert_eq!(
        types,
        EventBody::TYPES,
        "every_event_body() must list each variant once"
    );
    for (index, body) in bodies.into_iter().enumerate() {
        let event = event(index as u64 + 1, body);
        let json = check_event(&event);
        check(
            "jsonrpc/Notification",
            &Notification::new(events::METHOD, json),
        );
    }
}

#[test]
fn session_events_without_task_or_step_satisfy_the_envelope() {
    for body in [
        EventBody::PolicyExpired(Empty {}),
        EventBody::SessionResumed(Empty {}),
    ] {
        let event = SessionEvent {
            event_id: 1,
            timestamp: T.into(),
            session_id: "sess_789".into(),
            workspace_id: None,
            task_id: None,
            step_id: None,
            body,
        };
        check_event(&event);
    }
    // A task-scoped event without its taskId breaks the ID chain.
    let mut event = event(
        2,
        EventBody::TaskCancelled(events::TaskCancelled {
            step_count: 0,
            reason: "user_cancelled".into(),
        }),
    );
    event.task_id = None;
    let json = serde_json::to_value(&event).unwrap();
    assert!(agent_schemas::validate_session_event(&json).is_err());
}

#[test]
fn every_variant_of_the_payload_enums_is_accepted() {
    for status in all_tool_statuses() {
        let mut body = ToolCompleted {
            tool_call_id: "call_1".into(),
            tool_name: "ReadFile".into(),
            status,
            latency_ms: 1,
            result: None,
            error: None,
            error_code: None,
            artifact_uris: Vec::new(),
        };
        check_event(&event(1, EventBody::ToolCompleted(body.clone())));
        body.result = Some("ok".into());
        check_event(&event(1, EventBody::ToolCompleted(body)));
    }
    for decision in all_decisions() {
        check_event(&event(
            1,
            EventBody::ApprovalResolved(ApprovalResolved {
                approval_id: "appr_1".into(),
                decision,
                latency_ms: 0,
                reason: None,
            }),
        ));
    }
    for risk in all_risk_levels() {
        check_event(&event(
            1,
            EventBody::ApprovalRequested(approval_request(risk)),
        ));
    }
    for stop_reason in ["end_turn", "max_tokens", "tool_use", "guardrail"] {
        check_event(&event(
            1,
            EventBody::LlmRequestCompleted(LlmRequestCompleted {
                model: "m".into(),
                input_tokens: 0,
                output_tokens: 0,
                latency_ms: 0,
                stop_reason: stop_reason.into(),
            }),
        ));
    }
}

#[test]
fn every_error_code_satisfies_the_error_shape() {
    let mut codes = ErrorCode::ALL.to_vec();
    codes.push(ErrorCode::Other("SOMETHING_NEW".into()));
    for code in codes {
        check("error/ErrorShape", &error_shape(code.clone()));
        check("error/ErrorShape", &ErrorShape::new(code, "No details."));
    }
}
