//! The Local State Store (local-agent-host.md §9): one checkpoint file per session,
//! written atomically (temp file in the same directory, fsync, rename, fsync the
//! directory) so a crash at any instant leaves either the old or the new checkpoint.

use std::borrow::Cow;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use agent_protocol::checkpoint::{CHECKPOINT_VERSION, Checkpoint};

use crate::json_splice::{Items, JsonPieces};

mod origin;

pub(crate) use origin::SessionOrigin;

#[derive(Debug, thiserror::Error)]
pub enum StateError {
    #[error("could not write the checkpoint {path}: {source}")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("could not serialize the checkpoint: {0}")]
    Serialize(#[from] serde_json::Error),
    #[error("the serialized checkpoint head has no empty thread to fill in")]
    NoThreadSlot,
}

/// Why a checkpoint found on disk cannot be used (§9.7). The file has already been
/// deleted when this is returned, so a fresh session can start at once.
#[derive(Debug, thiserror::Error)]
pub enum CheckpointCorrupt {
    #[error("the checkpoint file could not be read ({0})")]
    Unreadable(std::io::Error),
    #[error("the checkpoint file is not a valid checkpoint ({0})")]
    Unparsable(serde_json::Error),
    #[error(
        "the checkpoint has version {found}, which this runtime cannot read (it reads {CHECKPOINT_VERSION})"
    )]
    UnknownVersion { found: String },
    #[error("the checkpoint file belongs to session {found}, not to this session")]
    OtherSession { found: String },
}

#[derive(Debug, Clone)]
pub struct CheckpointStore {
    dir: PathBuf,
    durable: bool,
    /// Held by a writer from its snapshot to its rename, so checkpoints reach the disk in
    /// the order they were taken: a later one is never replaced by an earlier one. Async:
    /// it is held while the write runs on the blocking pool.
    turn: Arc<tokio::sync::Mutex<()>>,
}

/// Where the thread goes in a checkpoint serialised with an empty one. Fields are written
/// in declaration order and every quote inside a string is escaped, so the first match is
/// the top-level `thread` between `stepCursor` and `sessionTokensUsed`.
const THREAD_SLOT: &str = ",\"thread\":[],\"sessionTokensUsed\":";

/// Set to `1` to skip the fsyncs, for `cargo xtask bench` only: it runs a task with and
/// without them to show the disk's share of the per-step time on its own line. Never set it
/// for real sessions — a crash could then lose the last checkpoint.
pub(crate) const BENCH_NO_FSYNC_ENV: &str = "AGENT_RUNTIME_BENCH_NO_FSYNC";

/// What the checkpoint stores of this process have asked of the disk since it started:
/// `write` calls reaching the file, fsyncs (file and directory), renames and bytes written.
/// Counted in-process so a test can hold the disk work of a step to a recorded figure
/// (`runtime/cli/tests/step_budget.rs`) without tracing system calls.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DiskCounts {
    pub writes: u64,
    pub fsyncs: u64,
    pub renames: u64,
    pub bytes: u64,
}

static WRITES: AtomicU64 = AtomicU64::new(0);
static FSYNCS: AtomicU64 = AtomicU64::new(0);
static RENAMES: AtomicU64 = AtomicU64::new(0);
static BYTES: AtomicU64 = AtomicU64::new(0);

/// The process-wide [`DiskCounts`] so far.
pub fn disk_counts() -> DiskCounts {
    DiskCounts {
        writes: WRITES.load(Ordering::Relaxed),
        fsyncs: FSYNCS.load(Ordering::Relaxed),
        renames: RENAMES.load(Ordering::Relaxed),
        bytes: BYTES.load(Ordering::Relaxed),
    }
}

/// The file beneath the write buffer, counting each `write` that reaches it.
struct Counted<'a>(&'a mut std::fs::File);

impl Write for Counted<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let written = self.0.write(buf)?;
        WRITES.fetch_add(1, Ordering::Relaxed);
        BYTES.fetch_add(written as u64, Ordering::Relaxed);
        Ok(written)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.0.flush()
    }
}

impl CheckpointStore {
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        let durable = std::env::var(BENCH_NO_FSYNC_ENV).map_or(true, |value| value != "1");
        Self {
            dir: dir.into(),
            durable,
            turn: Arc::default(),
        }
    }

    /// Whether writes are fsynced (always, but for `cargo xtask bench`'s comparison run).
    pub fn durable(&self) -> bool {
        self.durable
    }

    /// The writers' turn (see `turn`): take it before taking the snapshot to write.
    pub async fn turn(&self) -> tokio::sync::MutexGuard<'_, ()> {
        self.turn.lock().await
    }

    pub fn path(&self, session_id: &str) -> PathBuf {
        self.dir.join(format!("{}.json", sanitize(session_id)))
    }

    pub fn write(&self, checkpoint: &Checkpoint) -> Result<PathBuf, StateError> {
        let json = serde_json::to_vec(checkpoint)?;
        self.write_serialized(&checkpoint.session_id, &json)
    }

    /// Writes `head` (whose `thread` is empty) with `thread`, the messages' JSON already
    /// checked against `redactor` (`Thread::stored`), filled in: what [`write`](Self::write)
    /// would write for the whole checkpoint, but a step serialises and scans only the head.
    pub fn write_with_thread(
        &self,
        head: &Checkpoint,
        thread: Items,
        redactor: &crate::redact::Redactor,
    ) -> Result<PathBuf, StateError> {
        let json = serde_json::to_string(head)?;
        // The slot is found before the credential pass, which then sees either side of it:
        // no replacement can move or break it.
        let pieces = JsonPieces::around(&json, THREAD_SLOT, thread)
            .ok_or(StateError::NoThreadSlot)?
            .cleaned(redactor);
        let path = self.path(&head.session_id);
        write_atomically(&self.dir, &path, self.durable, |file| pieces.write_to(file)).map_err(
            |source| StateError::Write {
                path: path.clone(),
                source,
            },
        )?;
        Ok(path)
    }

    /// Writes an already serialised checkpoint of `session_id`, after the exact-value
    /// redaction backstop.
    pub fn write_serialized(&self, session_id: &str, json: &[u8]) -> Result<PathBuf, StateError> {
        let path = self.path(session_id);
        let text = String::from_utf8_lossy(json);
        let redactor = crate::redact::global();
        let clean = redactor.redact_values(&text);
        // Valid UTF-8 with nothing to replace (the rule): the buffer itself is written.
        let bytes = match (&text, &clean) {
            (Cow::Borrowed(_), Cow::Borrowed(_)) => json,
            _ => clean.as_bytes(),
        };
        write_atomically(&self.dir, &path, self.durable, |file| file.write_all(bytes)).map_err(
            |source| StateError::Write {
                path: path.clone(),
                source,
            },
        )?;
        Ok(path)
    }

    /// The checkpoint of `session_id`, if one exists and is sound. A corrupt, truncated,
    /// unknown-version or foreign file is deleted and reported (§9.7); `Ok(None)` means
    /// there is no checkpoint at all.
    pub fn load(&self, session_id: &str) -> Result<Option<Checkpoint>, CheckpointCorrupt> {
        let path = self.path(session_id);
        let bytes = match std::fs::read(&path) {
            Ok(bytes) => bytes,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(error) => {
                return Err(self.discard(session_id, CheckpointCorrupt::Unreadable(error)));
            }
        };
        let outcome = check(session_id, &bytes);
        outcome
            .map(Some)
            .map_err(|corrupt| self.discard(session_id, corrupt))
    }

    fn discard(&self, session_id: &str, corrupt: CheckpointCorrupt) -> CheckpointCorrupt {
        tracing::error!(session_id, error = %corrupt, "crash recovery failed: deleting the checkpoint");
        self.delete(session_id);
        corrupt
    }

    /// The session whose checkpoint says it continues `ended` (INTEROP.md §8): after a crash
    /// the app goes on naming the ended session. Only files holding the name are parsed.
    pub fn continuation_of(&self, ended: &str) -> Option<String> {
        let needle = format!("\"continuedFrom\":{}", serde_json::to_string(ended).ok()?);
        for entry in std::fs::read_dir(&self.dir).ok()?.flatten() {
            let path = entry.path();
            if path.extension().and_then(|e| e.to_str()) != Some("json") {
                continue;
            }
            let Ok(bytes) = std::fs::read(&path) else {
                continue;
            };
            if !bytes.windows(needle.len()).any(|w| w == needle.as_bytes()) {
                continue;
            }
            let Ok(value) = serde_json::from_slice::<serde_json::Value>(&bytes) else {
                continue;
            };
            if value.get("continuedFrom").and_then(|v| v.as_str()) == Some(ended) {
                return value
                    .get("sessionId")
                    .and_then(|v| v.as_str())
                    .map(str::to_owned);
            }
        }
        None
    }

    pub fn delete(&self, session_id: &str) {
        let path = self.path(session_id);
        if let Err(error) = std::fs::remove_file(&path)
            && error.kind() != std::io::ErrorKind::NotFound
        {
            tracing::warn!(path = %path.display(), %error, "could not delete the checkpoint");
        }
    }
}

fn check(session_id: &str, bytes: &[u8]) -> Result<Checkpoint, CheckpointCorrupt> {
    // The version is judged before the whole shape, so a future format is reported as
    // such rather than as garbage.
    let value: serde_json::Value =
        serde_json::from_slice(bytes).map_err(CheckpointCorrupt::Unparsable)?;
    let version = value.get("checkpointVersion").and_then(|v| v.as_str());
    if version != Some(CHECKPOINT_VERSION) {
        return Err(CheckpointCorrupt::UnknownVersion {
            found: version.map_or_else(|| "(none)".to_owned(), str::to_owned),
        });
    }
    let checkpoint: Checkpoint =
        serde_json::from_value(value).map_err(CheckpointCorrupt::Unparsable)?;
    if checkpoint.session_id != session_id {
        return Err(CheckpointCorrupt::OtherSession {
            found: checkpoint.session_id,
        });
    }
    Ok(checkpoint)
}

/// Session ids come from a service; keep them from naming a path outside the directory.
fn sanitize(session_id: &str) -> String {
    session_id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// `write` fills a temp file through a buffer (a checkpoint is written in pieces), which
/// then replaces `path`.
fn write_atomically(
    dir: &Path,
    path: &Path,
    durable: bool,
    write: impl FnOnce(&mut std::io::BufWriter<Counted<'_>>) -> std::io::Result<()>,
) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let mut temp = tempfile::NamedTempFile::new_in(dir)?;
    {
        let mut file = std::io::BufWriter::with_capacity(64 * 1024, Counted(temp.as_file_mut()));
        write(&mut file)?;
        file.flush()?;
    }
    if durable {
        temp.as_file().sync_all()?;
        FSYNCS.fetch_add(1, Ordering::Relaxed);
    }
    temp.persist(path).map_err(|error| error.error)?;
    RENAMES.fetch_add(1, Ordering::Relaxed);
    #[cfg(unix)]
    if durable {
        std::fs::File::open(dir)?.sync_all()?;
        FSYNCS.fetch_add(1, Ordering::Relaxed);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_protocol::state::SessionStatus;

    fn sample(session_id: &str) -> Checkpoint {
        Checkpoint {
            checkpoint_version: "1.0".into(),
            session_id: session_id.into(),
            workspace_id: "w".into(),
            tenant_id: "t".into(),
            user_id: "u".into(),
            session_status: SessionStatus::SessionRunning,
            task: None,
            step_cursor: Some("step_002".into()),
            thread: vec![],
            session_tokens_used: 7,
            policy_bundle_version: "v".into(),
            checkpointed_at: "2026-01-01T00:00:00Z".into(),
            pending_approvals: vec![],
            workspace_root: None,
            event_id_epoch: 0,
            file_changes: Vec::new(),
            name: None,
            feature_flags: serde_json::Map::new(),
            execution_environment: None,
            os_family: None,
            continued_from: None,
        }
    }

    /// The thread spliced into the head must give exactly what serialising the whole
    /// checkpoint gives, also when strings mimic the slot and a credential is everywhere.
    #[test]
    fn a_checkpoint_with_a_stored_thread_is_the_whole_checkpoint_byte_for_byte() {
        use crate::thread::{Origin, Thread};
        use agent_protocol::checkpoint::CheckpointTask;
        use agent_protocol::message::MessageToolCall;
        let secret = "tok-secret-123";
        let redactor =
            Arc::new(crate::redact::Redactor::with_defaults().with_values([secret.to_owned()]));
        let mimic = r#","thread":[],"sessionTokensUsed":1"#;
        let spill = tempfile::tempdir().unwrap();
        // Empty, kept in memory, kept in a spill file.
        let empty = Thread::new("s1");
        let mut memory = Thread::new("s1");
        let mut spilled = Thread::new("s1");
        spilled.spill_into(Some(spill.path().to_owned()));
        for thread in [&mut memory, &mut spilled] {
            let origin = Origin {
                task_id: "t",
                step_id: Some("step_001"),
            };
            thread.add_user(&format!("{mimic} and {secret}"), origin);
            let call = MessageToolCall {
                id: "call_1".into(),
                name: "ReadFile".into(),
                arguments: format!(r#"{{"path":"{secret}"}}"#),
                message_id: None,
            };
            thread.add_assistant("a \"quoted\"\nanswer", vec![call], Some(3), origin);
            thread.add_tool_result("call_1", "ReadFile", "line\tone \u{1F600}".into(), origin);
        }
        let mut head = sample("s1");
        head.task = Some(CheckpointTask {
            task_id: "t".into(),
            prompt: format!("{mimic} {secret}"),
            status: "running".into(),
            step_count: 1,
            max_steps: 9,
            task_options: None,
        });
        head.feature_flags
            .insert("thread".into(), serde_json::json!([]));
        for mut thread in [empty, memory, spilled] {
            let dir = tempfile::tempdir().unwrap();
            let spliced = CheckpointStore::new(dir.path());
            let stored = thread.stored(&redactor);
            let path = spliced.write_with_thread(&head, stored, &redactor).unwrap();
            let reference = Checkpoint {
                thread: thread.all(),
                ..head.clone()
            };
            // What `write_serialized` makes of the whole checkpoint under this redactor.
            let reference = serde_json::to_string(&reference).unwrap();
            let written = std::fs::read_to_string(path).unwrap();
            assert_eq!(written, redactor.redact_values(&reference));
            assert!(!written.contains(secret), "{written}");
            assert!(spliced.load("s1").unwrap().is_some());
        }
    }

    #[test]
    fn a_written_checkpoint_loads_back() {
        let dir = tempfile::tempdir().unwrap();
        let store = CheckpointStore::new(dir.path());
        assert!(store.load("s1").unwrap().is_none());
        store.write(&sample("s1")).unwrap();
        assert_eq!(store.load("s1").unwrap(), Some(sample("s1")));
    }

    #[test]
    fn corrupt_checkpoints_are_reported_and_deleted() {
        let dir = tempfile::tempdir().unwrap();
        let store = CheckpointStore::new(dir.path());
        let whole = serde_json::to_string(&sample("s1")).unwrap();
        let future = whole.replace("\"1.0\"", "\"9.0\"");
        let foreign = serde_json::to_string(&sample("s2")).unwrap();
        let cases: [(&str, &str); 5] = [
            ("not json at all", "Unparsable"),
            (&whole[..whole.len() / 2], "Unparsable"),
            (&future, "UnknownVersion"),
            (&foreign, "OtherSession"),
            (
                r#"{"checkpointVersion":"1.0","sessionId":"s1"}"#,
                "Unparsable",
            ),
        ];
        for (content, kind) in cases {
            std::fs::write(store.path("s1"), content).unwrap();
            let error = store.load("s1").unwrap_err();
            assert!(
                format!("{error:?}").starts_with(kind),
                "{content}: {error:?}"
            );
            assert!(
                !store.path("s1").exists(),
                "{content}: the file must be deleted"
            );
        }
    }

    #[test]
    fn a_continuation_is_found_by_the_session_it_continues() {
        let dir = tempfile::tempdir().unwrap();
        let store = CheckpointStore::new(dir.path());
        store.write(&sample("sess_a")).unwrap();
        let continuation = Checkpoint {
            continued_from: Some("sess_ended".to_owned()),
            ..sample("sess_b")
        };
        store.write(&continuation).unwrap();
        assert_eq!(
            store.continuation_of("sess_ended").as_deref(),
            Some("sess_b")
        );
        assert_eq!(store.continuation_of("sess_a"), None);
        assert_eq!(store.continuation_of("sess_b"), None);
    }

    #[test]
    fn writes_replace_the_file_and_delete_removes_it() {
        let dir = tempfile::tempdir().unwrap();
        let store = CheckpointStore::new(dir.path().join("cp"));
        let mut checkpoint = Checkpoint {
            step_cursor: None,
            session_tokens_used: 1,
            ..sample("sess/../x")
        };
        let path = store.write(&checkpoint).unwrap();
        assert!(path.starts_with(dir.path().join("cp")));
        checkpoint.session_tokens_used = 2;
        store.write(&checkpoint).unwrap();
        let back: Checkpoint = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        assert_eq!(back.session_tokens_used, 2);
        assert_eq!(
            std::fs::read_dir(dir.path().join("cp")).unwrap().count(),
            1,
            "no temp files left"
        );
        store.delete(&checkpoint.session_id);
        assert!(!path.exists());
    }
}
