//! Audit and telemetry delivery and the local run store (agent_host::audit): environment
//! variables and flags. Every bound is configurable so a certification runs in milliseconds.

use std::path::PathBuf;

use agent_host::{AuditConfig, DeliveryTuning, RunStoreLimits};
use anyhow::bail;

use crate::config::Seconds;

#[derive(Debug, clap::Args)]
pub(crate) struct AuditArgs {
    /// Base URL of the Audit Service (POST /audit/events); no audit delivery when unset.
    #[arg(long, env = "AUDIT_SERVICE_URL")]
    audit_service_url: Option<String>,
    /// Base URL of the Telemetry Service (POST /telemetry/events); none when unset.
    #[arg(long, env = "TELEMETRY_SERVICE_URL")]
    telemetry_service_url: Option<String>,
    /// Most envelopes in one audit/telemetry POST.
    #[arg(long, env = "AGENT_RUNTIME_AUDIT_BATCH_SIZE", default_value_t = DeliveryTuning::default().batch_size)]
    audit_batch_size: usize,
    /// Longest wait before a partial batch is sent, in seconds.
    #[arg(long, env = "AGENT_RUNTIME_AUDIT_FLUSH_INTERVAL_SECONDS", default_value_t = Seconds(DeliveryTuning::default().flush_interval))]
    audit_flush_interval_seconds: Seconds,
    /// Envelopes waiting per service; more are dropped, counted and reported.
    #[arg(long, env = "AGENT_RUNTIME_AUDIT_QUEUE_BOUND", default_value_t = DeliveryTuning::default().queue_bound)]
    audit_queue_bound: usize,
    /// Retries of a failed batch after the first attempt.
    #[arg(long, env = "AGENT_RUNTIME_AUDIT_RETRIES", default_value_t = DeliveryTuning::default().retries)]
    audit_retries: u32,
    /// Base delay between batch retries, in seconds (doubles each time).
    #[arg(long, env = "AGENT_RUNTIME_AUDIT_RETRY_DELAY_SECONDS", default_value_t = Seconds(DeliveryTuning::default().retry_delay))]
    audit_retry_delay_seconds: Seconds,
    /// Timeout of one audit/telemetry POST, in seconds.
    #[arg(long, env = "AGENT_RUNTIME_AUDIT_TIMEOUT_SECONDS", default_value_t = Seconds(DeliveryTuning::default().request_timeout))]
    audit_timeout_seconds: Seconds,
    /// How long Shutdown waits for the last batches, in seconds.
    #[arg(long, env = "AGENT_RUNTIME_AUDIT_SHUTDOWN_FLUSH_SECONDS", default_value_t = Seconds(AuditConfig::default().shutdown_flush_timeout))]
    audit_shutdown_flush_seconds: Seconds,
    /// Directory of the local run/trace store [default: LOG_DIR/runs; none without LOG_DIR].
    #[arg(long, env = "AGENT_RUNTIME_RUN_STORE_DIR")]
    run_store_dir: Option<PathBuf>,
    /// Size at which a run file is rotated, in bytes.
    #[arg(long, env = "AGENT_RUNTIME_RUN_STORE_MAX_FILE_BYTES", default_value_t = RunStoreLimits::default().max_file_bytes)]
    run_store_max_file_bytes: u64,
    /// Total size of the run store directory, oldest files deleted first, in bytes.
    #[arg(long, env = "AGENT_RUNTIME_RUN_STORE_MAX_TOTAL_BYTES", default_value_t = RunStoreLimits::default().max_total_bytes)]
    run_store_max_total_bytes: u64,
    /// Events waiting to be written to the run store; text chunks give way first.
    #[arg(long, env = "AGENT_RUNTIME_RUN_STORE_QUEUE_BOUND", default_value_t = RunStoreLimits::default().queue_bound)]
    run_store_queue_bound: usize,
}

fn url(value: &Option<String>) -> Option<String> {
    value.clone().filter(|url| !url.trim().is_empty())
}

impl AuditArgs {
    pub(crate) fn to_config(&self) -> anyhow::Result<AuditConfig> {
        if self.audit_batch_size == 0 {
            bail!("AGENT_RUNTIME_AUDIT_BATCH_SIZE must be at least 1");
        }
        if self.audit_queue_bound == 0 {
            bail!("AGENT_RUNTIME_AUDIT_QUEUE_BOUND must be at least 1");
        }
        if self.run_store_max_file_bytes == 0 || self.run_store_max_total_bytes == 0 {
            bail!("the run store's size caps must be at least 1 byte");
        }
        Ok(AuditConfig {
            audit_service_url: url(&self.audit_service_url),
            telemetry_service_url: url(&self.telemetry_service_url),
            delivery: DeliveryTuning {
                batch_size: self.audit_batch_size,
                flush_interval: self.audit_flush_interval_seconds.0,
                queue_bound: self.audit_queue_bound,
                retries: self.audit_retries,
                retry_delay: self.audit_retry_delay_seconds.0,
                request_timeout: self.audit_timeout_seconds.0,
            },
            shutdown_flush_timeout: self.audit_shutdown_flush_seconds.0,
            run_store_dir: self.run_store_dir.clone(),
            run_store: RunStoreLimits {
                max_file_bytes: self.run_store_max_file_bytes,
                max_total_bytes: self.run_store_max_total_bytes,
                queue_bound: self.run_store_queue_bound,
            },
        })
    }
}
