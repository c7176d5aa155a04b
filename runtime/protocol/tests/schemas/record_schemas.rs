//! 1. Rust values satisfy their schemas: approvals, policy, checkpoints, audit, service bodies, states.

use super::*;

#[test]
// One value of each record, in a row: a table, not logic.
#[allow(clippy::too_many_lines)]
fn approval_policy_checkpoint_and_audit_satisfy_their_schemas() {
    for risk in all_risk_levels() {
        check("approval/ApprovalRequest", &approval_request(risk));
    }
    check("policy/PolicyBundle", &policy_bundle());
    let mut with_unknown_capability = policy_bundle();
    with_unknown_capability.capabilities.push(CapabilityEntry {
        name: "Code.Execute".into(),
        extra: object(json!({"allowedLanguages": ["python"]})),
        ..CapabilityEntry::default()
    });
    // Unknown scope fields are kept and allowed (only the key check would flag them).
    let json = serde_json::to_value(&with_unknown_capability).unwrap();
    agent_schemas::validate("policy/PolicyBundle", &json).unwrap();
    // MCP servers as the runtime reads them (agent_protocol::extensions).
    let server = agent_protocol::extensions::McpServerConfig {
        name: "docs".into(),
        endpoint: "https://mcp.example.com/mcp".into(),
        bearer_token: Some("t".into()),
        allowed_tools: vec!["search".into()],
        tool_approval_rules: [("search".to_owned(), "rule".to_owned())].into(),
    };
    let mut with_mcp = policy_bundle();
    with_mcp.capabilities.push(CapabilityEntry {
        name: "Mcp.Invoke".into(),
        extra: object(json!({"mcpServers": [server]})),
        ..CapabilityEntry::default()
    });
    let json = serde_json::to_value(&with_mcp).unwrap();
    agent_schemas::validate("policy/PolicyBundle", &json).unwrap();
    let read = agent_protocol::extensions::ExtensionConfig::from_bundle(&with_mcp).unwrap();
    assert_eq!(read.mcp_servers, [server]);

    let checkpoint = Checkpoint {
        checkpoint_version: CHECKPOINT_VERSION.into(),
        session_id: "sess_789".into(),
        workspace_id: "ws_456".into(),
        tenant_id: "tenant_abc".into(),
        user_id: "user_123".into(),
        session_status: SessionStatus::SessionRunning,
        task: Some(CheckpointTask {
            task_id: "task_001".into(),
            prompt: "Fix the tests".into(),
            status: "running".into(),
            step_count: 3,
            max_steps: 40,
            task_options: Some(TaskOptions {
                max_steps: Some(40),
                allow_network: Some(false),
                approval_mode: Some(ApprovalMode::Always),
            }),
        }),
        step_cursor: Some("step_003".into()),
        thread: all_roles().into_iter().map(message).collect(),
        session_tokens_used: 12_540,
        policy_bundle_version: "2026-02-21.1".into(),
        checkpointed_at: T.into(),
        pending_approvals: vec![approval_request(RiskLevel::High)],
        workspace_root: Some("/work/demo".into()),
        event_id_epoch: 2,
        file_changes: all_file_change_statuses()
            .into_iter()
            .map(|status| FileChange {
                path: format!("/work/demo/{status:?}.py"),
                status,
                hunks: "@@ -1 +1 @@\n-a\n+b\n".into(),
            })
            .collect(),
        name: Some("Session 1".into()),
        feature_flags: serde_json::Map::from_iter([("betaTools".to_owned(), json!(true))]),
        execution_environment: Some("desktop".into()),
        os_family: Some("macOS".into()),
        continued_from: Some("sess_ended".into()),
    };
    check("checkpoint/Checkpoint", &checkpoint);
    for status in ["running", "completed", "failed", "cancelled"] {
        let mut other = checkpoint.clone();
        if let Some(task) = other.task.as_mut() {
            task.status = status.into();
        }
        check("checkpoint/Checkpoint", &other);
    }
    let mut between_tasks = checkpoint;
    between_tasks.task = None;
    between_tasks.step_cursor = None;
    between_tasks.pending_approvals.clear();
    between_tasks.workspace_root = None;
    check("checkpoint/Checkpoint", &between_tasks);

    for severity in all_severities() {
        check(
            "audit/AuditEvent",
            &AuditEvent {
                event_id: "evt_123".into(),
                event_type: "tool_completed".into(),
                timestamp: T.into(),
                tenant_id: Some("tenant_abc".into()),
                user_id: Some("user_123".into()),
                workspace_id: Some("ws_456".into()),
                session_id: Some("sess_789".into()),
                task_id: Some("task_001".into()),
                step_id: Some("step_003".into()),
                component: "LocalAgentHost".into(),
                bounded_context: "AgentExecution".into(),
                severity,
                payload: json!({}),
            },
        );
    }
    let envelope = |event_type: &str, payload: Value| AuditEvent {
        event_id: "evt_1".into(),
        event_type: event_type.into(),
        timestamp: T.into(),
        tenant_id: Some("tenant_abc".into()),
        user_id: Some("user_123".into()),
        workspace_id: Some("ws_456".into()),
        session_id: Some("sess_789".into()),
        task_id: None,
        step_id: None,
        component: "LocalAgentHost".into(),
        bounded_context: "ObservabilityAudit".into(),
        severity: Severity::Warning,
        payload,
    };
    check(
        "audit/AuditEventBatch",
        &AuditEventBatch {
            events: vec![
                envelope("events_dropped", json!({"droppedCount": 3})),
                envelope("session_started", json!({"sessionEventId": 1})),
            ],
        },
    );
}

#[test]
// One value of each record, in a row: a table, not logic.
#[allow(clippy::too_many_lines)]
fn service_bodies_satisfy_their_schemas() {
    check(
        "services/session/SandboxRegistrationRequest",
        &SandboxRegistrationRequest {
            sandbox_endpoint: "http://127.0.0.1:8080".into(),
            task_arn: "local:42".into(),
            registration_token: "token".into(),
        },
    );
    check(
        "services/session/SandboxRegistrationResponse",
        &SandboxRegistrationResponse {
            session_id: "sess_789".into(),
            workspace_id: "ws_456".into(),
            workspace_service_url: Some("http://workspace".into()),
            policy_bundle: Some(policy_bundle()),
            feature_flags: None,
            name: None,
        },
    );
    check(
        "methods/workspace.sync.params",
        &WorkspaceSyncParams {
            direction: SyncDirection::Pull,
            paths: vec!["a.txt".into()],
        },
    );
    check(
        "methods/workspace.sync.result",
        &WorkspaceSyncResult {
            direction: SyncDirection::Push,
            synced: vec!["a.txt".into()],
            failed: vec![SyncFailure {
                path: "../b".into(),
                message: "not inside the workspace".into(),
            }],
        },
    );
    check(
        "services/session/CreateSessionRequest",
        &CreateSessionRequest {
            tenant_id: "tenant_abc".into(),
            user_id: "user_123".into(),
            execution_environment: "desktop".into(),
            workspace_hint: WorkspaceHint {
                local_paths: vec!["/work/demo".into()],
            },
            client_info: ClientInfo::default(),
            supported_capabilities: vec!["File.Read".into(), "LLM.Call".into()],
            supported_tools: vec!["ReadFile".into()],
        },
    );
    let response = CreateSessionResponse {
        session_id: "sess_789".into(),
        workspace_id: "ws_456".into(),
        compatibility_status: "compatible".into(),
        policy_bundle: Some(policy_bundle()),
        feature_flags: object(json!({"mcp": false})),
        name: Some("demo".into()),
        incompatibility_reason: None,
    };
    check("services/session/CreateSessionResponse", &response);
    check(
        "services/session/CreateSessionResponse",
        &CreateSessionResponse {
            compatibility_status: "incompatible".into(),
            policy_bundle: None,
            incompatibility_reason: Some("Too old".into()),
            ..response
        },
    );
    for checkpoint_cursor in [Some("step_003".to_owned()), None] {
        check(
            "services/session/ResumeSessionRequest",
            &ResumeSessionRequest { checkpoint_cursor },
        );
    }
    check(
        "services/session/ResumeSessionResponse",
        &ResumeSessionResponse {
            session_id: "sess_789".into(),
            workspace_id: "ws_456".into(),
            compatibility_status: "compatible".into(),
            policy_bundle: Some(policy_bundle()),
            feature_flags: Some(serde_json::Map::from_iter([(
                "betaTools".to_owned(),
                json!(true),
            )])),
        },
    );
    check(
        "services/session/CancelSessionRequest",
        &CancelSessionRequest {
            reason: "user_shutdown".into(),
        },
    );
    let history = history_upload();
    check("services/workspace/ArtifactUploadRequest", &history);
    check("artifacts/SessionHistory", &history);
    for artifact_type in ["tool_output", "file_diff"] {
        check(
            "services/workspace/ArtifactUploadRequest",
            &ArtifactUploadRequest {
                session_id: "sess_789".into(),
                task_id: Some("task_001".into()),
                step_id: Some("step_006".into()),
                artifact_type: artifact_type.into(),
                artifact_name: "out.txt".into(),
                content_type: "text/plain".into(),
                content_base64: Some("cHl0ZXN0IG91dHB1dA==".into()),
                messages: None,
                snapshot_after_task_id: None,
                snapshot_at: None,
                metadata: object(json!({"toolName": "RunCommand"})),
            },
        );
    }
    check(
        "services/workspace/ArtifactUploadResponse",
        &ArtifactUploadResponse {
            artifact_id: "art_9".into(),
            artifact_uri: "s3://workspaces/ws_456/artifacts/art_9".into(),
        },
    );
    for decision in all_decisions() {
        check(
            "services/approval/ApprovalDecisionRecord",
            &ApprovalDecisionRecord {
                approval_id: "appr_001".into(),
                session_id: "sess_789".into(),
                task_id: "task_001".into(),
                step_id: Some("step_003".into()),
                user_id: "user_123".into(),
                tenant_id: "tenant_abc".into(),
                workspace_id: "ws_456".into(),
                decision,
                reason: Some("expected".into()),
                action_summary: "Run: pytest".into(),
                risk_level: RiskLevel::Medium,
                client_timestamp: T.into(),
            },
        );
    }
}

#[test]
fn state_enums_satisfy_their_schemas() {
    for status in all_session_statuses() {
        check("state/SessionStatus", &status);
    }
    for status in all_task_statuses() {
        check("state/TaskStatus", &status);
    }
}
