//! The thread's storage engine: each message kept once, as its stored JSON (the
//! checkpoint's `thread` entry), checked against the credential values before it reaches
//! the disk, and written to the [`spill`](super::spill) file beside the checkpoints (in
//! memory when there is none, or from the first write that fails). The conversation rules
//! — ids, units of tool calls, tasks — are the [`Thread`](super::Thread)'s; this module
//! only keeps and reads back what it is given.
//!
//! Invariants: messages `..kept.len()` are in `kept`, checked against the exact values of
//! `scrubbed_by`, and the ones added since are in `pending`; a message whose stored JSON
//! had a value replaced keeps its as-said form in `said` (the model request is redacted on
//! its own terms and must not see another replacement); nothing stored is ever lost when
//! the file fails.

use std::borrow::Cow;
use std::path::PathBuf;
use std::sync::Arc;

use agent_protocol::message::ConversationMessage;

use super::spill::SpillFile;
use crate::json_splice::Items;
use crate::redact::Redactor;

#[derive(Default)]
pub(super) struct Store {
    kept: Kept,
    pending: Vec<Arc<str>>,
    /// Where `kept` goes on disk; in memory when `None` or when the file fails.
    spill_dir: Option<PathBuf>,
    /// Messages whose stored JSON had a credential value replaced, as they were said.
    said: Vec<(usize, Box<ConversationMessage>)>,
    /// The redactor whose exact values the kept messages were checked against.
    scrubbed_by: Option<Arc<Redactor>>,
}

impl Store {
    pub(super) fn reserve(&mut self, messages: usize) {
        self.pending.reserve_exact(messages);
    }

    /// Tests: the spill file, to make it fail.
    #[cfg(test)]
    pub(super) fn spill_file(&mut self) -> Option<&mut SpillFile> {
        self.kept.file.as_mut()
    }

    /// Keeps a new message's stored JSON; it is checked at the next [`stored`](Self::stored).
    pub(super) fn push(&mut self, json: Arc<str>) {
        self.pending.push(json);
    }

    /// Message `index` as it was said, parsed back from its stored JSON. `None` only when
    /// there is no such message.
    pub(super) fn message(&self, index: usize) -> Option<Cow<'_, ConversationMessage>> {
        if let Ok(at) = self.said.binary_search_by_key(&index, |(at, _)| *at) {
            return self
                .said
                .get(at)
                .map(|(_, message)| Cow::Borrowed(&**message));
        }
        let json = match index.checked_sub(self.kept.len()) {
            Some(pending) => Cow::Borrowed(&**self.pending.get(pending)?),
            None => match self.kept.read(index) {
                Ok(json) => json,
                Err(error) => {
                    tracing::error!(index, %error, "a stored message cannot be read back");
                    return None;
                }
            },
        };
        match serde_json::from_str(&json) {
            Ok(message) => Some(Cow::Owned(message)),
            Err(error) => {
                // Stored JSON is written by this module and stays a message when scrubbed
                // (`scrubbed_json`); this is a bug, not bad input.
                tracing::error!(index, %error, "a stored message does not parse back");
                None
            }
        }
    }

    /// Keeps the checked messages in a spill file in `dir` (see [`spill`]) from the next
    /// [`stored`](Self::stored) on; `None` keeps them in memory.
    pub(super) fn spill_into(&mut self, dir: Option<PathBuf>) {
        self.spill_dir = dir;
    }

    pub(super) fn spill_dir(&self) -> Option<&PathBuf> {
        self.spill_dir.as_ref()
    }

    /// The messages as stored JSON, in order, each checked once against `redactor`'s exact
    /// values (the backstop that keeps a known credential off the disk): a message is
    /// scanned when it is first written, and all of them again when the redactor changes.
    /// The answer is a snapshot: messages added later are not part of it.
    pub(super) fn stored(&mut self, redactor: &Arc<Redactor>) -> Items {
        if !self
            .scrubbed_by
            .as_ref()
            .is_some_and(|known| Arc::ptr_eq(known, redactor))
            && self.rescan(redactor)
        {
            self.scrubbed_by = Some(Arc::clone(redactor));
        }
        let first = self.kept.len();
        for (offset, json) in std::mem::take(&mut self.pending).into_iter().enumerate() {
            let json = self.scrub(first + offset, json, redactor);
            self.keep(json);
        }
        self.kept.items()
    }

    /// `json`, stored JSON of message `index`, without `redactor`'s exact values.
    fn scrub(&mut self, index: usize, json: Arc<str>, redactor: &Redactor) -> Arc<str> {
        let Cow::Owned(clean) = redactor.redact_values(&json) else {
            return json;
        };
        let at = match self.said.binary_search_by_key(&index, |(at, _)| *at) {
            Ok(at) => at,
            Err(at) => {
                let Ok(message) = serde_json::from_str(&json) else {
                    // Stored JSON is always a message (see `message`); should it not be,
                    // the replaced text still keeps the credential off the disk.
                    return Arc::from(clean);
                };
                self.said.insert(at, (index, Box::new(message)));
                at
            }
        };
        scrubbed_json(redactor, &self.said[at].1, clean)
    }

    /// Every kept message checked again; rewritten only when one of them changed. `false`
    /// when one cannot be read back: nothing changes, and the next call tries again.
    fn rescan(&mut self, redactor: &Redactor) -> bool {
        let mut changed = false;
        let mut all = Vec::with_capacity(self.kept.len());
        for index in 0..self.kept.len() {
            let json = match self.kept.read(index) {
                Ok(json) => Arc::<str>::from(json),
                Err(error) => {
                    tracing::error!(index, %error, "a stored message cannot be read back to check it for credentials");
                    return false;
                }
            };
            let clean = self.scrub(index, Arc::clone(&json), redactor);
            changed |= !Arc::ptr_eq(&clean, &json);
            all.push(clean);
        }
        if changed {
            self.kept = Kept::default();
            for json in all {
                self.keep(json);
            }
        }
        true
    }

    /// Adds a checked message to `kept`: to the spill file, created on first use, as long
    /// as every message before it is there; in memory otherwise. A file that fails keeps
    /// what it holds, and the messages after it stay in memory: nothing is lost.
    fn keep(&mut self, json: Arc<str>) {
        if self.kept.len() == 0
            && let Some(dir) = &self.spill_dir
        {
            match SpillFile::create(dir) {
                Ok(file) => self.kept.file = Some(file),
                Err(error) => {
                    tracing::warn!(dir = %dir.display(), %error, "cannot create the thread's spill file; keeping the thread in memory");
                    self.spill_dir = None;
                }
            }
        }
        if self.kept.memory.is_empty()
            && let Some(file) = &mut self.kept.file
        {
            match file.append(&json) {
                Ok(()) => return,
                Err(error) => {
                    tracing::warn!(%error, "cannot write the thread's spill file; keeping the rest of the thread in memory");
                    self.spill_dir = None;
                }
            }
        }
        self.kept.memory.push(json);
    }
}

/// Where the checked messages are kept: the first ones in the spill file, the rest (all
/// of them when there is no file) in memory.
#[derive(Default)]
struct Kept {
    file: Option<SpillFile>,
    memory: Vec<Arc<str>>,
}

impl Kept {
    fn in_file(&self) -> usize {
        self.file.as_ref().map_or(0, SpillFile::len)
    }

    fn len(&self) -> usize {
        self.in_file() + self.memory.len()
    }

    fn read(&self, index: usize) -> std::io::Result<Cow<'_, str>> {
        match (index.checked_sub(self.in_file()), &self.file) {
            (None, Some(file)) => file.read(index).map(Cow::Owned),
            (at, _) => at
                .and_then(|at| self.memory.get(at))
                .map(|json| Cow::Borrowed(&**json))
                .ok_or_else(|| std::io::Error::other(format!("the thread has no message {index}"))),
        }
    }

    fn items(&self) -> Items {
        Items::new(
            self.file.as_ref().map(SpillFile::region),
            self.memory.as_slice().into(),
        )
    }
}

/// A message as the checkpoint stores it. Serialising a message cannot fail: it holds
/// strings, numbers and lists only (no map whose keys could be refused).
pub(super) fn stored_json(message: &ConversationMessage) -> Arc<str> {
    serde_json::to_string(message).map_or_else(|_| Arc::from("null"), Arc::from)
}

/// `clean` is the stored JSON with exact credential values replaced. A value that spans
/// JSON syntax (a quote, a key) can break the text or the message's shape; then every
/// string of the message is redacted instead, which always stays a message.
fn scrubbed_json(redactor: &Redactor, message: &ConversationMessage, clean: String) -> Arc<str> {
    if serde_json::from_str::<ConversationMessage>(&clean).is_ok() {
        return Arc::from(clean);
    }
    let Ok(mut value) = serde_json::to_value(message) else {
        return Arc::from("null");
    };
    crate::redact::apply::json_value(redactor, &mut value);
    Arc::from(value.to_string())
}
