//! The boundary between the agent host and the tool runtime (architecture.md §6.2,
//! local-agent-host.md §7.1). Neither side imports the other; both use these types.

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::error::ErrorCode;
use crate::extensions::{ExtensionConfig, ExtensionNotice};
use crate::methods::FileChangeStatus;
use crate::sandbox::{SandboxGrant, SandboxStatus};

/// Limits the host passes with each request, taken from the policy scope and the runtime
/// configuration, so the tool runtime never needs to read the policy bundle itself.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolLimits {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_file_size_bytes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_output_bytes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
    /// The host's policy for any further URL the call reaches (every redirect hop of
    /// HttpRequest): the tool runtime asks it without reading the bundle. In-process only.
    #[serde(skip)]
    pub url_check: Option<UrlCheck>,
}

/// The host's decision on one URL: `Err` is the reason it may not be fetched.
type UrlDecision = dyn Fn(&str) -> Result<(), String> + Send + Sync;

/// A policy decision on a URL, made by the host: `Err` is the reason it may not be fetched.
#[derive(Clone)]
pub struct UrlCheck(std::sync::Arc<UrlDecision>);

impl UrlCheck {
    pub fn new(check: impl Fn(&str) -> Result<(), String> + Send + Sync + 'static) -> Self {
        UrlCheck(std::sync::Arc::new(check))
    }

    pub fn check(&self, url: &str) -> Result<(), String> {
        (self.0)(url)
    }
}

impl std::fmt::Debug for UrlCheck {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("UrlCheck")
    }
}

impl PartialEq for UrlCheck {
    fn eq(&self, other: &Self) -> bool {
        std::sync::Arc::ptr_eq(&self.0, &other.0)
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolRequest {
    pub tool_name: String,
    pub arguments: Map<String, Value>,
    pub session_id: String,
    pub task_id: String,
    pub step_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capability: Option<String>,
    /// The model's id for this call; results are matched back to calls by it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    /// The session's workspace root (`workspaceHint.localPaths[0]`): relative paths and a
    /// missing `cwd` resolve against it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace_root: Option<String>,
    #[serde(default, skip_serializing_if = "is_default")]
    pub limits: ToolLimits,
    /// The folders the capability grants (its `allowedPaths`, resolved); `None`: any path.
    /// For what a tool reaches beyond its arguments' paths (a push destination).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub granted_paths: Option<Vec<String>>,
    /// The capability entry's `blockedPaths` as the enforcer judges them: prefixes absolute
    /// and resolved, glob patterns as written (a relative one anchored at the project
    /// folder); `None` when it names none. For what a tool finds beyond the paths its
    /// arguments name (a search's results, a folder's listing), which must never show them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blocked_paths: Option<Vec<String>>,
    /// What a process started for this call may reach; absent for tools that
    /// start none. A process-starting tool given none confines to the workspace root.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<SandboxGrant>,
}

fn is_default(limits: &ToolLimits) -> bool {
    limits == &ToolLimits::default()
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ToolStatus {
    Succeeded,
    Failed,
    Denied,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolError {
    pub code: ErrorCode,
    pub message: String,
}

/// Content a tool produced that is too large or too structured for the thread: the host
/// uploads it to the Workspace Service and records the returned URI in `artifactUris`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ArtifactData {
    /// `tool_output` or `file_diff`.
    pub artifact_type: String,
    pub artifact_name: String,
    pub content_type: String,
    pub content_base64: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolResult {
    pub tool_name: String,
    pub session_id: String,
    pub task_id: String,
    pub step_id: String,
    pub status: ToolStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_text: Option<String>,
    #[serde(default)]
    pub artifact_uris: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ToolError>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    /// Artifacts still to upload; emptied by the host once uploaded.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub artifacts: Vec<ArtifactData>,
    /// Files this call created, changed or deleted, so the host can answer
    /// `GetPatchPreview` (INTEROP.md §1) without watching the file system.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub file_changes: Vec<FileChange>,
    /// Images for the model to see with the result (ViewImage, INTEROP.md §11): they go to
    /// the gateway as `image_url` parts of the tool message, never into events or history.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub images: Vec<ImagePart>,
}

/// An image a tool result carries to the model.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ImagePart {
    /// `image/png`, `image/jpeg`, `image/gif`, `image/webp` or `image/bmp`.
    pub media_type: String,
    pub data_base64: String,
}

impl ImagePart {
    /// The `data:` URI the gateway's `image_url` part carries.
    pub fn data_uri(&self) -> String {
        format!("data:{};base64,{}", self.media_type, self.data_base64)
    }
}

/// One file a tool added, modified or deleted: the raw material of a patch preview entry
/// (`methods::FilePatch`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FileChange {
    /// The absolute path as the caller named it (symlinks not resolved).
    pub path: String,
    pub status: FileChangeStatus,
    /// Unified-diff text from the first `@@` (no `---`/`+++` header lines); empty when there
    /// is no textual difference to show (an empty file, or content too large or binary).
    pub hunks: String,
}

impl ToolResult {
    fn base(request: &ToolRequest, status: ToolStatus) -> Self {
        Self {
            tool_name: request.tool_name.clone(),
            session_id: request.session_id.clone(),
            task_id: request.task_id.clone(),
            step_id: request.step_id.clone(),
            status,
            output_text: None,
            artifact_uris: Vec::new(),
            error: None,
            tool_call_id: request.tool_call_id.clone(),
            artifacts: Vec::new(),
            file_changes: Vec::new(),
            images: Vec::new(),
        }
    }

    pub fn succeeded(request: &ToolRequest, output: impl Into<String>) -> Self {
        let mut result = Self::base(request, ToolStatus::Succeeded);
        result.output_text = Some(output.into());
        result
    }

    pub fn failed(request: &ToolRequest, code: ErrorCode, message: impl Into<String>) -> Self {
        let mut result = Self::base(request, ToolStatus::Failed);
        result.error = Some(ToolError {
            code,
            message: message.into(),
        });
        result
    }

    pub fn denied(request: &ToolRequest, code: ErrorCode, message: impl Into<String>) -> Self {
        let mut result = Self::failed(request, code, message);
        result.status = ToolStatus::Denied;
        result
    }

    /// The text the model sees for this result.
    pub fn text_for_model(&self) -> String {
        match (&self.status, &self.error, &self.output_text) {
            (ToolStatus::Succeeded, _, Some(text)) => text.clone(),
            (ToolStatus::Succeeded, _, None) => String::new(),
            (status, Some(error), _) => {
                let label = match status {
                    ToolStatus::Denied => "Denied",
                    _ => "Error",
                };
                format!("{label} ({}): {}", error.code, error.message)
            }
            (_, None, text) => text.clone().unwrap_or_default(),
        }
    }
}

/// How a tool describes itself to the model (local-tool-runtime.md §5).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolDefinition {
    pub tool_name: String,
    pub description: String,
    /// A JSON Schema (type object) of the arguments. Shared, not copied: the host asks for
    /// the offered tools at every step and compares them with the last step's, and a
    /// shared schema makes both a pointer's work instead of a walk over every schema.
    pub input_schema: std::sync::Arc<Value>,
}

/// The sole boundary between agent host and tool runtime (local-agent-host.md §7.1).
///
/// `execute` never fails: every error becomes a `ToolResult` with status `failed`, so the
/// model can read it and correct itself.
///
/// Dropping the future `execute` returned cancels the call: the implementation must stop
/// what it started (a command's whole process tree is killed). The host relies on this for
/// force-cancellation and its own timeouts.
#[async_trait]
pub trait ToolRouter: Send + Sync {
    async fn execute(&self, request: ToolRequest) -> ToolResult;
    /// The tools offered right now: the built-in ones and the extension tools whose server
    /// is reachable. May change between calls (a server going down or coming back).
    fn available_tools(&self) -> Vec<ToolDefinition>;

    /// Sets up a session's extension tools (MCP servers, Backend Tool Service) from the
    /// settings the host read from the policy bundle; returns what a person should be told
    /// (unreachable servers, rejected tools). Bounded in time by the implementation; a
    /// server that does not answer never delays the others.
    async fn open_extensions(&self, _config: ExtensionConfig) -> Vec<ExtensionNotice> {
        Vec::new()
    }

    /// Ends what `open_extensions` started (closes MCP sessions). Called at session end.
    async fn close_extensions(&self) {}

    /// What confines the processes this runtime starts; `None` when it starts none.
    fn sandbox_status(&self) -> Option<SandboxStatus> {
        None
    }
}
