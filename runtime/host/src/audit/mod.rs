//! Where SessionEvents go besides the app and the local log (local-agent-host.md §12,
//! system-design.md §14 and §18, agent-run-plan.md): the Audit Service and the Telemetry
//! Service in the shared envelope ([`delivery`], [`envelope`]) and the local run/trace
//! store ([`run_store`]). [`Outlets::record`] is called by `EventSink::emit` for every
//! event and never waits.

pub(crate) mod delivery;
pub(crate) mod envelope;
pub(crate) mod run_store;

#[cfg(test)]
mod tests;

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::Duration;

use agent_protocol::ErrorCode;
use agent_protocol::audit::AuditEvent;
use agent_protocol::events::{EventBody, SessionEvent, Warning};

use delivery::DeliveryTuning;
pub(crate) use delivery::{Channel, DeliveryConfig};
pub(crate) use envelope::Ids;
use run_store::RunStoreLimits;
pub(crate) use run_store::{Admission, RunStore};

/// The `warning` code sent when the run store starts leaving events out.
pub(crate) const EVENT_BACKLOG: &str = "EVENT_BACKLOG";

/// Every envelope leaving the process passes here, just before it is queued: secrets in
/// its payload (tool arguments, approval details, error messages) are redacted with the
/// process's rules, so audit and telemetry records never carry them in clear.
pub(crate) fn outbound(mut envelope: AuditEvent) -> AuditEvent {
    crate::redact::apply::json_value(&crate::redact::global(), &mut envelope.payload);
    envelope
}

#[derive(Debug, Clone)]
pub struct AuditConfig {
    /// Base URL of the Audit Service (`POST {url}/audit/events`); no delivery when `None`.
    pub audit_service_url: Option<String>,
    /// Base URL of the Telemetry Service (`POST {url}/telemetry/events`).
    pub telemetry_service_url: Option<String>,
    /// Batching, queue and retries of both services.
    pub delivery: DeliveryTuning,
    /// How long Shutdown waits for the last batches.
    pub shutdown_flush_timeout: Duration,
    /// The run store's directory; `None` means `LOG_DIR/runs`, or no store without LOG_DIR.
    pub run_store_dir: Option<PathBuf>,
    pub run_store: RunStoreLimits,
}

impl Default for AuditConfig {
    fn default() -> Self {
        Self {
            audit_service_url: None,
            telemetry_service_url: None,
            delivery: DeliveryTuning::default(),
            shutdown_flush_timeout: Duration::from_secs(3),
            run_store_dir: None,
            run_store: RunStoreLimits::default(),
        }
    }
}

impl AuditConfig {
    fn delivery(&self, base: Option<&String>, path: &str) -> Option<DeliveryConfig> {
        let base = base?.trim().trim_end_matches('/');
        (!base.is_empty()).then(|| DeliveryConfig {
            endpoint: format!("{base}{path}"),
            tuning: self.delivery.clone(),
        })
    }
}

/// One session's outlets.
pub(crate) struct Outlets {
    ids: Ids,
    audit: Option<Channel>,
    telemetry: Option<Channel>,
    run_store: Option<RunStore>,
    audited_calls: Mutex<HashSet<String>>,
    flush_timeout: Duration,
}

impl Outlets {
    /// Starts the delivery tasks and the run store the configuration asks for (on the
    /// current tokio runtime). `client` is the host's shared HTTP client (building another
    /// would parse the system's trust roots again); without one there is no delivery.
    pub(crate) fn start(
        config: &AuditConfig,
        log_dir: Option<&PathBuf>,
        ids: Ids,
        client: Option<reqwest::Client>,
    ) -> Self {
        if client.is_none()
            && (config.audit_service_url.is_some() || config.telemetry_service_url.is_some())
        {
            tracing::error!("audit/telemetry delivery disabled: no HTTP client");
        }
        let channel = |base: Option<&String>, path: &str| {
            let client = client.as_ref()?;
            config
                .delivery(base, path)
                .map(|delivery| Channel::start(delivery, client.clone(), ids.clone()))
        };
        let audit = channel(config.audit_service_url.as_ref(), "/audit/events");
        let telemetry = channel(config.telemetry_service_url.as_ref(), "/telemetry/events");
        let dir = config
            .run_store_dir
            .clone()
            .or_else(|| log_dir.map(|dir| dir.join("runs")));
        let run_store =
            dir.and_then(|dir| RunStore::open(dir, config.run_store.clone(), &ids.session_id));
        Self {
            ids,
            audit,
            telemetry,
            run_store,
            audited_calls: Mutex::new(HashSet::new()),
            flush_timeout: config.shutdown_flush_timeout,
        }
    }

    /// Hands the event to every outlet without waiting; `Some(warning)` when the run store
    /// has just started leaving events out (the caller emits it).
    pub(crate) fn record(&self, event: &SessionEvent) -> Option<EventBody> {
        if self.audit.is_some() || self.telemetry.is_some() {
            let routed = {
                let mut calls = match self.audited_calls.lock() {
                    Ok(calls) => calls,
                    Err(poisoned) => poisoned.into_inner(),
                };
                envelope::route(&self.ids, event, &mut calls)
            };
            if let (Some(channel), Some(envelope)) = (&self.audit, routed.audit) {
                channel.offer(outbound(envelope));
            }
            if let (Some(channel), Some(envelope)) = (&self.telemetry, routed.telemetry) {
                channel.offer(outbound(envelope));
            }
        }
        let store = self.run_store.as_ref()?;
        (store.record(event) == Admission::DroppedFirst).then(|| {
            EventBody::Warning(Warning {
                code: ErrorCode::Other(EVENT_BACKLOG.to_owned()),
                message: "The local run record is falling behind: streamed text is being summarised instead of recorded in full until it catches up.".to_owned(),
            })
        })
    }

    /// Best effort at Shutdown: both services get what is queued, within the configured
    /// bound (the two flushes run side by side).
    pub(crate) async fn flush(&self) {
        let within = self.flush_timeout;
        let flush = |channel: &Option<Channel>| {
            let channel = channel.clone();
            async move {
                if let Some(channel) = channel
                    && !channel.flush(within).await
                {
                    tracing::warn!("audit/telemetry events not delivered before shutdown");
                }
            }
        };
        tokio::join!(flush(&self.audit), flush(&self.telemetry));
    }
}
