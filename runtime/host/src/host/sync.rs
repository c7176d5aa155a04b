//! `workspace.sync` (INTEROP.md §9): after an upload the Session Service asks the sandbox
//! to pull the new files from the Workspace Service; `push` sends the folder's files back.
//! Both open the folder's files beneath it by handle (no link followed out), and what is
//! pushed passes the redaction tool output passes.

use agent_protocol::ErrorCode;
use agent_protocol::methods::{
    SyncDirection, SyncFailure, WORKSPACE_SYNC, WorkspaceSyncParams, WorkspaceSyncResult,
};
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::error::RpcError;
use crate::host::{Host, to_value};
use crate::workspace_files::{self, WorkspaceFilesClient};
use crate::workspace_stream;

impl Host {
    pub(super) async fn workspace_sync(
        &self,
        params: WorkspaceSyncParams,
    ) -> Result<Value, RpcError> {
        let Some(binding) = self.sandbox.get() else {
            return Err(RpcError::method_not_found(WORKSPACE_SYNC));
        };
        let Some(session) = self.current() else {
            return Err(RpcError::new(
                ErrorCode::SessionNotFound,
                "The sandbox has no session yet (its registration has not completed), so there is no workspace to sync.",
            ));
        };
        let backends = self.backends()?;
        let client = WorkspaceFilesClient::new(
            backends.http.clone(),
            &binding.workspace_service(),
            &session.identity.workspace_id,
            self.config.services.timeout,
        );
        let root = binding.workspace_dir.clone();
        let mut result = WorkspaceSyncResult {
            direction: params.direction,
            synced: Vec::new(),
            failed: Vec::new(),
        };
        let paths = match (params.direction, params.paths.is_empty()) {
            (_, false) => params.paths,
            (SyncDirection::Pull, true) => client
                .list()
                .await
                .map_err(|error| sync_failed("pull", &error.to_string()))?
                .into_iter()
                .map(|file| file.path)
                .collect(),
            (SyncDirection::Push, true) => workspace_files::list(&root)
                .map_err(|error| sync_failed("push", &error.to_string()))?
                .into_iter()
                .map(|file| file.path)
                .collect(),
        };
        for path in paths {
            let outcome = match workspace_files::relative(&path) {
                None => Err(format!(
                    "\"{path}\" is not a relative path inside the workspace"
                )),
                Some(relative) => match params.direction {
                    SyncDirection::Pull => pull(&client, &path, &root, relative).await,
                    SyncDirection::Push => push(&client, &path, &root, relative).await,
                },
            };
            match outcome {
                Ok(()) => result.synced.push(path),
                Err(message) => result.failed.push(SyncFailure { path, message }),
            }
        }
        to_value(result)
    }
}

/// Copies `path` from the Workspace Service into the folder, beneath it: a link planted at
/// the name is replaced, a linked folder on the way that leads out is refused. The bytes
/// go to disk as they arrive.
async fn pull(
    client: &WorkspaceFilesClient,
    path: &str,
    root: &Path,
    relative: PathBuf,
) -> Result<(), String> {
    let content = client
        .download(path)
        .await
        .map_err(|error| error.to_string())?;
    workspace_stream::write_streamed(content, root, relative)
        .await
        .map_err(|error| workspace_files::describe(path, &error))
}

/// Sends the folder's `path` to the Workspace Service: read beneath the folder (a link out
/// is refused, and nothing is sent), and redacted like tool output a window at a time,
/// since the bytes leave the sandbox. A file that is not text and holds a secret is not
/// sent: its upload is broken off.
async fn push(
    client: &WorkspaceFilesClient,
    path: &str,
    root: &Path,
    relative: PathBuf,
) -> Result<(), String> {
    let root = root.to_path_buf();
    let file = tokio::task::spawn_blocking(move || workspace_files::open(&root, &relative))
        .await
        .map_err(|error| format!("reading \"{path}\" failed: {error}"))?
        .map_err(|error| workspace_files::describe(path, &error))?
        .0;
    let redacting = workspace_stream::Redacting::new(file, crate::redact::global());
    let (content, reading) = workspace_stream::chunks(redacting);
    let sent = client.upload(path, content).await;
    // The reader's own failure says more than the broken-off upload it caused.
    match reading.await {
        Ok(Err(error)) => return Err(read_failure(path, &error)),
        Err(error) => return Err(format!("reading \"{path}\" failed: {error}")),
        Ok(Ok(())) => {}
    }
    sent.map_err(|error| error.to_string())
}

/// Why a pushed file could not be read, as a client reads it.
fn read_failure(path: &str, error: &std::io::Error) -> String {
    let refusal = error.get_ref().and_then(|inner| {
        inner
            .downcast_ref::<workspace_stream::SecretInBinary>()
            .map(ToString::to_string)
            .or_else(|| {
                inner
                    .downcast_ref::<workspace_stream::NoSafeCut>()
                    .map(ToString::to_string)
            })
    });
    match refusal {
        Some(reason) => format!("\"{path}\" is not sent: {reason}"),
        None => workspace_files::describe(path, error),
    }
}

fn sync_failed(direction: &str, detail: &str) -> RpcError {
    RpcError::new(
        ErrorCode::ServiceUnavailable,
        format!("workspace.sync {direction} could not list the files to copy: {detail}."),
    )
}
