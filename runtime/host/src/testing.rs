//! Fixtures the host's unit tests share: a thread message, a session event, an output stream
//! that goes nowhere, a policy enforcer over a bundle of given capabilities, and the
//! failure-collecting check of a table of cases.

use agent_protocol::events::{EventBody, SessionEvent};
use agent_protocol::message::{ConversationMessage, Role};

use crate::outbound::Outbound;

/// A message of task `task_1`, step `step_001`, counted as 3 tokens, without tool calls.
pub(crate) fn message(id: &str, role: Role, content: &str) -> ConversationMessage {
    ConversationMessage {
        message_id: id.to_owned(),
        session_id: "sess_1".to_owned(),
        task_id: Some("task_1".to_owned()),
        step_id: Some("step_001".to_owned()),
        role,
        content: content.to_owned(),
        token_count: Some(3),
        timestamp: "2026-11-26T00:00:00Z".to_owned(),
        tool_calls: Vec::new(),
        tool_call_id: None,
        tool_name: None,
        image_urls: Vec::new(),
    }
}

/// Event `id` of task `task_001`, step `step_001`, in session `sess_789`.
pub(crate) fn event(id: u64, body: EventBody) -> SessionEvent {
    SessionEvent {
        event_id: id,
        timestamp: "2026-02-21T15:09:00Z".into(),
        session_id: "sess_789".into(),
        workspace_id: Some("ws_456".into()),
        task_id: Some("task_001".into()),
        step_id: Some("step_001".into()),
        body,
    }
}

/// An output handle whose lines are written to nothing, its writer running on the current
/// tokio runtime.
pub(crate) fn discarding_outbound() -> Outbound {
    let (outbound, writer) = Outbound::new(tokio::io::sink());
    tokio::spawn(writer);
    outbound
}

/// Judges every `(input, expected)` case and fails once, naming each case judged otherwise.
/// An expected verdict starting with `loose` (e.g. `"opaque: "`) matches a verdict that
/// starts the same and contains the rest, so a case need not quote a whole reason.
pub(crate) fn assert_cases(cases: &[(&str, &str)], loose: &str, judge: impl Fn(&str) -> String) {
    let failures: Vec<String> = cases
        .iter()
        .filter_map(|(input, expected)| {
            let got = judge(input);
            let matches = match expected.strip_prefix(loose) {
                Some(part) => got.starts_with(loose) && got.contains(part),
                None => got == *expected,
            };
            (!matches).then(|| format!("{input:?}: expected {expected:?}, got {got:?}"))
        })
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// An enforcer for the project folder `root` over a bundle that grants `capabilities` (a
/// JSON list of capability entries), valid for centuries.
pub(crate) fn enforcer(
    root: &std::path::Path,
    capabilities: serde_json::Value,
) -> crate::policy::PolicyEnforcer {
    let bundle: agent_protocol::policy::PolicyBundle = serde_json::from_value(serde_json::json!({
        "policyBundleVersion": "v", "schemaVersion": "1.0", "sessionId": "s",
        "expiresAt": "2999-01-01T00:00:00Z", "capabilities": capabilities,
        "llmPolicy": {"allowedModels": ["m"]}
    }))
    .unwrap();
    crate::policy::PolicyEnforcer::new(bundle, Some(root.to_path_buf()))
}
