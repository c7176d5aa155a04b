//! Extension tools over a session's life (local-tool-runtime.md §9.2): at session start
//! the host hands the tool runtime the MCP servers and backend tools the policy bundle
//! allows and reports each problem as a `warning` event; at session end it closes them.

use agent_protocol::ErrorCode;
use agent_protocol::ToolRouter;
use agent_protocol::events::{EventBody, Warning};
use agent_protocol::extensions::ExtensionConfig;

use crate::events::Scope;
use crate::session::Session;

/// Sets up the session's extension tools; bounded by the tool runtime's startup timeout.
pub(super) async fn open(tools: &dyn ToolRouter, session: &Session) {
    let config = match ExtensionConfig::from_bundle(session.policy().bundle()) {
        Ok(config) => config,
        Err(error) => {
            warn(session, format!("{error}; no MCP server is contacted."));
            return;
        }
    };
    if config.is_empty() {
        return;
    }
    // The servers' bearer tokens are credentials of this process from now on.
    crate::redact::add_values(
        config
            .mcp_servers
            .iter()
            .filter_map(|server| server.bearer_token.clone())
            .collect(),
    );
    for notice in tools.open_extensions(config).await {
        warn(session, notice.message);
    }
}

pub(super) async fn close(tools: &dyn ToolRouter) {
    tools.close_extensions().await;
}

fn warn(session: &Session, message: String) {
    tracing::warn!(%message, "extension tools");
    session.events.emit(
        Scope::session(),
        EventBody::Warning(Warning {
            code: ErrorCode::ToolExecutionFailed,
            message,
        }),
    );
}
