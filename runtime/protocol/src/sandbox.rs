//! The OS sandbox around the processes the tool runtime starts.
//!
//! The tool runtime never reads the policy bundle, so the host describes, per tool call, what
//! a started process may reach ([`SandboxGrant`], in `ToolRequest.sandbox`); the tool runtime
//! reports what its OS can enforce ([`SandboxStatus`], in GetSessionState's `sandbox`).

use serde::{Deserialize, Serialize};

/// What a process started for one tool call may reach. Paths are absolute.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SandboxGrant {
    /// Trees the process may write (create, change, delete) in.
    #[serde(default)]
    pub write_paths: Vec<String>,
    /// Trees inside `writePaths` that stay read-only (still readable): the policy's blocked
    /// write paths and the repository files git would run code from (`.git/config`, hooks).
    #[serde(default)]
    pub blocked_paths: Vec<String>,
    /// Paths the process may neither read nor write, existing or not: the policy's blocked
    /// read paths (INTEROP.md §10). Reads are otherwise not confined.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hidden_paths: Vec<String>,
    /// Whether the process may open network sockets (TCP, UDP, …); local (Unix) sockets are
    /// always allowed.
    #[serde(default)]
    pub network: bool,
}

/// `AGENT_RUNTIME_SANDBOX`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SandboxMode {
    /// Refuse to start a process when the OS cannot sandbox it.
    Required,
    /// Sandbox when the OS can; otherwise run unsandboxed and say so at session start.
    #[default]
    BestEffort,
    /// Never sandbox.
    Off,
}

impl SandboxMode {
    pub fn as_str(self) -> &'static str {
        match self {
            SandboxMode::Required => "required",
            SandboxMode::BestEffort => "best-effort",
            SandboxMode::Off => "off",
        }
    }

    /// Parses the environment variable's value; the error names the accepted values.
    pub fn parse(text: &str) -> Result<Self, String> {
        match text.trim().to_ascii_lowercase().as_str() {
            "required" => Ok(SandboxMode::Required),
            "best-effort" | "besteffort" | "" => Ok(SandboxMode::BestEffort),
            "off" => Ok(SandboxMode::Off),
            other => Err(format!(
                "AGENT_RUNTIME_SANDBOX must be required, best-effort or off (got \"{other}\")"
            )),
        }
    }
}

/// What the tool runtime can enforce on this machine.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SandboxStatus {
    pub mode: SandboxMode,
    /// Whether started processes are confined.
    pub enforced: bool,
    /// `landlock+seccomp`, `seatbelt` or `none`.
    pub mechanism: String,
    /// A sentence for a person: what is confined, or why nothing is.
    pub detail: String,
}
