//! Sandbox mode (INTEROP.md §9): the session is not created by a client but received from
//! the Session Service when the sandbox registers itself.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use agent_protocol::methods::{CREATE_SESSION, SyncDirection, WorkspaceSyncParams};
use agent_protocol::services::SandboxRegistrationRequest;
use serde_json::Value;

use crate::host::{Host, Slot};
use crate::services::ServiceError;
use crate::session::Identity;

/// What the sandbox tells the Session Service about itself, and how hard it tries.
#[derive(Debug, Clone)]
pub struct SandboxRegistration {
    pub session_id: String,
    pub registration_token: String,
    /// `http://IP:PORT` the service's proxy reaches.
    pub endpoint: String,
    /// Given (`local:<pid>`, `SANDBOX_TASK_ARN`), or read from the ECS task metadata
    /// endpoint below when absent.
    pub task_arn: Option<String>,
    /// `ECS_CONTAINER_METADATA_URI_V4`: `GET {uri}/task` names the task (`TaskARN`).
    pub ecs_metadata_uri: Option<String>,
    /// The session's workspace root: files, uploads and `workspace.sync` live here.
    pub workspace_dir: PathBuf,
    /// Registration is retried (unreachable service, 5xx) until this much time has passed.
    pub deadline: Duration,
    /// First pause between attempts; doubles up to five seconds.
    pub retry_delay: Duration,
}

/// Set once the process is a sandbox: where its files are and which Workspace Service
/// holds their cloud copies.
#[derive(Debug)]
pub(crate) struct SandboxBinding {
    pub workspace_dir: PathBuf,
    workspace_service_url: std::sync::Mutex<String>,
}

impl SandboxBinding {
    pub(crate) fn workspace_service(&self) -> String {
        match self.workspace_service_url.lock() {
            Ok(url) => url.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }

    fn set_workspace_service(&self, url: String) {
        match self.workspace_service_url.lock() {
            Ok(mut slot) => *slot = url,
            Err(poisoned) => *poisoned.into_inner() = url,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum RegistrationError {
    #[error(
        "The sandbox could not register session {session_id} with the Session Service within {seconds} s: {source}"
    )]
    GaveUp {
        session_id: String,
        seconds: u64,
        source: ServiceError,
    },
    #[error("The Session Service refused to register session {session_id}: {source}")]
    Refused {
        session_id: String,
        source: ServiceError,
    },
    #[error("The registration of session {session_id} could not open it: {message}")]
    Unusable { session_id: String, message: String },
    #[error("This runtime process already serves a session; a sandbox registers exactly once.")]
    AlreadyBound,
}

impl Host {
    /// Whether this process is a sandbox (requests without `sessionId` mean its session).
    pub fn is_sandbox(&self) -> bool {
        self.sandbox.get().is_some()
    }

    /// The session the sandbox serves, once its registration has opened it.
    pub fn sandbox_session_id(&self) -> Option<String> {
        self.sandbox.get()?;
        self.current().map(|session| session.id().to_owned())
    }

    pub fn is_shutting_down(&self) -> bool {
        self.shutdown_started.load(Ordering::SeqCst)
    }

    /// The sandbox's workspace folder, once it is a sandbox.
    pub fn sandbox_workspace(&self) -> Option<PathBuf> {
        self.sandbox
            .get()
            .map(|binding| binding.workspace_dir.clone())
    }

    /// The session's kept events after `since_id`, for the sandbox's event stream; empty
    /// before the session exists.
    pub fn replay_events(&self, since_id: u64, max: usize) -> crate::events::Replay {
        self.current()
            .map(|session| session.events.replay(since_id, max))
            .unwrap_or_default()
    }

    /// Registers with the Session Service and opens the session its answer describes.
    /// Unreachable service and 5xx answers are retried until the deadline; a 4xx answer
    /// (wrong token, session not provisioning) is final.
    pub async fn register_sandbox(
        self: &Arc<Self>,
        registration: SandboxRegistration,
    ) -> Result<(), RegistrationError> {
        let session_id = registration.session_id.clone();
        let unusable = |message: String| RegistrationError::Unusable {
            session_id: session_id.clone(),
            message,
        };
        let binding = SandboxBinding {
            workspace_dir: registration.workspace_dir.clone(),
            workspace_service_url: std::sync::Mutex::new(
                self.config.services.workspace_url.clone(),
            ),
        };
        if self.sandbox.set(binding).is_err() {
            return Err(RegistrationError::AlreadyBound);
        }
        {
            let mut slot = self.slot();
            if !matches!(*slot, Slot::Empty) {
                self.registration_ended.send_replace(true);
                return Err(RegistrationError::AlreadyBound);
            }
            *slot = Slot::Creating;
        }
        let outcome = self.register_and_open(&registration).await;
        self.registration_ended.send_replace(true);
        if outcome.is_err() {
            let mut slot = self.slot();
            if matches!(*slot, Slot::Creating) {
                *slot = Slot::Empty;
            }
        }
        outcome.map_err(|error| match error {
            Failure::Service(source) if retryable(&source) => RegistrationError::GaveUp {
                session_id: session_id.clone(),
                seconds: registration.deadline.as_secs(),
                source,
            },
            Failure::Service(source) => RegistrationError::Refused {
                session_id: session_id.clone(),
                source,
            },
            Failure::Open(message) => unusable(message),
        })
    }

    async fn register_and_open(
        self: &Arc<Self>,
        registration: &SandboxRegistration,
    ) -> Result<(), Failure> {
        let backends = self
            .backends()
            .map_err(|error| Failure::Open(error.into_object().message))?;
        let task_arn = match (&registration.task_arn, &registration.ecs_metadata_uri) {
            (Some(arn), _) => arn.clone(),
            (None, Some(uri)) => ecs_task_arn(&backends.http, uri, self.config.services.timeout)
                .await
                .map_err(Failure::Open)?,
            (None, None) => format!("local:{}", std::process::id()),
        };
        let request = SandboxRegistrationRequest {
            sandbox_endpoint: registration.endpoint.clone(),
            task_arn,
            registration_token: registration.registration_token.clone(),
        };
        let started = tokio::time::Instant::now();
        let mut delay = registration.retry_delay;
        let answer = loop {
            match backends
                .sessions
                .register_sandbox(&registration.session_id, &request)
                .await
            {
                Ok(answer) => break answer,
                Err(error)
                    if retryable(&error) && started.elapsed() + delay < registration.deadline =>
                {
                    tracing::warn!(%error, "registration failed; retrying");
                    tokio::time::sleep(delay).await;
                    delay = (delay * 2).min(Duration::from_secs(5));
                }
                Err(error) => return Err(Failure::Service(error)),
            }
        };
        if answer.session_id != registration.session_id {
            return Err(Failure::Open(format!(
                "the Session Service answered for session {} instead",
                answer.session_id
            )));
        }
        let Some(bundle) = answer.policy_bundle else {
            return Err(Failure::Open(
                "the answer carries no policy bundle, so the session cannot start".to_owned(),
            ));
        };
        super::create::validate_bundle(&bundle, &answer.session_id)
            .map_err(|error| Failure::Open(error.into_object().message))?;
        if let Some(url) = answer.workspace_service_url.clone() {
            // The registration names the Workspace Service of this session's files.
            if let Some(binding) = self.sandbox.get() {
                binding.set_workspace_service(url);
            }
        }
        let identity = Identity {
            session_id: answer.session_id.clone(),
            workspace_id: answer.workspace_id.clone(),
            tenant_id: bundle.tenant_id.clone().unwrap_or_default(),
            user_id: bundle.user_id.clone().unwrap_or_default(),
            name: answer.name.clone().filter(|name| !name.is_empty()),
            execution_environment: "cloud_sandbox".to_owned(),
            workspace_root: Some(registration.workspace_dir.clone()),
            os_family: std::env::consts::OS.to_owned(),
            continued_from: None,
        };
        self.activate(
            &backends,
            identity,
            bundle,
            answer.feature_flags.unwrap_or_default(),
            None,
        )
        .await
        .map_err(|error| Failure::Open(error.into_object().message))?;
        tracing::info!(session_id = %answer.session_id, "sandbox registered");
        self.preseed().await;
        Ok(())
    }

    /// Fetches the files the Workspace Service holds for the session's workspace: the
    /// service syncs an upload only to a running sandbox, so what was uploaded before (an
    /// earlier session, or while this one was provisioning) comes now. A failure is logged;
    /// the session runs on and `workspace.sync` can fetch them later.
    async fn preseed(&self) {
        let pull = WorkspaceSyncParams {
            direction: SyncDirection::Pull,
            paths: Vec::new(),
        };
        match self.workspace_sync(pull).await {
            Ok(result) => {
                let count = |key: &str| {
                    result
                        .get(key)
                        .and_then(Value::as_array)
                        .map_or(0, Vec::len)
                };
                tracing::info!(
                    synced = count("synced"),
                    failed = count("failed"),
                    "fetched the workspace's files"
                );
            }
            Err(error) => {
                let message = error.into_object().message;
                tracing::warn!(%message, "could not fetch the workspace's files");
            }
        }
    }

    /// In sandbox mode, waits until the registration has ended; at once otherwise.
    pub(super) async fn registration_settled(&self) {
        if self.sandbox.get().is_none() {
            return;
        }
        let mut ended = self.registration_ended.subscribe();
        let _ = ended.wait_for(|ended| *ended).await;
    }

    /// Requests without `sessionId` (the web app's StartTask, CancelTask, …) mean the
    /// sandbox's one session.
    pub(super) fn default_session_id(&self, method: &str, params: Value) -> Value {
        if self.sandbox.get().is_none() || method == CREATE_SESSION {
            return params;
        }
        let Value::Object(mut object) = params else {
            return params;
        };
        if matches!(object.get("sessionId"), None | Some(Value::Null))
            && let Some(session) = self.current()
        {
            object.insert(
                "sessionId".to_owned(),
                Value::String(session.id().to_owned()),
            );
        }
        Value::Object(object)
    }
}

/// The task ARN from the ECS task metadata endpoint (v4).
async fn ecs_task_arn(
    http: &reqwest::Client,
    uri: &str,
    timeout: Duration,
) -> Result<String, String> {
    let url = format!("{}/task", uri.trim_end_matches('/'));
    let failed =
        |detail: String| format!("the ECS task metadata at {url} could not be read ({detail})");
    let answer: Value = http
        .get(&url)
        .timeout(timeout)
        .send()
        .await
        .map_err(|error| failed(error.to_string()))?
        .json()
        .await
        .map_err(|error| failed(error.to_string()))?;
    answer
        .get("TaskARN")
        .and_then(Value::as_str)
        .map(str::to_owned)
        .ok_or_else(|| failed("it names no TaskARN".to_owned()))
}

enum Failure {
    Service(ServiceError),
    Open(String),
}

fn retryable(error: &ServiceError) -> bool {
    match error {
        ServiceError::Unreachable { .. } => true,
        ServiceError::Status { status, .. } => *status >= 500,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// ECS task metadata (v4) as the container agent serves it, on loopback.
    async fn metadata_server(task: Value) -> String {
        let app = axum::Router::new().route(
            "/v4/abc/task",
            axum::routing::get(move || async move { axum::Json(task) }),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, app).await });
        format!("http://{address}/v4/abc")
    }

    #[tokio::test]
    async fn the_task_arn_comes_from_the_ecs_task_metadata() {
        let arn = "arn:aws:ecs:us-east-1:123456789012:task/cluster/0123abcd";
        let uri = metadata_server(serde_json::json!({"Cluster": "cluster", "TaskARN": arn})).await;
        let http = reqwest::Client::new();
        let found = ecs_task_arn(&http, &uri, Duration::from_secs(5)).await;
        assert_eq!(found.as_deref(), Ok(arn));
        // A trailing slash on the URI names the same endpoint.
        let found = ecs_task_arn(&http, &format!("{uri}/"), Duration::from_secs(5)).await;
        assert_eq!(found.as_deref(), Ok(arn));
    }

    #[tokio::test]
    async fn metadata_without_a_task_arn_is_a_readable_failure() {
        let uri = metadata_server(serde_json::json!({"Cluster": "cluster"})).await;
        let failure = ecs_task_arn(&reqwest::Client::new(), &uri, Duration::from_secs(5))
            .await
            .unwrap_err();
        assert!(failure.contains("names no TaskARN"), "{failure}");
        assert!(failure.contains(&uri), "{failure}");
    }
}
