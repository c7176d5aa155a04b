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
/// Both sinks are written (and redacted) on one worker thread: a log line never makes a
/// request wait, not even the first one, whose log lines would otherwise wait for the
/// redaction rules to compile. One worker for both, since every thread that allocates costs
/// the process a malloc arena and a stack. Nothing is dropped when the worker falls behind
/// (the caller waits instead); the returned guard flushes what is left when it is dropped.
pub(crate) fn init(level: &str, log_dir: Option<&Path>) -> WorkerGuard {
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
    let with_file = appender.is_some();
    let (worker, guard) = NonBlockingBuilder::default()
        .buffered_lines_limit(QUEUED_LINES)
        .lossy(false)
        .thread_name("log-writer")
        .finish(Sinks {
            stderr: std::io::stderr(),
            file: appender,
        });
    let stderr = tracing_subscriber::fmt::layer()
        .json()
        .with_writer(Tagged::maker(Sink::Stderr, worker.clone()))
        .with_filter(stderr_filter(level, with_file));
    let file = with_file.then(|| {
        tracing_subscriber::fmt::layer()
            .json()
            .with_writer(Tagged::maker(Sink::File, worker))
            .with_filter(file_filter(level))
    });
    let _ = tracing_subscriber::registry()
        .with(stderr)
        .with(file)
        .try_init();
    if let Some((dir, error)) = unusable_dir {
        tracing::warn!(dir = %dir.display(), %error, "LOG_DIR cannot hold the log file; logging to stderr only");
    }
    guard
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

/// Where a line goes; its first byte on the way to the worker.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[repr(u8)]
enum Sink {
    Stderr = b'e',
    File = b'f',
}

/// A layer's writer: the formatter hands over one whole line per write, sent to the worker
/// with the sink's byte in front.
#[derive(Clone)]
struct Tagged<W> {
    sink: Sink,
    worker: W,
}

impl<W: Write + Clone> Tagged<W> {
    fn maker(sink: Sink, worker: W) -> impl Fn() -> Self {
        move || Tagged {
            sink,
            worker: worker.clone(),
        }
    }
}

impl<W: Write> Write for Tagged<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let mut line = Vec::with_capacity(buf.len() + 1);
        line.push(self.sink as u8);
        line.extend_from_slice(buf);
        self.worker.write_all(&line)?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.worker.flush()
    }
}

/// The worker's writer: every line passes through the process-wide redactor, whole (the
/// worker passes each tagged line on unsplit, so a secret is never split across calls),
/// and goes to the sink its first byte names.
struct Sinks<E, F> {
    stderr: E,
    file: Option<F>,
}

impl<E: Write, F: Write> Write for Sinks<E, F> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let (sink, line) = match buf.split_first() {
            Some((&tag, line)) if tag == Sink::File as u8 => (Sink::File, line),
            Some((&tag, line)) if tag == Sink::Stderr as u8 => (Sink::Stderr, line),
            _ => (Sink::Stderr, buf),
        };
        let out: &mut dyn Write = match (sink, self.file.as_mut()) {
            (Sink::File, Some(file)) => file,
            _ => &mut self.stderr,
        };
        match std::str::from_utf8(line) {
            Ok(text) => {
                let clean = agent_host::redaction::global().redact(text);
                out.write_all(clean.as_bytes())?;
            }
            Err(_) => out.write_all(line)?,
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        if let Some(file) = self.file.as_mut() {
            file.flush()?;
        }
        self.stderr.flush()
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
            .with_writer(move || Lines(Arc::clone(&sink)))
            .with_filter(filter);
        tracing::subscriber::with_default(tracing_subscriber::registry().with(layer), || {
            tracing::info!(target: "session_event", event = "{}", "task_started");
            tracing::info!("an ordinary line");
        });
        let bytes = lines.lock().unwrap().clone();
        String::from_utf8(bytes).unwrap()
    }

    struct Lines(Arc<Mutex<Vec<u8>>>);

    impl Write for Lines {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn one_worker_routes_each_line_to_its_sink_redacted() {
        let mut sinks = Sinks {
            stderr: Vec::new(),
            file: Some(Vec::new()),
        };
        let key = "AKIAABCDEFGHIJKLMNOP";
        for (sink, line) in [(Sink::Stderr, "to stderr\n"), (Sink::File, "to the file\n")] {
            let mut tagged = Tagged {
                sink,
                worker: Vec::new(),
            };
            tagged
                .write_all(format!("{line} {key}").as_bytes())
                .unwrap();
            sinks.write_all(&tagged.worker).unwrap();
        }
        let stderr = String::from_utf8(sinks.stderr).unwrap();
        let file = String::from_utf8(sinks.file.unwrap()).unwrap();
        assert!(
            stderr.starts_with("to stderr") && !stderr.contains("file"),
            "{stderr}"
        );
        assert!(
            file.starts_with("to the file") && !file.contains("stderr"),
            "{file}"
        );
        assert!(
            !stderr.contains(key) && !file.contains(key),
            "{stderr}{file}"
        );
        // Without a file, its lines stay on stderr rather than being lost.
        let mut alone = Sinks::<Vec<u8>, Vec<u8>> {
            stderr: Vec::new(),
            file: None,
        };
        alone.write_all(b"fan event").unwrap();
        assert_eq!(alone.stderr, b"an event");
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
