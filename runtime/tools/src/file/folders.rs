//! CreateDirectory (INTEROP.md §11): a folder, and by default its missing parents, each
//! created beneath the project folder so a link on the way that leads out is refused.

use std::io::ErrorKind;
use std::path::Path;

use agent_protocol::{ErrorCode, ToolDefinition, ToolRequest, ToolResult};
use async_trait::async_trait;
use serde_json::json;

use super::{io_failure, open_failure, resolve_path};
use crate::args::Args;
use crate::platform::replace;
use crate::tool::Tool;

pub(crate) struct CreateDirectory;

#[async_trait]
impl Tool for CreateDirectory {
    fn definition(&self) -> ToolDefinition {
        ToolDefinition {
            tool_name: "CreateDirectory".to_owned(),
            description: "Create a directory".to_owned(),
            input_schema: json!({
                "type": "object",
                "required": ["path"],
                "additionalProperties": false,
                "properties": {
                    "path": { "type": "string", "description": "Directory to create (relative paths resolve against the project folder)" },
                    "create_parents": { "type": "boolean", "default": true, "description": "Create missing parent directories too. Default: true" }
                }
            }).into(),
        }
    }

    async fn run(&self, request: &ToolRequest) -> ToolResult {
        let args = Args::new("CreateDirectory", &request.arguments);
        let parsed = args.only(&["path", "create_parents"]).and_then(|()| {
            Ok((
                args.required_str("path")?,
                args.optional_bool("create_parents")?.unwrap_or(true),
            ))
        });
        let (raw_path, parents) = match parsed {
            Ok(parsed) => parsed,
            Err(error) => return ToolResult::failed(request, ErrorCode::InvalidRequest, error.0),
        };
        let path = match resolve_path("CreateDirectory", raw_path, request) {
            Ok(path) => path,
            Err(failure) => return *failure,
        };
        let request_owned = request.clone();
        tokio::task::spawn_blocking(move || create(&request_owned, &path, parents))
            .await
            .unwrap_or_else(|error| {
                ToolResult::failed(
                    request,
                    ErrorCode::ToolExecutionFailed,
                    format!("CreateDirectory stopped unexpectedly: {error}"),
                )
            })
    }
}

fn create(request: &ToolRequest, path: &Path, parents: bool) -> ToolResult {
    match std::fs::metadata(path) {
        Ok(metadata) if metadata.is_dir() => {
            return ToolResult::succeeded(
                request,
                format!("Directory already exists: {}", path.display()),
            );
        }
        Ok(_) => {
            return ToolResult::failed(
                request,
                ErrorCode::InvalidRequest,
                format!(
                    "CreateDirectory: {} exists and is not a directory",
                    path.display()
                ),
            );
        }
        Err(error) if error.kind() == ErrorKind::NotFound => {}
        Err(error) => return io_failure(request, path, &error),
    }
    if !parents
        && let Some(parent) = path.parent()
        && !parent.is_dir()
    {
        return ToolResult::failed(
            request,
            ErrorCode::FileNotFound,
            format!(
                "Directory not found: {} (pass create_parents: true to create it)",
                parent.display()
            ),
        );
    }
    let root = request.workspace_root.as_deref().map(Path::new);
    match replace::create_folders(root, path) {
        Ok(()) => ToolResult::succeeded(request, format!("Created directory {}", path.display())),
        Err(error) => open_failure(request, "CreateDirectory", path, &error),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{assert_failed, request};
    use agent_protocol::ToolStatus;
    use serde_json::Value;

    async fn run(dir: &Path, args: Value) -> ToolResult {
        CreateDirectory
            .run(&request("CreateDirectory", dir, args))
            .await
    }

    #[tokio::test]
    async fn creates_folders_with_parents_and_accepts_an_existing_one() {
        let dir = tempfile::tempdir().unwrap();
        let made = run(dir.path(), json!({"path": "a/b/c"})).await;
        assert_eq!(made.status, ToolStatus::Succeeded, "{made:?}");
        assert!(dir.path().join("a/b/c").is_dir());
        let again = run(dir.path(), json!({"path": "a/b/c"})).await;
        assert!(
            again
                .output_text
                .unwrap()
                .starts_with("Directory already exists")
        );
        let flat = run(dir.path(), json!({"path": "x/y", "create_parents": false})).await;
        assert_failed(&flat, ErrorCode::FileNotFound, "create_parents");
        assert!(!dir.path().join("x").exists());
        std::fs::write(dir.path().join("f"), "").unwrap();
        let file = run(dir.path(), json!({"path": "f"})).await;
        assert_failed(&file, ErrorCode::InvalidRequest, "not a directory");
        let escape = run(dir.path(), json!({"path": "../out"})).await;
        assert_eq!(escape.error.unwrap().code, ErrorCode::InvalidRequest);
    }

    #[cfg(target_os = "linux")]
    #[tokio::test]
    async fn a_link_out_of_the_project_folder_is_not_created_through() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(outside.path(), dir.path().join("out")).unwrap();
        let result = run(dir.path(), json!({"path": "out/new"})).await;
        assert_failed(
            &result,
            ErrorCode::PermissionDenied,
            "leads out of the project folder",
        );
        assert!(!outside.path().join("new").exists());
    }
}
