//! `workspace.sync`'s bytes in constant memory (INTEROP.md §9): a pulled file goes from the
//! Workspace Service's answer to the disk chunk by chunk, and a pushed file goes from the
//! disk to the upload through the redaction tool output passes, a window at a time. A file
//! of any size costs a few windows of memory, never its whole length.

use std::borrow::Cow;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use bytes::Bytes;
use futures::{Stream, StreamExt};

use crate::redact::Redactor;

/// The size of one read from a file and of one chunk handed on.
const BLOCK: usize = 64 * 1024;
/// How much text is judged at once before its head is handed on.
const WINDOW: usize = 1024 * 1024;
/// What is held back at a window's end: a secret that began before the cut and runs past
/// the window would be cut in two, so no secret this long or longer is expected.
const OVERLAP: usize = 64 * 1024;
/// The largest window: text in which no cut avoids a secret up to this size is refused
/// rather than held whole.
const MOST: usize = 8 * 1024 * 1024;
/// Chunks on their way between the network and the disk.
const IN_FLIGHT: usize = 4;

/// The file's bytes with every secret the redactor knows replaced, read a window at a time.
/// Text is redacted; bytes that are not text are handed on as they are unless the redaction
/// rules find a secret in them, which fails the read (a file that is not text cannot be
/// redacted without being damaged, so it is not sent).
pub(crate) struct Redacting<R> {
    inner: R,
    redactor: Arc<Redactor>,
    /// Read but not yet judged.
    pending: Vec<u8>,
    /// Judged, to be handed on from `ready_at`.
    ready: Vec<u8>,
    ready_at: usize,
    /// How much `pending` is filled to before it is judged.
    target: usize,
    eof: bool,
    /// The most bytes held at once (pending and ready), for the memory bound's test.
    peak: usize,
}

/// The read failure of a file that is not text and holds what the redaction rules take for
/// a secret.
#[derive(Debug, thiserror::Error)]
#[error("it is not text and holds what the redaction rules take for a secret; it is not sent")]
pub(crate) struct SecretInBinary;

/// Text in which no cut point avoided a secret within [`MOST`] bytes.
#[derive(Debug, thiserror::Error)]
#[error("its text could not be redacted a window at a time; it is not sent")]
pub(crate) struct NoSafeCut;

impl<R: Read> Redacting<R> {
    pub(crate) fn new(inner: R, redactor: Arc<Redactor>) -> Self {
        Self {
            inner,
            redactor,
            pending: Vec::new(),
            ready: Vec::new(),
            ready_at: 0,
            target: WINDOW,
            eof: false,
            peak: 0,
        }
    }

    /// The most bytes held at once so far.
    #[cfg(test)]
    pub(crate) fn peak(&self) -> usize {
        self.peak
    }

    /// Reads until the window is full or the file ends, then judges: the whole rest at the
    /// end, else a head that no secret crosses.
    fn fill(&mut self) -> io::Result<()> {
        self.ready.clear();
        self.ready_at = 0;
        loop {
            while !self.eof && self.pending.len() < self.target {
                let start = self.pending.len();
                self.pending.resize(start + BLOCK, 0);
                let read = loop {
                    match self.inner.read(&mut self.pending[start..]) {
                        Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
                        other => break other,
                    }
                };
                let read = match read {
                    Ok(read) => read,
                    Err(error) => {
                        self.pending.truncate(start);
                        return Err(error);
                    }
                };
                self.pending.truncate(start + read);
                self.eof = read == 0;
            }
            self.peak = self.peak.max(self.pending.len() + self.ready.len());
            if self.eof {
                let all = std::mem::take(&mut self.pending);
                self.ready = self.judge_all(all)?;
                return Ok(());
            }
            if self.judge_head()? {
                self.target = WINDOW;
                return Ok(());
            }
            if self.target >= MOST {
                return Err(io::Error::new(io::ErrorKind::InvalidData, NoSafeCut));
            }
            self.target = (self.target * 2).min(MOST);
        }
    }

    /// The last of the file, judged whole.
    fn judge_all(&self, all: Vec<u8>) -> io::Result<Vec<u8>> {
        match String::from_utf8(all) {
            Ok(text) => Ok(match self.redactor.redact(&text) {
                Cow::Borrowed(_) => text.into_bytes(),
                Cow::Owned(redacted) => redacted.into_bytes(),
            }),
            Err(binary) => {
                let bytes = binary.into_bytes();
                self.refuse_secret_in(&bytes)?;
                Ok(bytes)
            }
        }
    }

    /// Moves a head of `pending` that no secret crosses into `ready`; false when no cut
    /// was found (the window grows).
    fn judge_head(&mut self) -> io::Result<bool> {
        let Some(text) = text_prefix(&self.pending) else {
            // Not text: handed on as it is when the whole window holds no secret; the
            // held-back end is judged again with what follows.
            self.refuse_secret_in(&self.pending)?;
            let cut = self.pending.len().saturating_sub(OVERLAP);
            self.ready = self.pending.drain(..cut).collect();
            return Ok(cut > 0);
        };
        let found = safe_head(&self.redactor, text);
        match found {
            Some((cut, head)) => {
                self.ready = head;
                self.pending.drain(..cut);
                Ok(true)
            }
            None => Ok(false),
        }
    }

    fn refuse_secret_in(&self, bytes: &[u8]) -> io::Result<()> {
        let lossy = String::from_utf8_lossy(bytes);
        match self.redactor.redact(&lossy) {
            Cow::Borrowed(_) => Ok(()),
            Cow::Owned(_) => Err(io::Error::new(io::ErrorKind::InvalidData, SecretInBinary)),
        }
    }
}

impl<R: Read> Read for Redacting<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            if self.ready_at < self.ready.len() {
                let count = buf.len().min(self.ready.len() - self.ready_at);
                buf[..count].copy_from_slice(&self.ready[self.ready_at..self.ready_at + count]);
                self.ready_at += count;
                return Ok(count);
            }
            if self.eof && self.pending.is_empty() {
                return Ok(0);
            }
            self.fill()?;
        }
    }
}

/// The first cut of `text` that no secret crosses, with the head's redacted bytes.
fn safe_head(redactor: &Redactor, text: &str) -> Option<(usize, Vec<u8>)> {
    let whole = redactor.redact(text);
    if let Cow::Borrowed(_) = whole {
        // No secret in the window: any cut is safe, and the head is as it was.
        let cut = cut_points(text).into_iter().next()?;
        return Some((cut, text.as_bytes()[..cut].to_vec()));
    }
    for cut in cut_points(text) {
        let (head, tail) = text.split_at(cut);
        let head = redactor.redact(head);
        let tail = redactor.redact(tail);
        // The cut is safe when redacting the two sides apart gives what redacting them
        // together gives: no secret runs across it.
        if whole.len() == head.len() + tail.len()
            && whole.starts_with(head.as_ref())
            && whole.ends_with(tail.as_ref())
        {
            return Some((cut, head.into_owned().into_bytes()));
        }
    }
    None
}

/// The longest prefix of `bytes` that is text: all of it, or all but a character the read
/// cut in two; `None` when it holds bytes that are no text.
fn text_prefix(bytes: &[u8]) -> Option<&str> {
    match std::str::from_utf8(bytes) {
        Ok(text) => Some(text),
        Err(error) if error.error_len().is_none() => {
            std::str::from_utf8(&bytes[..error.valid_up_to()]).ok()
        }
        Err(_) => None,
    }
}

/// Where a window of text may be cut, best first: after a line break at least [`OVERLAP`]
/// before its end, then at character boundaries stepping back.
fn cut_points(text: &str) -> Vec<usize> {
    let Some(limit) = text.len().checked_sub(OVERLAP).filter(|limit| *limit > 0) else {
        return Vec::new();
    };
    let mut cuts: Vec<usize> = text.as_bytes()[..limit]
        .iter()
        .enumerate()
        .rev()
        .filter(|(_, byte)| **byte == b'\n')
        .take(8)
        .map(|(at, _)| at + 1)
        .collect();
    let mut at = limit;
    for _ in 0..8 {
        while at > 0 && !text.is_char_boundary(at) {
            at -= 1;
        }
        if at == 0 {
            break;
        }
        cuts.push(at);
        at = at.saturating_sub(4096);
    }
    cuts
}

/// The chunks of `reader`, read on a blocking thread a few chunks ahead of the consumer;
/// the handle ends with the reader's own failure, if any.
pub(crate) fn chunks<R: Read + Send + 'static>(
    mut reader: R,
) -> (
    impl Stream<Item = io::Result<Bytes>> + Send + Sync + 'static,
    tokio::task::JoinHandle<io::Result<()>>,
) {
    let (sender, receiver) = tokio::sync::mpsc::channel::<io::Result<Bytes>>(IN_FLIGHT);
    let reading = tokio::task::spawn_blocking(move || {
        loop {
            let mut buf = vec![0; BLOCK];
            let read = match reader.read(&mut buf) {
                Ok(read) => read,
                Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
                Err(error) => {
                    let told = io::Error::new(error.kind(), error.to_string());
                    let _ = sender.blocking_send(Err(told));
                    return Err(error);
                }
            };
            if read == 0 {
                return Ok(());
            }
            buf.truncate(read);
            if sender.blocking_send(Ok(Bytes::from(buf))).is_err() {
                // The upload gave up; its own error says why.
                return Ok(());
            }
        }
    });
    let stream = futures::stream::unfold(receiver, |mut receiver| async move {
        receiver.recv().await.map(|item| (item, receiver))
    });
    (stream, reading)
}

/// Writes `stream` to `relative` beneath `root` (a link at the name replaced, never
/// followed) a chunk at a time; the file appears only once the whole stream arrived.
pub(crate) async fn write_streamed<S, E>(
    mut stream: S,
    root: &Path,
    relative: PathBuf,
) -> io::Result<()>
where
    S: Stream<Item = Result<Bytes, E>> + Unpin,
    E: std::fmt::Display,
{
    let (sender, mut receiver) = tokio::sync::mpsc::channel::<Bytes>(IN_FLIGHT);
    let root = root.to_path_buf();
    let writing = tokio::task::spawn_blocking(move || {
        let mut file = crate::workspace_files::create(&root, &relative)?;
        while let Some(chunk) = receiver.blocking_recv() {
            file.write_all(&chunk)?;
        }
        Ok::<_, io::Error>(file)
    });
    let mut failure = None;
    while let Some(chunk) = stream.next().await {
        match chunk {
            Ok(chunk) => {
                if sender.send(chunk).await.is_err() {
                    // The writer stopped; its error says why.
                    break;
                }
            }
            Err(error) => {
                failure = Some(io::Error::other(format!("the download broke off: {error}")));
                break;
            }
        }
    }
    drop(sender);
    let file = writing.await.map_err(io::Error::other)??;
    if let Some(failure) = failure {
        // Dropped uncommitted, the partial file goes.
        tokio::task::spawn_blocking(move || drop(file))
            .await
            .map_err(io::Error::other)?;
        return Err(failure);
    }
    tokio::task::spawn_blocking(move || file.commit())
        .await
        .map_err(io::Error::other)?
}

#[cfg(test)]
#[path = "workspace_stream_tests.rs"]
mod tests;
