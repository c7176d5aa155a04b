//! Representative values of every type, every enum variant.

use super::*;

pub(crate) fn message(role: Role) -> ConversationMessage {
    ConversationMessage {
        message_id: format!("msg_{role:?}"),
        session_id: "sess_789".into(),
        task_id: Some("task_001".into()),
        step_id: Some("step_001".into()),
        role,
        content: "content".into(),
        token_count: Some(3),
        timestamp: T.into(),
        tool_calls: if role == Role::Assistant {
            vec![MessageToolCall {
                id: "call_1".into(),
                name: "ReadFile".into(),
                arguments: "{\"path\":\"a.txt\"}".into(),
                message_id: Some("msg_read_back_call".into()),
            }]
        } else {
            Vec::new()
        },
        tool_call_id: (role == Role::Tool).then(|| "call_1".into()),
        tool_name: (role == Role::Tool).then(|| "ReadFile".into()),
        image_urls: Vec::new(),
    }
}

pub(crate) fn all_roles() -> Vec<Role> {
    let all = vec![Role::System, Role::User, Role::Assistant, Role::Tool];
    for role in &all {
        match role {
            Role::System | Role::User | Role::Assistant | Role::Tool => {}
        }
    }
    all
}

pub(crate) fn all_risk_levels() -> Vec<RiskLevel> {
    let all = vec![RiskLevel::Low, RiskLevel::Medium, RiskLevel::High];
    for level in &all {
        match level {
            RiskLevel::Low | RiskLevel::Medium | RiskLevel::High => {}
        }
    }
    all
}

pub(crate) fn all_decisions() -> Vec<Decision> {
    let all = vec![
        Decision::Approved,
        Decision::Denied,
        Decision::TimedOut,
        Decision::Cancelled,
    ];
    for decision in &all {
        match decision {
            Decision::Approved | Decision::Denied | Decision::TimedOut | Decision::Cancelled => {}
        }
    }
    all
}

pub(crate) fn all_tool_statuses() -> Vec<ToolStatus> {
    let all = vec![
        ToolStatus::Succeeded,
        ToolStatus::Failed,
        ToolStatus::Denied,
    ];
    for status in &all {
        match status {
            ToolStatus::Succeeded | ToolStatus::Failed | ToolStatus::Denied => {}
        }
    }
    all
}

pub(crate) fn all_session_statuses() -> Vec<SessionStatus> {
    use SessionStatus::*;
    let all = vec![
        SessionCreated,
        SessionRunning,
        SessionPaused,
        SessionCompleted,
        SessionFailed,
        SessionCancelled,
    ];
    for status in &all {
        match status {
            SessionCreated | SessionRunning | SessionPaused | SessionCompleted | SessionFailed
            | SessionCancelled => {}
        }
    }
    all
}

pub(crate) fn all_task_statuses() -> Vec<TaskStatus> {
    use TaskStatus::*;
    let all = vec![
        Idle,
        TaskRunning,
        WaitingForLlm,
        ProcessingResponse,
        CheckingPolicy,
        WaitingForApproval,
        ExecutingTools,
        TaskCompleted,
        TaskFailed,
        TaskCancelled,
    ];
    for status in &all {
        match status {
            Idle | TaskRunning | WaitingForLlm | ProcessingResponse | CheckingPolicy
            | WaitingForApproval | ExecutingTools | TaskCompleted | TaskFailed | TaskCancelled => {}
        }
    }
    all
}

pub(crate) fn all_severities() -> Vec<Severity> {
    use Severity::*;
    let all = vec![Debug, Info, Warning, Error, Critical];
    for severity in &all {
        match severity {
            Debug | Info | Warning | Error | Critical => {}
        }
    }
    all
}

pub(crate) fn all_approval_modes() -> Vec<ApprovalMode> {
    let all = vec![
        ApprovalMode::Always,
        ApprovalMode::OnRiskyActions,
        ApprovalMode::Never,
    ];
    for mode in &all {
        match mode {
            ApprovalMode::Always | ApprovalMode::OnRiskyActions | ApprovalMode::Never => {}
        }
    }
    all
}

pub(crate) fn all_file_change_statuses() -> Vec<FileChangeStatus> {
    let all = vec![
        FileChangeStatus::Added,
        FileChangeStatus::Modified,
        FileChangeStatus::Deleted,
    ];
    for status in &all {
        match status {
            FileChangeStatus::Added | FileChangeStatus::Modified | FileChangeStatus::Deleted => {}
        }
    }
    all
}

pub(crate) fn all_approve_action_statuses() -> Vec<ApproveActionStatus> {
    use ApproveActionStatus::*;
    let all = vec![
        Accepted,
        NotFound,
        AlreadyResolved,
        Expired,
        InvalidDecision,
    ];
    for status in &all {
        match status {
            Accepted | NotFound | AlreadyResolved | Expired | InvalidDecision => {}
        }
    }
    all
}

pub(crate) fn approval_request(risk_level: RiskLevel) -> ApprovalRequest {
    ApprovalRequest {
        approval_id: "appr_001".into(),
        session_id: "sess_789".into(),
        task_id: "task_001".into(),
        step_id: Some("step_003".into()),
        title: "Local command execution".into(),
        action_summary: "Run: pytest tests/ --verbose".into(),
        risk_level,
        details: json!({"toolName": "Shell.Exec", "command": "pytest tests/ --verbose"}),
    }
}

pub(crate) fn error_shape(code: ErrorCode) -> ErrorShape {
    ErrorShape::new(code, "Something specific went wrong.")
        .with_details(json!({"sessionId": "sess_789"}))
}

/// One body per `EventBody` variant; the match makes a new variant a compile error here.
// One value of every event body: a table, not logic.
#[allow(clippy::too_many_lines)]
pub(crate) fn every_event_body() -> Vec<EventBody> {
    let bodies = vec![
        EventBody::SessionStarted(SessionStarted {
            execution_environment: "desktop".into(),
            policy_bundle_version: "2026-02-21.1".into(),
        }),
        EventBody::SessionCompleted(SessionEnded {
            task_count: 2,
            total_tokens: 1200,
            duration_ms: 90_000,
        }),
        EventBody::SessionCancelled(SessionEnded {
            task_count: 1,
            total_tokens: 300,
            duration_ms: 1_000,
        }),
        EventBody::SessionFailed(events::SessionFailed {
            reason: "resume_failed".into(),
            message: "The session could not be resumed.".into(),
        }),
        EventBody::SessionPaused(SessionPaused {
            reason: "policy_expired".into(),
            message: "The policy expired.".into(),
        }),
        EventBody::SessionResumed(Empty {}),
        EventBody::TaskStarted(TaskStarted {
            prompt: "Fix the tests".into(),
            max_steps: 40,
        }),
        EventBody::TaskCompleted(events::TaskCompleted {
            step_count: 3,
            result: "Done.".into(),
        }),
        EventBody::TaskFailed(events::TaskFailed {
            reason: "max_steps_exceeded".into(),
            message: "The task stopped after 40 steps.".into(),
            error_code: ErrorCode::LlmUnavailable,
            is_recoverable: true,
            step_count: 40,
        }),
        EventBody::TaskCancelled(events::TaskCancelled {
            step_count: 1,
            reason: "user_cancelled".into(),
        }),
        EventBody::StepStarted(StepStarted {
            step_id: "step_003".into(),
            step_number: 3,
            step_count: 2,
        }),
        EventBody::StepCompleted(StepCompleted {
            step_id: "step_003".into(),
            step_count: 3,
        }),
        EventBody::StepLimitApproaching(StepLimitApproaching {
            current_step: 32,
            step_count: 32,
            max_steps: 40,
        }),
        EventBody::TextChunk(TextChunk {
            text: "Hello".into(),
        }),
        EventBody::LlmRequestStarted(LlmRequestStarted {
            model: "gpt-5.2-coder".into(),
            estimated_input_tokens: 1840,
        }),
        EventBody::LlmRequestCompleted(LlmRequestCompleted {
            model: "gpt-5.2-coder".into(),
            input_tokens: 1840,
            output_tokens: 96,
            latency_ms: 2310,
            stop_reason: "tool_use".into(),
        }),
        EventBody::LlmRetry(LlmRetry {
            attempt: 1,
            max_retries: 3,
            reason: "rate_limited".into(),
            delay_ms: 1000,
        }),
        EventBody::LlmResponseDiscarded(LlmResponseDiscarded {
            reason: "partial_stream".into(),
            discarded_chars: 42,
        }),
        EventBody::ToolRequested(ToolRequested {
            tool_call_id: "call_1".into(),
            tool_name: "RunCommand".into(),
            capability: "Shell.Exec".into(),
            arguments: json!({"command": "pytest"}),
        }),
        EventBody::ToolCompleted(ToolCompleted {
            tool_call_id: "call_1".into(),
            tool_name: "RunCommand".into(),
            status: ToolStatus::Failed,
            latency_ms: 5230,
            result: Some("Exit code: 1".into()),
            error: Some("pytest failed".into()),
            error_code: Some(ErrorCode::ToolExecutionFailed),
            artifact_uris: vec!["ws://ws_456/artifacts/art_1".into()],
        }),
        EventBody::ApprovalRequested(approval_request(RiskLevel::Medium)),
        EventBody::ApprovalResolved(ApprovalResolved {
            approval_id: "appr_001".into(),
            decision: Decision::Denied,
            latency_ms: 950,
            reason: Some("Not now".into()),
        }),
        EventBody::ApprovalTimeout(ApprovalTimeout {
            approval_id: "appr_001".into(),
        }),
        EventBody::PolicyExpired(Empty {}),
        EventBody::ContextCompacted(ContextCompacted {
            messages_dropped: 6,
        }),
        EventBody::Warning(Warning {
            code: ErrorCode::WorkspaceUploadFailed,
            message: "The history could not be saved.".into(),
        }),
    ];
    for body in &bodies {
        match body {
            EventBody::SessionStarted(_)
            | EventBody::SessionCompleted(_)
            | EventBody::SessionCancelled(_)
            | EventBody::SessionFailed(_)
            | EventBody::SessionPaused(_)
            | EventBody::SessionResumed(_)
            | EventBody::TaskStarted(_)
            | EventBody::TaskCompleted(_)
            | EventBody::TaskFailed(_)
            | EventBody::TaskCancelled(_)
            | EventBody::StepStarted(_)
            | EventBody::StepCompleted(_)
            | EventBody::StepLimitApproaching(_)
            | EventBody::TextChunk(_)
            | EventBody::LlmRequestStarted(_)
            | EventBody::LlmRequestCompleted(_)
            | EventBody::LlmRetry(_)
            | EventBody::LlmResponseDiscarded(_)
            | EventBody::ToolRequested(_)
            | EventBody::ToolCompleted(_)
            | EventBody::ApprovalRequested(_)
            | EventBody::ApprovalResolved(_)
            | EventBody::ApprovalTimeout(_)
            | EventBody::PolicyExpired(_)
            | EventBody::ContextCompacted(_)
            | EventBody::Warning(_) => {}
        }
    }
    bodies
}

/// An event with the full ID chain (every event type accepts it).
pub(crate) fn event(event_id: u64, body: EventBody) -> SessionEvent {
    SessionEvent {
        event_id,
        timestamp: T.into(),
        session_id: "sess_789".into(),
        workspace_id: Some("ws_456".into()),
        task_id: Some("task_001".into()),
        step_id: Some("step_003".into()),
        body,
    }
}

pub(crate) fn policy_bundle() -> PolicyBundle {
    PolicyBundle {
        policy_bundle_version: "2026-11-22.492b7fde".into(),
        schema_version: "1.0".into(),
        tenant_id: Some("tenant_abc".into()),
        user_id: Some("user_123".into()),
        session_id: "sess_789".into(),
        expires_at: "2026-11-22T18:30:00.123456Z".into(),
        capabilities: vec![
            CapabilityEntry {
                name: "File.Read".into(),
                allowed_paths: Some(vec![".".into()]),
                blocked_paths: Some(vec![".env".into(), ".git/".into()]),
                max_file_size_bytes: Some(1_048_576),
                ..CapabilityEntry::default()
            },
            CapabilityEntry {
                name: "Shell.Exec".into(),
                allowed_commands: Some(vec!["git".into(), "pytest".into()]),
                blocked_commands: Some(vec!["rm -rf /".into(), "sudo".into()]),
                max_output_bytes: Some(102_400),
                requires_approval: true,
                approval_rule_id: Some("approval_shell_exec".into()),
                ..CapabilityEntry::default()
            },
            CapabilityEntry {
                name: "Network.Http".into(),
                allowed_domains: Some(vec!["pypi.org".into()]),
                blocked_domains: Some(vec!["10.*".into()]),
                ..CapabilityEntry::default()
            },
            CapabilityEntry {
                name: "BackendTool.Invoke".into(),
                allowed_tool_names: Some(vec!["WebSearch".into()]),
                ..CapabilityEntry::default()
            },
        ],
        llm_policy: LlmPolicy {
            allowed_models: vec!["gpt-5.2-coder".into()],
            max_input_tokens: Some(64_000),
            max_output_tokens: Some(4_000),
            max_session_tokens: Some(250_000),
            redaction_rules: vec![RedactionRule {
                kind: "ticket".into(),
                pattern: r"\bTCK-[0-9]{6}\b".into(),
            }],
        },
        approval_rules: vec![ApprovalRule {
            approval_rule_id: "approval_shell_exec".into(),
            title: Some("Local command execution".into()),
            description: Some("User approval required for shell commands".into()),
        }],
    }
}

pub(crate) fn session_ready() -> SessionReadyResult {
    SessionReadyResult {
        session_id: "sess_789".into(),
        workspace_id: "ws_456".into(),
        name: Some("demo".into()),
        log_dir: Some("/tmp/logs".into()),
        status: SessionStatus::SessionRunning,
        compatibility_status: "compatible".into(),
        policy_bundle_version: "2026-02-21.1".into(),
        feature_flags: object(json!({"mcp": true})),
        continued_from_session_id: Some("sess_123".into()),
    }
}

pub(crate) fn tool_request() -> ToolRequest {
    ToolRequest {
        tool_name: "RunCommand".into(),
        arguments: object(json!({"command": "pytest"})),
        session_id: "sess_789".into(),
        task_id: "task_001".into(),
        step_id: "step_004".into(),
        capability: Some("Shell.Exec".into()),
        tool_call_id: Some("call_7".into()),
        workspace_root: Some("/work/demo".into()),
        limits: ToolLimits {
            max_file_size_bytes: Some(1_048_576),
            max_output_bytes: Some(102_400),
            timeout_ms: Some(300_000),
            ..Default::default()
        },
        granted_paths: None,
        blocked_paths: None,
        sandbox: Some(agent_protocol::sandbox::SandboxGrant {
            write_paths: vec!["/work/demo".into()],
            hidden_paths: vec!["/work/demo/.env".into()],
            blocked_paths: vec!["/work/demo/.git".into()],
            network: false,
        }),
    }
}

pub(crate) fn history_upload() -> ArtifactUploadRequest {
    ArtifactUploadRequest {
        session_id: "sess_789".into(),
        task_id: Some("task_003".into()),
        step_id: None,
        artifact_type: "session_history".into(),
        artifact_name: "session_history.json".into(),
        content_type: "application/json".into(),
        content_base64: None,
        messages: Some(all_roles().into_iter().map(message).collect()),
        snapshot_after_task_id: Some("task_003".into()),
        snapshot_at: Some(T.into()),
        metadata: Map::new(),
    }
}
