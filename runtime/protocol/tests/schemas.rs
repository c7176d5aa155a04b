//! Drift tests: the Rust types of this crate against `schemas/`, the source of truth.
//!
//! 1. A representative value of every type (every `EventBody` variant, every enum variant) is
//!    serialized and validated against its schema, and every object key it carries must be
//!    declared by the schema (so a renamed optional field is caught too, even where the schema
//!    allows extra fields).
//! 2. Every valid example of a schema that maps to a Rust type deserializes into that type, and
//!    serializing it again still satisfies the schema.
//! 3. The schema enums equal the Rust enums.

// Test code: a panic is the failure report (clippy's in-test allowance does not reach the
// helpers of an integration-test crate).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

use agent_protocol::approval::{ApprovalRequest, Decision, RiskLevel};
use agent_protocol::audit::{AuditEvent, AuditEventBatch, Severity};
use agent_protocol::checkpoint::{CHECKPOINT_VERSION, Checkpoint, CheckpointTask};
use agent_protocol::error::{ErrorCode, ErrorShape};
use agent_protocol::events::{self, *};
use agent_protocol::jsonrpc::{self, ErrorObject, Id, Notification, Request, Response};
use agent_protocol::message::{ConversationMessage, MessageToolCall, Role};
use agent_protocol::methods::{self, *};
use agent_protocol::policy::{
    ApprovalRule, CapabilityEntry, LlmPolicy, PolicyBundle, RedactionRule,
};
use agent_protocol::services::*;
use agent_protocol::state::{SessionStatus, TaskStatus};
use agent_protocol::tool::{
    ArtifactData, FileChange, ToolDefinition, ToolError, ToolLimits, ToolRequest, ToolResult,
    ToolStatus,
};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};

const T: &str = "2026-02-21T15:04:22Z";

// ------------------------------------------------------------------------------------------
// Helpers
// ------------------------------------------------------------------------------------------

/// Serializes `value`, validates it against `schema`, checks that every key is declared, and
/// returns the JSON.
fn check<T: Serialize>(schema: &str, value: &T) -> Value {
    let json = serde_json::to_value(value).unwrap();
    if let Err(error) = agent_schemas::validate(schema, &json) {
        panic!("{schema}: {error}\n{json:#}");
    }
    let undeclared = undeclared_keys(schema, &json);
    assert!(
        undeclared.is_empty(),
        "{schema}: keys the schema does not declare (a renamed field?): {undeclared:?}\n{json:#}"
    );
    json
}

fn check_event(event: &SessionEvent) -> Value {
    let json = check("events/SessionEvent", event);
    agent_schemas::validate_session_event(&json).unwrap_or_else(|e| panic!("{e}"));
    let payload_schema = format!("events/payloads/{}", event.event_type());
    check(&payload_schema, &json["payload"]);
    json
}

/// A `$ref` target: the document name and the node.
fn resolve(document: &str, reference: &str) -> (String, &'static Value) {
    let (path, fragment) = reference.split_once('#').unwrap_or((reference, ""));
    let name = if path.is_empty() {
        document.to_owned()
    } else {
        let mut parts: Vec<&str> = document.split('/').collect();
        parts.pop();
        for segment in path.trim_end_matches(".json").split('/') {
            match segment {
                ".." => {
                    parts.pop();
                }
                "." => {}
                other => parts.push(other),
            }
        }
        parts.join("/")
    };
    let root = agent_schemas::schema(&name).unwrap_or_else(|| panic!("no schema {name}"));
    let node = root
        .pointer(fragment)
        .unwrap_or_else(|| panic!("{name} has no {fragment}"));
    (name, node)
}

/// Whether an `if` subschema of the simple forms used in `schemas/` holds for `instance`;
/// `None` when the form is not understood (both branches then count).
fn simple_if(condition: &Value, instance: &Value) -> Option<bool> {
    let mut holds = true;
    for (keyword, argument) in condition.as_object()? {
        match keyword.as_str() {
            "required" => {
                for key in argument.as_array()? {
                    holds &= instance.get(key.as_str()?).is_some();
                }
            }
            "properties" => {
                for (key, rule) in argument.as_object()? {
                    let expected = rule.get("const")?;
                    if let Some(actual) = instance.get(key) {
                        holds &= actual == expected;
                    }
                }
            }
            "type" if argument == "null" => holds &= instance.is_null(),
            _ => return None,
        }
    }
    Some(holds)
}

#[derive(Default)]
struct Gathered {
    /// Some node declares `properties`.
    closed: bool,
    /// Some node declares arbitrary keys as expected (`additionalProperties: true` or a
    /// schema, `patternProperties`).
    open: bool,
    properties: BTreeMap<String, Vec<(String, &'static Value)>>,
    items: Vec<(String, &'static Value)>,
}

fn gather(document: &str, node: &'static Value, instance: &Value, into: &mut Gathered) {
    let Some(map) = node.as_object() else {
        return;
    };
    if let Some(Value::String(reference)) = map.get("$ref") {
        let (target, target_node) = resolve(document, reference);
        gather(&target, target_node, instance, into);
    }
    if let Some(Value::Object(properties)) = map.get("properties") {
        into.closed = true;
        for (key, subschema) in properties {
            into.properties
                .entry(key.clone())
                .or_default()
                .push((document.to_owned(), subschema));
        }
    }
    // `additionalProperties: true` spelled out, or a schema for extra keys, marks a free-form
    // map; a mere absence of `additionalProperties` does not (the key check is stricter than
    // validation on purpose).
    if map
        .get("additionalProperties")
        .is_some_and(|extra| extra.is_object() || extra == &Value::Bool(true))
        || map.contains_key("patternProperties")
    {
        into.open = true;
    }
    if let Some(items) = map.get("items") {
        into.items.push((document.to_owned(), items));
    }
    for keyword in ["allOf", "anyOf", "oneOf"] {
        if let Some(Value::Array(branches)) = map.get(keyword) {
            for branch in branches {
                gather(document, branch, instance, into);
            }
        }
    }
    if let Some(condition) = map.get("if") {
        let holds = simple_if(condition, instance);
        if holds != Some(false)
            && let Some(then) = map.get("then")
        {
            gather(document, then, instance, into);
        }
        if holds != Some(true)
            && let Some(otherwise) = map.get("else")
        {
            gather(document, otherwise, instance, into);
        }
    }
}

fn undeclared_walk(
    nodes: &[(String, &'static Value)],
    instance: &Value,
    pointer: &str,
    out: &mut Vec<String>,
) {
    let mut gathered = Gathered::default();
    for (document, node) in nodes {
        gather(document, node, instance, &mut gathered);
    }
    match instance {
        Value::Object(map) => {
            for (key, value) in map {
                let child = format!("{pointer}/{key}");
                match gathered.properties.get(key) {
                    Some(subschemas) => undeclared_walk(subschemas, value, &child, out),
                    None if gathered.closed && !gathered.open => out.push(child),
                    None => {}
                }
            }
        }
        Value::Array(items) if !gathered.items.is_empty() => {
            for (index, item) in items.iter().enumerate() {
                undeclared_walk(&gathered.items, item, &format!("{pointer}/{index}"), out);
            }
        }
        _ => {}
    }
}

fn undeclared_keys(schema: &str, instance: &Value) -> Vec<String> {
    let root = agent_schemas::schema(schema).unwrap_or_else(|| panic!("no schema {schema}"));
    let mut out = Vec::new();
    undeclared_walk(&[(schema.to_owned(), root)], instance, "", &mut out);
    out
}

fn schema_enum(schema: &str, pointer: &str) -> BTreeSet<String> {
    let node = agent_schemas::schema(schema)
        .and_then(|root| root.pointer(pointer))
        .unwrap_or_else(|| panic!("{schema}#{pointer}"));
    let node = match node.get("$ref") {
        Some(Value::String(reference)) => resolve(schema, reference).1,
        _ => node,
    };
    node["enum"]
        .as_array()
        .unwrap_or_else(|| panic!("{schema}#{pointer} has no enum"))
        .iter()
        // A nullable enum lists `null` too; it is not a variant.
        .filter_map(|v| v.as_str().map(str::to_owned))
        .collect()
}

fn serialized<T: Serialize>(values: &[T]) -> BTreeSet<String> {
    values
        .iter()
        .map(|v| {
            serde_json::to_value(v)
                .unwrap()
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect()
}

fn object(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        other => panic!("not an object: {other}"),
    }
}

// ------------------------------------------------------------------------------------------
// Representative values
// ------------------------------------------------------------------------------------------

fn message(role: Role) -> ConversationMessage {
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

fn all_roles() -> Vec<Role> {
    let all = vec![Role::System, Role::User, Role::Assistant, Role::Tool];
    for role in &all {
        match role {
            Role::System | Role::User | Role::Assistant | Role::Tool => {}
        }
    }
    all
}

fn all_risk_levels() -> Vec<RiskLevel> {
    let all = vec![RiskLevel::Low, RiskLevel::Medium, RiskLevel::High];
    for level in &all {
        match level {
            RiskLevel::Low | RiskLevel::Medium | RiskLevel::High => {}
        }
    }
    all
}

fn all_decisions() -> Vec<Decision> {
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

fn all_tool_statuses() -> Vec<ToolStatus> {
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

fn all_session_statuses() -> Vec<SessionStatus> {
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

fn all_task_statuses() -> Vec<TaskStatus> {
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

fn all_severities() -> Vec<Severity> {
    use Severity::*;
    let all = vec![Debug, Info, Warning, Error, Critical];
    for severity in &all {
        match severity {
            Debug | Info | Warning | Error | Critical => {}
        }
    }
    all
}

fn all_approval_modes() -> Vec<ApprovalMode> {
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

fn all_file_change_statuses() -> Vec<FileChangeStatus> {
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

fn all_approve_action_statuses() -> Vec<ApproveActionStatus> {
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

fn approval_request(risk_level: RiskLevel) -> ApprovalRequest {
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

fn error_shape(code: ErrorCode) -> ErrorShape {
    ErrorShape::new(code, "Something specific went wrong.")
        .with_details(json!({"sessionId": "sess_789"}))
}

/// One body per `EventBody` variant; the match makes a new variant a compile error here.
fn every_event_body() -> Vec<EventBody> {
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
fn event(event_id: u64, body: EventBody) -> SessionEvent {
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

fn policy_bundle() -> PolicyBundle {
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

fn session_ready() -> SessionReadyResult {
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

fn tool_request() -> ToolRequest {
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

fn history_upload() -> ArtifactUploadRequest {
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

// ------------------------------------------------------------------------------------------
// 1. Rust values satisfy their schemas
// ------------------------------------------------------------------------------------------

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

#[test]
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

// ------------------------------------------------------------------------------------------
// 2. The Rust side accepts what the schemas allow
// ------------------------------------------------------------------------------------------

type Parse = fn(&Value) -> Result<Value, String>;

/// Deserializes into `T` and serializes again.
fn parse<T: DeserializeOwned + Serialize>(value: &Value) -> Result<Value, String> {
    let parsed: T = serde_json::from_value(value.clone()).map_err(|e| e.to_string())?;
    serde_json::to_value(parsed).map_err(|e| e.to_string())
}

/// A payload, through `EventBody` (the eventType tag selects the Rust struct).
fn parse_payload(event_type: &str, value: &Value) -> Result<Value, String> {
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
fn parse_notification(value: &Value) -> Result<Value, String> {
    if value["method"] == events::METHOD {
        parse::<Notification<SessionEvent>>(value)
    } else {
        parse::<Request>(value)
    }
}

/// Schema name -> Rust type. `events/payloads/*` go through `EventBody`.
const MAPPED: &[(&str, Parse)] = &[
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
const UNMAPPED: &[(&str, &str)] = &[
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

const TOOL_ARGUMENTS: &str = "a tool's arguments, read by the tool from ToolRequest.arguments (agent-tools' router tests hold the schema to its inputSchema)";

fn examples_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../schemas/examples")
}

fn valid_examples(name: &str) -> Vec<(String, Value)> {
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
fn every_schema_is_mapped_to_a_rust_type_or_listed_as_unmapped() {
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
fn every_valid_example_deserializes_into_its_rust_type_and_round_trips() {
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
fn optional_fields_parsed_absent_are_left_out_again() {
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
// 3. Enums
// ------------------------------------------------------------------------------------------

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
