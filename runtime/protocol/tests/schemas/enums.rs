//! 3. The schema enums equal the Rust enums.

use super::*;

#[test]
fn schema_enums_equal_the_rust_enums() {
    let event_types: BTreeSet<String> = EventBody::TYPES.iter().map(|t| t.to_string()).collect();
    assert_eq!(
        schema_enum("events/SessionEvent", "/properties/eventType"),
        event_types
    );
    let payload_schemas: BTreeSet<String> = agent_schemas::names()
        .filter_map(|n| n.strip_prefix("events/payloads/"))
        .map(str::to_owned)
        .collect();
    assert_eq!(payload_schemas, event_types);

    let pairs: Vec<(&str, &str, BTreeSet<String>)> = vec![
        (
            "state/SessionStatus",
            "",
            serialized(&all_session_statuses()),
        ),
        ("state/TaskStatus", "", serialized(&all_task_statuses())),
        (
            "message/ConversationMessage",
            "/$defs/Role",
            serialized(&all_roles()),
        ),
        (
            "approval/ApprovalRequest",
            "/$defs/RiskLevel",
            serialized(&all_risk_levels()),
        ),
        (
            "approval/ApprovalRequest",
            "/$defs/Decision",
            serialized(&all_decisions()),
        ),
        (
            "tool/ToolResult",
            "/$defs/ToolStatus",
            serialized(&all_tool_statuses()),
        ),
        (
            "audit/AuditEvent",
            "/properties/severity",
            serialized(&all_severities()),
        ),
        (
            "methods/StartTask.params",
            "/$defs/TaskOptions/properties/approvalMode",
            serialized(&all_approval_modes()),
        ),
        (
            "methods/GetPatchPreview.result",
            "/$defs/FilePatch/properties/status",
            serialized(&all_file_change_statuses()),
        ),
        (
            "tool/ToolResult",
            "/$defs/FileChange/properties/status",
            serialized(&all_file_change_statuses()),
        ),
        (
            "methods/ApproveAction.result",
            "/properties/status",
            serialized(&all_approve_action_statuses()),
        ),
    ];
    for (schema, pointer, rust) in pairs {
        assert_eq!(schema_enum(schema, pointer), rust, "{schema}#{pointer}");
    }
    // The method names of the protocol are exactly the method schemas.
    let methods: BTreeSet<String> = agent_schemas::names()
        .filter_map(|n| n.strip_prefix("methods/"))
        .filter_map(|n| n.rsplit_once('.').map(|(m, _)| m.to_owned()))
        .collect();
    // workspace.sync exists in sandbox mode only, so it is not among the methods every
    // runtime offers.
    let rust_methods: BTreeSet<String> = methods::ALL
        .iter()
        .chain([&methods::WORKSPACE_SYNC])
        .map(|m| m.to_string())
        .collect();
    assert_eq!(methods, rust_methods);
}
