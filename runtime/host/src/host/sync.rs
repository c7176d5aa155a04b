//! `workspace.sync` (INTEROP.md §9): after an upload the Session Service asks the sandbox
//! to pull the new files from the Workspace Service; `push` sends the folder's files back.

use agent_protocol::ErrorCode;
use agent_protocol::methods::{
    SyncDirection, SyncFailure, WORKSPACE_SYNC, WorkspaceSyncParams, WorkspaceSyncResult,
};
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
                Some(relative) => {
                    let local = root.join(relative);
                    match params.direction {
                        SyncDirection::Pull => pull(&client, &path, &local).await,
                        SyncDirection::Push => push(&client, &path, &local).await,
                    }
                }
            };
            match outcome {
                Ok(()) => result.synced.push(path),
                Err(message) => result.failed.push(SyncFailure { path, message }),
            }
        }
        to_value(result)
    }
}

async fn pull(
    client: &WorkspaceFilesClient,
    path: &str,
    local: &std::path::Path,
) -> Result<(), String> {
    let content = client
        .download(path)
        .await
        .map_err(|error| error.to_string())?;
    if let Some(parent) = local.parent() {
        tokio::fs::create_dir_all(parent)
            .await
            .map_err(|error| format!("cannot create {}: {error}", parent.display()))?;
    }
    tokio::fs::write(local, &content)
        .await
        .map_err(|error| format!("cannot write {}: {error}", local.display()))
}

async fn push(
    client: &WorkspaceFilesClient,
    path: &str,
    local: &std::path::Path,
) -> Result<(), String> {
    let content = tokio::fs::read(local)
        .await
        .map_err(|error| format!("cannot read {}: {error}", local.display()))?;
    client
        .upload(path, content)
        .await
        .map_err(|error| error.to_string())
}

fn sync_failed(direction: &str, detail: &str) -> RpcError {
    RpcError::new(
        ErrorCode::ServiceUnavailable,
        format!("workspace.sync {direction} could not list the files to copy: {detail}."),
    )
}
