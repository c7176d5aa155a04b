//! Helpers shared by the unit tests of the tools.

use std::path::Path;

use agent_protocol::methods::FileChangeStatus;
use agent_protocol::tool::{ArtifactData, FileChange};
use agent_protocol::{ToolRequest, ToolResult};
use base64::Engine as _;
use serde_json::Value;

/// A request for `tool` in a session whose project folder is `dir`.
pub(crate) fn request(tool: &str, dir: &Path, args: Value) -> ToolRequest {
    ToolRequest {
        tool_name: tool.into(),
        arguments: args.as_object().unwrap().clone(),
        session_id: "s".into(),
        task_id: "t".into(),
        step_id: "step_001".into(),
        capability: None,
        tool_call_id: Some("c1".into()),
        workspace_root: Some(dir.display().to_string()),
        limits: Default::default(),
        granted_paths: None,
        blocked_paths: None,
        sandbox: None,
    }
}

/// An artifact's content as text.
pub(crate) fn decoded(artifact: &ArtifactData) -> String {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(&artifact.content_base64)
        .unwrap();
    String::from_utf8(bytes).unwrap()
}

/// A FIFO named `name` in `dir`, with no writer: opening it for reading blocks.
#[cfg(unix)]
pub(crate) fn fifo(dir: &Path, name: &str) -> std::path::PathBuf {
    let path = dir.join(name);
    let made = std::process::Command::new("mkfifo").arg(&path).status();
    assert!(
        made.is_ok_and(|status| status.success()),
        "mkfifo {}",
        path.display()
    );
    path
}

/// `result` failed with `code` and a message that says `says`.
#[cfg_attr(not(unix), allow(dead_code))]
pub(crate) fn assert_failed(
    result: &agent_protocol::ToolResult,
    code: agent_protocol::ErrorCode,
    says: &str,
) {
    let Some(error) = &result.error else {
        panic!("succeeded: {result:?}");
    };
    assert_eq!(error.code, code, "{}", error.message);
    assert!(error.message.contains(says), "{}", error.message);
}

/// `result` records one change of `path` (`status`, with `hunks`) and carries it as one
/// `file_diff` artifact: the unified diff from `old` to `new` (a path or `/dev/null`) over
/// the same hunks. Returns the artifact for further checks.
pub(crate) fn assert_file_diff<'a>(
    result: &'a ToolResult,
    path: &Path,
    status: FileChangeStatus,
    (old, new): (&str, &str),
    hunks: &str,
) -> &'a ArtifactData {
    assert_eq!(
        result.file_changes,
        [FileChange {
            path: path.display().to_string(),
            status,
            hunks: hunks.into(),
        }]
    );
    let [artifact] = &result.artifacts[..] else {
        panic!("{:?}", result.artifacts)
    };
    assert_eq!(artifact.artifact_type, "file_diff");
    assert_eq!(artifact.content_type, "text/x-diff");
    assert_eq!(decoded(artifact), format!("--- {old}\n+++ {new}\n{hunks}"));
    artifact
}
