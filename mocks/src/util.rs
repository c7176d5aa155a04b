//! Small helpers shared by every fake: poison-tolerant locking, JSON error bodies and the
//! timestamp format the real services use.

use std::sync::{Mutex, MutexGuard, PoisonError};

use axum::http::{HeaderName, HeaderValue, StatusCode};
use serde_json::{Value, json};
use time::OffsetDateTime;

/// Locks a mutex, ignoring poisoning: a test that panicked while holding a fake's lock must
/// not turn every later call into a second, misleading panic.
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A scripted status that HTTP cannot carry becomes 500, so a typo in a test never panics
/// inside a server thread (where the panic would only show up as a dropped connection).
pub(crate) fn sane_status(status: u16) -> StatusCode {
    StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR)
}

/// Scripted headers, keeping only those HTTP can carry (see [`sane_status`] for why).
pub(crate) fn sane_headers(headers: &[(String, String)]) -> Vec<(HeaderName, HeaderValue)> {
    headers
        .iter()
        .filter_map(|(name, value)| {
            let name = HeaderName::from_bytes(name.as_bytes()).ok()?;
            let value = HeaderValue::from_str(value).ok()?;
            Some((name, value))
        })
        .collect()
}

/// The Session/Workspace error body, `{code, message, retryable}` (INTEROP.md §7).
pub(crate) fn service_error(code: &str, message: &str, retryable: bool) -> Value {
    json!({ "code": code, "message": message, "retryable": retryable })
}

/// FastAPI's validation error shape, which the real services answer with 422 (see
/// `fastapi.rs` for field-level errors).
pub(crate) fn validation_error(message: &str) -> Value {
    json!({ "detail": [{ "type": "value_error", "loc": ["body"], "msg": message, "input": null }] })
}

/// RFC 3339 in UTC with `Z` and microseconds, the way the real Session Service writes
/// `expiresAt` (INTEROP.md §5). Public so tests can pin times in the same format.
pub fn rfc3339_micros(at: OffsetDateTime) -> String {
    let at = at.to_offset(time::UtcOffset::UTC);
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:06}Z",
        at.year(),
        u8::from(at.month()),
        at.day(),
        at.hour(),
        at.minute(),
        at.second(),
        at.microsecond()
    )
}

/// Python's `datetime.isoformat()` of an aware UTC time, `+00:00` and microseconds, the
/// way the real services write `createdAt` and the other record timestamps.
pub(crate) fn python_iso(at: OffsetDateTime) -> String {
    let micros = rfc3339_micros(at);
    format!("{}+00:00", micros.trim_end_matches('Z'))
}

/// A fresh bare UUID, the real services' id format (`str(uuid.uuid4())`).
pub(crate) fn new_uuid() -> String {
    uuid::Uuid::new_v4().to_string()
}

/// A fresh id with the given prefix, e.g. `sess_<uuid>`.
pub(crate) fn new_id(prefix: &str) -> String {
    format!("{prefix}_{}", uuid::Uuid::new_v4())
}
