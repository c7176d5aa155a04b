//! 2. The Rust side accepts what the schemas allow.

use super::*;

pub(crate) type Parse = fn(&Value) -> Result<Value, String>;

/// Deserializes into `T` and serializes again.
pub(crate) fn parse<T: DeserializeOwned + Serialize>(value: &Value) -> Result<Value, String> {
    let parsed: T = serde_json::from_value(value.clone()).map_err(|e| e.to_string())?;
    serde_json::to_value(parsed).map_err(|e| e.to_string())
}

/// A payload, through `EventBody` (the eventType tag selects the Rust struct).
pub(crate) fn parse_payload(event_type: &str, value: &Value) -> Result<Value, String> {
    let tagged = json!({"eventType": event_type, "payload": value});
    let body: EventBody = serde_json::from_value(tagged).map_err(|e| e.to_string())?;
    if body.event_type() != event_type {
        return Err(format!("parsed as {}", body.event_type()));
    }
    let json = serde_json::to_value(body).map_err(|e| e.to_string())?;
    Ok(json["payload"].clone())
}

/// A `SessionEvent` notification is what the runtime emits (`Notification<SessionEvent>`);
/// any other notification can only come from the peer, and is read as a `Request` without id.
pub(crate) fn parse_notification(value: &Value) -> Result<Value, String> {
    if value["method"] == events::METHOD {
        parse::<Notification<SessionEvent>>(value)
    } else {
        parse::<Request>(value)
    }
}

/// Schema name -> Rust type. `events/payloads/*` go through `EventBody`.
pub(crate) const MAPPED: &[(&str, Parse)] = &[
    ("approval/ApprovalRequest", parse::<ApprovalRequest>),
    ("artifacts/SessionHistory", parse::<ArtifactUploadRequest>),
    ("audit/AuditEvent", parse::<AuditEvent>),
    ("audit/AuditEventBatch", parse::<AuditEventBatch>),
    ("checkpoint/Checkpoint", parse::<Checkpoint>),
    ("error/ErrorShape", parse::<ErrorShape>),
    ("events/SessionEvent", parse::<SessionEvent>),
    ("jsonrpc/Notification", parse_notification),
    ("jsonrpc/Request", parse::<Request>),
    ("jsonrpc/Response", parse::<Response>),
    ("message/ConversationMessage", parse::<ConversationMessage>),
    ("methods/ApproveAction.params", parse::<ApproveActionParams>),
    ("methods/ApproveAction.result", parse::<ApproveActionResult>),
    ("methods/CancelTask.params", parse::<CancelTaskParams>),
    ("methods/CancelTask.result", parse::<CancelTaskResult>),
    ("methods/CreateSession.params", parse::<CreateSessionParams>),
    ("methods/CreateSession.result", parse::<SessionReadyResult>),
    ("methods/GetEvents.params", parse::<GetEventsParams>),
    ("methods/GetEvents.result", parse::<GetEventsResult>),
    (
        "methods/GetPatchPreview.params",
        parse::<GetPatchPreviewParams>,
    ),
    (
        "methods/GetPatchPreview.result",
        parse::<PatchPreviewResult>,
    ),
    (
        "methods/GetSessionState.params",
        parse::<GetSessionStateParams>,
    ),
    (
        "methods/GetSessionState.result",
        parse::<SessionStateResult>,
    ),
    ("methods/ResumeSession.params", parse::<ResumeSessionParams>),
    ("methods/ResumeSession.result", parse::<SessionReadyResult>),
    ("methods/Shutdown.result", parse::<ShutdownResult>),
    ("methods/StartTask.params", parse::<StartTaskParams>),
    ("methods/StartTask.result", parse::<StartTaskResult>),
    (
        "methods/workspace.sync.params",
        parse::<WorkspaceSyncParams>,
    ),
    (
        "methods/workspace.sync.result",
        parse::<WorkspaceSyncResult>,
    ),
    ("policy/PolicyBundle", parse::<PolicyBundle>),
    (
        "services/approval/ApprovalDecisionRecord",
        parse::<ApprovalDecisionRecord>,
    ),
    (
        "services/session/CancelSessionRequest",
        parse::<CancelSessionRequest>,
    ),
    (
        "services/session/CreateSessionRequest",
        parse::<CreateSessionRequest>,
    ),
    (
        "services/session/CreateSessionResponse",
        parse::<CreateSessionResponse>,
    ),
    (
        "services/session/ResumeSessionRequest",
        parse::<ResumeSessionRequest>,
    ),
    (
        "services/session/SandboxRegistrationRequest",
        parse::<SandboxRegistrationRequest>,
    ),
    (
        "services/session/SandboxRegistrationResponse",
        parse::<SandboxRegistrationResponse>,
    ),
    (
        "services/session/ResumeSessionResponse",
        parse::<ResumeSessionResponse>,
    ),
    (
        "services/workspace/ArtifactUploadRequest",
        parse::<ArtifactUploadRequest>,
    ),
    (
        "services/workspace/ArtifactUploadResponse",
        parse::<ArtifactUploadResponse>,
    ),
    ("state/SessionStatus", parse::<SessionStatus>),
    ("state/TaskStatus", parse::<TaskStatus>),
    ("tool/ToolDefinition", parse::<ToolDefinition>),
    ("tool/ToolRequest", parse::<ToolRequest>),
    ("tool/ToolResult", parse::<ToolResult>),
];

/// Schemas with no Rust type of their own, and why.
pub(crate) const UNMAPPED: &[(&str, &str)] = &[
    (
        "methods/Shutdown.params",
        "Shutdown has no params type: the runtime ignores them (the app sends none)",
    ),
    // INTEROP.md §11: a tool reads its own arguments from `ToolRequest.arguments`; the tool
    // runtime's tests hold each schema equal to the tool's offered `inputSchema`.
    ("tool/arguments/ExecuteCode", TOOL_ARGUMENTS),
    ("tool/arguments/FetchUrl", TOOL_ARGUMENTS),
    ("tool/arguments/WebSearch", TOOL_ARGUMENTS),
];

pub(crate) const TOOL_ARGUMENTS: &str = "a tool's arguments, read by the tool from ToolRequest.arguments (agent-tools' router tests hold the schema to its inputSchema)";

pub(crate) fn examples_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../schemas/examples")
}

pub(crate) fn valid_examples(name: &str) -> Vec<(String, Value)> {
    let dir = examples_dir().join(name);
    let mut found = Vec::new();
    for entry in fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.unwrap().path();
        let file = path.file_name().unwrap().to_string_lossy().into_owned();
        if file.starts_with("valid") && file.ends_with(".json") {
            let value = serde_json::from_str(&fs::read_to_string(&path).unwrap()).unwrap();
            found.push((file, value));
        }
    }
    found.sort_by(|a, b| a.0.cmp(&b.0));
    found
}

#[test]
pub(crate) fn every_schema_is_mapped_to_a_rust_type_or_listed_as_unmapped() {
    let mapped: BTreeSet<&str> = MAPPED.iter().map(|(name, _)| *name).collect();
    let unmapped: BTreeSet<&str> = UNMAPPED.iter().map(|(name, _)| *name).collect();
    for name in agent_schemas::names() {
        let covered = mapped.contains(name)
            || unmapped.contains(name)
            || name.starts_with("events/payloads/")
            // A tool's arguments have no Rust type: the tool runtime's tests hold each
            // schema equal to the tool's offered inputSchema.
            || name.starts_with("tool/arguments/");
        assert!(
            covered,
            "{name}: map it to a Rust type in MAPPED, or list it in UNMAPPED"
        );
    }
    for name in mapped.iter().chain(&unmapped) {
        assert!(
            agent_schemas::schema(name).is_some(),
            "{name} is not a schema"
        );
    }
}

#[test]
pub(crate) fn every_valid_example_deserializes_into_its_rust_type_and_round_trips() {
    let mut failures = Vec::new();
    let mut count = 0;
    let mut run = |name: &str, parse: &dyn Fn(&Value) -> Result<Value, String>| {
        let examples = valid_examples(name);
        assert!(!examples.is_empty(), "{name} has no valid example");
        for (file, example) in examples {
            count += 1;
            match parse(&example) {
                Err(e) => failures.push(format!("examples/{name}/{file}: Rust rejects it: {e}")),
                Ok(again) => {
                    if let Err(e) = agent_schemas::validate(name, &again) {
                        failures.push(format!(
                            "examples/{name}/{file}: re-serialized by Rust it {e}"
                        ));
                    }
                }
            }
        }
    };
    for (name, parse) in MAPPED {
        run(name, parse);
    }
    for event_type in EventBody::TYPES {
        let name = format!("events/payloads/{event_type}");
        run(&name, &|value: &Value| parse_payload(event_type, value));
    }
    assert!(failures.is_empty(), "{failures:#?}");
    assert!(count > 100, "only {count} examples");
}

/// Fields the schemas leave optional (only the reference runtime emits them) but the Rust
/// types keep as plain values: a message parsed without them serializes without inventing a
/// value the schema rejects (an empty `reason`, `maxSteps: 0`, an empty error code).
#[test]
pub(crate) fn optional_fields_parsed_absent_are_left_out_again() {
    let payloads = [
        ("task_started", json!({"prompt": "p"}), &["maxSteps"][..]),
        (
            "task_failed",
            json!({"message": "m", "errorCode": "LLM_UNAVAILABLE", "isRecoverable": false}),
            &["reason"][..],
        ),
        ("task_cancelled", json!({}), &["reason"][..]),
        (
            "session_started",
            json!({"executionEnvironment": "desktop"}),
            &["policyBundleVersion"][..],
        ),
        ("session_paused", json!({}), &["reason", "message"][..]),
        (
            "llm_retry",
            json!({"attempt": 1, "maxRetries": 3}),
            &["reason"][..],
        ),
        ("llm_response_discarded", json!({}), &["reason"][..]),
        (
            "llm_request_completed",
            json!({"model": "m", "inputTokens": 1, "outputTokens": 1, "latencyMs": 1}),
            &["stopReason"][..],
        ),
        ("warning", json!({}), &["code", "message"][..]),
    ];
    for (event_type, payload, absent) in payloads {
        let again =
            parse_payload(event_type, &payload).unwrap_or_else(|e| panic!("{event_type}: {e}"));
        for key in absent {
            assert!(
                again.get(*key).is_none(),
                "{event_type}: {key} invented: {again}"
            );
        }
        agent_schemas::validate(&format!("events/payloads/{event_type}"), &again)
            .unwrap_or_else(|e| panic!("{e}"));
    }
    assert_eq!(parse::<ShutdownResult>(&json!({})).unwrap(), json!({}));
    assert_eq!(parse::<CancelTaskResult>(&json!({})).unwrap(), json!({}));
    assert_eq!(
        parse::<ApproveActionResult>(&json!({"status": "not_found"})).unwrap(),
        json!({"status": "not_found"})
    );
    let history = json!({"sessionId": "s", "artifactType": "session_history", "messages": []});
    let again = parse::<ArtifactUploadRequest>(&history).unwrap();
    assert!(
        again.get("artifactName").is_none() && again.get("contentType").is_none(),
        "{again}"
    );
    agent_schemas::validate(
        "artifacts/SessionHistory",
        &json!({"snapshotAfterTaskId": "t",
        "snapshotAt": T, "sessionId": "s", "artifactType": "session_history", "messages": []}),
    )
    .unwrap();
}

// ------------------------------------------------------------------------------------------
