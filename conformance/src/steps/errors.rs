//! Assertions on error responses: the JSON-RPC code, the spec's error shape in `error.data`,
//! and whether `error.message` is something the desktop app can show a person (INTEROP.md §1:
//! the app never branches on codes, it shows the message).

use anyhow::{Context, anyhow};
use cucumber::then;
use serde_json::Value;

use crate::steps::rpc::current_response;
use crate::steps::support::{StepResult, declares_reference, show, str_at};
use crate::steps::task::wait_task_end;
use crate::world::ConformanceWorld;

/// JSON-RPC code of domain errors: the request was well formed, the runtime refused it.
pub(crate) const SERVER_ERROR: i64 = -32000;

/// The error codes the documents define (architecture.md §6.5).
pub(crate) const SPEC_CODES: &[&str] = &[
    "INVALID_REQUEST",
    "UNAUTHORIZED",
    "SESSION_NOT_FOUND",
    "SESSION_EXPIRED",
    "POLICY_BUNDLE_INVALID",
    "POLICY_EXPIRED",
    "CAPABILITY_DENIED",
    "APPROVAL_REQUIRED",
    "APPROVAL_DENIED",
    "TOOL_NOT_FOUND",
    "TOOL_EXECUTION_FAILED",
    "TOOL_EXECUTION_TIMEOUT",
    "FILE_NOT_FOUND",
    "FILE_TOO_LARGE",
    "PERMISSION_DENIED",
    "LLM_GUARDRAIL_BLOCKED",
    "LLM_BUDGET_EXCEEDED",
    "WORKSPACE_UPLOAD_FAILED",
    "RATE_LIMITED",
    "INTERNAL_ERROR",
];

/// Whether a scenario's expected error code is judged for this runtime: a code of
/// architecture.md §6.5 always; one of the reference runtime's own (`SESSION_INCOMPATIBLE`,
/// `SERVICE_UNAVAILABLE`, `MAX_STEPS_EXCEEDED`, …) only for a runtime that claims the
/// `reference` profile. For any other runtime the failure itself is still judged, under
/// whatever code it names.
pub(crate) fn judges_code(world: &ConformanceWorld, code: &str) -> anyhow::Result<bool> {
    Ok(SPEC_CODES.contains(&code) || declares_reference(world)?)
}

/// The `error` member of the last response, which must be an error.
pub(crate) fn last_error(world: &ConformanceWorld) -> anyhow::Result<&Value> {
    let response = world.last_response()?;
    response.get("error").ok_or_else(|| {
        anyhow!(
            "expected an error, but the runtime answered with a result: {}",
            show(response)
        )
    })
}

/// Checks `error.data` has the spec's shape `{code, message, retryable, details?}`.
pub(crate) fn check_error_data(error: &Value) -> anyhow::Result<&Value> {
    let data = error
        .get("data")
        .with_context(|| format!("error.data is missing (INTEROP.md §1 puts the spec's code, message and retryable there): {}", show(error)))?;
    check!(
        data.get("code").is_some_and(Value::is_string),
        "error.data.code must be the spec's string code: {}",
        show(data)
    );
    check!(
        data.get("message").is_some_and(Value::is_string),
        "error.data.message must be a string: {}",
        show(data)
    );
    check!(
        data.get("retryable").is_some_and(Value::is_boolean),
        "error.data.retryable must be present and a boolean: {}",
        show(data)
    );
    if let Some(details) = data.get("details") {
        check!(
            details.is_object() || details.is_null(),
            "error.data.details must be an object when present: {}",
            show(data)
        );
    }
    Ok(data)
}

/// Why a message would not read as a sentence to a person; empty when it does.
pub(crate) fn unreadable_reasons(message: &str) -> Vec<String> {
    let mut reasons = Vec::new();
    let trimmed = message.trim();
    if trimmed.is_empty() {
        return vec!["it is empty".to_owned()];
    }
    let words: Vec<&str> = trimmed.split_whitespace().collect();
    // JSON-RPC 2.0's own messages ("Parse error", "Invalid params") are two words: that is
    // readable; one word is a code or a shout.
    if words.len() < 2 {
        reasons.push(format!(
            "it has {} word(s); a readable message has at least two",
            words.len()
        ));
    }
    // A message may quote the value it refuses (a 4 KB path): the limit is on the prose.
    let prose: usize = words.iter().map(|w| w.chars().count().min(80) + 1).sum();
    if prose > 600 {
        reasons.push("it is longer than 600 characters".to_owned());
    }
    let is_code = |w: &str| {
        w.len() > 3
            && w.contains('_')
            && w.chars()
                .all(|c| c.is_ascii_uppercase() || c == '_' || c.is_ascii_digit())
    };
    if words
        .iter()
        .all(|w| is_code(w.trim_matches(|c: char| !c.is_alphanumeric() && c != '_')))
    {
        reasons.push("it is only an error code".to_owned());
    }
    let lower = trimmed.to_lowercase();
    for marker in [
        "panicked at",
        "stack backtrace",
        "rust_backtrace",
        "traceback (most recent call last)",
        "\n    at ",
        "error {",
        "os { code",
        "kind: ",
        "source: ",
        "called `result::unwrap()`",
        "called `option::unwrap()`",
    ] {
        if lower.contains(marker) {
            reasons.push(format!(
                "it looks like a debug dump or stack trace (contains {marker:?})"
            ));
        }
    }
    if trimmed.starts_with('{') || trimmed.starts_with('[') {
        reasons.push("it is structured data, not a sentence".to_owned());
    }
    reasons
}

#[then(regex = r"^the runtime answers with error (-?\d+)( and a null id)?$")]
async fn answers_with_error(
    world: &mut ConformanceWorld,
    code: i64,
    null_id: String,
) -> StepResult {
    let response = rpc_response(world).await?;
    let error = response.get("error").ok_or_else(|| {
        anyhow!(
            "expected JSON-RPC error {code}, but the runtime answered: {}",
            show(&response)
        )
    })?;
    let got = error.get("code").and_then(Value::as_i64);
    check!(
        got == Some(code),
        "expected JSON-RPC error code {code}, got {}: {}",
        got.map_or_else(|| "no integer code".to_owned(), |c| c.to_string()),
        show(&response)
    );
    check!(
        error.get("message").is_some_and(Value::is_string),
        "error.message must be a string: {}",
        show(&response)
    );
    if !null_id.is_empty() {
        check!(
            response.get("id").is_some_and(Value::is_null),
            "the error must carry \"id\": null (the request's id could not be read), got {}",
            show(&response)
        );
    }
    Ok(())
}

#[then("the runtime answers with an error")]
async fn answers_with_some_error(world: &mut ConformanceWorld) -> StepResult {
    let response = rpc_response(world).await?;
    check!(
        response.get("error").is_some(),
        "expected an error, but the runtime answered: {}",
        show(&response)
    );
    Ok(())
}

/// The response to the raw line just sent (read now), or the last response of a request.
async fn rpc_response(world: &mut ConformanceWorld) -> anyhow::Result<Value> {
    current_response(world).await
}

#[then("the request fails")]
async fn request_fails(world: &mut ConformanceWorld) -> StepResult {
    let method = world
        .last_method
        .clone()
        .unwrap_or_else(|| "the request".to_owned());
    last_error(world).with_context(|| format!("{method} should have failed"))?;
    Ok(())
}

#[then(expr = "the request fails with error code {string}")]
async fn fails_with_code(world: &mut ConformanceWorld, code: String) -> StepResult {
    let method = world
        .last_method
        .clone()
        .unwrap_or_else(|| "the request".to_owned());
    let error =
        last_error(world).with_context(|| format!("{method} should have failed with {code}"))?;
    let rpc_code = error.get("code").and_then(Value::as_i64);
    // INTEROP.md §1 asks for an integer; -32000 is the reference runtime's choice.
    check!(
        rpc_code.is_some() && (rpc_code == Some(SERVER_ERROR) || !declares_reference(world)?),
        "a refused request carries JSON-RPC code {SERVER_ERROR}, got {rpc_code:?}: {}",
        show(error)
    );
    if !judges_code(world, &code)? {
        let message = error.get("message").and_then(Value::as_str).unwrap_or("");
        let reasons = unreadable_reasons(message);
        check!(
            reasons.is_empty(),
            "{method} failed, but error.message is not readable ({}): {}",
            reasons.join("; "),
            show(error)
        );
        return Ok(());
    }
    let data = check_error_data(error)?;
    let got = data.get("code").and_then(Value::as_str).unwrap_or("");
    check!(
        got == code,
        "{method} failed with error.data.code {got:?}, expected {code:?}: {}",
        show(error)
    );
    Ok(())
}

#[then(expr = "the error data code is {string}")]
async fn data_code_is(world: &mut ConformanceWorld, code: String) -> StepResult {
    let error = last_error(world)?;
    if !judges_code(world, &code)? {
        return Ok(());
    }
    let data = check_error_data(error)?;
    let got = data.get("code").and_then(Value::as_str).unwrap_or("");
    check!(
        got == code,
        "error.data.code is {got:?}, expected {code:?}: {}",
        show(error)
    );
    Ok(())
}

#[then(regex = r"^the error is (retryable|not retryable)$")]
async fn error_retryable(world: &mut ConformanceWorld, which: String) -> StepResult {
    let error = last_error(world)?;
    let data = check_error_data(error)?;
    let expected = which == "retryable";
    let got = data.get("retryable").and_then(Value::as_bool);
    check!(
        got == Some(expected),
        "error.data.retryable is {got:?}, expected {expected}: {}",
        show(error)
    );
    Ok(())
}

#[then("the error message is a readable sentence")]
async fn readable_message(world: &mut ConformanceWorld) -> StepResult {
    let error = last_error(world)?;
    let message = error
        .get("message")
        .and_then(Value::as_str)
        .context("error.message is missing or not a string")?;
    let reasons = unreadable_reasons(message);
    if !reasons.is_empty() {
        fail!(
            "error.message {message:?} is not a sentence a person understands: {}",
            reasons.join("; ")
        );
    }
    Ok(())
}

#[then(expr = "the error message names {string}")]
async fn message_names(world: &mut ConformanceWorld, needle: String) -> StepResult {
    let error = last_error(world)?;
    let message = error.get("message").and_then(Value::as_str).unwrap_or("");
    let reasons = unreadable_reasons(message);
    check!(
        reasons.is_empty(),
        "error.message {message:?} is not readable: {}",
        reasons.join("; ")
    );
    // What a message names is its wording: judged for the reference runtime only.
    check!(
        !declares_reference(world)? || message.to_lowercase().contains(&needle.to_lowercase()),
        "error.message {message:?} does not name {needle:?}"
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::unreadable_reasons;

    #[test]
    fn sentences_pass_and_dumps_fail() {
        assert!(
            unreadable_reasons("The Session Service could not be reached; try again later.")
                .is_empty()
        );
        assert!(!unreadable_reasons("SERVICE_UNAVAILABLE").is_empty());
        assert!(
            !unreadable_reasons("reqwest::Error { kind: Connect, source: Os { code: 111 } }")
                .is_empty()
        );
        assert!(!unreadable_reasons("").is_empty());
        assert!(!unreadable_reasons("error").is_empty());
        assert!(!unreadable_reasons("thread 'main' panicked at src/main.rs:3").is_empty());
    }
}

/// INTEROP.md §1: the app shows error.message to people — a service's structured error is
/// put in words, not quoted as JSON.
#[then("the error message quotes no JSON")]
async fn no_json_in_message(world: &mut ConformanceWorld) -> StepResult {
    let error = last_error(world)?;
    let message = error.get("message").and_then(Value::as_str).unwrap_or("");
    check!(
        !message.contains('{') && !message.contains('['),
        "error.message {message:?} quotes structured data instead of saying it in words"
    );
    Ok(())
}

#[then("the task_failed message quotes no JSON")]
async fn task_failed_plain(world: &mut ConformanceWorld) -> StepResult {
    let end = wait_task_end(world).await?;
    check!(
        end.event_type() == "task_failed",
        "the task ended with {}, not task_failed",
        end.event_type()
    );
    let message = str_at(end.payload(), &["message"]).unwrap_or_default();
    check!(
        !message.contains('{') && !message.contains('['),
        "task_failed.message {message:?} quotes structured data instead of saying it in words"
    );
    Ok(())
}
