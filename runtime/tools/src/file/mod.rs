//! File tools (local-tool-runtime.md §4.1–§4.3).

pub mod read;

use std::io::ErrorKind;
use std::path::Path;

use agent_protocol::{ErrorCode, ToolRequest, ToolResult};

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
