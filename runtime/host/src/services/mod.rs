//! Clients of the Session Service and the Workspace Service (INTEROP.md §3–§4). Connect
//! errors, timeouts and 5xx answers are retried with backoff; what still fails becomes an
//! error whose message a person can act on.

pub(crate) mod approval;
pub(crate) mod history;

use std::borrow::Cow;
use std::time::Duration;

use bytes::Bytes;

use agent_protocol::message::ConversationMessage;
use agent_protocol::services::{
    ArtifactUploadRequest, ArtifactUploadResponse, CancelSessionRequest, CreateSessionRequest,
    CreateSessionResponse, ResumeSessionRequest, ResumeSessionResponse, SandboxRegistrationRequest,
    SandboxRegistrationResponse,
};
use agent_protocol::{ErrorCode, ErrorShape};

use crate::json_splice::JsonPieces;
use reqwest::{Client, Method, StatusCode};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

#[derive(Debug, thiserror::Error)]
pub enum ServiceError {
    #[error("The {service} at {url} could not be reached ({detail}).")]
    Unreachable {
        service: &'static str,
        url: String,
        detail: String,
    },
    #[error("The {service} answered HTTP {status}: {message}")]
    Status {
        service: &'static str,
        status: u16,
        code: Option<String>,
        message: String,
    },
    #[error("The {service} sent a response this runtime cannot read ({detail}).")]
    InvalidResponse {
        service: &'static str,
        detail: String,
    },
    #[error("A request to the {service} could not be written as JSON ({detail}).")]
    InvalidRequest {
        service: &'static str,
        detail: String,
    },
}

impl ServiceError {
    pub fn to_shape(&self) -> ErrorShape {
        let (code, retryable) = match self {
            ServiceError::Unreachable { .. } => (ErrorCode::ServiceUnavailable, true),
            ServiceError::Status { status, .. } if *status >= 500 => {
                (ErrorCode::ServiceUnavailable, true)
            }
            ServiceError::Status {
                code: Some(code), ..
            } => (ErrorCode::parse(code), false),
            ServiceError::Status { status: 404, .. } => (ErrorCode::SessionNotFound, false),
            ServiceError::Status { .. } => (ErrorCode::InvalidRequest, false),
            ServiceError::InvalidResponse { .. } => (ErrorCode::ServiceUnavailable, false),
            ServiceError::InvalidRequest { .. } => (ErrorCode::InternalError, false),
        };
        let details = match self {
            ServiceError::Status { status, .. } => json!({ "httpStatus": status }),
            ServiceError::Unreachable { url, .. } => json!({ "url": url }),
            ServiceError::InvalidResponse { .. } | ServiceError::InvalidRequest { .. } => {
                json!({})
            }
        };
        ErrorShape::new(code, self.to_string())
            .retryable(retryable)
            .with_details(details)
    }
}

/// Retry policy shared by the service clients.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Retry {
    pub retries: u32,
    pub base_delay: Duration,
}

impl Retry {
    fn delay(&self, attempt: u32) -> Duration {
        let factor = 2u32.saturating_pow(attempt.saturating_sub(1));
        self.base_delay.saturating_mul(factor)
    }
}

/// A JSON-over-HTTP client of one backend service.
#[derive(Clone)]
pub(crate) struct ServiceClient {
    service: &'static str,
    base_url: String,
    http: Client,
    retry: Retry,
    /// Each attempt's time limit, connecting included (the client is shared with the
    /// gateway's streams, which have none).
    timeout: Duration,
}

impl ServiceClient {
    pub(crate) fn new(
        service: &'static str,
        base_url: &str,
        http: Client,
        retry: Retry,
        timeout: Duration,
    ) -> Self {
        Self {
            service,
            base_url: base_url.trim_end_matches('/').to_owned(),
            http,
            retry,
            timeout,
        }
    }

    /// POSTs `body` and returns the parsed JSON answer (`Value::Null` for an empty body).
    pub(crate) async fn post<B: Serialize, T: DeserializeOwned>(
        &self,
        path: &str,
        body: &B,
    ) -> Result<T, ServiceError> {
        self.send(Method::POST, path, Some(body)).await
    }

    /// POSTs a body whose purpose is to carry one of the runtime's own credentials (the
    /// sandbox's registration token), so it skips the exact-value backstop that would
    /// replace it. Nothing else may go through here.
    pub(crate) async fn post_credential<B: Serialize, T: DeserializeOwned>(
        &self,
        path: &str,
        body: &B,
    ) -> Result<T, ServiceError> {
        let json = serde_json::to_vec(body).map_err(|error| ServiceError::InvalidRequest {
            service: self.service,
            detail: error.to_string(),
        })?;
        self.send_payload(Method::POST, path, Some(Payload::Whole(Bytes::from(json))))
            .await
    }

    /// GETs `path` and returns the parsed JSON answer.
    pub(crate) async fn get<T: DeserializeOwned>(&self, path: &str) -> Result<T, ServiceError> {
        self.send::<(), T>(Method::GET, path, None).await
    }

    /// POSTs a JSON document held as pieces, streamed with its length declared. Its items
    /// must already be clean of the runtime's credentials (the thread's stored JSON is,
    /// see `Thread::stored`); the head and the tail are cleaned here.
    pub(crate) async fn post_json_pieces<T: DeserializeOwned>(
        &self,
        path: &str,
        pieces: JsonPieces,
    ) -> Result<T, ServiceError> {
        let payload = Payload::Pieces(pieces.cleaned(&crate::redact::global()));
        self.send_payload(Method::POST, path, Some(payload)).await
    }

    async fn send<B: Serialize, T: DeserializeOwned>(
        &self,
        method: Method,
        path: &str,
        body: Option<&B>,
    ) -> Result<T, ServiceError> {
        let payload = match body.map(serde_json::to_string) {
            Some(Ok(json)) => Some(Payload::Whole(clean_payload(json))),
            Some(Err(error)) => {
                return Err(ServiceError::InvalidRequest {
                    service: self.service,
                    detail: error.to_string(),
                });
            }
            None => None,
        };
        self.send_payload(method, path, payload).await
    }

    async fn send_payload<T: DeserializeOwned>(
        &self,
        method: Method,
        path: &str,
        payload: Option<Payload>,
    ) -> Result<T, ServiceError> {
        let url = format!("{}{}", self.base_url, path);
        let mut attempt = 0;
        loop {
            attempt += 1;
            let mut request = self
                .http
                .request(method.clone(), &url)
                .timeout(self.timeout);
            if let Some(payload) = &payload {
                request = request.header(reqwest::header::CONTENT_TYPE, "application/json");
                request = match payload {
                    Payload::Whole(bytes) => request.body(bytes.clone()),
                    Payload::Pieces(pieces) => request
                        .header(reqwest::header::CONTENT_LENGTH, pieces.len())
                        .body(reqwest::Body::wrap_stream(futures::stream::iter(
                            pieces.chunks(),
                        ))),
                };
            }
            let outcome = request.send().await;
            let retry_left = attempt <= self.retry.retries;
            match outcome {
                Err(error) => {
                    if retry_left {
                        tracing::warn!(service = self.service, %url, %error, attempt, "request failed; retrying");
                        tokio::time::sleep(self.retry.delay(attempt)).await;
                        continue;
                    }
                    return Err(ServiceError::Unreachable {
                        service: self.service,
                        url: self.base_url.clone(),
                        detail: describe_reqwest_error(&error),
                    });
                }
                Ok(response) => {
                    let status = response.status();
                    let bytes = response.bytes().await.unwrap_or_default();
                    if status.is_success() {
                        let text: &[u8] = if bytes.is_empty() { b"null" } else { &bytes };
                        return serde_json::from_slice(text).map_err(|error| {
                            ServiceError::InvalidResponse {
                                service: self.service,
                                detail: error.to_string(),
                            }
                        });
                    }
                    if is_retryable(status) && retry_left {
                        tracing::warn!(service = self.service, %url, %status, attempt, "retryable status; retrying");
                        tokio::time::sleep(self.retry.delay(attempt)).await;
                        continue;
                    }
                    let (code, message) = parse_error_body(&bytes, status);
                    return Err(ServiceError::Status {
                        service: self.service,
                        status: status.as_u16(),
                        code,
                        message,
                    });
                }
            }
        }
    }
}

/// A request body: one buffer, or a document streamed from its pieces. Either is shared,
/// not copied, across retries.
enum Payload {
    Whole(Bytes),
    Pieces(JsonPieces),
}

/// A request body after the exact-value backstop: artifact uploads may carry what tools
/// produced, so the runtime's own credentials are replaced in the serialised body (tool
/// output was redacted before it entered the thread; the session history, sent as
/// pieces, is cleaned piece by piece). Shared, not copied, across retries.
fn clean_payload(json: String) -> Bytes {
    let replaced = match crate::redact::global().redact_values(&json) {
        Cow::Owned(clean) => Some(clean),
        Cow::Borrowed(_) => None,
    };
    Bytes::from(replaced.unwrap_or(json))
}

fn is_retryable(status: StatusCode) -> bool {
    status.is_server_error() || status == StatusCode::TOO_MANY_REQUESTS
}

fn describe_reqwest_error(error: &reqwest::Error) -> String {
    if error.is_timeout() {
        "the request timed out".to_owned()
    } else if error.is_connect() {
        "connection refused or unreachable".to_owned()
    } else {
        error.to_string()
    }
}

/// Reads the error shapes services really send (INTEROP.md §7): `{code, message}`,
/// FastAPI's `{detail: ...}`, the gateway's `{error: ...}`.
pub(crate) fn parse_error_body(bytes: &[u8], status: StatusCode) -> (Option<String>, String) {
    let fallback = || {
        let text = String::from_utf8_lossy(bytes).trim().to_owned();
        if text.is_empty() {
            status
                .canonical_reason()
                .unwrap_or("no reason given")
                .to_owned()
        } else {
            text.chars().take(500).collect()
        }
    };
    let Ok(value) = serde_json::from_slice::<Value>(bytes) else {
        return (None, fallback());
    };
    let code = value.get("code").and_then(Value::as_str).map(str::to_owned);
    let message = value
        .get("message")
        .and_then(Value::as_str)
        .map(str::to_owned)
        .or_else(|| match value.get("error") {
            Some(Value::String(text)) => Some(text.clone()),
            Some(Value::Object(error)) => error
                .get("message")
                .and_then(Value::as_str)
                .map(str::to_owned),
            _ => None,
        })
        .or_else(|| match value.get("detail") {
            Some(Value::String(text)) => Some(text.clone()),
            Some(Value::Array(items)) => fastapi_detail(items),
            _ => None,
        })
        .unwrap_or_else(fallback);
    (code, message)
}

/// FastAPI's validation errors (`[{loc: ["body", "tenantId"], msg: "field required"}]`) in
/// words — "tenantId: field required" — since the app shows the message to people.
fn fastapi_detail(items: &[Value]) -> Option<String> {
    let parts: Vec<String> = items
        .iter()
        .filter_map(|item| {
            let msg = item.get("msg").and_then(Value::as_str)?;
            let field: Vec<String> = item
                .get("loc")
                .and_then(Value::as_array)
                .map(|loc| {
                    loc.iter()
                        .filter(|part| part.as_str() != Some("body"))
                        .map(|part| match part {
                            Value::String(text) => text.clone(),
                            other => other.to_string(),
                        })
                        .collect()
                })
                .unwrap_or_default();
            Some(if field.is_empty() {
                msg.to_owned()
            } else {
                format!("{}: {msg}", field.join("."))
            })
        })
        .collect();
    (!parts.is_empty()).then(|| parts.join("; "))
}

/// The members of `GET /sessions/{id}` the runtime uses.
#[derive(Debug, Clone, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SessionRecord {
    pub workspace_id: String,
    #[serde(default)]
    pub tenant_id: Option<String>,
    #[serde(default)]
    pub user_id: Option<String>,
    #[serde(default)]
    pub execution_environment: Option<String>,
    #[serde(default)]
    pub name: Option<String>,
}

pub(crate) struct SessionServiceClient {
    client: ServiceClient,
}

impl SessionServiceClient {
    pub(crate) fn new(client: ServiceClient) -> Self {
        Self { client }
    }

    pub(crate) async fn create_session(
        &self,
        request: &CreateSessionRequest,
    ) -> Result<CreateSessionResponse, ServiceError> {
        self.client.post("/sessions", request).await
    }

    pub(crate) async fn resume_session(
        &self,
        session_id: &str,
        checkpoint_cursor: Option<String>,
    ) -> Result<ResumeSessionResponse, ServiceError> {
        let body = ResumeSessionRequest { checkpoint_cursor };
        self.client
            .post(&format!("/sessions/{session_id}/resume"), &body)
            .await
    }

    /// `GET /sessions/{id}`: who a session belongs to and where its workspace is, for a
    /// session this process holds nothing of (INTEROP.md §8).
    pub(crate) async fn get_session(
        &self,
        session_id: &str,
    ) -> Result<SessionRecord, ServiceError> {
        self.client.get(&format!("/sessions/{session_id}")).await
    }

    /// `POST /sessions/{id}/tasks`: the task record the app's sidebar counts (INTEROP.md §8).
    pub(crate) async fn create_task(
        &self,
        session_id: &str,
        task_id: &str,
        prompt: &str,
        max_steps: u32,
    ) -> Result<(), ServiceError> {
        let body = json!({ "taskId": task_id, "prompt": prompt, "maxSteps": max_steps });
        let _: Value = self
            .client
            .post(&format!("/sessions/{session_id}/tasks"), &body)
            .await?;
        Ok(())
    }

    /// `GET /sessions/{id}/tasks/{taskId}`: whether the task's record exists (404: not).
    pub(crate) async fn task_exists(
        &self,
        session_id: &str,
        task_id: &str,
    ) -> Result<bool, ServiceError> {
        match self
            .client
            .get::<Value>(&format!("/sessions/{session_id}/tasks/{task_id}"))
            .await
        {
            Ok(_) => Ok(true),
            Err(ServiceError::Status { status: 404, .. }) => Ok(false),
            Err(error) => Err(error),
        }
    }

    /// `POST /sessions/{id}/tasks/{taskId}/complete`; `status` is `completed`, `failed` or
    /// `cancelled`.
    pub(crate) async fn complete_task(
        &self,
        session_id: &str,
        task_id: &str,
        status: &str,
        step_count: u32,
        completion_reason: Option<&str>,
    ) -> Result<(), ServiceError> {
        let body = json!({
            "status": status,
            "stepCount": step_count,
            "completionReason": completion_reason,
        });
        let _: Value = self
            .client
            .post(
                &format!("/sessions/{session_id}/tasks/{task_id}/complete"),
                &body,
            )
            .await?;
        Ok(())
    }

    /// `PATCH /sessions/{id}/name`, as the runtime's automatic name (`autoNamed: true`).
    pub(crate) async fn rename_session(
        &self,
        session_id: &str,
        name: &str,
    ) -> Result<(), ServiceError> {
        let body = json!({ "name": name, "autoNamed": true });
        let _: Value = self
            .client
            .send(
                Method::PATCH,
                &format!("/sessions/{session_id}/name"),
                Some(&body),
            )
            .await?;
        Ok(())
    }

    /// INTEROP.md §9: the sandbox registers itself and receives its session.
    pub(crate) async fn register_sandbox(
        &self,
        session_id: &str,
        request: &SandboxRegistrationRequest,
    ) -> Result<SandboxRegistrationResponse, ServiceError> {
        self.client
            .post_credential(&format!("/sessions/{session_id}/register"), request)
            .await
    }

    pub(crate) async fn cancel_session(
        &self,
        session_id: &str,
        reason: &str,
    ) -> Result<(), ServiceError> {
        let body = CancelSessionRequest {
            reason: reason.to_owned(),
        };
        let _: Value = self
            .client
            .post(&format!("/sessions/{session_id}/cancel"), &body)
            .await?;
        Ok(())
    }
}

pub(crate) struct WorkspaceServiceClient {
    client: ServiceClient,
}

impl WorkspaceServiceClient {
    pub(crate) fn new(client: ServiceClient) -> Self {
        Self { client }
    }

    pub(crate) async fn upload_artifact(
        &self,
        workspace_id: &str,
        request: &ArtifactUploadRequest,
    ) -> Result<ArtifactUploadResponse, ServiceError> {
        self.client
            .post(&format!("/workspaces/{workspace_id}/artifacts"), request)
            .await
    }

    /// Uploads an artifact whose request is held as pieces (the session history).
    pub(crate) async fn upload_artifact_pieces(
        &self,
        workspace_id: &str,
        pieces: JsonPieces,
    ) -> Result<ArtifactUploadResponse, ServiceError> {
        self.client
            .post_json_pieces(&format!("/workspaces/{workspace_id}/artifacts"), pieces)
            .await
    }

    /// The latest `session_history` of a past session: a bare array of messages
    /// (INTEROP.md §4) in any of the forms of INTEROP.md §8, read back as the thread's
    /// messages, used to continue a past conversation.
    pub(crate) async fn session_history(
        &self,
        workspace_id: &str,
        session_id: &str,
    ) -> Result<Vec<ConversationMessage>, ServiceError> {
        let stored: Vec<Value> = self
            .client
            .get(&format!(
                "/workspaces/{workspace_id}/sessions/{session_id}/history"
            ))
            .await?;
        history::read_back(stored, session_id).map_err(|detail| ServiceError::InvalidResponse {
            service: "Workspace Service",
            detail,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_bodies_of_every_known_shape_are_read() {
        let status = StatusCode::BAD_REQUEST;
        assert_eq!(
            parse_error_body(
                br#"{"code":"INVALID_REQUEST","message":"Session has expired"}"#,
                status
            ),
            (Some("INVALID_REQUEST".into()), "Session has expired".into())
        );
        assert_eq!(
            parse_error_body(br#"{"error":"blocked"}"#, status).1,
            "blocked"
        );
        assert_eq!(
            parse_error_body(br#"{"error":{"message":"upstream","type":"x"}}"#, status).1,
            "upstream"
        );
        assert_eq!(
            parse_error_body(
                br#"{"detail":[{"loc":["body","tenantId"],"msg":"field required"},{"loc":["body","clientInfo",0],"msg":"bad"}]}"#,
                status
            )
            .1,
            "tenantId: field required; clientInfo.0: bad"
        );
        // A detail list without messages falls back to the raw body.
        assert!(
            parse_error_body(br#"{"detail":[{"loc":["body"]}]}"#, status)
                .1
                .contains("loc")
        );
        assert_eq!(
            parse_error_body(b"", StatusCode::BAD_GATEWAY).1,
            "Bad Gateway"
        );
    }
}
