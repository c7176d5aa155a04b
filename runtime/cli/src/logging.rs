//! Structured JSON logs to stderr and, when LOG_DIR is set, to a file there. Stdout is
//! reserved for the protocol.

use std::io::Write;
use std::path::Path;

use tracing_appender::non_blocking::WorkerGuard;
use tracing_subscriber::EnvFilter;
use tracing_subscriber::Layer;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;

/// The file under LOG_DIR is also the local record of every SessionEvent
/// (local-agent-host.md §12, Phase 1–2), so it keeps `session_event` lines at any
/// LOG_LEVEL; stderr follows LOG_LEVEL alone.
pub fn init(level: &str, log_dir: Option<&Path>) -> Option<WorkerGuard> {
    let filter = || EnvFilter::try_new(level).unwrap_or_else(|_| EnvFilter::new("info"));
    let with_events = || match "session_event=info".parse() {
        Ok(directive) => filter().add_directive(directive),
        Err(_) => filter(),
    };
    let stderr = tracing_subscriber::fmt::layer()
        .json()
        .with_writer(|| Redacting(std::io::stderr()))
        .with_filter(filter());
    let (file, guard) =
        match log_dir.and_then(|dir| std::fs::create_dir_all(dir).ok().map(|()| dir)) {
            Some(dir) => {
                let appender = tracing_appender::rolling::never(dir, "agent-runtime.log");
                let (writer, guard) = tracing_appender::non_blocking(appender);
                let writer = move || Redacting(writer.clone());
                (
                    Some(
                        tracing_subscriber::fmt::layer()
                            .json()
                            .with_writer(writer)
                            .with_filter(with_events()),
                    ),
                    Some(guard),
                )
            }
            None => (None, None),
        };
    let _ = tracing_subscriber::registry()
        .with(stderr)
        .with(file)
        .try_init();
    guard
}

/// Every log line passes through the process-wide redactor before it is written: the
/// formatter hands over one whole line per write, so a secret is never split across calls.
struct Redacting<W>(W);

impl<W: Write> Write for Redacting<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match std::str::from_utf8(buf) {
            Ok(text) => {
                let clean = agent_host::redact::global().redact(text).into_owned();
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
