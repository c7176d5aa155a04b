//! Helpers shared by the unit tests of the tools.

use std::path::Path;

use agent_protocol::ToolRequest;
use agent_protocol::tool::ArtifactData;
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
    }
}

/// An artifact's content as text.
pub(crate) fn decoded(artifact: &ArtifactData) -> String {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(&artifact.content_base64)
        .unwrap();
    String::from_utf8(bytes).unwrap()
}
