//! MoveFile (INTEROP.md §11): a rename of a file or folder (a link is moved as the link),
//! judged as File.Write on both ends. Both folders are opened beneath the project folder
//! and the rename happens between those handles, so a folder swapped for a link since the
//! policy check cannot send the file elsewhere. A folder's content moves with it: if any of
//! it is, or would become, a blocked path, the move is refused. A file's move records the
//! patch preview as a deletion and an addition, with WriteFile's `file_diff` artifact.

use std::ffi::OsStr;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};

use agent_protocol::methods::FileChangeStatus;
use agent_protocol::{ErrorCode, ToolDefinition, ToolRequest, ToolResult};
use async_trait::async_trait;
use serde_json::json;

use super::blocked::Blocked;
use super::change::{Changed, record};
use super::diff::{MAX_DIFF_INPUT_BYTES, Side};
use super::{io_failure, open_failure, resolve_path};
use crate::args::Args;
use crate::platform::replace::{self, Folder, Found};
use crate::tool::Tool;

/// The most entries of a moved folder looked at for blocked paths; a larger folder is not
/// moved (the model can move its parts).
const MAX_CHECKED_ENTRIES: usize = 100_000;

pub(crate) struct MoveFile;

#[async_trait]
impl Tool for MoveFile {
    fn definition(&self) -> ToolDefinition {
        ToolDefinition {
            tool_name: "MoveFile".to_owned(),
            description: "Move or rename a file or directory".to_owned(),
            input_schema: json!({
                "type": "object",
                "required": ["source", "destination"],
                "additionalProperties": false,
                "properties": {
                    "source": { "type": "string", "description": "File or directory to move (relative paths resolve against the project folder)" },
                    "destination": { "type": "string", "description": "Its new path, including the name" },
                    "overwrite": { "type": "boolean", "default": false, "description": "Replace an existing file at the destination. Default: false" }
                }
            }).into(),
        }
    }

    async fn run(&self, request: &ToolRequest) -> ToolResult {
        let args = Args::new("MoveFile", &request.arguments);
        let parsed = args
            .only(&["source", "destination", "overwrite"])
            .and_then(|()| {
                Ok((
                    args.required_str("source")?,
                    args.required_str("destination")?,
                    args.optional_bool("overwrite")?.unwrap_or(false),
                ))
            });
        let (source, destination, overwrite) = match parsed {
            Ok(parsed) => parsed,
            Err(error) => return ToolResult::failed(request, ErrorCode::InvalidRequest, error.0),
        };
        let (source, destination) = match (
            resolve_path("MoveFile", source, request),
            resolve_path("MoveFile", destination, request),
        ) {
            (Ok(source), Ok(destination)) => (source, destination),
            (Err(failure), _) | (_, Err(failure)) => return *failure,
        };
        let request_owned = request.clone();
        tokio::task::spawn_blocking(move || {
            move_path(&request_owned, &source, &destination, overwrite)
        })
        .await
        .unwrap_or_else(|error| {
            ToolResult::failed(
                request,
                ErrorCode::ToolExecutionFailed,
                format!("MoveFile stopped unexpectedly: {error}"),
            )
        })
    }
}

/// `path` with its folder's links resolved (the name itself is kept, a link included).
fn real_location(path: &Path) -> std::io::Result<PathBuf> {
    let (Some(parent), Some(name)) = (path.parent(), path.file_name()) else {
        return Err(std::io::Error::new(
            ErrorKind::InvalidInput,
            "the path does not name a file in a folder",
        ));
    };
    Ok(std::fs::canonicalize(parent)?.join(name))
}

fn move_path(
    request: &ToolRequest,
    source: &Path,
    destination: &Path,
    overwrite: bool,
) -> ToolResult {
    let failed = |code, message: String| ToolResult::failed(request, code, message);
    let root = request.workspace_root.as_deref().map(Path::new);
    let from = match real_location(source) {
        Ok(from) => from,
        Err(error) => return io_failure(request, source, &error),
    };
    let (from_folder, from_name) = match Folder::of(root, source, &from) {
        Ok(opened) => opened,
        Err(error) => return open_failure(request, "MoveFile", source, &error),
    };
    let found = match movable(request, source, from_folder.find(&from_name)) {
        Ok(found) => found,
        Err(refused) => return *refused,
    };
    if let Some(parent) = destination.parent()
        && !parent.is_dir()
        && let Err(error) = replace::create_folders(root, parent)
    {
        return open_failure(request, "MoveFile", parent, &error);
    }
    let to = match real_location(destination) {
        Ok(to) => to,
        Err(error) => return io_failure(request, destination, &error),
    };
    if to == from {
        return failed(
            ErrorCode::InvalidRequest,
            format!(
                "MoveFile: {} and {} are the same file",
                source.display(),
                destination.display()
            ),
        );
    }
    let blocked = Blocked::of(request);
    if let Some(path) = [&from, &to].into_iter().find(|path| blocked.hides(path)) {
        return failed(
            ErrorCode::PermissionDenied,
            format!("MoveFile: {} is a blocked path", path.display()),
        );
    }
    let (to_folder, to_name) = match Folder::of(root, destination, &to) {
        Ok(opened) => opened,
        Err(error) => return open_failure(request, "MoveFile", destination, &error),
    };
    let replaced = match replaceable(request, destination, overwrite, &to_folder, &to_name) {
        Ok(replaced) => replaced,
        Err(refused) => return *refused,
    };
    if found == Found::Directory
        && let Some(refusal) = blocked_inside(&blocked, &from, &to)
    {
        return failed(ErrorCode::PermissionDenied, refusal);
    }
    let moved = match found {
        Found::File { len, .. } => Some((len, diff_content(&from_folder, &from_name, len))),
        _ => None,
    };
    if let Err(error) = from_folder.rename(&from_name, &to_folder, &to_name, overwrite) {
        return match error.kind() {
            ErrorKind::AlreadyExists => failed(
                ErrorCode::InvalidRequest,
                format!(
                    "MoveFile: {} already exists; pass overwrite: true to replace it",
                    destination.display()
                ),
            ),
            _ => io_failure(request, source, &error),
        };
    }
    let message = format!("Moved {} to {}", source.display(), destination.display());
    let Some((len, content)) = moved else {
        return ToolResult::succeeded(request, message);
    };
    let (old_destination, status) = match &replaced {
        Some(Some(bytes)) => (Side::of(bytes), FileChangeStatus::Modified),
        Some(None) => (Side::Opaque { bytes: 0 }, FileChangeStatus::Modified),
        None => (Side::Absent, FileChangeStatus::Added),
    };
    record(
        request,
        message,
        &[
            Changed {
                path: source,
                status: FileChangeStatus::Deleted,
                old: side(&content, len),
                new: Side::Absent,
            },
            Changed {
                path: destination,
                status,
                old: old_destination,
                new: side(&content, len),
            },
        ],
    )
}

/// What is at the source, when it can be moved: a file, a folder or a link.
fn movable(
    request: &ToolRequest,
    source: &Path,
    found: std::io::Result<Found>,
) -> Result<Found, Box<ToolResult>> {
    let refused = |code, message: String| Err(Box::new(ToolResult::failed(request, code, message)));
    match found {
        Ok(Found::Absent) => refused(
            ErrorCode::FileNotFound,
            format!("File not found: {}", source.display()),
        ),
        Ok(Found::Special) => refused(
            ErrorCode::InvalidRequest,
            format!(
                "MoveFile: {} is not a regular file (a pipe, socket or device)",
                source.display()
            ),
        ),
        Ok(found) => Ok(found),
        Err(error) => Err(Box::new(io_failure(request, source, &error))),
    }
}

/// What the move replaces at the destination: `None` when nothing is there, else the
/// replaced file's content for the diff (`Some(None)` when it is not shown). A folder is
/// never replaced, and nothing is without `overwrite`.
fn replaceable(
    request: &ToolRequest,
    destination: &Path,
    overwrite: bool,
    to_folder: &Folder,
    to_name: &OsStr,
) -> Result<Option<Option<Vec<u8>>>, Box<ToolResult>> {
    let refused = |message: String| {
        Err(Box::new(ToolResult::failed(
            request,
            ErrorCode::InvalidRequest,
            message,
        )))
    };
    match to_folder.find(to_name) {
        Ok(Found::Absent) => Ok(None),
        Ok(_) if !overwrite => refused(format!(
            "MoveFile: {} already exists; pass overwrite: true to replace it",
            destination.display()
        )),
        Ok(Found::Directory) => refused(format!(
            "MoveFile: {} is a directory; a directory is never replaced",
            destination.display()
        )),
        Ok(Found::File { len, .. }) => Ok(Some(diff_content(to_folder, to_name, len))),
        Ok(_) => Ok(Some(None)),
        Err(error) => Err(Box::new(io_failure(request, destination, &error))),
    }
}

/// One side of the diff: the content read, else only its size.
fn side(content: &Option<Vec<u8>>, len: u64) -> Side<'_> {
    match content {
        Some(bytes) => Side::of(bytes),
        None => Side::Opaque { bytes: len },
    }
}

/// A file's content for the diff, when it is small enough to show.
fn diff_content(folder: &Folder, name: &OsStr, len: u64) -> Option<Vec<u8>> {
    (len <= MAX_DIFF_INPUT_BYTES)
        .then(|| folder.read(name, MAX_DIFF_INPUT_BYTES).ok())
        .flatten()
}

/// Why a folder may not move from `from` to `to`: something in it is blocked where it is or
/// would be where it goes, or it holds too much to tell. `None`: it may move.
fn blocked_inside(blocked: &Blocked, from: &Path, to: &Path) -> Option<String> {
    let mut pending = vec![from.to_path_buf()];
    let mut seen = 0usize;
    while let Some(folder) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&folder) else {
            continue;
        };
        for entry in entries.flatten() {
            seen += 1;
            if seen > MAX_CHECKED_ENTRIES {
                return Some(format!(
                    "MoveFile: {} holds more than {MAX_CHECKED_ENTRIES} entries, too many to check against the blocked paths; move its parts instead",
                    from.display()
                ));
            }
            let path = entry.path();
            let landing = path
                .strip_prefix(from)
                .map_or_else(|_| path.clone(), |rest| to.join(rest));
            let is_link = entry.file_type().is_ok_and(|kind| kind.is_symlink());
            if blocked.hides_entry(&path, is_link) || blocked.hides(&landing) {
                return Some(format!(
                    "MoveFile: {} holds a blocked path ({}); it is not moved",
                    from.display(),
                    path.display()
                ));
            }
            if entry.file_type().is_ok_and(|kind| kind.is_dir()) {
                pending.push(path);
            }
        }
    }
    None
}

#[cfg(test)]
#[path = "moves_tests.rs"]
mod tests;
