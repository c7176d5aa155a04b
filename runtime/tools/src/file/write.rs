//! WriteFile (local-tool-runtime.md §4.2): an atomic replacement of the file's content, with
//! a `file_diff` artifact of the change and a file-change record for the patch preview.

use std::fs;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};

use agent_protocol::methods::FileChangeStatus;
use agent_protocol::tool::FileChange;
use agent_protocol::{ErrorCode, ToolDefinition, ToolRequest, ToolResult};
use async_trait::async_trait;
use serde_json::json;

use super::diff::{self, FileDiff, MAX_DIFF_INPUT_BYTES, Side};
use super::{io_failure, open_failure, resolve_path};
use crate::args::Args;
use crate::output;
use crate::platform::replace::{self, Folder, Found, Mode};
use crate::tool::Tool;

pub(crate) struct WriteFile;

#[async_trait]
impl Tool for WriteFile {
    fn definition(&self) -> ToolDefinition {
        ToolDefinition {
            tool_name: "WriteFile".to_owned(),
            description: "Create or overwrite a file with the given content".to_owned(),
            input_schema: json!({
                "type": "object",
                "required": ["path", "content"],
                "additionalProperties": false,
                "properties": {
                    "path": { "type": "string", "description": "Absolute file path to write (relative paths resolve against the project folder)" },
                    "content": { "type": "string", "description": "File content to write" },
                    "createDirectories": { "type": "boolean", "default": true, "description": "Create parent directories if they don't exist. Default: true" }
                }
            }).into(),
        }
    }

    async fn run(&self, request: &ToolRequest) -> ToolResult {
        let args = Args::new("WriteFile", &request.arguments);
        let parsed = args
            .only(&["path", "content", "createDirectories"])
            .and_then(|()| {
                Ok((
                    args.required_str("path")?,
                    args.required_str("content")?,
                    args.optional_bool("createDirectories")?.unwrap_or(true),
                ))
            });
        let (raw_path, content, create_directories) = match parsed {
            Ok(parsed) => parsed,
            Err(error) => return ToolResult::failed(request, ErrorCode::InvalidRequest, error.0),
        };
        let path = match resolve_path("WriteFile", raw_path, request) {
            Ok(path) => path,
            Err(failure) => return *failure,
        };
        if let Some(limit) = request.limits.max_file_size_bytes {
            let size = u64::try_from(content.len()).unwrap_or(u64::MAX);
            if size > limit {
                return ToolResult::failed(
                    request,
                    ErrorCode::FileTooLarge,
                    format!(
                        "The content for {} is {size} bytes, more than the limit of {limit} bytes",
                        path.display()
                    ),
                );
            }
        }
        let request_owned = request.clone();
        let content = content.to_owned();
        tokio::task::spawn_blocking(move || {
            write(&request_owned, &path, &content, create_directories)
        })
        .await
        .unwrap_or_else(|error| {
            ToolResult::failed(
                request,
                ErrorCode::ToolExecutionFailed,
                format!("WriteFile stopped unexpectedly: {error}"),
            )
        })
    }
}

fn write(
    request: &ToolRequest,
    path: &Path,
    content: &str,
    create_directories: bool,
) -> ToolResult {
    let (Some(parent), Some(file_name)) = (path.parent(), path.file_name()) else {
        return ToolResult::failed(
            request,
            ErrorCode::InvalidRequest,
            format!("WriteFile: {} does not name a file", path.display()),
        );
    };
    let root = request.workspace_root.as_deref().map(Path::new);
    if let Err(failed) = ensure_folder(request, root, parent, create_directories) {
        return *failed;
    }
    let target = match real_target(path, parent, file_name) {
        Ok(target) => target,
        Err(error) => return io_failure(request, path, &error),
    };
    // From here on everything happens in a handle of the folder, opened beneath the project
    // folder: a folder swapped for a link since the policy check cannot redirect the write.
    let (folder, name) = match Folder::of(root, path, &target) {
        Ok(opened) => opened,
        Err(error) => return open_failure(request, "WriteFile", path, &error),
    };
    let existing = match existing_file(request, path, folder.find(&name)) {
        Ok(existing) => existing,
        Err(failed) => return *failed,
    };
    let old_bytes = match existing {
        Some((len, _)) if len <= MAX_DIFF_INPUT_BYTES => {
            match folder.read(&name, MAX_DIFF_INPUT_BYTES) {
                Ok(bytes) => Some(bytes),
                Err(error) => return io_failure(request, path, &error),
            }
        }
        _ => None,
    };
    if let Err(error) = folder.replace(&name, content.as_bytes(), existing.map(|(_, mode)| mode)) {
        return io_failure(request, path, &error);
    }

    written(request, path, file_name, content, existing, old_bytes)
}

/// The folder to write in exists (created when `create_directories` says so) and is a
/// folder.
fn ensure_folder(
    request: &ToolRequest,
    root: Option<&Path>,
    parent: &Path,
    create_directories: bool,
) -> Result<(), Box<ToolResult>> {
    match fs::metadata(parent) {
        Ok(metadata) if metadata.is_dir() => {}
        Ok(_) => {
            return Err(Box::new(ToolResult::failed(
                request,
                ErrorCode::InvalidRequest,
                format!("WriteFile: {} is a file, not a directory", parent.display()),
            )));
        }
        Err(error) if error.kind() == ErrorKind::NotFound && create_directories => {
            if let Err(error) = replace::create_folders(root, parent) {
                return Err(Box::new(open_failure(request, "WriteFile", parent, &error)));
            }
        }
        Err(error) if error.kind() == ErrorKind::NotFound => {
            return Err(Box::new(ToolResult::failed(
                request,
                ErrorCode::FileNotFound,
                format!(
                    "Directory not found: {} (pass createDirectories: true to create it)",
                    parent.display()
                ),
            )));
        }
        Err(error) => return Err(Box::new(io_failure(request, parent, &error))),
    }
    Ok(())
}

/// The length and mode of the file being replaced (`None` when it is new); anything else at
/// its name is refused.
fn existing_file(
    request: &ToolRequest,
    path: &Path,
    found: std::io::Result<Found>,
) -> Result<Option<(u64, Mode)>, Box<ToolResult>> {
    let refused = |code, message: String| Err(Box::new(ToolResult::failed(request, code, message)));
    match found {
        Ok(Found::Directory) => refused(
            ErrorCode::InvalidRequest,
            format!("WriteFile: {} is a directory, not a file", path.display()),
        ),
        // Reading a FIFO for the diff would block forever; replacing a device is no write.
        Ok(Found::Special) => refused(
            ErrorCode::InvalidRequest,
            format!(
                "WriteFile: {} is not a regular file (a pipe, socket or device)",
                path.display()
            ),
        ),
        // The path was resolved to a file, not a link: one appeared since.
        Ok(Found::Link) => refused(
            ErrorCode::PermissionDenied,
            format!(
                "WriteFile: {} became a symbolic link while the write was prepared; nothing was written",
                path.display()
            ),
        ),
        // Replacing by rename would succeed on a read-only file; writing to it must not.
        Ok(Found::File { readonly: true, .. }) => refused(
            ErrorCode::PermissionDenied,
            format!("{} is read-only", path.display()),
        ),
        Ok(Found::File { len, mode, .. }) => Ok(Some((len, mode))),
        Ok(Found::Absent) => Ok(None),
        Err(error) => Err(Box::new(io_failure(request, path, &error))),
    }
}

/// The result of a write: what it did, its diff as an artifact, and the file change.
fn written(
    request: &ToolRequest,
    path: &Path,
    file_name: &std::ffi::OsStr,
    content: &str,
    existing: Option<(u64, Mode)>,
    old_bytes: Option<Vec<u8>>,
) -> ToolResult {
    let shown = path.display().to_string();
    let old = match (&existing, &old_bytes) {
        (None, _) => Side::Absent,
        (Some(_), Some(bytes)) => Side::of(bytes),
        (Some((len, _)), None) => Side::Opaque { bytes: *len },
    };
    let new = if u64::try_from(content.len()).unwrap_or(u64::MAX) > MAX_DIFF_INPUT_BYTES {
        Side::Opaque {
            bytes: u64::try_from(content.len()).unwrap_or(u64::MAX),
        }
    } else {
        Side::of(content.as_bytes())
    };
    let change = if old_bytes.as_deref() == Some(content.as_bytes()) {
        FileDiff::default()
    } else {
        diff::diff(&shown, old, new)
    };
    let mut result =
        ToolResult::succeeded(request, format!("Wrote {} bytes to {shown}", content.len()));
    if !change.full.is_empty() {
        let name = format!("{}.diff", file_name.to_string_lossy());
        result
            .artifacts
            .push(output::file_diff_artifact(name, &change.full));
    }
    result.file_changes.push(FileChange {
        path: shown,
        status: if existing.is_some() {
            FileChangeStatus::Modified
        } else {
            FileChangeStatus::Added
        },
        hunks: change.hunks,
    });
    result
}

/// The file to replace. Symlinks are resolved first (§8.1.3): writing through a link updates
/// the file it points to and keeps the link, as the policy enforcer, which checks resolved
/// paths, expects.
fn real_target(
    path: &Path,
    parent: &Path,
    file_name: &std::ffi::OsStr,
) -> std::io::Result<PathBuf> {
    match fs::canonicalize(path) {
        Ok(real) => Ok(real),
        Err(error) if error.kind() == ErrorKind::NotFound => {
            Ok(fs::canonicalize(parent)?.join(file_name))
        }
        Err(error) => Err(error),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{decoded, request};
    use agent_protocol::ToolStatus;
    use serde_json::{Value, json};
    #[cfg(unix)]
    use std::fs::Permissions;
    #[cfg(unix)]
    use std::os::unix::fs::FileTypeExt;

    async fn run(dir: &Path, args: Value) -> ToolResult {
        WriteFile.run(&request("WriteFile", dir, args)).await
    }

    /// Reading a FIFO for the diff would block forever; it is refused at once.
    #[cfg(unix)]
    #[tokio::test]
    async fn a_fifo_is_refused_not_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let pipe = crate::testing::fifo(dir.path(), "pipe");
        let result = run(dir.path(), json!({"path": "pipe", "content": "x"})).await;
        crate::testing::assert_failed(&result, ErrorCode::InvalidRequest, "not a regular file");
        assert!(fs::metadata(&pipe).unwrap().file_type().is_fifo());
    }

    #[tokio::test]
    async fn creates_a_file_and_its_directories_with_an_added_diff() {
        let dir = tempfile::tempdir().unwrap();
        let result = run(
            dir.path(),
            json!({"path": "new/sub/a.txt", "content": "hello\n"}),
        )
        .await;
        let path = dir.path().join("new").join("sub").join("a.txt");
        assert_eq!(result.status, ToolStatus::Succeeded, "{result:?}");
        assert_eq!(
            result.output_text,
            Some(format!("Wrote 6 bytes to {}", path.display()))
        );
        assert_eq!(fs::read_to_string(&path).unwrap(), "hello\n");
        let artifact = crate::testing::assert_file_diff(
            &result,
            &path,
            FileChangeStatus::Added,
            ("/dev/null", &path.display().to_string()),
            "@@ -0,0 +1 @@\n+hello\n",
        );
        assert_eq!(artifact.artifact_name, "a.txt.diff");
    }

    #[tokio::test]
    async fn overwrites_by_rename_keeping_permissions_and_leaving_no_temp_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.txt");
        fs::write(&path, "one\ntwo\n").unwrap();
        #[cfg(unix)]
        let inode_before = {
            use std::os::unix::fs::{MetadataExt, PermissionsExt};
            fs::set_permissions(&path, Permissions::from_mode(0o640)).unwrap();
            fs::metadata(&path).unwrap().ino()
        };
        let result = run(
            dir.path(),
            json!({"path": path, "content": "one\nTWO\n", "createDirectories": false}),
        )
        .await;
        assert_eq!(result.status, ToolStatus::Succeeded, "{result:?}");
        assert_eq!(fs::read_to_string(&path).unwrap(), "one\nTWO\n");
        assert_eq!(result.file_changes[0].status, FileChangeStatus::Modified);
        assert_eq!(
            result.file_changes[0].hunks,
            "@@ -1,2 +1,2 @@\n one\n-two\n+TWO\n"
        );
        assert!(
            decoded(&result.artifacts[0])
                .starts_with(&format!("--- {0}\n+++ {0}\n@@", path.display()))
        );
        #[cfg(unix)]
        {
            use std::os::unix::fs::{MetadataExt, PermissionsExt};
            let metadata = fs::metadata(&path).unwrap();
            assert_ne!(
                metadata.ino(),
                inode_before,
                "written in place, not renamed"
            );
            assert_eq!(metadata.permissions().mode() & 0o777, 0o640);
        }
        let names: Vec<_> = fs::read_dir(dir.path())
            .unwrap()
            .map(|entry| entry.unwrap().file_name())
            .collect();
        assert_eq!(names, ["a.txt"]);
    }

    #[cfg(unix)]
    #[tokio::test]
    async fn new_files_get_the_usual_permissions_not_the_temp_files() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        run(dir.path(), json!({"path": "n.txt", "content": "x"})).await;
        let mode = fs::metadata(dir.path().join("n.txt"))
            .unwrap()
            .permissions()
            .mode();
        // 0666 less the umask: at least readable by the group, unlike a 0600 temp file.
        assert_eq!(mode & 0o640, 0o640, "{mode:o}");
    }

    #[cfg(unix)]
    #[tokio::test]
    async fn writes_through_a_symlink_to_its_target() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("real.txt");
        fs::write(&target, "old\n").unwrap();
        std::os::unix::fs::symlink(&target, dir.path().join("link.txt")).unwrap();
        let result = run(dir.path(), json!({"path": "link.txt", "content": "new\n"})).await;
        assert_eq!(result.status, ToolStatus::Succeeded, "{result:?}");
        assert_eq!(fs::read_to_string(&target).unwrap(), "new\n");
        let link = fs::symlink_metadata(dir.path().join("link.txt")).unwrap();
        assert!(link.file_type().is_symlink());
        assert_eq!(result.file_changes[0].status, FileChangeStatus::Modified);
    }

    /// A folder (or file) in the project folder that is a link leading out is not followed:
    /// the write is refused and nothing outside changes, whether or not the file exists.
    #[cfg(target_os = "linux")]
    #[tokio::test]
    async fn a_link_out_of_the_project_folder_is_not_written_through() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        fs::write(outside.path().join("precious"), "keep").unwrap();
        std::os::unix::fs::symlink(outside.path(), dir.path().join("out")).unwrap();
        std::os::unix::fs::symlink(outside.path().join("precious"), dir.path().join("p")).unwrap();
        for path in ["out/precious", "out/new.txt", "out/deep/new.txt", "p"] {
            let result = run(dir.path(), json!({"path": path, "content": "pwned"})).await;
            crate::testing::assert_failed(
                &result,
                ErrorCode::PermissionDenied,
                "leads out of the project folder",
            );
        }
        assert_eq!(
            fs::read_to_string(outside.path().join("precious")).unwrap(),
            "keep"
        );
        let names: Vec<_> = fs::read_dir(outside.path()).unwrap().collect();
        assert_eq!(names.len(), 1, "nothing was created outside");
    }

    #[tokio::test]
    async fn unchanged_content_has_no_diff_and_binary_content_is_summarised() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("same"), "x\n").unwrap();
        fs::write(dir.path().join("bin"), [0u8, 159, 1]).unwrap();
        let same = run(dir.path(), json!({"path": "same", "content": "x\n"})).await;
        assert!(same.artifacts.is_empty());
        assert_eq!(same.file_changes[0].hunks, "");
        let binary = run(dir.path(), json!({"path": "bin", "content": "text\n"})).await;
        assert_eq!(binary.file_changes[0].hunks, "");
        assert!(
            decoded(&binary.artifacts[0]).contains("(3 -> 5 bytes; binary or too large to show)")
        );
        let empty = run(dir.path(), json!({"path": "empty", "content": ""})).await;
        assert_eq!(
            empty
                .output_text
                .as_deref()
                .map(|t| t.starts_with("Wrote 0 bytes to ")),
            Some(true)
        );
        assert_eq!(empty.file_changes[0].status, FileChangeStatus::Added);
        assert!(empty.artifacts.is_empty());
    }

    #[tokio::test]
    async fn refusals_carry_the_spec_codes_and_change_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let code = |result: ToolResult| result.error.unwrap().code;
        let no_dirs = run(
            dir.path(),
            json!({"path": "missing/a.txt", "content": "x", "createDirectories": false}),
        )
        .await;
        assert_eq!(code(no_dirs), ErrorCode::FileNotFound);
        assert!(!dir.path().join("missing").exists());
        fs::create_dir(dir.path().join("d")).unwrap();
        let directory = run(dir.path(), json!({"path": "d", "content": "x"})).await;
        assert_eq!(code(directory), ErrorCode::InvalidRequest);
        let mut big = request(
            "WriteFile",
            dir.path(),
            json!({"path": "big", "content": "12345"}),
        );
        big.limits.max_file_size_bytes = Some(4);
        assert_eq!(code(WriteFile.run(&big).await), ErrorCode::FileTooLarge);
        assert!(!dir.path().join("big").exists());
        let escape = run(dir.path(), json!({"path": "../x.txt", "content": "x"})).await;
        assert_eq!(code(escape), ErrorCode::InvalidRequest);
        fs::write(dir.path().join("ro"), "keep").unwrap();
        let mut permissions = fs::metadata(dir.path().join("ro")).unwrap().permissions();
        permissions.set_readonly(true);
        fs::set_permissions(dir.path().join("ro"), permissions).unwrap();
        let read_only = run(dir.path(), json!({"path": "ro", "content": "x"})).await;
        assert_eq!(code(read_only), ErrorCode::PermissionDenied);
        assert_eq!(fs::read_to_string(dir.path().join("ro")).unwrap(), "keep");
    }

    #[tokio::test]
    async fn bad_arguments_are_named() {
        let dir = tempfile::tempdir().unwrap();
        let message = |result: ToolResult| {
            let error = result.error.unwrap();
            assert_eq!(error.code, ErrorCode::InvalidRequest);
            error.message
        };
        let typo = run(
            dir.path(),
            json!({"path": "a", "content": "x", "mode": "w"}),
        )
        .await;
        assert!(message(typo).contains("unknown argument \"mode\""));
        let missing = run(dir.path(), json!({"path": "a"})).await;
        assert!(message(missing).contains("\"content\""));
        let flag = run(
            dir.path(),
            json!({"path": "a", "content": "x", "createDirectories": "yes"}),
        )
        .await;
        assert!(message(flag).contains("\"createDirectories\" must be a boolean"));
        assert!(!dir.path().join("a").exists());
    }
}
