//! Saying at session start when the processes the tools start are not confined:
//! a `warning` event and a log line. GetSessionState's `sandbox` carries the same status.

use agent_protocol::ErrorCode;
use agent_protocol::ToolRouter;
use agent_protocol::events::{EventBody, Warning};

use crate::events::Scope;
use crate::session::Session;

pub(super) fn announce(tools: &dyn ToolRouter, session: &Session) {
    let Some(status) = tools.sandbox_status() else {
        return;
    };
    if status.enforced {
        tracing::info!(mechanism = %status.mechanism, detail = %status.detail, "sandbox");
        return;
    }
    let message = format!(
        "Commands run without an OS sandbox (AGENT_RUNTIME_SANDBOX={}): {}",
        status.mode.as_str(),
        status.detail
    );
    tracing::warn!(%message, "sandbox");
    session.events.emit(
        Scope::session(),
        EventBody::Warning(Warning {
            code: ErrorCode::PermissionDenied,
            message,
        }),
    );
}
