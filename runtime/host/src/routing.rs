//! Tool routing (local-agent-host.md §7.2): the static tool → capability table, and the
//! filter that offers the model only the tools whose capability the policy grants.

use std::time::Duration;

use agent_protocol::ToolDefinition;
use agent_protocol::extensions::{BACKEND_TOOL_CAPABILITY, MCP_CAPABILITY, split_mcp_name};
use serde_json::{Map, Value};

use crate::config::ToolTimeouts;
use crate::policy::PolicyEnforcer;

/// Tool name (as the model uses it) → capability (as the policy names it).
pub(crate) const TOOL_CAPABILITIES: &[(&str, &str)] = &[
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
    // INTEROP.md §11: the Python runtime's network, execution and search tools.
    ("FetchUrl", "Network.Http"),
    ("ExecuteCode", "Code.Execute"),
    ("WebSearch", "Search.Web"),
    // The coding file tools of INTEROP.md §11, judged like ReadFile and WriteFile.
    ("EditFile", "File.Write"),
    ("MultiEdit", "File.Write"),
    ("ListDirectory", "File.Read"),
    ("FindFiles", "File.Read"),
    ("GrepFiles", "File.Read"),
    ("CreateDirectory", "File.Write"),
    ("MoveFile", "File.Write"),
    ("ViewImage", "File.Read"),
];

/// The capability of a tool: from the table, or `Mcp.Invoke` for an MCP tool
/// (`{server}/{tool}`, see `agent_protocol::extensions`).
pub(crate) fn capability_for(tool_name: &str) -> Option<&'static str> {
    TOOL_CAPABILITIES
        .iter()
        .find(|(tool, _)| *tool == tool_name)
        .map(|(_, capability)| *capability)
        .or_else(|| split_mcp_name(tool_name).map(|_| MCP_CAPABILITY))
}

/// Under a bundle that names no `Git.*` capability at all (the real Policy Service never
/// grants one), the git tools that read or write the repository are judged as the file
/// capabilities of its folder (INTEROP.md §10); GitPush still needs `Git.Push`.
fn git_without_git_capabilities(tool_name: &str) -> Option<&'static str> {
    match tool_name {
        "GitStatus" | "GitDiff" => Some("File.Read"),
        "GitCommit" => Some("File.Write"),
        _ => None,
    }
}

/// [`capability_for`] as this bundle judges it: the git tools of a bundle without `Git.*`
/// under their file capability, and `BackendTool.Invoke` for the tools the policy names in
/// its `allowedToolNames` (local-agent-host.md §7.2, §7.6). Built-in names always win.
pub(crate) fn capability_in(tool_name: &str, policy: &PolicyEnforcer) -> Option<&'static str> {
    if !policy.names_git_capabilities()
        && let Some(capability) = git_without_git_capabilities(tool_name)
    {
        return Some(capability);
    }
    capability_for(tool_name).or_else(|| {
        policy
            .capability(BACKEND_TOOL_CAPABILITY)
            .and_then(|entry| entry.allowed_tool_names.as_ref())
            .filter(|names| names.iter().any(|name| name == tool_name))
            .map(|_| BACKEND_TOOL_CAPABILITY)
    })
}

/// The tools offered to the model: known to the router and granted by the policy.
pub(crate) fn offered_tools(
    all: Vec<ToolDefinition>,
    policy: &PolicyEnforcer,
) -> Vec<ToolDefinition> {
    all.into_iter()
        .filter(|tool| {
            capability_in(&tool.tool_name, policy)
                .is_some_and(|capability| policy.grants(capability))
        })
        .collect()
}

/// ExecuteCode's timeout when the call names none (INTEROP.md §11).
const CODE_DEFAULT_TIMEOUT: Duration = Duration::from_secs(120);

/// How long a call may run (local-agent-host.md §7.4): by category, except that a command
/// given its own `timeout` gets that. The host's limit sits a little above the tool's own,
/// so the tool runtime's timeout — which kills the whole process tree — fires first.
pub(crate) fn tool_timeout(
    capability: &str,
    arguments: &Map<String, Value>,
    timeouts: &ToolTimeouts,
) -> (Duration, Duration) {
    const MARGIN: Duration = Duration::from_secs(10);
    let tool = match capability {
        "Shell.Exec" => arguments
            .get("timeout")
            .and_then(Value::as_f64)
            .filter(|seconds| seconds.is_finite() && *seconds > 0.0)
            .and_then(|seconds| Duration::try_from_secs_f64(seconds).ok())
            .unwrap_or(timeouts.shell),
        // ExecuteCode's own timeout (INTEROP.md §11: default 120 s), the bundle's
        // `maxExecutionTimeSeconds` applied by the caller.
        "Code.Execute" => arguments
            .get("timeout_seconds")
            .and_then(Value::as_f64)
            .filter(|seconds| seconds.is_finite() && *seconds > 0.0)
            .and_then(|seconds| Duration::try_from_secs_f64(seconds).ok())
            .unwrap_or(CODE_DEFAULT_TIMEOUT),
        // A push talks to a remote: a network request, not local file work.
        "Network.Http" | "Git.Push" | "Search.Web" => timeouts.network,
        "BackendTool.Invoke" | "Mcp.Invoke" => timeouts.remote,
        _ => timeouts.file,
    };
    (tool, tool.saturating_add(MARGIN))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn policy(capabilities: serde_json::Value) -> PolicyEnforcer {
        crate::testing::enforcer(&std::env::temp_dir(), capabilities)
    }

    /// INTEROP.md §10: the real Policy Service never grants Git.*, so its bundles judge
    /// GitStatus/GitDiff as File.Read and GitCommit as File.Write; GitPush needs its own.
    #[test]
    fn git_tools_under_a_bundle_without_git_capabilities_are_file_tools() {
        let real = policy(json!([
            {"name": "File.Read", "allowedPaths": ["."]},
            {"name": "File.Write", "allowedPaths": ["."]}
        ]));
        assert_eq!(capability_in("GitStatus", &real), Some("File.Read"));
        assert_eq!(capability_in("GitDiff", &real), Some("File.Read"));
        assert_eq!(capability_in("GitCommit", &real), Some("File.Write"));
        assert_eq!(capability_in("GitPush", &real), Some("Git.Push"));
        let tools = ["GitStatus", "GitDiff", "GitCommit", "GitPush"]
            .map(|name| ToolDefinition {
                tool_name: name.to_owned(),
                description: String::new(),
                input_schema: json!({}).into(),
            })
            .to_vec();
        let offered: Vec<String> = offered_tools(tools, &real)
            .into_iter()
            .map(|tool| tool.tool_name)
            .collect();
        assert_eq!(offered, ["GitStatus", "GitDiff", "GitCommit"]);
        let named = policy(json!([{"name": "File.Read"}, {"name": "Git.Diff"}]));
        assert_eq!(capability_in("GitStatus", &named), Some("Git.Status"));
        assert_eq!(capability_in("GitDiff", &named), Some("Git.Diff"));
    }

    #[test]
    fn timeouts_follow_the_category_and_a_commands_own_timeout() {
        let seconds = Duration::from_secs;
        let timeouts = ToolTimeouts {
            file: seconds(1),
            shell: seconds(2),
            network: seconds(3),
            remote: seconds(4),
            ..ToolTimeouts::default()
        };
        let none = Map::new();
        for (capability, expected) in [
            ("File.Read", 1),
            ("File.Write", 1),
            ("Shell.Exec", 2),
            ("Network.Http", 3),
            ("Git.Push", 3),
            ("BackendTool.Invoke", 4),
            ("Mcp.Invoke", 4),
        ] {
            assert_eq!(
                tool_timeout(capability, &none, &timeouts).0,
                seconds(expected),
                "{capability}"
            );
        }
        let own = json!({"timeout": 5}).as_object().cloned().unwrap();
        let (tool, host) = tool_timeout("Shell.Exec", &own, &timeouts);
        assert_eq!(tool, seconds(5));
        assert!(host > tool);
        // INTEROP.md §11: ExecuteCode's own `timeout_seconds`, 120 s without one; a search
        // and a page fetch are network requests.
        assert_eq!(
            tool_timeout("Code.Execute", &none, &timeouts).0,
            seconds(120)
        );
        let own = json!({"timeout_seconds": 7}).as_object().cloned().unwrap();
        assert_eq!(tool_timeout("Code.Execute", &own, &timeouts).0, seconds(7));
        assert_eq!(tool_timeout("Search.Web", &none, &timeouts).0, seconds(3));
    }

    /// INTEROP.md §11: each tool under its capability, offered only when it is granted.
    #[test]
    fn the_network_execution_and_search_tools_are_offered_under_their_capabilities() {
        assert_eq!(capability_for("FetchUrl"), Some("Network.Http"));
        assert_eq!(capability_for("ExecuteCode"), Some("Code.Execute"));
        assert_eq!(capability_for("WebSearch"), Some("Search.Web"));
        let tools = ["FetchUrl", "ExecuteCode", "WebSearch"]
            .map(|name| ToolDefinition {
                tool_name: name.to_owned(),
                description: String::new(),
                input_schema: json!({}).into(),
            })
            .to_vec();
        let offered = |capabilities| -> Vec<String> {
            offered_tools(tools.clone(), &policy(capabilities))
                .into_iter()
                .map(|tool| tool.tool_name)
                .collect()
        };
        assert_eq!(
            offered(json!([{"name": "File.Read"}])),
            Vec::<String>::new()
        );
        assert_eq!(
            offered(
                json!([{"name": "Code.Execute", "allowedLanguages": ["python"]}, {"name": "Search.Web"}])
            ),
            ["ExecuteCode", "WebSearch"]
        );
        assert_eq!(offered(json!([{"name": "Network.Http"}])), ["FetchUrl"]);
    }
}
