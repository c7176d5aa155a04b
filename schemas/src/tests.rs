//! The embedded set against the files on disk, every schema against its examples, and the
//! public API.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::*;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn read_json(path: &Path) -> Value {
    let text = fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{} is not JSON: {e}", path.display()))
}

/// `(name, path)` of every `*.json` under `dir`, the name being relative to `dir`, without
/// `.json`; top-level directories in `skip` are left out.
fn json_files(dir: &Path, skip: &[&str]) -> BTreeMap<String, PathBuf> {
    fn walk(root: &Path, dir: &Path, skip: &[&str], out: &mut BTreeMap<String, PathBuf>) {
        for entry in fs::read_dir(dir).unwrap() {
            let entry = entry.unwrap();
            let path = entry.path();
            let file_name = entry.file_name().to_string_lossy().into_owned();
            if file_name.starts_with('.') {
                continue;
            }
            if path.is_dir() {
                if dir == root && skip.contains(&file_name.as_str()) {
                    continue;
                }
                walk(root, &path, skip, out);
            } else if let Some(stem) = file_name.strip_suffix(".json") {
                let relative = path.parent().unwrap().strip_prefix(root).unwrap();
                let mut parts: Vec<String> = relative
                    .components()
                    .map(|c| c.as_os_str().to_string_lossy().into_owned())
                    .collect();
                parts.push(stem.to_owned());
                out.insert(parts.join("/"), path);
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, skip, &mut out);
    out
}

/// Example files grouped by schema name: `examples/<name>/{valid,invalid}-*.json`.
fn examples() -> BTreeMap<String, Vec<(String, PathBuf)>> {
    let mut grouped: BTreeMap<String, Vec<(String, PathBuf)>> = BTreeMap::new();
    for (relative, path) in json_files(&root().join("examples"), &[]) {
        let (name, file) = relative
            .rsplit_once('/')
            .expect("examples/<name>/<file>.json");
        grouped
            .entry(name.to_owned())
            .or_default()
            .push((file.to_owned(), path));
    }
    grouped
}

#[test]
fn names_match_the_files_on_disk_and_the_embedded_contents_are_current() {
    let on_disk = json_files(&root(), &["examples", "src", "tests", "target"]);
    let embedded: Vec<&str> = names().collect();
    assert_eq!(
        embedded,
        on_disk.keys().map(String::as_str).collect::<Vec<_>>(),
        "the embedded schema set is stale: rebuild agent-schemas"
    );
    for (name, path) in &on_disk {
        assert_eq!(
            schema(name),
            Some(&read_json(path)),
            "{name}: the embedded copy differs from {}",
            path.display()
        );
    }
    assert!(embedded.len() >= 60, "only {} schemas", embedded.len());
}

#[test]
fn every_schema_is_a_draft_2020_12_document_with_its_id_title_and_description() {
    for name in names() {
        let document = schema(name).unwrap_or_else(|| panic!("{name} does not parse"));
        assert_eq!(
            document["$schema"],
            json!("https://json-schema.org/draft/2020-12/schema"),
            "{name}"
        );
        assert_eq!(document["$id"], json!(uri_of(name)), "{name}: $id");
        for key in ["title", "description"] {
            assert!(
                document[key].as_str().is_some_and(|s| !s.is_empty()),
                "{name}: no {key}"
            );
        }
        jsonschema::meta::validate(document)
            .unwrap_or_else(|e| panic!("{name} is not a valid 2020-12 schema: {e}"));
    }
}

#[test]
fn every_schema_compiles() {
    let failures: Vec<String> = names()
        .filter_map(|name| {
            compiled(index_of(name).unwrap())
                .err()
                .map(|e| format!("{name}: {e}"))
        })
        .collect();
    assert!(failures.is_empty(), "{failures:#?}");
}

/// Every `$ref` points at an embedded document and, with a fragment, at a node inside it.
#[test]
fn every_ref_resolves_within_the_embedded_set() {
    fn refs<'a>(value: &'a Value, out: &mut Vec<&'a str>) {
        match value {
            Value::Object(map) => {
                for (key, child) in map {
                    match (key.as_str(), child) {
                        ("$ref", Value::String(target)) => out.push(target),
                        _ => refs(child, out),
                    }
                }
            }
            Value::Array(items) => items.iter().for_each(|item| refs(item, out)),
            _ => {}
        }
    }
    let mut failures = Vec::new();
    let mut count = 0;
    for name in names() {
        let mut found = Vec::new();
        refs(schema(name).unwrap(), &mut found);
        for target in found {
            count += 1;
            let (path, fragment) = target.split_once('#').unwrap_or((target, ""));
            assert!(
                !path.starts_with("http") && !path.starts_with('/'),
                "{name}: $ref {target:?} must be relative"
            );
            let target_name = if path.is_empty() {
                name.to_owned()
            } else {
                let mut parts: Vec<&str> = name.split('/').collect();
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
            match schema(&target_name) {
                None => failures.push(format!("{name}: $ref {target:?}: no schema {target_name}")),
                Some(document) if !fragment.is_empty() && document.pointer(fragment).is_none() => {
                    failures.push(format!(
                        "{name}: $ref {target:?}: {target_name} has no {fragment}"
                    ))
                }
                Some(_) => {}
            }
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
    assert!(count > 50, "only {count} $refs found");
}

#[test]
fn every_schema_has_valid_and_invalid_examples_and_they_behave() {
    let grouped = examples();
    let mut failures = Vec::new();
    for name in grouped.keys() {
        if index_of(name).is_none() {
            failures.push(format!("examples/{name}/ has no schema {name}"));
        }
    }
    let mut counted = (0, 0);
    for name in names() {
        let files = grouped.get(name).map(Vec::as_slice).unwrap_or_default();
        let valid: Vec<_> = files
            .iter()
            .filter(|(f, _)| f.starts_with("valid"))
            .collect();
        let invalid: Vec<_> = files
            .iter()
            .filter(|(f, _)| f.starts_with("invalid-"))
            .collect();
        if valid.is_empty() || invalid.is_empty() {
            failures.push(format!(
                "{name}: needs at least one valid-*.json and one invalid-*.json example"
            ));
        }
        for (file, _) in files {
            if !(file.starts_with("valid") || file.starts_with("invalid-")) {
                failures.push(format!(
                    "examples/{name}/{file}.json: name it valid-* or invalid-*"
                ));
            }
        }
        for (file, path) in valid {
            counted.0 += 1;
            if let Err(e) = validate(name, &read_json(path)) {
                failures.push(format!("examples/{name}/{file}.json should be valid: {e}"));
            }
        }
        for (file, path) in invalid {
            counted.1 += 1;
            match validate(name, &read_json(path)) {
                Ok(()) => failures.push(format!("examples/{name}/{file}.json should be invalid")),
                Err(ValidationError::Invalid { errors, .. })
                    if errors.iter().any(|e| e.starts_with("(schema)")) =>
                {
                    failures.push(format!("examples/{name}/{file}.json: {errors:?}"))
                }
                Err(_) => {}
            }
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
    assert!(counted.0 >= 68 && counted.1 >= 68, "{counted:?}");
}

#[test]
fn session_event_types_are_exactly_the_payload_schemas() {
    let payloads: BTreeSet<String> = names()
        .filter_map(|name| name.strip_prefix("events/payloads/"))
        .map(str::to_owned)
        .collect();
    let declared: BTreeSet<String> =
        schema("events/SessionEvent").unwrap()["properties"]["eventType"]["enum"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap().to_owned())
            .collect();
    assert_eq!(declared, payloads);
}

/// Every payload example, wrapped in an envelope, is judged the same way by
/// `validate_session_event`: the envelope dispatches payloads by eventType.
#[test]
fn session_events_are_validated_with_the_payload_of_their_type() {
    let grouped = examples();
    let mut failures = Vec::new();
    for name in names() {
        let Some(event_type) = name.strip_prefix("events/payloads/") else {
            continue;
        };
        for (file, path) in &grouped[name] {
            let event = json!({
                "eventId": 1, "eventType": event_type, "timestamp": "2026-02-21T15:04:22Z",
                "sessionId": "sess_1", "workspaceId": "ws_1", "taskId": "task_1", "stepId": "step_1",
                "payload": read_json(path),
            });
            let result = validate_session_event(&event);
            if file.starts_with("valid") != result.is_ok() {
                failures.push(format!("{name}/{file}: {result:?}"));
            }
            let notification = json!({"jsonrpc": "2.0", "method": "SessionEvent", "params": event});
            if file.starts_with("valid") != validate("jsonrpc/Notification", &notification).is_ok()
            {
                failures.push(format!("{name}/{file} in a notification"));
            }
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

#[test]
fn every_method_has_params_and_result() {
    let methods: BTreeSet<&str> = names()
        .filter_map(|n| n.strip_prefix("methods/"))
        .filter_map(|n| n.rsplit_once('.').map(|(method, _)| method))
        .collect();
    for method in [
        "CreateSession",
        "StartTask",
        "CancelTask",
        "ResumeSession",
        "GetSessionState",
        "GetPatchPreview",
        "ApproveAction",
        "Shutdown",
        "GetEvents",
    ] {
        assert!(methods.contains(method), "{method}");
    }
    for method in methods {
        for part in ["params", "result"] {
            assert!(
                schema(&format!("methods/{method}.{part}")).is_some(),
                "{method}.{part}"
            );
        }
    }
}

#[test]
fn unknown_schema_is_reported_by_name() {
    let error = validate("nope/Nothing", &json!({})).unwrap_err();
    assert!(matches!(&error, ValidationError::UnknownSchema(n) if n == "nope/Nothing"));
    assert_eq!(error.to_string(), "unknown schema \"nope/Nothing\"");
    assert!(matches!(
        validate_params("Frobnicate", &json!({})),
        Err(ValidationError::UnknownSchema(n)) if n == "methods/Frobnicate.params"
    ));
    assert!(schema("nope/Nothing").is_none());
}

#[test]
fn errors_list_every_problem_with_its_pointer() {
    let error = validate(
        "message/ConversationMessage",
        &json!({"messageId": "m", "role": "developer", "content": 1, "timestamp": "x"}),
    )
    .unwrap_err();
    let ValidationError::Invalid { schema, errors } = &error else {
        panic!("{error:?}")
    };
    assert_eq!(schema, "message/ConversationMessage");
    let text = error.to_string();
    for expected in ["(root): ", "/role: ", "/content: ", "/timestamp: "] {
        assert!(
            errors.iter().any(|e| e.starts_with(expected)),
            "{expected} in {errors:?}"
        );
        assert!(text.contains(expected), "{text}");
    }
    assert!(text.starts_with("does not match schema message/ConversationMessage: "));
}

#[test]
fn session_event_with_unknown_type_is_rejected_briefly() {
    let error = validate_session_event(&json!({
        "eventId": 1, "eventType": "session_created", "timestamp": "2026-02-21T15:04:22Z",
        "sessionId": "s", "payload": {}
    }))
    .unwrap_err();
    let ValidationError::Invalid { errors, .. } = error else {
        panic!()
    };
    assert_eq!(
        errors,
        vec!["/eventType: unknown eventType \"session_created\""]
    );
}

#[test]
fn responses_are_checked_against_the_method_result() {
    let ok = json!({"jsonrpc": "2.0", "id": 1, "result": {"taskId": "t", "status": "running"}});
    validate_response(None, &ok).unwrap();
    validate_response(Some("StartTask"), &ok).unwrap();
    // StartTask's `taskId` is required (INTEROP.md §1 `{taskId, status:"running"}`); the
    // CancelTask result, which the spec does not define, has no required field any more.
    let error = validate_response(
        Some("StartTask"),
        &json!({"jsonrpc": "2.0", "id": 1,
        "result": {"status": "running"}}),
    )
    .unwrap_err();
    assert!(
        matches!(&error, ValidationError::Invalid { schema, errors }
            if schema == "methods/StartTask.result" && errors[0].starts_with("/result: ")),
        "{error:?}"
    );
    validate_response(
        Some("CancelTask"),
        &json!({"jsonrpc": "2.0", "id": 1, "result": {}}),
    )
    .unwrap();
    assert!(matches!(
        validate_response(Some("Nope"), &ok),
        Err(ValidationError::UnknownSchema(n)) if n == "methods/Nope.result"
    ));
    // An error response is checked as an envelope only, whatever the method.
    let failure = json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32601,
        "message": "Method not found: Nope"}});
    validate_response(Some("Nope"), &failure).unwrap();
    let bad = json!({"jsonrpc": "2.0", "id": 1, "error": {"code": "SESSION_NOT_FOUND",
        "message": "m"}});
    assert!(matches!(
        validate_response(Some("StartTask"), &bad),
        Err(ValidationError::Invalid { schema, .. }) if schema == "jsonrpc/Response"
    ));
}

#[test]
fn params_are_checked_by_method() {
    validate_params("Shutdown", &json!({})).unwrap();
    validate_params("GetEvents", &json!({})).unwrap();
    validate_params("GetSessionState", &json!({})).unwrap();
    assert!(validate_params("StartTask", &json!({"sessionId": "s"})).is_err());
}

#[test]
fn formats_are_checked_and_nothing_is_fetched() {
    // date-time is asserted, not just annotated.
    assert!(
        validate(
            "message/ConversationMessage",
            &json!({"messageId": "m", "sessionId": "s", "role": "user", "content": "",
                    "timestamp": "2026-02-30T25:00:00Z"})
        )
        .is_err()
    );
    // What the `time` crate writes (nanoseconds) and what the real services send (micros, Z).
    for timestamp in [
        "2026-11-22T03:08:02.123456789Z",
        "2026-11-22T03:08:02.123456Z",
        "2026-11-22T03:08:02+01:00",
    ] {
        validate(
            "message/ConversationMessage",
            &json!({"messageId": "m", "sessionId": "s", "role": "user", "content": "",
                    "timestamp": timestamp}),
        )
        .unwrap_or_else(|e| panic!("{timestamp}: {e}"));
    }
    // The registry holds every schema under its $id.
    let registry = registry().unwrap();
    for name in names() {
        assert!(registry.contains_resource(&uri_of(name)), "{name}");
    }
}

#[test]
fn validators_are_shared_across_threads() {
    let handles: Vec<_> = (0..4)
        .map(|_| {
            std::thread::spawn(|| {
                for name in names() {
                    let _ = validate(name, &json!({}));
                }
            })
        })
        .collect();
    for handle in handles {
        handle.join().unwrap();
    }
}

/// Schemas of what a runtime emits (the kit validates a third-party runtime against them).
fn emitted(name: &str) -> bool {
    name.starts_with("events/")
        || (name.starts_with("methods/") && name.ends_with(".result"))
        || name.starts_with("approval/")
        || name.starts_with("message/")
        || name.starts_with("checkpoint/")
        || name.starts_with("error/")
        || name.starts_with("tool/")
        || name.starts_with("audit/")
        || name.starts_with("artifacts/")
        || (name.starts_with("services/")
            && (name.ends_with("Request") || name.ends_with("Record")))
}

/// A runtime that follows the spec and INTEROP.md but not the reference runtime's extras must
/// pass certification, so every field an emitted schema requires says where the spec or
/// INTEROP.md mandates it: its description cites a section (`§`) and says it is required.
#[test]
fn every_required_field_of_an_emitted_schema_cites_its_source() {
    type Properties = serde_json::Map<String, Value>;
    /// The properties a node declares, through its `$ref` (one level, to another document's
    /// root) too.
    fn declared(node: &Value) -> Properties {
        let mut out = Properties::new();
        if let Some(target) = node.get("$ref").and_then(Value::as_str)
            && !target.starts_with('#')
        {
            let (path, _) = target.split_once('#').unwrap_or((target, ""));
            let name = path.trim_start_matches("../").trim_end_matches(".json");
            if let Some(Value::Object(p)) = schema(name).and_then(|d| d.get("properties")) {
                out.extend(p.clone());
            }
        }
        if let Some(Value::Object(p)) = node.get("properties") {
            out.extend(p.clone());
        }
        out
    }
    fn walk(name: &str, node: &Value, inherited: &Properties, failures: &mut Vec<String>) {
        let map = match node {
            Value::Object(map) => map,
            Value::Array(items) => {
                for item in items {
                    walk(name, item, inherited, failures);
                }
                return;
            }
            _ => return,
        };
        let mut properties = inherited.clone();
        properties.extend(declared(node));
        // `allOf` branches see each other's properties (artifacts/SessionHistory).
        if let Some(Value::Array(branches)) = map.get("allOf") {
            for branch in branches {
                properties.extend(declared(branch));
            }
        }
        if let Some(Value::Array(required)) = map.get("required") {
            for key in required.iter().filter_map(Value::as_str) {
                let description = properties
                    .get(key)
                    .and_then(|d| d.get("description"))
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                if !(description.contains('§') && description.to_lowercase().contains("required"))
                {
                    failures.push(format!(
                        "{name}: required `{key}` does not cite the section that mandates it"
                    ));
                }
            }
        }
        for (key, child) in map {
            match key.as_str() {
                // A property starts afresh; an `if` condition is not a requirement.
                "properties" => {
                    for property in child.as_object().into_iter().flat_map(|p| p.values()) {
                        walk(name, property, &Properties::new(), failures);
                    }
                }
                "if" | "required" | "enum" | "const" => {}
                // Branches share the properties of the node they sit in.
                "then" | "else" | "allOf" | "anyOf" | "oneOf" => {
                    walk(name, child, &properties, failures)
                }
                _ => walk(name, child, &Properties::new(), failures),
            }
        }
    }
    let mut failures = Vec::new();
    let mut checked = 0;
    for name in names().filter(|n| emitted(n)) {
        checked += 1;
        walk(
            name,
            schema(name).unwrap(),
            &Properties::new(),
            &mut failures,
        );
    }
    assert!(failures.is_empty(), "{failures:#?}");
    assert!(checked >= 45, "only {checked} emitted schemas");
}

/// Fields only the reference runtime emits: declared (so the drift tests can check every key
/// it writes) but never required, so another runtime without them still conforms.
#[test]
fn reference_runtime_extras_stay_optional() {
    let extras: &[(&str, &[&str])] = &[
        ("events/payloads/session_started", &["policyBundleVersion"]),
        (
            "events/payloads/session_cancelled",
            &["taskCount", "totalTokens", "durationMs"],
        ),
        ("events/payloads/session_paused", &["reason", "message"]),
        ("events/payloads/task_started", &["maxSteps"]),
        ("events/payloads/task_completed", &["stepCount", "result"]),
        ("events/payloads/task_failed", &["reason", "stepCount"]),
        ("events/payloads/task_cancelled", &["stepCount", "reason"]),
        ("events/payloads/llm_request_completed", &["stopReason"]),
        ("events/payloads/llm_retry", &["reason", "delayMs"]),
        (
            "events/payloads/llm_response_discarded",
            &["reason", "discardedChars"],
        ),
        (
            "events/payloads/tool_completed",
            &["result", "error", "errorCode", "artifactUris"],
        ),
        ("events/payloads/approval_resolved", &["reason"]),
        ("events/payloads/warning", &["code", "message"]),
        ("methods/ApproveAction.result", &["approvalId"]),
        ("methods/CancelTask.result", &["taskId", "status"]),
        ("methods/Shutdown.result", &["status"]),
        ("methods/CreateSession.result", &["name", "logDir"]),
        ("services/session/CreateSessionRequest", &["supportedTools"]),
        (
            "services/workspace/ArtifactUploadRequest",
            &["artifactName", "contentType"],
        ),
    ];
    for (name, fields) in extras {
        let document = schema(name).unwrap_or_else(|| panic!("no schema {name}"));
        let required: Vec<&str> = document["required"]
            .as_array()
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        for field in *fields {
            assert!(
                document["properties"].get(*field).is_some(),
                "{name}: `{field}` must stay declared"
            );
            assert!(
                !required.contains(field),
                "{name}: `{field}` is not mandated by the spec or INTEROP.md; keep it optional"
            );
        }
    }
    // Their payloads without any of them are still valid events.
    for (event_type, payload) in [
        ("task_completed", json!({})),
        ("task_cancelled", json!({})),
        ("task_started", json!({"prompt": "p"})),
        (
            "task_failed",
            json!({"message": "m", "errorCode": "LLM_UNAVAILABLE", "isRecoverable": true}),
        ),
        ("llm_retry", json!({"attempt": 1, "maxRetries": 3})),
    ] {
        validate_session_event(&json!({
            "eventId": 1, "eventType": event_type, "timestamp": "2026-02-21T15:04:22Z",
            "sessionId": "s", "taskId": "t", "payload": payload,
        }))
        .unwrap_or_else(|e| panic!("{event_type}: {e}"));
    }
}
