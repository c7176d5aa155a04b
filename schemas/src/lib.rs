//! The JSON Schemas (draft 2020-12) of every message that crosses a boundary, embedded at
//! compile time, with validation by name.
//!
//! A schema's *name* is its path under `schemas/` without `.json`, e.g.
//! `methods/CreateSession.params`, `events/SessionEvent`, `events/payloads/text_chunk`,
//! `tool/ToolRequest`. Its `$id` is `https://schemas.agent-runtime.dev/<name>.json`, and `$ref`s
//! between files are relative, resolved from the embedded set only (never from the network).
//!
//! Validators are compiled on first use and cached for the life of the process.

use std::sync::OnceLock;

use jsonschema::{Draft, Registry, Validator};
use serde_json::Value;

mod embedded {
    include!(concat!(env!("OUT_DIR"), "/embedded.rs"));
}

/// Base of every schema's `$id`: `{BASE_URI}<name>.json`.
pub const BASE_URI: &str = "https://schemas.agent-runtime.dev/";

/// Longest error message kept, in bytes; longer ones (which quote a large instance) are cut.
const MAX_MESSAGE_LEN: usize = 400;

#[derive(Debug, thiserror::Error)]
pub enum ValidationError {
    /// No embedded schema has this name.
    #[error("unknown schema {0:?}")]
    UnknownSchema(String),
    /// The instance does not match the schema. Each error reads `<JSON pointer>: <message>`,
    /// the pointer being `(root)` for the instance itself.
    #[error("does not match schema {schema}: {}", .errors.join("; "))]
    Invalid { schema: String, errors: Vec<String> },
}

/// Every schema name, sorted.
pub fn names() -> impl Iterator<Item = &'static str> {
    embedded::SCHEMAS.iter().map(|(name, _)| *name)
}

/// The parsed schema document of `name`.
pub fn schema(name: &str) -> Option<&'static Value> {
    let index = index_of(name)?;
    parsed().get(index)?.as_ref().ok()
}

/// Validates `instance` against the schema `name`.
pub fn validate(name: &str, instance: &Value) -> Result<(), ValidationError> {
    let errors = errors_of(name, instance, "")?;
    invalid_unless_empty(name, errors)
}

/// Validates the `params` of a `SessionEvent` notification: the envelope, and the payload
/// against `events/payloads/<eventType>`. An unknown `eventType` is an error.
pub fn validate_session_event(params: &Value) -> Result<(), ValidationError> {
    const ENVELOPE: &str = "events/SessionEvent";
    let mut errors = errors_of(ENVELOPE, params, "")?;
    if let Some(Value::String(event_type)) = params.get("eventType")
        && index_of(&payload_schema_name(event_type)).is_none()
    {
        // Replace the schema's long enum message with a short one.
        errors.retain(|error| !error.starts_with("/eventType:"));
        errors.insert(0, format!("/eventType: unknown eventType {event_type:?}"));
    }
    invalid_unless_empty(ENVELOPE, errors)
}

/// Validates a whole JSON-RPC response line. When `method` is given and the response is a
/// success, `result` is also validated against `methods/<method>.result`.
pub fn validate_response(method: Option<&str>, response: &Value) -> Result<(), ValidationError> {
    const ENVELOPE: &str = "jsonrpc/Response";
    let mut errors = errors_of(ENVELOPE, response, "")?;
    let mut failed = ENVELOPE.to_owned();
    if let (Some(method), Some(result)) = (method, response.get("result")) {
        let name = format!("methods/{method}.result");
        let result_errors = errors_of(&name, result, "/result")?;
        if errors.is_empty() && !result_errors.is_empty() {
            failed = name;
        }
        errors.extend(result_errors);
    }
    invalid_unless_empty(&failed, errors)
}

/// Validates the `params` of a request to `method` against `methods/<method>.params`.
/// A request without `params` should be validated as `{}`.
pub fn validate_params(method: &str, params: &Value) -> Result<(), ValidationError> {
    validate(&format!("methods/{method}.params"), params)
}

fn payload_schema_name(event_type: &str) -> String {
    format!("events/payloads/{event_type}")
}

fn invalid_unless_empty(schema: &str, errors: Vec<String>) -> Result<(), ValidationError> {
    if errors.is_empty() {
        Ok(())
    } else {
        Err(ValidationError::Invalid {
            schema: schema.to_owned(),
            errors,
        })
    }
}

/// The errors of `instance` against `name`, each prefixed with its JSON pointer (itself
/// prefixed with `prefix`, the pointer of `instance` in an enclosing document).
fn errors_of(name: &str, instance: &Value, prefix: &str) -> Result<Vec<String>, ValidationError> {
    let index = index_of(name).ok_or_else(|| ValidationError::UnknownSchema(name.to_owned()))?;
    let validator = match compiled(index) {
        Ok(validator) => validator,
        Err(error) => {
            return Ok(vec![format!(
                "(schema): {name} cannot be compiled: {error}"
            )]);
        }
    };
    if validator.is_valid(instance) {
        return Ok(Vec::new());
    }
    let mut errors = Vec::new();
    for error in validator.iter_errors(instance) {
        describe(&error, prefix, &mut errors);
    }
    let mut seen = std::collections::HashSet::new();
    errors.retain(|error| seen.insert(error.clone()));
    Ok(errors)
}

/// Appends `<pointer>: <message>` for `error`. A failed `anyOf`/`oneOf` is explained by its
/// one informative alternative when there is one (a nullable field: the non-null branch),
/// otherwise by all alternatives.
fn describe(error: &jsonschema::ValidationError<'_>, prefix: &str, out: &mut Vec<String>) {
    use jsonschema::error::ValidationErrorKind;

    let path = error.instance_path();
    let pointer = match format!("{prefix}{}", path.as_str()) {
        pointer if pointer.is_empty() => "(root)".to_owned(),
        pointer => pointer,
    };
    if let ValidationErrorKind::AnyOf { context } | ValidationErrorKind::OneOfNotValid { context } =
        error.kind()
    {
        // An alternative whose only complaint is the instance's type says nothing useful.
        let informative: Vec<_> = context
            .iter()
            .filter(|branch| {
                !branch.iter().all(|e| {
                    matches!(e.kind(), ValidationErrorKind::Type { .. })
                        && e.instance_path() == path
                })
            })
            .collect();
        if let [branch] = informative.as_slice() {
            for inner in branch.iter() {
                describe(inner, prefix, out);
            }
            return;
        }
        let alternatives: Vec<String> = context
            .iter()
            .map(|branch| {
                branch
                    .iter()
                    .map(|e| without_instance(e.to_string(), e.instance()))
                    .collect::<Vec<_>>()
                    .join(", ")
            })
            .collect();
        out.push(format!(
            "{pointer}: {}",
            shorten(format!(
                "matches none of the alternatives ({})",
                alternatives.join(" | ")
            ))
        ));
        return;
    }
    let message = match error.kind() {
        ValidationErrorKind::FalseSchema => "not allowed here".to_owned(),
        _ => without_instance(error.to_string(), error.instance()),
    };
    out.push(format!("{pointer}: {}", shorten(message)));
}

/// Messages start with the offending instance; a whole object or array there only hides the
/// point, and the pointer already says where it is.
fn without_instance(message: String, instance: &Value) -> String {
    let what = match instance {
        Value::Object(_) => "the object",
        Value::Array(_) => "the array",
        _ => return message,
    };
    let rendered = instance.to_string();
    match message.strip_prefix(&rendered) {
        Some(rest) => format!("{what}{rest}"),
        None => message,
    }
}

fn shorten(mut message: String) -> String {
    if message.len() > MAX_MESSAGE_LEN {
        let mut end = MAX_MESSAGE_LEN;
        while !message.is_char_boundary(end) {
            end -= 1;
        }
        message.truncate(end);
        message.push('…');
    }
    message
}

fn index_of(name: &str) -> Option<usize> {
    embedded::SCHEMAS
        .binary_search_by(|(candidate, _)| (*candidate).cmp(name))
        .ok()
}

fn uri_of(name: &str) -> String {
    format!("{BASE_URI}{name}.json")
}

/// Every embedded document, parsed once; index-aligned with `embedded::SCHEMAS`.
fn parsed() -> &'static [Result<Value, String>] {
    static PARSED: OnceLock<Vec<Result<Value, String>>> = OnceLock::new();
    PARSED.get_or_init(|| {
        embedded::SCHEMAS
            .iter()
            .map(|(name, text)| {
                serde_json::from_str(text)
                    .map_err(|error| format!("{name}.json is not valid JSON: {error}"))
            })
            .collect()
    })
}

/// All embedded documents under their `$id`s, so `$ref`s resolve without any retrieval.
fn registry() -> Result<&'static Registry<'static>, String> {
    static REGISTRY: OnceLock<Result<Registry<'static>, String>> = OnceLock::new();
    REGISTRY
        .get_or_init(|| {
            let resources =
                embedded::SCHEMAS
                    .iter()
                    .zip(parsed())
                    .filter_map(|((name, _), document)| {
                        document.as_ref().ok().map(|value| (uri_of(name), value))
                    });
            Registry::new()
                .draft(Draft::Draft202012)
                .extend(resources)
                .and_then(|builder| builder.prepare())
                .map_err(|error| format!("the schema registry cannot be built: {error}"))
        })
        .as_ref()
        .map_err(Clone::clone)
}

fn compiled(index: usize) -> Result<&'static Validator, String> {
    static VALIDATORS: OnceLock<Vec<OnceLock<Result<Validator, String>>>> = OnceLock::new();
    let slots =
        VALIDATORS.get_or_init(|| embedded::SCHEMAS.iter().map(|_| OnceLock::new()).collect());
    let slot = slots
        .get(index)
        .ok_or_else(|| format!("no schema at index {index}"))?;
    slot.get_or_init(|| compile(index))
        .as_ref()
        .map_err(Clone::clone)
}

fn compile(index: usize) -> Result<Validator, String> {
    let document = parsed()
        .get(index)
        .ok_or_else(|| format!("no schema at index {index}"))?
        .as_ref()
        .map_err(Clone::clone)?;
    let registry = registry()?;
    jsonschema::options()
        .with_draft(Draft::Draft202012)
        .with_registry(registry)
        .should_validate_formats(true)
        .offline()
        .build(document)
        .map_err(|error| error.to_string())
}

#[cfg(test)]
mod tests;
