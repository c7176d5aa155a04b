//! DeleteFile (local-tool-runtime.md §4.3): one file, never a directory, with a `file_diff`
//! artifact of what was removed so the deletion can be reviewed (and undone by hand).

use std::fs;
use std::path::Path;

use agent_protocol::methods::FileChangeStatus;
use agent_protocol::tool::FileChange;
use agent_protocol::{ErrorCode, ToolDefinition, ToolRequest, ToolResult};
use async_trait::async_trait;
use serde_json::json;

use super::diff::{self, MAX_DIFF_INPUT_BYTES, Side};
use super::{io_failure, resolve_path};
use crate::args::Args;
use crate::output;
use crate::tool::Tool;

pub(crate) struct DeleteFile;

#[async_trait]
impl Tool for DeleteFile {
    fn definition(&self) -> ToolDefinition {
        ToolDefinition {
            tool_name: "DeleteFile".to_owned(),
            description: "Delete a file at the given path".to_owned(),
            input_schema: json!({
                "type": "object",
                "required": ["path"],
                "additionalProperties": false,
                "properties": {
                    "path": { "type": "string", "description": "Absolute file path to delete (relative paths resolve against the project folder). Directories cannot be deleted." }
                }
            }).into(),
        }
    }

    async fn run(&self, request: &ToolRequest) -> ToolResult {
        let args = Args::new("DeleteFile", &request.arguments);
        let raw_path = match args
            .only(&["path"])
            .and_then(|()| args.required_str("path"))
        {
            Ok(raw_path) => raw_path,
            Err(error) => return ToolResult::failed(request, ErrorCode::InvalidRequest, error.0),
        };
        let path = match resolve_path("DeleteFile", raw_path, request) {
            Ok(path) => path,
            Err(failure) => return *failure,
        };
        let request_owned = request.clone();
        tokio::task::spawn_blocking(move || delete(&request_owned, &path))
            .await
            .unwrap_or_else(|error| {
                ToolResult::failed(
                    request,
                    ErrorCode::ToolExecutionFailed,
                    format!("DeleteFile stopped unexpectedly: {error}"),
                )
            })
    }
}

/// Symlinks are resolved first (§8.1.3), as the policy enforcer resolves them: the file a
/// link points to is what gets deleted, the link is left dangling.
fn delete(request: &ToolRequest, path: &Path) -> ToolResult {
    let target = match fs::canonicalize(path) {
        Ok(target) => target,
        Err(error) => return io_failure(request, path, &error),
    };
    let metadata = match fs::metadata(&target) {
        Ok(metadata) => metadata,
        Err(error) => return io_failure(request, path, &error),
    };
    if metadata.is_dir() {
        return ToolResult::failed(
            request,
            ErrorCode::InvalidRequest,
            format!(
                "DeleteFile: {} is a directory; only files can be deleted with this tool",
                path.display()
            ),
        );
    }
    // What was there, for the diff; a file that cannot be read can still be deleted. Read
    // and removed beneath the project folder when the path is in it: a link swapped in since
    // the policy check cannot send either outside.
    let root = request.workspace_root.as_deref().map(Path::new);
    let old_bytes = (metadata.len() <= MAX_DIFF_INPUT_BYTES)
        .then(|| {
            let file =
                crate::platform::beneath::open(root, path, crate::platform::beneath::Access::Read)
                    .ok()?;
            let mut bytes = Vec::new();
            std::io::Read::read_to_end(
                &mut std::io::Read::take(file, MAX_DIFF_INPUT_BYTES),
                &mut bytes,
            )
            .ok()?;
            Some(bytes)
        })
        .flatten();
    if let Err(error) = crate::platform::beneath::remove_file(root, path, &target) {
        return super::open_failure(request, "DeleteFile", path, &error);
    }
    let shown = path.display().to_string();
    let old = match &old_bytes {
        Some(bytes) => Side::of(bytes),
        None => Side::Opaque {
            bytes: metadata.len(),
        },
    };
    let change = diff::diff(&shown, old, Side::Absent);
    let mut result = ToolResult::succeeded(request, format!("Deleted {shown}"));
    if !change.full.is_empty() {
        let name = format!(
            "{}.diff",
            path.file_name().unwrap_or_default().to_string_lossy()
        );
        result
            .artifacts
            .push(output::file_diff_artifact(name, &change.full));
    }
    result.file_changes.push(FileChange {
        path: shown,
        status: FileChangeStatus::Deleted,
        hunks: change.hunks,
    });
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{decoded, request};
    use agent_protocol::ToolStatus;
    use serde_json::{Value, json};

    async fn run(dir: &Path, args: Value) -> ToolResult {
        DeleteFile.run(&request("DeleteFile", dir, args)).await
    }

    #[tokio::test]
    async fn deletes_a_file_with_a_deleted_diff() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.txt");
        fs::write(&path, "one\ntwo\n").unwrap();
        let result = run(dir.path(), json!({"path": "a.txt"})).await;
        assert_eq!(result.status, ToolStatus::Succeeded, "{result:?}");
        assert_eq!(
            result.output_text,
            Some(format!("Deleted {}", path.display()))
        );
        assert!(!path.exists());
        crate::testing::assert_file_diff(
            &result,
            &path,
            FileChangeStatus::Deleted,
            (&path.display().to_string(), "/dev/null"),
            "@@ -1,2 +0,0 @@\n-one\n-two\n",
        );
    }

    #[tokio::test]
    async fn directories_are_refused_by_name_and_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let sub = dir.path().join("sub");
        fs::create_dir(&sub).unwrap();
        fs::write(sub.join("keep.txt"), "x").unwrap();
        let result = run(dir.path(), json!({"path": "sub"})).await;
        let error = result.error.unwrap();
        assert_eq!(error.code, ErrorCode::InvalidRequest);
        assert!(
            error.message.contains(&sub.display().to_string()),
            "{}",
            error.message
        );
        assert!(
            error.message.contains("is a directory"),
            "{}",
            error.message
        );
        assert!(sub.join("keep.txt").exists());
    }

    #[tokio::test]
    async fn missing_files_and_bad_arguments_fail_with_the_spec_codes() {
        let dir = tempfile::tempdir().unwrap();
        let missing = run(dir.path(), json!({"path": "nope.txt"})).await;
        let error = missing.error.unwrap();
        assert_eq!(error.code, ErrorCode::FileNotFound);
        assert!(error.message.contains("nope.txt"));
        let typo = run(dir.path(), json!({"path": "a", "recursive": true})).await;
        assert!(typo.error.unwrap().message.contains("\"recursive\""));
        let escape = run(dir.path(), json!({"path": "../a"})).await;
        assert_eq!(escape.error.unwrap().code, ErrorCode::InvalidRequest);
    }

    #[tokio::test]
    async fn empty_and_binary_files_are_deleted_without_hunks() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("empty"), "").unwrap();
        fs::write(dir.path().join("bin"), [0u8, 1, 2]).unwrap();
        let empty = run(dir.path(), json!({"path": "empty"})).await;
        assert_eq!(empty.status, ToolStatus::Succeeded);
        assert!(empty.artifacts.is_empty());
        assert_eq!(empty.file_changes[0].hunks, "");
        let binary = run(dir.path(), json!({"path": "bin"})).await;
        assert_eq!(binary.file_changes[0].status, FileChangeStatus::Deleted);
        assert_eq!(binary.file_changes[0].hunks, "");
        assert!(decoded(&binary.artifacts[0]).contains("and /dev/null differ (3 -> 0 bytes"));
        assert!(!dir.path().join("bin").exists());
    }

    #[cfg(unix)]
    #[tokio::test]
    async fn a_symlink_is_resolved_and_its_target_deleted() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("real.txt");
        fs::write(&target, "x\n").unwrap();
        std::os::unix::fs::symlink(&target, dir.path().join("link")).unwrap();
        let result = run(dir.path(), json!({"path": "link"})).await;
        assert_eq!(result.status, ToolStatus::Succeeded, "{result:?}");
        assert!(!target.exists());
        assert!(fs::symlink_metadata(dir.path().join("link")).is_ok());
    }
}
