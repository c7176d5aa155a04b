//! What every step file shares: the step result type, JSON lookups, bounded waits, and what
//! the runtime under test declares. One definition each, so the areas agree on what they mean.

pub(crate) mod model;
pub(crate) mod os;
pub(crate) mod policy;
pub(crate) mod task;

use std::{fmt, future::Future, time::Duration};

use anyhow::{anyhow, bail};
use serde_json::Value;

use crate::driver::ReceivedEvent;
use crate::world::ConformanceWorld;

/// Whether the runtime claims the `reference` profile (our own wording, codes and extras).
pub(crate) fn declares_reference(world: &ConformanceWorld) -> anyhow::Result<bool> {
    Ok(world
        .config()?
        .manifest
        .declares(crate::catalogue::Profile::Reference))
}

pub(crate) fn parse_rfc3339(stamp: &str) -> Option<time::OffsetDateTime> {
    time::OffsetDateTime::parse(stamp, &time::format_description::well_known::Rfc3339).ok()
}

pub(crate) fn of_type<'a>(events: &'a [ReceivedEvent], kind: &str) -> Vec<&'a ReceivedEvent> {
    events.iter().filter(|e| e.event_type() == kind).collect()
}

pub(crate) fn u64_at(value: &Value, field: &str) -> Option<u64> {
    value.get(field).and_then(Value::as_u64)
}

/// `"a.txt", "b.txt" and "c.txt"` → the names.
pub(crate) fn quoted_names(list: &str) -> Vec<String> {
    list.split('"')
        .skip(1)
        .step_by(2)
        .map(str::to_owned)
        .collect()
}

/// What a step returns.
pub(crate) type StepResult = Result<(), Failure>;

/// A step failure: an `anyhow::Error` displayed with its whole context chain (cucumber shows
/// a failed step's error with `{}`, which for anyhow would print only the outermost line).
pub(crate) struct Failure(anyhow::Error);

impl<E: Into<anyhow::Error>> From<E> for Failure {
    fn from(error: E) -> Self {
        Failure(error.into())
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:#}", self.0)
    }
}

impl fmt::Debug for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:#}", self.0)
    }
}

/// Waits until `check` yields, re-checking with a short backoff. For what only the fakes can
/// observe (a service call the runtime makes after its last stdout line): the fakes record
/// requests but offer no notification, so this bounded re-check is the one place the kit polls.
pub(crate) async fn eventually<T, F, Fut>(
    timeout: Duration,
    what: &str,
    mut check: F,
) -> anyhow::Result<T>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, String>>,
{
    let deadline = tokio::time::Instant::now() + timeout;
    let mut pause = Duration::from_millis(5);
    loop {
        match check().await {
            Ok(value) => return Ok(value),
            Err(last) => {
                if tokio::time::Instant::now() >= deadline {
                    bail!("after {timeout:?}, {what}: {last}");
                }
            }
        }
        tokio::time::sleep(pause).await;
        pause = (pause * 2).min(Duration::from_millis(100));
    }
}

/// Checks a body the runtime sent to a service against its schema in `agent-schemas` (when
/// the schemas have one by that name), so the fakes' leniency cannot hide a malformed call.
pub(crate) fn check_service_body(schema: &str, body: &Value, what: &str) -> anyhow::Result<()> {
    if !crate::validation::has_schema(schema) {
        return Ok(());
    }
    crate::validation::check_as_services_read(schema, body)
        .map_err(|problem| anyhow!("{what} does not match {schema}: {problem}"))
}

/// `value[a][b]…` as a string.
pub(crate) fn str_at<'a>(value: &'a Value, path: &[&str]) -> Option<&'a str> {
    at(value, path).and_then(Value::as_str)
}

/// `value[a][b]…`.
pub(crate) fn at<'a>(value: &'a Value, path: &[&str]) -> Option<&'a Value> {
    path.iter().try_fold(value, |v, key| v.get(*key))
}

/// Compact JSON for messages, abridged.
pub(crate) fn show(value: &Value) -> String {
    crate::driver::excerpt(&value.to_string())
}

/// The `result` of a response, or a failure quoting the error the runtime gave instead.
pub(crate) fn expect_result<'a>(response: &'a Value, what: &str) -> anyhow::Result<&'a Value> {
    if let Some(result) = response.get("result") {
        return Ok(result);
    }
    Err(anyhow!(
        "{what} failed instead of succeeding: {}",
        show(response.get("error").unwrap_or(response))
    ))
}
