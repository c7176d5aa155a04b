//! EditFile and MultiEdit (INTEROP.md §11): exact-text replacement in one file. Each
//! `old_text` must occur exactly once in the file as it stands when its turn comes; the
//! edits apply in order, all or nothing. The file is read and replaced through a handle of
//! its folder opened beneath the project folder, never following a link in the last step,
//! as WriteFile does: a file swapped for a link between the policy check and the edit is
//! refused, not edited through. The change carries WriteFile's `file_diff` artifact and
//! patch-preview entry.

use std::io::ErrorKind;
use std::path::Path;

use agent_protocol::methods::FileChangeStatus;
use agent_protocol::{ErrorCode, ToolDefinition, ToolRequest, ToolResult};
use async_trait::async_trait;
use serde_json::{Value, json};

use super::change::{Changed, record};
use super::diff::{MAX_DIFF_INPUT_BYTES, Side};
use super::{io_failure, open_failure, resolve_path};
use crate::args::Args;
use crate::platform::replace::{Folder, Found, Mode};
use crate::tool::Tool;

/// One replacement: `old` (non-empty) becomes `new`.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Edit {
    old: String,
    new: String,
}

/// EditFile: one replacement.
pub(crate) struct EditFile {
    /// The largest file either tool edits (it is held in memory twice).
    pub max_bytes: u64,
}

/// MultiEdit: several replacements in one file, in order, all or nothing.
pub(crate) struct MultiEdit {
    pub max_bytes: u64,
}

fn edit_schema() -> Value {
    json!({
        "type": "object",
        "required": ["old_text", "new_text"],
        "additionalProperties": false,
        "properties": {
            "old_text": { "type": "string", "minLength": 1, "description": "The exact text to replace; it must occur exactly once in the file" },
            "new_text": { "type": "string", "description": "The text to put in its place" }
        }
    })
}

#[async_trait]
impl Tool for EditFile {
    fn definition(&self) -> ToolDefinition {
        let edit = edit_schema();
        ToolDefinition {
            tool_name: "EditFile".to_owned(),
            description: "Replace an exact piece of text in a file with new text; the text must occur exactly once".to_owned(),
            input_schema: json!({
                "type": "object",
                "required": ["path", "old_text", "new_text"],
                "additionalProperties": false,
                "properties": {
                    "path": { "type": "string", "description": "File to edit (relative paths resolve against the project folder)" },
                    "old_text": edit["properties"]["old_text"],
                    "new_text": edit["properties"]["new_text"]
                }
            }).into(),
        }
    }

    async fn run(&self, request: &ToolRequest) -> ToolResult {
        let args = Args::new("EditFile", &request.arguments);
        let parsed = args.only(&["path", "old_text", "new_text"]).and_then(|()| {
            Ok((
                args.required_str("path")?,
                vec![Edit {
                    old: args.required_str("old_text")?.to_owned(),
                    new: args.required_str("new_text")?.to_owned(),
                }],
            ))
        });
        match parsed {
            Ok((path, edits)) => run_edits("EditFile", request, path, edits, self.max_bytes).await,
            Err(error) => ToolResult::failed(request, ErrorCode::InvalidRequest, error.0),
        }
    }
}

#[async_trait]
impl Tool for MultiEdit {
    fn definition(&self) -> ToolDefinition {
        ToolDefinition {
            tool_name: "MultiEdit".to_owned(),
            description:
                "Apply several exact-text replacements to one file, in order, all or nothing"
                    .to_owned(),
            input_schema: json!({
                "type": "object",
                "required": ["path", "edits"],
                "additionalProperties": false,
                "properties": {
                    "path": { "type": "string", "description": "File to edit (relative paths resolve against the project folder)" },
                    "edits": { "type": "array", "minItems": 1, "items": edit_schema(), "description": "Replacements applied in order; each old_text must occur exactly once when its turn comes" }
                }
            }).into(),
        }
    }

    async fn run(&self, request: &ToolRequest) -> ToolResult {
        let args = Args::new("MultiEdit", &request.arguments);
        let parsed = args
            .only(&["path", "edits"])
            .and_then(|()| Ok((args.required_str("path")?, edits_of(&request.arguments)?)));
        match parsed {
            Ok((path, edits)) => run_edits("MultiEdit", request, path, edits, self.max_bytes).await,
            Err(error) => ToolResult::failed(request, ErrorCode::InvalidRequest, error.0),
        }
    }
}

/// MultiEdit's `edits`: a non-empty array of `{old_text, new_text}` objects.
fn edits_of(
    arguments: &serde_json::Map<String, Value>,
) -> Result<Vec<Edit>, crate::args::ArgError> {
    let invalid = |why: String| crate::args::ArgError(format!("MultiEdit: {why}"));
    let items = match arguments.get("edits") {
        None | Some(Value::Null) => {
            return Err(invalid("missing required argument \"edits\"".to_owned()));
        }
        Some(Value::Array(items)) if !items.is_empty() => items,
        Some(_) => {
            return Err(invalid(
                "argument \"edits\" must be a non-empty array of {old_text, new_text} objects"
                    .to_owned(),
            ));
        }
    };
    items
        .iter()
        .enumerate()
        .map(|(index, item)| {
            let tool = format!("MultiEdit: edit {}", index + 1);
            let Some(map) = item.as_object() else {
                return Err(invalid(format!(
                    "edit {} must be an object with old_text and new_text",
                    index + 1
                )));
            };
            let args = Args::new(&tool, map);
            args.only(&["old_text", "new_text"])?;
            Ok(Edit {
                old: args.required_str("old_text")?.to_owned(),
                new: args.required_str("new_text")?.to_owned(),
            })
        })
        .collect()
}

async fn run_edits(
    tool: &'static str,
    request: &ToolRequest,
    raw_path: &str,
    edits: Vec<Edit>,
    max_bytes: u64,
) -> ToolResult {
    if let Some(position) = edits.iter().position(|edit| edit.old.is_empty()) {
        let which = if tool == "MultiEdit" {
            format!(" of edit {}", position + 1)
        } else {
            String::new()
        };
        return ToolResult::failed(
            request,
            ErrorCode::InvalidRequest,
            format!("{tool}: \"old_text\"{which} is empty; give the exact text to replace"),
        );
    }
    let path = match resolve_path(tool, raw_path, request) {
        Ok(path) => path,
        Err(failure) => return *failure,
    };
    let cap = request
        .limits
        .max_file_size_bytes
        .map_or(max_bytes, |limit| limit.min(max_bytes));
    let request_owned = request.clone();
    tokio::task::spawn_blocking(move || edit(tool, &request_owned, &path, &edits, cap))
        .await
        .unwrap_or_else(|error| {
            ToolResult::failed(
                request,
                ErrorCode::ToolExecutionFailed,
                format!("{tool} stopped unexpectedly: {error}"),
            )
        })
}

fn edit(tool: &str, request: &ToolRequest, path: &Path, edits: &[Edit], cap: u64) -> ToolResult {
    let target = match std::fs::canonicalize(path) {
        Ok(target) => target,
        Err(error) if error.kind() == ErrorKind::NotFound => {
            return ToolResult::failed(
                request,
                ErrorCode::FileNotFound,
                format!(
                    "File not found: {} ({tool} changes existing files; WriteFile creates them)",
                    path.display()
                ),
            );
        }
        Err(error) => return io_failure(request, path, &error),
    };
    let root = request.workspace_root.as_deref().map(Path::new);
    let (folder, name) = match Folder::of(root, path, &target) {
        Ok(opened) => opened,
        Err(error) => return open_failure(request, tool, path, &error),
    };
    let refuse = |code, message: String| ToolResult::failed(request, code, message);
    let mode = match editable(tool, request, path, folder.find(&name), cap) {
        Ok(mode) => mode,
        Err(refused) => return *refused,
    };
    let bytes = match folder.read(&name, cap.saturating_add(1)) {
        Ok(bytes) => bytes,
        Err(error) => return open_failure(request, tool, path, &error),
    };
    if u64::try_from(bytes.len()).unwrap_or(u64::MAX) > cap {
        return refuse(
            ErrorCode::FileTooLarge,
            format!(
                "{} grew past the {cap} bytes {tool} edits; nothing was changed",
                path.display()
            ),
        );
    }
    let Ok(old) = String::from_utf8(bytes) else {
        return refuse(
            ErrorCode::InvalidRequest,
            format!(
                "{tool}: {} is not UTF-8 text; use WriteFile to replace it",
                path.display()
            ),
        );
    };
    let new = match apply(tool, path, &old, edits) {
        Ok(new) => new,
        Err(message) => return refuse(ErrorCode::InvalidRequest, message),
    };
    let size = u64::try_from(new.len()).unwrap_or(u64::MAX);
    if size > cap {
        return refuse(
            ErrorCode::FileTooLarge,
            format!(
                "The edited {} would be {size} bytes, more than the limit of {cap} bytes; nothing was changed",
                path.display()
            ),
        );
    }
    if let Err(error) = folder.replace(&name, new.as_bytes(), Some(mode)) {
        return io_failure(request, path, &error);
    }
    let message = match edits.len() {
        1 => format!("Edited {}", path.display()),
        count => format!("Applied {count} edits to {}", path.display()),
    };
    record(
        request,
        message,
        &[Changed {
            path,
            status: FileChangeStatus::Modified,
            old: side(&old),
            new: side(&new),
        }],
    )
}

/// The mode of the file to edit, when it is a writable regular file within `cap` bytes.
fn editable(
    tool: &str,
    request: &ToolRequest,
    path: &Path,
    found: std::io::Result<Found>,
    cap: u64,
) -> Result<Mode, Box<ToolResult>> {
    let refuse = |code, message: String| Err(Box::new(ToolResult::failed(request, code, message)));
    match found {
        Ok(Found::File { readonly: true, .. }) => refuse(
            ErrorCode::PermissionDenied,
            format!("{} is read-only", path.display()),
        ),
        Ok(Found::File { len, .. }) if len > cap => refuse(
            ErrorCode::FileTooLarge,
            format!(
                "{} is {len} bytes, more than the {cap} bytes {tool} edits",
                path.display()
            ),
        ),
        Ok(Found::File { mode, .. }) => Ok(mode),
        Ok(Found::Directory) => refuse(
            ErrorCode::InvalidRequest,
            format!("{tool}: {} is a directory, not a file", path.display()),
        ),
        Ok(Found::Special) => refuse(
            ErrorCode::InvalidRequest,
            format!(
                "{tool}: {} is not a regular file (a pipe, socket or device)",
                path.display()
            ),
        ),
        // The path was resolved to a file: a link appeared in its place since.
        Ok(Found::Link) => refuse(
            ErrorCode::PermissionDenied,
            format!(
                "{tool}: {} became a symbolic link while the edit was prepared; nothing was changed",
                path.display()
            ),
        ),
        Ok(Found::Absent) => refuse(
            ErrorCode::FileNotFound,
            format!("File not found: {}", path.display()),
        ),
        Err(error) => Err(Box::new(io_failure(request, path, &error))),
    }
}

/// One side of the diff: the text, unless it is too large to diff.
fn side(text: &str) -> Side<'_> {
    let bytes = u64::try_from(text.len()).unwrap_or(u64::MAX);
    if bytes > MAX_DIFF_INPUT_BYTES {
        Side::Opaque { bytes }
    } else {
        Side::of(text.as_bytes())
    }
}

/// `text` with every edit applied in order, or the readable failure of the first that does
/// not occur exactly once.
fn apply(tool: &str, path: &Path, text: &str, edits: &[Edit]) -> Result<String, String> {
    let mut text = text.to_owned();
    for (index, edit) in edits.iter().enumerate() {
        let which = if edits.len() > 1 || tool == "MultiEdit" {
            format!("edit {}: ", index + 1)
        } else {
            String::new()
        };
        let mut found = text.match_indices(&edit.old);
        let Some((at, _)) = found.next() else {
            let hint = if edits.len() > 1 && index > 0 {
                " (as it stands after the edits before it)"
            } else {
                ""
            };
            return Err(format!(
                "{tool}: {which}old_text occurs 0 times in {}{hint}; it must match the file's text exactly, whitespace included. Nothing was changed",
                path.display()
            ));
        };
        let more = found.count();
        if more > 0 {
            return Err(format!(
                "{tool}: {which}old_text occurs {} times in {}; include more of the surrounding text so it occurs exactly once. Nothing was changed",
                more + 1,
                path.display()
            ));
        }
        text.replace_range(at..at + edit.old.len(), &edit.new);
    }
    Ok(text)
}

#[cfg(test)]
#[path = "edit_tests.rs"]
mod tests;
