//! File tools (local-tool-runtime.md §4.1–§4.3) and the coding file tools of INTEROP.md §11
//! (edits, folders, moves, listings, and the searches in [`search`]).

pub(crate) mod blocked;
mod change;
pub(crate) mod delete;
mod diff;
pub(crate) mod edit;
pub(crate) mod folders;
pub(crate) mod image;
pub(crate) mod listing;
pub(crate) mod moves;
pub(crate) mod read;
pub(crate) mod search;
pub(crate) mod write;

use std::io::ErrorKind;
use std::path::{Path, PathBuf};

use agent_protocol::{ErrorCode, ToolRequest, ToolResult};

use crate::platform;

/// The path argument of a file tool, resolved against the project folder with
/// the checks of §8.1 — or the failure to return (boxed: a `ToolResult` is large).
pub(crate) fn resolve_path(
    tool: &str,
    raw: &str,
    request: &ToolRequest,
) -> Result<PathBuf, Box<ToolResult>> {
    let root = request.workspace_root.as_deref().map(Path::new);
    platform::resolve_within(raw, root).map_err(|error| {
        Box::new(ToolResult::failed(
            request,
            ErrorCode::InvalidRequest,
            format!("{tool}: {error}"),
        ))
    })
}

/// [`io_failure`], except that an open refused for leading out of the project folder
/// says so (the refusal names its rule).
pub(crate) fn open_failure(
    request: &ToolRequest,
    tool: &str,
    path: &Path,
    error: &std::io::Error,
) -> ToolResult {
    match platform::beneath::escaped(error) {
        Some(escaped) => ToolResult::failed(
            request,
            ErrorCode::PermissionDenied,
            format!(
                "{tool}: {} was not opened: {escaped}. Name the file by its real path, which the policy then judges",
                path.display()
            ),
        ),
        None => io_failure(request, path, error),
    }
}

/// Maps an I/O error to the spec's codes with a message naming the path.
pub(crate) fn io_failure(request: &ToolRequest, path: &Path, error: &std::io::Error) -> ToolResult {
    let (code, message) = match error.kind() {
        ErrorKind::NotFound => (
            ErrorCode::FileNotFound,
            format!("File not found: {}", path.display()),
        ),
        ErrorKind::PermissionDenied => (
            ErrorCode::PermissionDenied,
            format!(
                "Permission denied by the operating system: {}",
                path.display()
            ),
        ),
        _ => (
            ErrorCode::ToolExecutionFailed,
            format!("Could not access {}: {error}", path.display()),
        ),
    };
    ToolResult::failed(request, code, message)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Error;

    /// The OS refusal itself cannot be provoked when the tests run as root, so the mapping is
    /// checked on the error kinds.
    #[test]
    fn io_errors_map_to_the_spec_codes_and_name_the_path() {
        let dir = tempfile::tempdir().unwrap();
        let request = crate::testing::request("ReadFile", dir.path(), serde_json::json!({}));
        let path = Path::new("/w/a.txt");
        let cases = [
            (
                ErrorKind::NotFound,
                ErrorCode::FileNotFound,
                "File not found",
            ),
            (
                ErrorKind::PermissionDenied,
                ErrorCode::PermissionDenied,
                "Permission denied by the operating system",
            ),
            (
                ErrorKind::Other,
                ErrorCode::ToolExecutionFailed,
                "Could not access",
            ),
        ];
        for (kind, code, start) in cases {
            let result = io_failure(&request, path, &Error::from(kind));
            let error = result.error.unwrap();
            assert_eq!(error.code, code, "{kind:?}");
            assert!(error.message.starts_with(start), "{}", error.message);
            assert!(error.message.contains("/w/a.txt"), "{}", error.message);
        }
    }
}

#[cfg(test)]
mod schema_tests;
