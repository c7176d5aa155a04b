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
/// LOG_LEVEL. Stderr follows LOG_LEVEL, and is that record itself only without LOG_DIR:
/// with the file there, stderr leaves the `session_event` lines out, since formatting each
/// event (a tool's whole output, every text chunk) a second time cost a tenth of a step.
///
/// Both sinks are written (and redacted) on worker threads: a log line never makes a
/// request wait, not even the first one, whose log lines would otherwise wait for the
/// redaction rules to compile. Nothing is dropped when a worker falls behind (the caller
/// waits instead); the returned guards flush what is left when they are dropped.
pub fn init(level: &str, log_dir: Option<&Path>) -> Vec<WorkerGuard> {
    // The file comes first: whether stderr carries the `session_event` lines depends on
    // whether the file could be opened (an unwritable LOG_DIR is said on stderr, and the
    // events stay there).
    let mut unusable_dir = None;
    let appender = log_dir.and_then(|dir| {
        let opened = std::fs::create_dir_all(dir)
            .map_err(|error| error.to_string())
            .and_then(|()| {
                tracing_appender::rolling::RollingFileAppender::builder()
                    .rotation(tracing_appender::rolling::Rotation::NEVER)
                    .filename_prefix("agent-runtime.log")
                    .build(dir)
                    .map_err(|error| error.to_string())
            });
        opened
            .map_err(|error| unusable_dir = Some((dir.to_path_buf(), error)))
            .ok()
    });
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
        .with_filter(stderr_filter(level, appender.is_some()));
    let file = appender.map(|appender| {
        let (writer, guard) = NonBlockingBuilder::default()
            .buffered_lines_limit(QUEUED_LINES)
            .lossy(false)
            .thread_name("log-file")
            .finish(Redacting(appender));
        guards.push(guard);
        tracing_subscriber::fmt::layer()
            .json()
            .with_writer(writer)
            .with_filter(file_filter(level))
    });
    let _ = tracing_subscriber::registry()
        .with(stderr)
        .with(file)
        .try_init();
    if let Some((dir, error)) = unusable_dir {
        tracing::warn!(dir = %dir.display(), %error, "LOG_DIR cannot hold the log file; logging to stderr only");
    }
    guards
}

fn filter(level: &str) -> EnvFilter {
    EnvFilter::try_new(level).unwrap_or_else(|_| EnvFilter::new("info"))
}

/// LOG_LEVEL, without the `session_event` lines when the file under LOG_DIR has them.
fn stderr_filter(level: &str, with_file: bool) -> EnvFilter {
    match "session_event=off".parse() {
        Ok(directive) if with_file => filter(level).add_directive(directive),
        _ => filter(level),
    }
}

/// LOG_LEVEL, with the `session_event` lines at any level.
fn file_filter(level: &str) -> EnvFilter {
    match "session_event=info".parse() {
        Ok(directive) => filter(level).add_directive(directive),
        Err(_) => filter(level),
    }
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

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use tracing_subscriber::layer::SubscriberExt;

    use super::*;

    /// The lines a layer with `filter` writes for one session event and one other line.
    fn written(filter: EnvFilter) -> String {
        let lines = Arc::new(Mutex::new(Vec::<u8>::new()));
        let sink = Arc::clone(&lines);
        let layer = tracing_subscriber::fmt::layer()
            .json()
            .with_writer(move || Sink(Arc::clone(&sink)))
            .with_filter(filter);
        tracing::subscriber::with_default(tracing_subscriber::registry().with(layer), || {
            tracing::info!(target: "session_event", event = "{}", "task_started");
            tracing::info!("an ordinary line");
        });
        let bytes = lines.lock().unwrap().clone();
        String::from_utf8(bytes).unwrap()
    }

    struct Sink(Arc<Mutex<Vec<u8>>>);

    impl Write for Sink {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn stderr_leaves_session_events_to_the_file_and_keeps_them_without_one() {
        let with_file = written(stderr_filter("info", true));
        assert!(!with_file.contains("task_started"), "{with_file}");
        assert!(with_file.contains("an ordinary line"), "{with_file}");
        let alone = written(stderr_filter("info", false));
        assert!(alone.contains("task_started"), "{alone}");
        let file = written(file_filter("error"));
        assert!(file.contains("task_started"), "{file}");
        assert!(!file.contains("an ordinary line"), "{file}");
    }
}
