//! 1. Rust values satisfy their schemas: the tool boundary and conversation messages.

use super::*;

#[test]
fn tool_boundary_types_satisfy_their_schemas() {
    let request = tool_request();
    check("tool/ToolRequest", &request);
    let mut bare = request.clone();
    bare.capability = None;
    bare.tool_call_id = None;
    bare.workspace_root = None;
    bare.limits = ToolLimits::default();
    check("tool/ToolRequest", &bare);

    let mut succeeded = ToolResult::succeeded(&request, "Exit code: 0");
    check("tool/ToolResult", &succeeded);
    succeeded.artifacts.push(ArtifactData {
        artifact_type: "tool_output".into(),
        artifact_name: "out.txt".into(),
        content_type: "text/plain".into(),
        content_base64: "cHl0ZXN0IG91dHB1dA==".into(),
    });
    succeeded
        .artifact_uris
        .push("ws://ws_456/artifacts/art_1".into());
    check("tool/ToolResult", &succeeded);
    let mut written = ToolResult::succeeded(&request, "Wrote 2 bytes to /work/demo/a.py");
    written.file_changes = all_file_change_statuses()
        .into_iter()
        .map(|status| FileChange {
            path: format!("/work/demo/{status:?}.py"),
            status,
            hunks: "@@ -1 +1 @@\n-a\n+b\n".into(),
        })
        .collect();
    written.file_changes[0].hunks = String::new();
    check("tool/ToolResult", &written);
    check(
        "tool/ToolResult",
        &ToolResult::failed(&bare, ErrorCode::ToolNotFound, "Unknown tool: X"),
    );
    check(
        "tool/ToolResult",
        &ToolResult::denied(&request, ErrorCode::CapabilityDenied, "Not allowed"),
    );
    let mut with_error = ToolResult::failed(&request, ErrorCode::FileNotFound, "missing");
    with_error.error = Some(ToolError {
        code: ErrorCode::Other("CUSTOM_CODE".into()),
        message: "custom".into(),
    });
    check("tool/ToolResult", &with_error);

    check(
        "tool/ToolDefinition",
        &ToolDefinition {
            tool_name: "ReadFile".into(),
            description: "Read the contents of a file at the given path".into(),
            input_schema: json!({"type": "object", "required": ["path"],
                                 "properties": {"path": {"type": "string"}}})
            .into(),
        },
    );
}

#[test]
fn conversation_messages_satisfy_their_schema() {
    for role in all_roles() {
        check("message/ConversationMessage", &message(role));
        let mut bare = message(role);
        bare.task_id = None;
        bare.step_id = None;
        bare.token_count = None;
        for call in &mut bare.tool_calls {
            call.message_id = None;
        }
        check("message/ConversationMessage", &bare);
    }
}
