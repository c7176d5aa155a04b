//! 1. Rust values satisfy their schemas: JSON-RPC envelopes, method params and results.

use super::*;

#[test]
fn jsonrpc_envelopes_satisfy_their_schemas() {
    check(
        "jsonrpc/Request",
        &Request::new(1, methods::SHUTDOWN, json!({})),
    );
    check(
        "jsonrpc/Request",
        &Request::new(
            "req_1",
            methods::GET_SESSION_STATE,
            json!({"sessionId": "s"}),
        ),
    );
    let ready = serde_json::to_value(session_ready()).unwrap();
    for id in [Some(Id::from(7)), Some(Id::from("req_7")), None] {
        let response = check(
            "jsonrpc/Response",
            &Response::success(id.clone(), ready.clone()),
        );
        agent_schemas::validate_response(Some(methods::CREATE_SESSION), &response).unwrap();
        let failure = Response::failure(
            id,
            ErrorObject {
                code: jsonrpc::codes::SERVER_ERROR,
                message: "Session sess_1 was not found.".into(),
                data: Some(error_shape(ErrorCode::SessionNotFound)),
            },
        );
        check("jsonrpc/Response", &failure);
    }
    for code in [
        jsonrpc::codes::PARSE_ERROR,
        jsonrpc::codes::INVALID_REQUEST,
        jsonrpc::codes::METHOD_NOT_FOUND,
        jsonrpc::codes::INVALID_PARAMS,
        jsonrpc::codes::INTERNAL_ERROR,
    ] {
        check(
            "jsonrpc/Response",
            &Response::failure(
                None,
                ErrorObject {
                    code,
                    message: "Parse error.".into(),
                    data: None,
                },
            ),
        );
    }
}

#[test]
fn method_params_satisfy_their_schemas() {
    let create = CreateSessionParams {
        user_id: "user_123".into(),
        tenant_id: "tenant_abc".into(),
        execution_environment: "desktop".into(),
        workspace_hint: Some(WorkspaceHint {
            local_paths: vec!["/work/demo".into()],
        }),
        client_info: Some(ClientInfo {
            desktop_app_version: Some("1.0.0".into()),
            local_agent_host_version: Some("1.0.0".into()),
            os_family: Some("macOS".into()),
            os_version: Some("14.6".into()),
        }),
        supported_capabilities: vec!["File.Read".into()],
        continue_from_session_id: Some("sess_456".into()),
    };
    check("methods/CreateSession.params", &create);
    for approval_mode in all_approval_modes().into_iter().map(Some).chain([None]) {
        check(
            "methods/StartTask.params",
            &StartTaskParams {
                session_id: "sess_789".into(),
                task_id: Some("task_001".into()),
                prompt: "Fix the tests".into(),
                task_options: Some(TaskOptions {
                    max_steps: Some(40),
                    allow_network: Some(true),
                    approval_mode,
                }),
            },
        );
    }
    check(
        "methods/StartTask.params",
        &StartTaskParams {
            session_id: "sess_789".into(),
            task_id: None,
            prompt: "Hi".into(),
            task_options: None,
        },
    );
    for task_id in [Some("task_001".to_owned()), None] {
        check(
            "methods/CancelTask.params",
            &CancelTaskParams {
                session_id: "sess_789".into(),
                task_id,
            },
        );
    }
    check(
        "methods/ResumeSession.params",
        &ResumeSessionParams {
            session_id: "sess_789".into(),
        },
    );
    check(
        "methods/GetSessionState.params",
        &GetSessionStateParams::default(),
    );
    check(
        "methods/GetSessionState.params",
        &GetSessionStateParams {
            session_id: Some("sess_789".into()),
        },
    );
    check(
        "methods/GetPatchPreview.params",
        &GetPatchPreviewParams {
            session_id: "sess_789".into(),
            task_id: "task_001".into(),
        },
    );
    // The app decides approved or denied; timed_out and cancelled are the runtime's own.
    for decision in [Decision::Approved, Decision::Denied] {
        check(
            "methods/ApproveAction.params",
            &ApproveActionParams {
                session_id: Some("sess_789".into()),
                approval_id: "appr_001".into(),
                decision,
                reason: Some("ok".into()),
            },
        );
    }
    check("methods/GetEvents.params", &GetEventsParams::default());
    check(
        "methods/GetEvents.params",
        &GetEventsParams { since_id: Some(12) },
    );
    agent_schemas::validate_params(methods::SHUTDOWN, &json!({})).unwrap();
}

#[test]
fn method_results_satisfy_their_schemas() {
    check("methods/CreateSession.result", &session_ready());
    check("methods/ResumeSession.result", &session_ready());
    let mut minimal = session_ready();
    minimal.name = None;
    minimal.log_dir = None;
    minimal.feature_flags = Map::new();
    check("methods/CreateSession.result", &minimal);
    check(
        "methods/StartTask.result",
        &StartTaskResult {
            task_id: "task_001".into(),
            status: "running".into(),
        },
    );
    check(
        "methods/CancelTask.result",
        &CancelTaskResult {
            task_id: "task_001".into(),
            status: "cancelling".into(),
        },
    );
    for (index, status) in all_task_statuses().into_iter().enumerate() {
        let busy = SessionStateResult {
            session_id: Some("sess_789".into()),
            workspace_id: Some("ws_456".into()),
            session_status: SessionStatus::SessionRunning,
            task: Some(TaskState {
                task_id: "task_001".into(),
                status,
                step_count: index as u32,
                max_steps: 40,
            }),
            status: SessionStatus::SessionRunning,
            current_task_id: Some("task_001".into()),
            step_count: index as u32,
            session_tokens_used: 12_540,
            max_session_tokens: Some(250_000),
            incomplete_task: None,
            sandbox: Some(agent_protocol::sandbox::SandboxStatus {
                mode: agent_protocol::sandbox::SandboxMode::BestEffort,
                enforced: true,
                mechanism: "landlock+seccomp".into(),
                detail: "confined".into(),
            }),
        };
        check("methods/GetSessionState.result", &busy);
    }
    for status in all_session_statuses() {
        let idle = SessionStateResult {
            session_id: None,
            workspace_id: None,
            session_status: status,
            task: None,
            status,
            current_task_id: None,
            step_count: 0,
            session_tokens_used: 0,
            max_session_tokens: None,
            incomplete_task: Some(IncompleteTask {
                task_id: "task_001".into(),
                prompt: "Fix the tests".into(),
                last_step: 3,
                max_steps: 40,
            }),
            sandbox: None,
        };
        check("methods/GetSessionState.result", &idle);
    }
    check(
        "methods/GetPatchPreview.result",
        &PatchPreviewResult {
            task_id: "task_001".into(),
            files: all_file_change_statuses()
                .into_iter()
                .map(|status| FilePatch {
                    file_path: format!("/work/demo/{status:?}.py"),
                    status,
                    hunks: "@@ -1 +1 @@\n-a\n+b\n".into(),
                })
                .collect(),
        },
    );
    for status in all_approve_action_statuses() {
        check(
            "methods/ApproveAction.result",
            &ApproveActionResult {
                approval_id: "appr_001".into(),
                status,
            },
        );
    }
    check(
        "methods/Shutdown.result",
        &ShutdownResult {
            status: "shutting_down".into(),
        },
    );
    let events: Vec<SessionEvent> = every_event_body()
        .into_iter()
        .enumerate()
        .map(|(index, body)| event(index as u64 + 1, body))
        .collect();
    let latest_id = events.len() as u64;
    check(
        "methods/GetEvents.result",
        &GetEventsResult {
            events,
            gap_detected: false,
            latest_id,
        },
    );
    check(
        "methods/GetEvents.result",
        &GetEventsResult {
            events: Vec::new(),
            gap_detected: true,
            latest_id: 0,
        },
    );
}
