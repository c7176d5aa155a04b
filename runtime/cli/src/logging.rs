//! Structured JSON logs to stderr and, when LOG_DIR is set, to a file there. Stdout is
//! reserved for the protocol.

use std::io::Write;
use std::path::Path;

use tracing_appender::non_blocking::{NonBlockingBuilder, WorkerGuard};
use tracing_subscriber::EnvFilter;
use tracing_subscriber::Layer;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;

/// Lines queued per sink. tracing-appender's default, 128 000, preallocates 4 MB per sink —
/// it was most of the process's memory.
const QUEUED_LINES: usize = 1024;

/// The file under LOG_DIR is also the local record of every SessionEvent
/// (local-agent-host.md §12, Phase 1–2), so it keeps `session_event` lines at any
/// LOG_LEVEL; stderr follows LOG_LEVEL alone.
///
/// Both sinks are written (and redacted) on worker threads: a log line never makes a
/// request wait, not even the first one, whose log lines would otherwise wait for the
/// redaction rules to compile. Nothing is dropped when a worker falls behind (the caller
/// waits instead); the returned guards flush what is left when they are dropped.
pub fn init(level: &str, log_dir: Option<&Path>) -> Vec<WorkerGuard> {
    let filter = || EnvFilter::try_new(level).unwrap_or_else(|_| EnvFilter::new("info"));
    let with_events = || match "session_event=info".parse() {
        Ok(directive) => filter().add_directive(directive),
        Err(_) => filter(),
    };
    let mut guards = Vec::new();
    let (stderr_writer, guard) = NonBlockingBuilder::default()
        .buffered_lines_limit(QUEUED_LINES)
        .lossy(false)
        .thread_name("log-stderr")
        .finish(Redacting(std::io::stderr()));
    guards.push(guard);
    let stderr = tracing_subscriber::fmt::layer()
        .json()
        .with_writer(stderr_writer)
        .with_filter(filter());
    let file = match log_dir.and_then(|dir| std::fs::create_dir_all(dir).ok().map(|()| dir)) {
        Some(dir) => {
            let appender = tracing_appender::rolling::never(dir, "agent-runtime.log");
            let (writer, guard) = NonBlockingBuilder::default()
                .buffered_lines_limit(QUEUED_LINES)
                .lossy(false)
                .thread_name("log-file")
                .finish(Redacting(appender));
            guards.push(guard);
            Some(
                tracing_subscriber::fmt::layer()
                    .json()
                    .with_writer(writer)
                    .with_filter(with_events()),
            )
        }
        None => None,
    };
    let _ = tracing_subscriber::registry()
        .with(stderr)
        .with(file)
        .try_init();
    guards
}

/// Every log line passes through the process-wide redactor before it is written: the
/// formatter hands over one whole line per write and the worker passes it on unsplit, so a
/// secret is never split across calls.
struct Redacting<W>(W);

impl<W: Write> Write for Redacting<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match std::str::from_utf8(buf) {
            Ok(text) => {
                let clean = agent_host::redaction::global().redact(text).into_owned();
                self.0.write_all(clean.as_bytes())?;
                Ok(buf.len())
            }
            Err(_) => self.0.write(buf),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.0.flush()
    }
}
