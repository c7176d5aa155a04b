//! One streaming call to the gateway, with retries (local-agent-host.md §6.1, §6.4).
//!
//! The connect timeout and the idle timeout are separate: a long answer that keeps
//! streaming is never cut, a gateway that goes silent is — before the response head as
//! well as inside the stream, since a request that is never answered is a network timeout
//! (local-agent-host.md §6.4), retried like any.

use std::time::{Duration, Instant};

use eventsource_stream::Eventsource;
use futures::StreamExt;
use rand::Rng;
use reqwest::{Client, StatusCode};
use tokio_util::sync::CancellationToken;

use super::stream::Accumulator;
use super::{LlmError, LlmResponse, StreamObserver};
use crate::config::LlmConfig;
use crate::services::parse_error_body;

/// The ID chain sent as headers, since the body is relayed upstream verbatim.
#[derive(Debug, Clone)]
pub(crate) struct CallIds<'a> {
    pub session_id: &'a str,
    pub task_id: &'a str,
    pub step_id: &'a str,
    /// Content of this request was redacted: sent as `x-redaction-applied: true`.
    pub redaction_applied: bool,
}

pub(crate) struct LlmClient {
    settings: LlmConfig,
    http: Client,
}

impl LlmClient {
    /// `http` should have the gateway's connect timeout (`LLM_CONNECT_TIMEOUT_SECONDS`) and no
    /// overall timeout (a stream lasts as long as the model writes).
    pub(crate) fn new(settings: LlmConfig, http: Client) -> Self {
        Self { settings, http }
    }

    pub(crate) fn max_retries(&self) -> u32 {
        self.settings.max_retries
    }

    /// Streams one completion, retrying retryable failures with exponential backoff and
    /// jitter (or the gateway's Retry-After). The thread is untouched until this returns,
    /// so a retry after a partial stream is safe.
    pub(crate) async fn complete(
        &self,
        body: &bytes::Bytes,
        ids: CallIds<'_>,
        observer: &mut dyn StreamObserver,
        cancel: &CancellationToken,
    ) -> Result<LlmResponse, LlmError> {
        let mut attempt = 0u32;
        loop {
            let result = tokio::select! {
                result = self.attempt(body, &ids, observer) => result,
                _ = cancel.cancelled() => Err(LlmError::Cancelled),
            };
            match result {
                Err(LlmError::Retryable {
                    reason,
                    retry_after,
                }) if attempt < self.settings.max_retries => {
                    attempt += 1;
                    let delay = retry_after.unwrap_or_else(|| self.backoff(attempt)).min(
                        self.settings
                            .retry_max_delay
                            .max(retry_after.unwrap_or_default()),
                    );
                    observer.retry(attempt, self.settings.max_retries, &reason, delay);
                    tokio::select! {
                        _ = tokio::time::sleep(delay) => {}
                        _ = cancel.cancelled() => return Err(LlmError::Cancelled),
                    }
                }
                other => return other,
            }
        }
    }

    fn backoff(&self, attempt: u32) -> Duration {
        let exponential = self
            .settings
            .retry_base_delay
            .saturating_mul(2u32.saturating_pow(attempt.saturating_sub(1)));
        let capped = exponential.min(self.settings.retry_max_delay);
        // Full jitter in [50%, 100%] of the capped delay spreads simultaneous retries.
        let factor = rand::rng().random_range(0.5..=1.0);
        capped.mul_f64(factor)
    }

    async fn attempt(
        &self,
        body: &bytes::Bytes,
        ids: &CallIds<'_>,
        observer: &mut dyn StreamObserver,
    ) -> Result<LlmResponse, LlmError> {
        let url = format!(
            "{}/chat/completions",
            self.settings.endpoint.trim_end_matches('/')
        );
        let mut request = self
            .http
            .post(&url)
            .bearer_auth(&self.settings.auth_token)
            .header("accept", "text/event-stream")
            .header("x-session-id", ids.session_id)
            .header("x-task-id", ids.task_id)
            .header("x-step-id", ids.step_id)
            .header("content-type", "application/json")
            .body(body.clone());
        if ids.redaction_applied {
            request = request.header(crate::redact::REDACTION_HEADER, "true");
        }
        for (name, value) in &self.settings.headers {
            request = request.header(name.as_str(), value.as_str());
        }
        let idle = self.settings.idle_timeout;
        let response = tokio::time::timeout(idle, request.send())
            .await
            .map_err(|_| LlmError::Retryable {
                reason: format!(
                    "the LLM Gateway sent no answer within {:.1}s",
                    idle.as_secs_f64()
                ),
                retry_after: None,
            })?
            .map_err(|error| LlmError::Retryable {
                reason: if error.is_timeout() {
                    "the LLM Gateway did not answer in time".to_owned()
                } else {
                    format!("the LLM Gateway could not be reached ({error})")
                },
                retry_after: None,
            })?;
        let status = response.status();
        if !status.is_success() {
            let retry_after = response
                .headers()
                .get("retry-after")
                .and_then(|value| value.to_str().ok())
                .and_then(|value| value.trim().parse::<f64>().ok())
                .filter(|seconds| seconds.is_finite() && *seconds >= 0.0)
                .map(Duration::from_secs_f64);
            let bytes = tokio::time::timeout(idle, response.bytes())
                .await
                .ok()
                .and_then(Result::ok)
                .unwrap_or_default();
            let (_, message) = parse_error_body(&bytes, status);
            return Err(classify(status, message, retry_after));
        }
        let started = Instant::now();
        let mut events = response.bytes_stream().eventsource();
        let mut accumulator = Accumulator::default();
        loop {
            let next = tokio::time::timeout(idle, events.next()).await;
            let ended = matches!(next, Ok(None));
            let failure = match next {
                Err(_) => Some(format!(
                    "the LLM stream stalled for {:.1}s",
                    idle.as_secs_f64()
                )),
                Ok(None) => (!accumulator.is_done())
                    .then(|| "the LLM stream ended before [DONE]".to_owned()),
                Ok(Some(Err(error))) => Some(format!("the LLM stream broke ({error})")),
                Ok(Some(Ok(event))) => match accumulator.push(&event.data) {
                    Ok(Some(text)) => {
                        observer.text(&text);
                        None
                    }
                    Ok(None) if accumulator.is_done() => break,
                    Ok(None) => None,
                    Err(error) => Some(error.to_string()),
                },
            };
            if let Some(reason) = failure {
                let chars = accumulator.text_len();
                if chars > 0 {
                    observer.discarded(&reason, chars);
                }
                return Err(LlmError::Retryable {
                    reason,
                    retry_after: None,
                });
            }
            if ended {
                break;
            }
        }
        tracing::debug!(
            elapsed_ms = started.elapsed().as_millis() as u64,
            "stream finished"
        );
        Ok(accumulator.finish())
    }
}

fn classify(status: StatusCode, message: String, retry_after: Option<Duration>) -> LlmError {
    match status.as_u16() {
        400 => LlmError::Guardrail(message),
        401 | 403 => LlmError::Unauthorized {
            status: status.as_u16(),
            message,
        },
        429 | 500 | 502 | 503 | 504 | 529 => LlmError::Retryable {
            reason: format!(
                "the LLM Gateway answered HTTP {}: {message}",
                status.as_u16()
            ),
            retry_after,
        },
        code => LlmError::Rejected {
            status: code,
            message,
        },
    }
}
