//! The local run/trace store the desktop app reads (agent-run-plan.md "AgentRunStore",
//! "Event backlog"): every SessionEvent of a session appended as one JSON line to
//! `<dir>/<sessionId>.jsonl`, rotated to `<sessionId>.<n>.jsonl` past the per-file cap, the
//! oldest files of the directory deleted past the total cap.
//!
//! Writing happens on one thread fed by a bounded queue, so the loop never waits on the
//! disk. Under backlog — the queue more than half full — `text_chunk` events are not queued
//! but counted, and a `text_chunk_summary` line says how many were left out once the
//! backlog clears; when the queue is full any event is dropped and counted the same way.
//! The first drop of a backlog makes [`RunStore::record`] ask for one `warning` event.

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, TrySendError, sync_channel};

use agent_protocol::events::{EventBody, SessionEvent};
use serde_json::json;

/// The store's bounds.
#[derive(Debug, Clone)]
pub struct RunStoreLimits {
    /// Size at which a run file is rotated.
    pub max_file_bytes: u64,
    /// Total size of the directory; the oldest files are deleted first.
    pub max_total_bytes: u64,
    /// Events waiting to be written; text chunks give way first.
    pub queue_bound: usize,
}

impl Default for RunStoreLimits {
    fn default() -> Self {
        Self {
            max_file_bytes: 5 * 1024 * 1024,
            max_total_bytes: 50 * 1024 * 1024,
            queue_bound: 1024,
        }
    }
}

/// What `record` asks of the caller.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Admission {
    Queued,
    /// Left out; a backlog was already reported.
    Dropped,
    /// Left out, the first of a backlog: emit a `warning` event.
    DroppedFirst,
}

enum Line {
    Event(Box<SessionEvent>),
    /// How many events were left out since the last summary.
    Summary(u64, u64),
}

/// Counters shared by the producer and the writer thread.
#[derive(Default)]
struct Backlog {
    pending: AtomicUsize,
    dropped_chunks: AtomicU64,
    dropped_other: AtomicU64,
    /// A backlog has been reported and has not cleared yet.
    reported: AtomicBool,
}

pub(crate) struct RunStore {
    tx: SyncSender<Line>,
    bound: usize,
    backlog: Arc<Backlog>,
}

impl RunStore {
    /// Starts the writer thread; `None` (with a log line) when the directory cannot be made.
    pub(crate) fn open(dir: PathBuf, limits: RunStoreLimits, session_id: &str) -> Option<Self> {
        if let Err(error) = fs::create_dir_all(&dir) {
            tracing::warn!(dir = %dir.display(), %error, "run store disabled: cannot create its directory");
            return None;
        }
        let bound = limits.queue_bound.max(2);
        let (tx, rx) = sync_channel(bound);
        let backlog = Arc::new(Backlog::default());
        let writer = Writer {
            stem: file_stem(session_id),
            dir,
            limits,
            backlog: Arc::clone(&backlog),
        };
        let spawned = std::thread::Builder::new()
            .name("run-store".into())
            .spawn(move || writer.run(rx));
        if let Err(error) = spawned {
            tracing::warn!(%error, "run store disabled: cannot start its writer");
            return None;
        }
        Some(Self { tx, bound, backlog })
    }

    /// Queues the event, or leaves it out under backlog (see the module comment). Never
    /// blocks.
    pub(crate) fn record(&self, event: &SessionEvent) -> Admission {
        let pending = self.backlog.pending.load(Ordering::Acquire);
        let is_chunk = matches!(event.body, EventBody::TextChunk(_));
        let queued = if is_chunk && pending * 2 >= self.bound {
            false
        } else {
            self.backlog.pending.fetch_add(1, Ordering::AcqRel);
            match self.tx.try_send(Line::Event(Box::new(event.clone()))) {
                Ok(()) => true,
                Err(TrySendError::Full(_) | TrySendError::Disconnected(_)) => {
                    self.backlog.pending.fetch_sub(1, Ordering::AcqRel);
                    false
                }
            }
        };
        if queued {
            return Admission::Queued;
        }
        let counter = if is_chunk {
            &self.backlog.dropped_chunks
        } else {
            &self.backlog.dropped_other
        };
        counter.fetch_add(1, Ordering::AcqRel);
        if self.backlog.reported.swap(true, Ordering::AcqRel) {
            Admission::Dropped
        } else {
            Admission::DroppedFirst
        }
    }

    #[cfg(test)]
    fn pending(&self) -> usize {
        self.backlog.pending.load(Ordering::Acquire)
    }
}

/// Session ids come from a service: keep only characters safe in a file name.
fn file_stem(session_id: &str) -> String {
    let stem: String = session_id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if stem.is_empty() {
        "session".to_owned()
    } else {
        stem
    }
}

struct Writer {
    stem: String,
    dir: PathBuf,
    limits: RunStoreLimits,
    backlog: Arc<Backlog>,
}

impl Writer {
    fn run(self, rx: Receiver<Line>) {
        let mut file: Option<(File, u64)> = None;
        while let Ok(line) = rx.recv() {
            self.write(&mut file, &line);
            let left = self.backlog.pending.fetch_sub(1, Ordering::AcqRel) - 1;
            if left == 0 {
                self.summarise(&mut file);
            }
        }
        self.summarise(&mut file);
    }

    /// Writes what the backlog left out, once the queue has drained.
    fn summarise(&self, file: &mut Option<(File, u64)>) {
        self.backlog.reported.store(false, Ordering::Release);
        let chunks = self.backlog.dropped_chunks.swap(0, Ordering::AcqRel);
        let other = self.backlog.dropped_other.swap(0, Ordering::AcqRel);
        if chunks + other > 0 {
            self.write(file, &Line::Summary(chunks, other));
        }
    }

    fn write(&self, file: &mut Option<(File, u64)>, line: &Line) {
        let text = match line {
            Line::Event(event) => serde_json::to_string(event),
            Line::Summary(chunks, other) => serde_json::to_string(&json!({
                "summary": "events_left_out",
                "textChunks": chunks,
                "otherEvents": other,
                "timestamp": crate::time::now_rfc3339(),
            })),
        };
        let Ok(text) = text else { return };
        // The backstop stdout has (`outbound`): the runtime's own credentials never reach
        // the disk either, even inside a model's answer the thread keeps as it came.
        let mut text = match crate::redact::global().redact_values(&text) {
            std::borrow::Cow::Borrowed(_) => text,
            std::borrow::Cow::Owned(clean) => clean,
        };
        text.push('\n');
        let size = text.len() as u64;
        if let Some((_, written)) = file
            && *written > 0
            && *written + size > self.limits.max_file_bytes
        {
            *file = None;
            self.rotate();
        }
        if file.is_none() {
            *file = self.open_current();
        }
        if let Some((handle, written)) = file
            && handle.write_all(text.as_bytes()).is_ok()
        {
            *written += size;
        }
    }

    fn current(&self) -> PathBuf {
        self.dir.join(format!("{}.jsonl", self.stem))
    }

    fn open_current(&self) -> Option<(File, u64)> {
        let path = self.current();
        let handle = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .map_err(
                |error| tracing::warn!(path = %path.display(), %error, "run store: cannot open"),
            )
            .ok()?;
        let written = handle.metadata().map_or(0, |meta| meta.len());
        Some((handle, written))
    }

    /// The current file becomes `<stem>.<n>.jsonl` (n one more than the last), then the
    /// directory is trimmed, oldest files first, to leave a whole file's room under the
    /// total cap.
    fn rotate(&self) {
        let next = rotated(&self.dir, &self.stem)
            .last()
            .map_or(1, |(n, _)| n + 1);
        let target = self.dir.join(format!("{}.{next}.jsonl", self.stem));
        if let Err(error) = fs::rename(self.current(), &target) {
            tracing::warn!(%error, "run store: cannot rotate");
        }
        self.trim();
    }

    fn trim(&self) {
        let mut files: Vec<(std::time::SystemTime, PathBuf, u64)> = match fs::read_dir(&self.dir) {
            Ok(entries) => entries
                .filter_map(Result::ok)
                .filter(|entry| entry.path().extension().is_some_and(|ext| ext == "jsonl"))
                .filter_map(|entry| {
                    let meta = entry.metadata().ok()?;
                    Some((meta.modified().ok()?, entry.path(), meta.len()))
                })
                .collect(),
            Err(_) => return,
        };
        // Oldest first; among this session's rotated files, lower numbers are older.
        files.sort_by(|a, b| {
            a.0.cmp(&b.0)
                .then_with(|| rotation_number(&a.1).cmp(&rotation_number(&b.1)))
        });
        let mut total: u64 = files.iter().map(|(_, _, len)| len).sum();
        let current = self.current();
        // Room for a whole new current file, so the directory never exceeds the total cap
        // while it grows.
        let budget = self
            .limits
            .max_total_bytes
            .saturating_sub(self.limits.max_file_bytes);
        for (_, path, len) in files {
            if total <= budget {
                break;
            }
            if path == current {
                continue;
            }
            if fs::remove_file(&path).is_ok() {
                total = total.saturating_sub(len);
            }
        }
    }
}

fn rotation_number(path: &Path) -> u64 {
    path.file_stem()
        .and_then(|stem| stem.to_str())
        .and_then(|stem| stem.rsplit('.').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

/// This session's rotated files, by number.
fn rotated(dir: &Path, stem: &str) -> Vec<(u64, PathBuf)> {
    let prefix = format!("{stem}.");
    let mut found: Vec<(u64, PathBuf)> = fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .filter_map(|entry| {
                    let name = entry.file_name().to_str()?.to_owned();
                    let n = name
                        .strip_prefix(&prefix)?
                        .strip_suffix(".jsonl")?
                        .parse()
                        .ok()?;
                    Some((n, entry.path()))
                })
                .collect()
        })
        .unwrap_or_default();
    found.sort();
    found
}

#[cfg(test)]
#[path = "run_store_tests.rs"]
mod tests;
