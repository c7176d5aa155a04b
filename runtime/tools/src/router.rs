//! The registry and dispatch (local-tool-runtime.md §3): unknown tools are TOOL_NOT_FOUND,
//! every tool validates its own arguments before touching anything.

use agent_protocol::{ErrorCode, ToolDefinition, ToolRequest, ToolResult, ToolRouter};
use async_trait::async_trait;

use crate::file::read::ReadFile;

/// One built-in tool.
#[async_trait]
pub trait Tool: Send + Sync {
    fn definition(&self) -> ToolDefinition;
    async fn run(&self, request: &ToolRequest) -> ToolResult;
}

pub struct LocalToolRouter {
    tools: Vec<Box<dyn Tool>>,
}

impl LocalToolRouter {
    /// The built-in tools of this build.
    pub fn new() -> Self {
        Self {
            tools: vec![Box::new(ReadFile)],
        }
    }
}

impl Default for LocalToolRouter {
    fn default() -> Self {
        Self::new()
    }
}

#[async_trait]
impl ToolRouter for LocalToolRouter {
    async fn execute(&self, request: ToolRequest) -> ToolResult {
        match self
            .tools
            .iter()
            .find(|tool| tool.definition().tool_name == request.tool_name)
        {
            Some(tool) => tool.run(&request).await,
            None => ToolResult::failed(
                &request,
                ErrorCode::ToolNotFound,
                format!("Unknown tool: {}", request.tool_name),
            ),
        }
    }

    fn available_tools(&self) -> Vec<ToolDefinition> {
        self.tools.iter().map(|tool| tool.definition()).collect()
    }
}
