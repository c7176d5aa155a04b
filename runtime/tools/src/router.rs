//! The registry and dispatch (local-tool-runtime.md §3): unknown tools are TOOL_NOT_FOUND,
//! every tool validates its own arguments before touching anything.

use agent_protocol::extensions::{ExtensionConfig, ExtensionNotice, split_mcp_name};
use agent_protocol::{ErrorCode, ToolDefinition, ToolRequest, ToolResult, ToolRouter};
use async_trait::async_trait;

use crate::backend::BackendTools;
use crate::file::delete::DeleteFile;
use crate::file::read::ReadFile;
use crate::file::write::WriteFile;
use crate::git::{GitCommit, GitDiff, GitPush, GitStatus};
use crate::mcp::{McpClient, McpOptions};
use crate::network::HttpRequest;
use crate::network::fetch_url::FetchUrl;
use crate::network::search::WebSearch;
use crate::platform::ssrf::AddressPolicy;
use crate::shell::RunCommand;
use crate::shell::code::ExecuteCode;
use crate::tool::Tool;

/// How the built-in tools are set up; `Default` is the production setting.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ToolOptions {
    /// `BACKEND_TOOL_SERVICE_URL`: where `BackendTool.Invoke` tools run; none when unset.
    pub backend_tool_service_url: Option<String>,
    /// MCP client settings; its `allow_loopback_http` is overridden by the one below, so one
    /// switch governs every plain-http loopback exception.
    pub mcp: McpOptions,
    /// HttpRequest may reach loopback addresses (`127.0.0.0/8`, `::1`, `localhost`). Default
    /// `false`: local-tool-runtime.md §8.3 forbids them. Only for tests and the conformance
    /// kit, whose fake servers listen on `127.0.0.1`; every other local or internal address
    /// (private, link-local, metadata, …) stays forbidden even then. Also lets MCP
    /// endpoints on loopback use plain http.
    pub allow_loopback_http: bool,
    /// Time between `SIGTERM` and `SIGKILL` when RunCommand ends a process tree; `None` is
    /// the spec's 5 s (local-tool-runtime.md §6.2). A knob so the escalation can be
    /// certified without waiting the full grace.
    pub kill_grace: Option<std::time::Duration>,
    /// The most ReadFile holds of one file, whatever the bundle allows;
    /// `None` is [`crate::file::read::DEFAULT_MAX_READ_BYTES`].
    pub max_read_bytes: Option<u64>,
    /// `AGENT_RUNTIME_WEB_SEARCH_URL`: the search endpoint WebSearch asks; the tool is not
    /// offered without one (INTEROP.md §11).
    pub web_search_url: Option<String>,
    /// `AGENT_RUNTIME_LLM_IMAGE_PARTS`: the LLM gateway takes `image_url` content parts, so
    /// ViewImage is offered. Off by default: the real gateway refuses any content that is not
    /// a string (INTEROP.md §2), and one image would fail the whole request.
    pub image_parts: bool,
}

impl ToolOptions {
    /// Whether the settings are usable; `Err` names the one that is not, for start-up.
    pub fn validate(&self) -> Result<(), String> {
        if let Some(url) = &self.web_search_url {
            WebSearch::new(url)?;
        }
        Ok(())
    }
}

pub struct LocalToolRouter {
    tools: Vec<Box<dyn Tool>>,
    /// `tools`' definitions, in the same order: built once, since every step offers them
    /// and every call looks its tool up by name.
    definitions: Vec<ToolDefinition>,
    mcp: McpClient,
    backend: BackendTools,
}

impl LocalToolRouter {
    /// The built-in tools of this build, with the default (production) options.
    pub fn new() -> Self {
        Self::with_options(ToolOptions::default())
    }

    /// The built-in tools, set up by `options`.
    pub fn with_options(options: ToolOptions) -> Self {
        let policy = AddressPolicy {
            allow_loopback: options.allow_loopback_http,
        };
        let mcp = McpOptions {
            allow_loopback_http: options.allow_loopback_http,
            ..options.mcp
        };
        let run_command = match options.kill_grace {
            Some(grace) => RunCommand::new().with_kill_grace(grace),
            None => RunCommand::new(),
        };
        let mut tools: Vec<Box<dyn Tool>> = vec![
            Box::new(ReadFile {
                max_bytes: options
                    .max_read_bytes
                    .unwrap_or(crate::file::read::DEFAULT_MAX_READ_BYTES),
            }),
            Box::new(WriteFile),
            Box::new(DeleteFile),
            Box::new(run_command.clone()),
            Box::new(HttpRequest::new(policy)),
            Box::new(GitStatus::default()),
            Box::new(GitDiff::default()),
            Box::new(GitCommit::default()),
            Box::new(GitPush::default()),
            // INTEROP.md §11: the network and execution tools of the Python runtime.
            Box::new(FetchUrl::new(HttpRequest::new(policy))),
            Box::new(
                ExecuteCode::new(run_command.settings()).with_image_parts(options.image_parts),
            ),
        ];
        match options.web_search_url.as_deref().map(WebSearch::new) {
            Some(Ok(search)) => tools.push(Box::new(search)),
            Some(Err(error)) => tracing::warn!(%error, "WebSearch is not offered"),
            None => {}
        }
        tools.extend(coding_file_tools(&options));
        Self {
            mcp: McpClient::new(mcp),
            backend: BackendTools::new(options.backend_tool_service_url.clone()),
            definitions: tools.iter().map(|tool| tool.definition()).collect(),
            tools,
        }
    }
}

/// The coding file tools of INTEROP.md §11, after the built-in ones.
fn coding_file_tools(options: &ToolOptions) -> Vec<Box<dyn Tool>> {
    use crate::file::{edit, folders, listing, moves};
    let max_bytes = options
        .max_read_bytes
        .unwrap_or(crate::file::read::DEFAULT_MAX_READ_BYTES);
    let mut tools: Vec<Box<dyn Tool>> = vec![
        Box::new(edit::EditFile { max_bytes }),
        Box::new(edit::MultiEdit { max_bytes }),
        Box::new(listing::ListDirectory),
        Box::new(crate::file::search::find::FindFiles),
        Box::new(crate::file::search::grep::GrepFiles {
            max_file_bytes: max_bytes,
        }),
        Box::new(folders::CreateDirectory),
        Box::new(moves::MoveFile),
    ];
    if options.image_parts {
        tools.push(Box::new(crate::file::image::ViewImage));
    }
    tools
}

impl Default for LocalToolRouter {
    fn default() -> Self {
        Self::new()
    }
}

#[async_trait]
impl ToolRouter for LocalToolRouter {
    async fn execute(&self, request: ToolRequest) -> ToolResult {
        if split_mcp_name(&request.tool_name).is_some() {
            return self.mcp.call(&request).await;
        }
        match self
            .definitions
            .iter()
            .position(|definition| definition.tool_name == request.tool_name)
            .and_then(|index| self.tools.get(index))
        {
            Some(tool) => tool.run(&request).await,
            // Built-in names win: a remote tool can never stand in for a local one.
            None if self.backend.serves(&request.tool_name) => self.backend.call(&request).await,
            None => ToolResult::failed(
                &request,
                ErrorCode::ToolNotFound,
                format!("Unknown tool: {}", request.tool_name),
            ),
        }
    }

    fn available_tools(&self) -> Vec<ToolDefinition> {
        let mut tools = self.definitions.clone();
        let remote: Vec<ToolDefinition> = self
            .backend
            .tools()
            .into_iter()
            .filter(|remote| !tools.iter().any(|tool| tool.tool_name == remote.tool_name))
            .collect();
        tools.extend(self.mcp.tools());
        tools.extend(remote);
        tools
    }

    async fn open_extensions(&self, config: ExtensionConfig) -> Vec<ExtensionNotice> {
        self.backend.set_allowed(config.backend_tools);
        self.mcp.open(config.mcp_servers).await
    }

    async fn close_extensions(&self) {
        self.mcp.close().await;
        self.backend.set_allowed(Vec::new());
    }

    fn sandbox_status(&self) -> Option<agent_protocol::sandbox::SandboxStatus> {
        crate::sandbox::status()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_protocol::ToolStatus;
    use serde_json::{Value, json};

    #[test]
    fn every_built_in_tool_is_offered_with_the_spec_description_and_a_strict_schema() {
        let definitions = LocalToolRouter::new().available_tools();
        let described: Vec<(&str, &str)> = definitions
            .iter()
            .map(|d| (d.tool_name.as_str(), d.description.as_str()))
            .collect();
        // The design documents' tools first; the INTEROP.md §11 tools follow them.
        assert_eq!(
            described[..11],
            [
                ("ReadFile", "Read the contents of a file at the given path"),
                (
                    "WriteFile",
                    "Create or overwrite a file with the given content"
                ),
                ("DeleteFile", "Delete a file at the given path"),
                (
                    "RunCommand",
                    "Execute a shell command and return stdout, stderr, and exit code"
                ),
                (
                    "HttpRequest",
                    "Make an HTTP request and return the response"
                ),
                (
                    "GitStatus",
                    "Show the branch and the changed, staged and untracked files of a git repository"
                ),
                (
                    "GitDiff",
                    "Show the unified diff of the changes in a git repository"
                ),
                ("GitCommit", "Create a git commit of the staged changes"),
                ("GitPush", "Push commits of a git repository to its remote"),
                (
                    "FetchUrl",
                    "Fetch a web page and return its content as Markdown"
                ),
                (
                    "ExecuteCode",
                    "Execute a code snippet in a sandbox and return its output"
                ),
            ]
        );
        // WebSearch only with a search endpoint; then the §11 file tools.
        let rest: Vec<&str> = described[11..].iter().map(|(name, _)| *name).collect();
        assert_eq!(
            rest,
            [
                "EditFile",
                "MultiEdit",
                "ListDirectory",
                "FindFiles",
                "GrepFiles",
                "CreateDirectory",
                "MoveFile"
            ]
        );
        for definition in &definitions {
            let schema = &definition.input_schema;
            assert_eq!(schema["type"], "object", "{}", definition.tool_name);
            assert_eq!(
                schema["additionalProperties"], false,
                "{}",
                definition.tool_name
            );
            let properties = schema["properties"].as_object().unwrap();
            for required in schema["required"].as_array().unwrap() {
                assert!(properties.contains_key(required.as_str().unwrap()));
            }
        }
        let write = &definitions[1].input_schema;
        assert_eq!(write["required"], json!(["path", "content"]));
        assert_eq!(write["properties"]["createDirectories"]["type"], "boolean");
        assert_eq!(definitions[2].input_schema["required"], json!(["path"]));
    }

    /// Tool arguments cross a boundary (the model's): each INTEROP.md §11 tool offers
    /// exactly the schema `schemas/tool/arguments/<tool>.json` states, its document's own
    /// keywords (`$schema`, `$id`, `title`) and the descriptions, written for people there
    /// and for the model here, aside.
    #[test]
    fn the_interop_tools_offer_the_argument_schemas_of_schemas_tool_arguments() {
        let router = LocalToolRouter::with_options(ToolOptions {
            web_search_url: Some("https://search.example/search".to_owned()),
            image_parts: true,
            ..ToolOptions::default()
        });
        let folder =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../schemas/tool/arguments");
        for name in ["FetchUrl", "ExecuteCode", "WebSearch", "ViewImage"] {
            let text = std::fs::read_to_string(folder.join(format!("{name}.json"))).unwrap();
            let mut schema: Value = serde_json::from_str(&text).unwrap();
            for keyword in ["$schema", "$id", "title"] {
                schema.as_object_mut().unwrap().remove(keyword);
            }
            let mut offered = router
                .available_tools()
                .into_iter()
                .find(|tool| tool.tool_name == name)
                .unwrap()
                .input_schema
                .as_ref()
                .clone();
            without_descriptions(&mut schema);
            without_descriptions(&mut offered);
            assert_eq!(offered, schema, "{name}");
        }
    }

    fn without_descriptions(value: &mut Value) {
        match value {
            Value::Object(map) => {
                // A description is a string; ExecuteCode's `description` argument is not one.
                if map.get("description").is_some_and(Value::is_string) {
                    map.remove("description");
                }
                map.values_mut().for_each(without_descriptions);
            }
            Value::Array(items) => items.iter_mut().for_each(without_descriptions),
            _ => {}
        }
    }

    #[tokio::test]
    async fn requests_reach_their_tool_and_unknown_tools_are_named() {
        let dir = tempfile::tempdir().unwrap();
        let router = LocalToolRouter::new();
        let request = |tool: &str, args: Value| crate::testing::request(tool, dir.path(), args);
        let written = router
            .execute(request(
                "WriteFile",
                json!({"path": "a.txt", "content": "hi"}),
            ))
            .await;
        assert_eq!(written.status, ToolStatus::Succeeded, "{written:?}");
        assert_eq!(written.tool_call_id.as_deref(), Some("c1"));
        let deleted = router
            .execute(request("DeleteFile", json!({"path": "a.txt"})))
            .await;
        assert_eq!(deleted.status, ToolStatus::Succeeded, "{deleted:?}");
        let unknown = router.execute(request("Nope", json!({}))).await;
        let error = unknown.error.unwrap();
        assert_eq!(error.code, ErrorCode::ToolNotFound);
        assert_eq!(error.message, "Unknown tool: Nope");
    }
}
