//! Tool routing (local-agent-host.md §7.2): the static tool → capability table, and the
//! filter that offers the model only the tools whose capability the policy grants.

use agent_protocol::ToolDefinition;

use crate::policy::PolicyEnforcer;

/// Tool name (as the model uses it) → capability (as the policy names it).
pub const TOOL_CAPABILITIES: &[(&str, &str)] = &[
    ("ReadFile", "File.Read"),
    ("WriteFile", "File.Write"),
    ("DeleteFile", "File.Delete"),
    ("RunCommand", "Shell.Exec"),
    ("HttpRequest", "Network.Http"),
    ("GitStatus", "Git.Status"),
    ("GitDiff", "Git.Diff"),
    ("GitCommit", "Git.Commit"),
    ("GitPush", "Git.Push"),
    ("UploadArtifact", "Workspace.Upload"),
];

pub fn capability_for(tool_name: &str) -> Option<&'static str> {
    TOOL_CAPABILITIES
        .iter()
        .find(|(tool, _)| *tool == tool_name)
        .map(|(_, capability)| *capability)
}

/// The tools offered to the model: known to the router and granted by the policy.
pub fn offered_tools(all: Vec<ToolDefinition>, policy: &PolicyEnforcer) -> Vec<ToolDefinition> {
    all.into_iter()
        .filter(|tool| {
            capability_for(&tool.tool_name).is_some_and(|capability| policy.grants(capability))
        })
        .collect()
}
