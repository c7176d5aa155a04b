//! The record of a change an editing tool made: the `file_diff` artifact and the file-change
//! entry of the patch preview, built as WriteFile builds them (local-tool-runtime.md §4.2,
//! INTEROP.md §1, §11).

use std::path::Path;

use agent_protocol::methods::FileChangeStatus;
use agent_protocol::tool::FileChange;
use agent_protocol::{ToolRequest, ToolResult};

use super::diff::{self, Side};
use crate::output;

/// One file's side of a change, for [`record`].
pub(crate) struct Changed<'a> {
    pub path: &'a Path,
    pub status: FileChangeStatus,
    pub old: Side<'a>,
    pub new: Side<'a>,
}

/// A succeeded result saying `message`, carrying the diffs of `changes` as one `file_diff`
/// artifact (named after the first file) and one file-change entry each.
pub(crate) fn record(
    request: &ToolRequest,
    message: String,
    changes: &[Changed<'_>],
) -> ToolResult {
    let mut result = ToolResult::succeeded(request, message);
    let mut full = String::new();
    for change in changes {
        let shown = change.path.display().to_string();
        let diff = diff::diff(&shown, change.old, change.new);
        full.push_str(&diff.full);
        result.file_changes.push(FileChange {
            path: shown,
            status: change.status,
            hunks: diff.hunks,
        });
    }
    if let Some(first) = changes.first()
        && !full.is_empty()
    {
        let name = format!(
            "{}.diff",
            first.path.file_name().unwrap_or_default().to_string_lossy()
        );
        result
            .artifacts
            .push(output::file_diff_artifact(name, &full));
    }
    result
}
