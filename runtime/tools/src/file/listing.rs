//! ListDirectory (INTEROP.md §11): the entries of one folder, folders marked with a
//! trailing `/` and files with their size, sorted by name. Hidden entries (a leading dot)
//! only when asked for; blocked paths never. The folder is opened beneath the project
//! folder (a link on the way that leads out is refused) and read through that handle.

use std::path::Path;

use agent_protocol::{ErrorCode, ToolDefinition, ToolRequest, ToolResult};
use async_trait::async_trait;
use serde_json::json;

use super::blocked::Blocked;
use super::{io_failure, open_failure, resolve_path};
use crate::args::Args;
use crate::platform::beneath::{self, Access};
use crate::tool::Tool;

/// The most entries listed; a note says how many more there are.
pub(crate) const MAX_LISTED: usize = 1000;

pub(crate) struct ListDirectory;

#[async_trait]
impl Tool for ListDirectory {
    fn definition(&self) -> ToolDefinition {
        ToolDefinition {
            tool_name: "ListDirectory".to_owned(),
            description: "List the files and directories in a directory".to_owned(),
            input_schema: json!({
                "type": "object",
                "required": ["path"],
                "additionalProperties": false,
                "properties": {
                    "path": { "type": "string", "description": "Directory to list (relative paths resolve against the project folder)" },
                    "include_hidden": { "type": "boolean", "default": false, "description": "Include entries whose name starts with a dot. Default: false" }
                }
            }).into(),
        }
    }

    async fn run(&self, request: &ToolRequest) -> ToolResult {
        let args = Args::new("ListDirectory", &request.arguments);
        let parsed = args.only(&["path", "include_hidden"]).and_then(|()| {
            Ok((
                args.required_str("path")?,
                args.optional_bool("include_hidden")?.unwrap_or(false),
            ))
        });
        let (raw_path, hidden) = match parsed {
            Ok(parsed) => parsed,
            Err(error) => return ToolResult::failed(request, ErrorCode::InvalidRequest, error.0),
        };
        let path = match resolve_path("ListDirectory", raw_path, request) {
            Ok(path) => path,
            Err(failure) => return *failure,
        };
        let request_owned = request.clone();
        tokio::task::spawn_blocking(move || list(&request_owned, &path, hidden))
            .await
            .unwrap_or_else(|error| {
                ToolResult::failed(
                    request,
                    ErrorCode::ToolExecutionFailed,
                    format!("ListDirectory stopped unexpectedly: {error}"),
                )
            })
    }
}

fn list(request: &ToolRequest, path: &Path, hidden: bool) -> ToolResult {
    let root = request.workspace_root.as_deref().map(Path::new);
    // Opening it beneath the project folder refuses a link on the way that leads out.
    if let Err(error) = beneath::open(root, path, Access::Directory) {
        return match error.kind() {
            std::io::ErrorKind::NotADirectory => ToolResult::failed(
                request,
                ErrorCode::InvalidRequest,
                format!(
                    "ListDirectory: {} is a file, not a directory",
                    path.display()
                ),
            ),
            _ => open_failure(request, "ListDirectory", path, &error),
        };
    }
    let real = match std::fs::canonicalize(path) {
        Ok(real) => real,
        Err(error) => return io_failure(request, path, &error),
    };
    let entries = match std::fs::read_dir(&real) {
        Ok(entries) => entries,
        Err(error) => return io_failure(request, path, &error),
    };
    let blocked = Blocked::of(request);
    let mut lines = Vec::new();
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if !hidden && name.starts_with('.') {
            continue;
        }
        let kind = entry.file_type().ok();
        let is_link = kind.is_some_and(|kind| kind.is_symlink());
        if blocked.hides_entry(&entry.path(), is_link) {
            continue;
        }
        let line = match kind {
            Some(kind) if kind.is_dir() => format!("{name}/"),
            Some(kind) if kind.is_symlink() => format!("{name} (link)"),
            _ => {
                let bytes = entry.metadata().map(|metadata| metadata.len()).unwrap_or(0);
                format!("{name} ({bytes} bytes)")
            }
        };
        lines.push((name, line));
    }
    lines.sort();
    let total = lines.len();
    let mut text = format!("{}:\n", path.display());
    if total == 0 {
        text.push_str("(empty)\n");
    }
    for (_, line) in lines.iter().take(MAX_LISTED) {
        text.push_str(line);
        text.push('\n');
    }
    if total > MAX_LISTED {
        text.push_str(&format!(
            "… and {} more entries (list a subdirectory, or use FindFiles)\n",
            total - MAX_LISTED
        ));
    }
    ToolResult::succeeded(request, text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{assert_failed, request};
    use agent_protocol::ToolStatus;
    use serde_json::Value;
    use std::fs;

    async fn run(dir: &Path, args: Value) -> ToolResult {
        ListDirectory
            .run(&request("ListDirectory", dir, args))
            .await
    }

    #[tokio::test]
    async fn lists_sorted_entries_hiding_dot_files_unless_asked() {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir(dir.path().join("src")).unwrap();
        fs::write(dir.path().join("b.txt"), "12345").unwrap();
        fs::write(dir.path().join(".env"), "X=1").unwrap();
        let plain = run(dir.path(), json!({"path": "."})).await;
        assert_eq!(plain.status, ToolStatus::Succeeded, "{plain:?}");
        let text = plain.output_text.unwrap();
        assert!(text.ends_with(":\nb.txt (5 bytes)\nsrc/\n"), "{text}");
        let all = run(dir.path(), json!({"path": ".", "include_hidden": true})).await;
        assert!(all.output_text.unwrap().contains(".env (3 bytes)\n"));
    }

    #[tokio::test]
    async fn blocked_entries_are_never_listed() {
        let dir = tempfile::tempdir().unwrap();
        let root = fs::canonicalize(dir.path()).unwrap();
        fs::write(root.join(".env"), "SECRET=1").unwrap();
        fs::write(root.join("key.pem"), "k").unwrap();
        fs::write(root.join("ok.txt"), "").unwrap();
        let mut call = request(
            "ListDirectory",
            &root,
            json!({"path": ".", "include_hidden": true}),
        );
        call.blocked_paths = Some(vec![
            root.join(".env").display().to_string(),
            "*.pem".into(),
        ]);
        let text = ListDirectory.run(&call).await.output_text.unwrap();
        assert!(text.contains("ok.txt"), "{text}");
        assert!(
            !text.contains(".env") && !text.contains("key.pem"),
            "{text}"
        );
    }

    #[tokio::test]
    async fn files_missing_folders_and_escapes_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("f"), "").unwrap();
        let file = run(dir.path(), json!({"path": "f"})).await;
        assert_failed(&file, ErrorCode::InvalidRequest, "not a directory");
        let missing = run(dir.path(), json!({"path": "nope"})).await;
        assert_failed(&missing, ErrorCode::FileNotFound, "nope");
        let escape = run(dir.path(), json!({"path": ".."})).await;
        assert_eq!(escape.error.unwrap().code, ErrorCode::InvalidRequest);
        let typo = run(dir.path(), json!({"path": ".", "hidden": true})).await;
        assert_failed(&typo, ErrorCode::InvalidRequest, "\"hidden\"");
    }
}
