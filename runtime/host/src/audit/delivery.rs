//! Fire-and-forget delivery of envelopes to one service (`POST /audit/events` or
//! `POST /telemetry/events`): a bounded channel fed with `try_send` (a full queue drops and
//! counts, it never waits), one task that batches (by size or after the flush interval),
//! posts `{"events": [...]}` with retries and backoff, and reports the drop count as an
//! `events_dropped` envelope at the head of its next batch. Nothing here can slow the agent
//! loop: the only call it makes is `try_send`.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use agent_protocol::audit::{AuditEvent, Severity};
use serde_json::json;
use tokio::sync::{mpsc, oneshot};
use tokio::time::{Instant, sleep_until, timeout};

use super::envelope::{Ids, own_event};

/// How one service is reached and how hard delivery tries.
#[derive(Debug, Clone)]
pub(crate) struct DeliveryConfig {
    /// The full endpoint, e.g. `https://audit.example.com/audit/events`.
    pub endpoint: String,
    pub tuning: DeliveryTuning,
}

/// How hard delivery tries; one set for both services (`AGENT_RUNTIME_AUDIT_*`).
#[derive(Debug, Clone)]
pub struct DeliveryTuning {
    pub batch_size: usize,
    pub flush_interval: Duration,
    pub queue_bound: usize,
    /// Retries after the first attempt of a batch.
    pub retries: u32,
    /// Base of the exponential backoff between attempts.
    pub retry_delay: Duration,
    /// Bound of one POST.
    pub request_timeout: Duration,
}

impl Default for DeliveryTuning {
    fn default() -> Self {
        Self {
            batch_size: 50,
            flush_interval: Duration::from_secs(2),
            queue_bound: 1000,
            retries: 3,
            retry_delay: Duration::from_millis(500),
            request_timeout: Duration::from_secs(10),
        }
    }
}

/// The `eventType` of the envelope that reports drops.
pub(crate) const EVENTS_DROPPED: &str = "events_dropped";

enum Command {
    Event(Box<AuditEvent>),
    Flush(oneshot::Sender<()>),
}

/// The sending side; cheap to clone.
#[derive(Clone)]
pub(crate) struct Channel {
    tx: mpsc::Sender<Command>,
    dropped: Arc<AtomicU64>,
}

impl Channel {
    /// Spawns the delivery task on the current tokio runtime.
    pub(crate) fn start(config: DeliveryConfig, client: reqwest::Client, ids: Ids) -> Self {
        let (tx, rx) = mpsc::channel(config.tuning.queue_bound.max(1));
        let dropped = Arc::new(AtomicU64::new(0));
        let worker = Worker {
            config,
            client,
            ids,
            dropped: Arc::clone(&dropped),
        };
        tokio::spawn(worker.run(rx));
        Self { tx, dropped }
    }

    /// Queues an envelope, or drops and counts it when the queue is full (or the task is
    /// gone). Never waits.
    pub(crate) fn offer(&self, envelope: AuditEvent) {
        if self
            .tx
            .try_send(Command::Event(Box::new(envelope)))
            .is_err()
        {
            self.dropped.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Envelopes dropped and not yet reported.
    #[cfg(test)]
    pub(crate) fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }

    /// Sends what is queued now, waiting at most `within` (Shutdown: best effort).
    pub(crate) async fn flush(&self, within: Duration) -> bool {
        let (done, finished) = oneshot::channel();
        timeout(within, async {
            self.tx.send(Command::Flush(done)).await.is_ok() && finished.await.is_ok()
        })
        .await
        .unwrap_or(false)
    }
}

struct Worker {
    config: DeliveryConfig,
    client: reqwest::Client,
    ids: Ids,
    dropped: Arc<AtomicU64>,
}

impl Worker {
    async fn run(self, mut rx: mpsc::Receiver<Command>) {
        let mut batch: Vec<AuditEvent> = Vec::new();
        let mut due = Instant::now() + self.config.tuning.flush_interval;
        loop {
            tokio::select! {
                command = rx.recv() => match command {
                    None => {
                        self.send(&mut batch).await;
                        return;
                    }
                    Some(Command::Event(envelope)) => {
                        if batch.is_empty() {
                            due = Instant::now() + self.config.tuning.flush_interval;
                        }
                        batch.push(*envelope);
                        if batch.len() >= self.config.tuning.batch_size.max(1) {
                            self.send(&mut batch).await;
                        }
                    }
                    Some(Command::Flush(done)) => {
                        self.send(&mut batch).await;
                        let _ = done.send(());
                    }
                },
                () = sleep_until(due), if !batch.is_empty() || self.dropped.load(Ordering::Relaxed) > 0 => {
                    self.send(&mut batch).await;
                    due = Instant::now() + self.config.tuning.flush_interval;
                }
            }
        }
    }

    /// Posts the batch (with the drop report first, if any); gives up after the retries.
    async fn send(&self, batch: &mut Vec<AuditEvent>) {
        let dropped = self.dropped.swap(0, Ordering::Relaxed);
        if dropped > 0 {
            let report = own_event(
                &self.ids,
                EVENTS_DROPPED,
                Severity::Warning,
                json!({"droppedCount": dropped, "reason": "delivery queue full"}),
            );
            batch.insert(0, super::outbound(report));
        }
        if batch.is_empty() {
            return;
        }
        let events = std::mem::take(batch);
        let body = json!({ "events": events });
        let mut delay = self.config.tuning.retry_delay;
        for attempt in 0..=self.config.tuning.retries {
            match self.post(&body).await {
                Ok(()) => return,
                Err(Failure::Permanent(reason)) => {
                    tracing::warn!(endpoint = %self.config.endpoint, %reason, count = events.len(), "event batch refused; not retried");
                    return;
                }
                Err(Failure::Transient(reason)) if attempt == self.config.tuning.retries => {
                    tracing::warn!(endpoint = %self.config.endpoint, %reason, count = events.len(), "event batch lost after retries");
                }
                Err(Failure::Transient(_)) => {
                    tokio::time::sleep(delay).await;
                    delay = delay.saturating_mul(2);
                }
            }
        }
    }

    async fn post(&self, body: &serde_json::Value) -> Result<(), Failure> {
        let response = self
            .client
            .post(&self.config.endpoint)
            .timeout(self.config.tuning.request_timeout)
            .json(body)
            .send()
            .await
            .map_err(|error| Failure::Transient(error.to_string()))?;
        let status = response.status();
        if status.is_success() {
            Ok(())
        } else if status.is_server_error() || status.as_u16() == 429 || status.as_u16() == 408 {
            Err(Failure::Transient(format!("HTTP {status}")))
        } else {
            Err(Failure::Permanent(format!("HTTP {status}")))
        }
    }
}

enum Failure {
    Transient(String),
    Permanent(String),
}
