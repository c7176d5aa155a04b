//! What every built-in tool is to the router: a definition to offer and a call to run. It
//! sits below both, so the tools depend on it and the router on the tools, never back.

use agent_protocol::{ToolDefinition, ToolRequest, ToolResult};
use async_trait::async_trait;

/// One built-in tool.
#[async_trait]
pub(crate) trait Tool: Send + Sync {
    fn definition(&self) -> ToolDefinition;
    async fn run(&self, request: &ToolRequest) -> ToolResult;
}
