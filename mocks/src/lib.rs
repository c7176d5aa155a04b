//! Fakes of the services an agent runtime talks to — the LLM Gateway, the Session Service
//! and the Workspace Service — on loopback ports, with scripted behaviour, request recording
//! and fault controls. They deal in `serde_json::Value`, not in `agent-protocol` types, so
//! they can be made to misbehave in ways the typed contracts cannot express.
//!
//! - [`GatewayFake`] (wiremock): OpenAI Chat Completions streaming, one scripted
//!   [`GatewayReply`] per request, each SSE body sent as one buffer.
//! - [`StreamingGateway`] (axum): the same protocol sent event by event, plus delays,
//!   stalls and disconnects ([`StreamStep`]).
//! - [`SessionServiceFake`], [`WorkspaceFake`], [`ApprovalServiceFake`] (wiremock): the
//!   backend services.
//! - [`EventServiceFake`] (wiremock): the Audit and Telemetry Services, `POST /audit/events`
//!   and `POST /telemetry/events`.
//! - [`BackendToolServiceFake`] (wiremock): remote tools, `POST /tools/{name}/invoke`.
//! - [`McpServerFake`] (rmcp + axum): an MCP server over streamable HTTP.
//!
//! Every fake can [`go_down`](SessionServiceFake::go_down): its port then refuses
//! connections and stays reserved (see `port.rs`).

mod approval;
pub mod audit;
mod backend_tools;
mod fastapi;
mod faults;
mod gateway;
mod host;
mod loopback;
mod mcp;
pub mod nulls;
pub mod policy;
mod port;
mod recording;
pub mod script;
mod session;
pub mod sse;
mod streaming;
mod util;
mod web;
mod workspace;
mod workspace_files;

#[cfg(test)]
mod tests;

pub use approval::ApprovalServiceFake;
pub use audit::{EventService, EventServiceFake};
pub use backend_tools::{BackendToolReply, BackendToolServiceFake};
pub use faults::FaultControl;
pub use gateway::GatewayFake;
pub use mcp::{McpServerFake, PAGES_IMAGE_BYTES};
pub use nulls::Nulls;
pub use policy::default_policy_template;
pub use recording::RecordedRequest;
pub use session::{SandboxLaunch, SessionServiceFake};
pub use sse::{GatewayReply, ScriptedToolCall, Usage};
pub use streaming::{Responder, StreamStep, StreamingGateway};
pub use util::rfc3339_micros;
pub use web::{WebFake, numbered_lines};
pub use workspace::WorkspaceFake;

/// All fakes, each on its own ephemeral 127.0.0.1 port.
pub struct Fakes {
    pub gateway: GatewayFake,
    pub streaming_gateway: StreamingGateway,
    pub session: SessionServiceFake,
    pub workspace: WorkspaceFake,
    pub approvals: ApprovalServiceFake,
    pub audit: EventServiceFake,
    pub telemetry: EventServiceFake,
}

/// The token [`Fakes::env_vars`] hands out; the fakes accept any token.
pub const FAKE_GATEWAY_TOKEN: &str = "mock-gateway-token";

impl Fakes {
    /// Starts every fake; the Workspace Service fake reads session names and workspaces from
    /// the Session Service fake, as the real one does.
    pub async fn start() -> anyhow::Result<Fakes> {
        let session = SessionServiceFake::start().await?;
        let workspace = WorkspaceFake::start().await?;
        workspace.link_sessions(&session);
        Ok(Fakes {
            gateway: GatewayFake::start().await?,
            streaming_gateway: StreamingGateway::start().await?,
            session,
            workspace,
            approvals: ApprovalServiceFake::start().await?,
            audit: EventServiceFake::start(EventService::Audit).await?,
            telemetry: EventServiceFake::start(EventService::Telemetry).await?,
        })
    }

    /// The runtime's service variables pointing at these fakes (ARCHITECTURE.md, "Runtime-
    /// under-test contract"), with the wiremock gateway as `LLM_GATEWAY_ENDPOINT`.
    pub fn env_vars(&self) -> Vec<(&'static str, String)> {
        vec![
            ("LLM_GATEWAY_ENDPOINT", self.gateway.url()),
            ("LLM_GATEWAY_AUTH_TOKEN", FAKE_GATEWAY_TOKEN.to_string()),
            ("SESSION_SERVICE_URL", self.session.url()),
            ("WORKSPACE_SERVICE_URL", self.workspace.url()),
            ("APPROVAL_SERVICE_URL", self.approvals.url()),
            ("AUDIT_SERVICE_URL", self.audit.url()),
            ("TELEMETRY_SERVICE_URL", self.telemetry.url()),
        ]
    }
}
