//! `workspace.sync` (INTEROP.md §9): after an upload the Session Service asks the sandbox
//! to pull the new files from the Workspace Service; `push` sends the folder's files back.
//! Both open the folder's files beneath it by handle (no link followed out), and what is
//! pushed passes the redaction tool output passes.

use agent_protocol::ErrorCode;
use agent_protocol::methods::{
    SyncDirection, SyncFailure, WORKSPACE_SYNC, WorkspaceSyncParams, WorkspaceSyncResult,
};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::error::RpcError;
use crate::host::{Host, to_value};
use crate::workspace_files::{self, WorkspaceFilesClient};

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
/// the name is replaced, a linked folder on the way that leads out is refused.
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
    let root = root.to_path_buf();
    let shown = path.to_owned();
    tokio::task::spawn_blocking(move || {
        let mut file = workspace_files::create(&root, &relative)?;
        file.write_all(&content)?;
        file.commit()
    })
    .await
    .map_err(|error| format!("writing \"{shown}\" failed: {error}"))?
    .map_err(|error| workspace_files::describe(path, &error))
}

/// Sends the folder's `path` to the Workspace Service: read beneath the folder (a link out
/// is refused), and redacted like tool output, since the bytes leave the sandbox. A file
/// that is not text and holds a secret is not sent at all.
async fn push(
    client: &WorkspaceFilesClient,
    path: &str,
    root: &Path,
    relative: PathBuf,
) -> Result<(), String> {
    let root = root.to_path_buf();
    let read = tokio::task::spawn_blocking(move || -> std::io::Result<Vec<u8>> {
        let (mut file, len) = workspace_files::open(&root, &relative)?;
        let mut content = Vec::with_capacity(usize::try_from(len).unwrap_or_default());
        file.read_to_end(&mut content)?;
        Ok(content)
    })
    .await
    .map_err(|error| format!("reading \"{path}\" failed: {error}"))?
    .map_err(|error| workspace_files::describe(path, &error))?;
    let content = redacted(path, read)?;
    client
        .upload(path, content)
        .await
        .map_err(|error| error.to_string())
}

/// The content with every secret the redactor knows replaced.
fn redacted(path: &str, content: Vec<u8>) -> Result<Vec<u8>, String> {
    let redactor = crate::redact::global();
    match String::from_utf8(content) {
        Ok(text) => Ok(redactor.redact(&text).into_owned().into_bytes()),
        Err(binary) => {
            let bytes = binary.into_bytes();
            let lossy = String::from_utf8_lossy(&bytes);
            if matches!(redactor.redact(&lossy), std::borrow::Cow::Owned(_)) {
                return Err(format!(
                    "\"{path}\" is not text and holds what the redaction rules take for a secret; it is not sent"
                ));
            }
            Ok(bytes)
        }
    }
}

fn sync_failed(direction: &str, detail: &str) -> RpcError {
    RpcError::new(
        ErrorCode::ServiceUnavailable,
        format!("workspace.sync {direction} could not list the files to copy: {detail}."),
    )
}
