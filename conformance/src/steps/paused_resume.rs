//! Steps of a paused session resumed with a fresh bundle (local-agent-host.md §3.3 PAUSED →
//! RUNNING, §9.5): what the Session Service changes between the pause and the resume.

use cucumber::given;

use super::StepResult;
use super::extensions::add_mcp_server;
use crate::world::ConformanceWorld;

/// Unlike "an MCP server … the policy allows …", this comes after the session exists: only
/// a bundle fetched later (ResumeSession) lists the server.
#[given(
    expr = "the Session Service's fresh policy allows an MCP server {string} with only the tool {string}"
)]
async fn fresh_policy_mcp_server(
    world: &mut ConformanceWorld,
    name: String,
    tool: String,
) -> StepResult {
    add_mcp_server(world, name, tool).await?;
    Ok(())
}
