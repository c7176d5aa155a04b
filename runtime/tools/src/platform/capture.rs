//! Bounded capture of a child's stdout or stderr. A command may print gigabytes or never
//! stop; what is kept is at most `cap` bytes: the first 80% and the last 20% of the stream,
//! the same split as §7.1's truncation, so truncating the capture gives the same text as
//! truncating the whole output would (for any budget up to `cap`).

use std::collections::VecDeque;

use tokio::io::{AsyncRead, AsyncReadExt};
use tokio_util::sync::CancellationToken;

use crate::output::{self, Clipped};

/// Per-stream cap when none is configured: enough for a full `tool_output` artifact of any
/// ordinary command, small enough that several concurrent floods stay harmless.
pub(crate) const DEFAULT_CAPTURE_BYTES: usize = 4 * 1024 * 1024;

const READ_CHUNK_BYTES: usize = 64 * 1024;

/// What was kept of one stream.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct Captured {
    pub head: Vec<u8>,
    /// Contiguous with `head` unless bytes were dropped between them.
    pub tail: Vec<u8>,
    /// Bytes the stream carried in all.
    pub total: u64,
}

impl Captured {
    /// Bytes dropped between `head` and `tail`.
    pub(crate) fn omitted(&self) -> u64 {
        self.total
            .saturating_sub(u64::try_from(self.head.len() + self.tail.len()).unwrap_or(u64::MAX))
    }

    /// The output as text for the model: invalid UTF-8 replaced, CRLF normalised (§6.2). When
    /// bytes were dropped, a character cut at either edge of the gap is dropped too rather
    /// than shown as a replacement character.
    pub(crate) fn to_clipped(&self) -> Clipped {
        let omitted = self.omitted();
        if omitted == 0 {
            let mut whole = Vec::with_capacity(self.head.len() + self.tail.len());
            whole.extend_from_slice(&self.head);
            whole.extend_from_slice(&self.tail);
            return Clipped::whole(text(&whole));
        }
        let head = trim_incomplete_end(&self.head);
        let tail = trim_incomplete_start(&self.tail);
        Clipped {
            head: text(head),
            omitted: omitted
                + u64::try_from(self.head.len() - head.len() + self.tail.len() - tail.len())
                    .unwrap_or(0),
            tail: text(tail),
        }
    }

    /// The raw output for an artifact: all of it, or, after a flood, head and tail around
    /// the truncation marker.
    pub(crate) fn to_bytes(&self) -> Vec<u8> {
        let omitted = self.omitted();
        let mut bytes = Vec::with_capacity(self.head.len() + self.tail.len() + 48);
        bytes.extend_from_slice(&self.head);
        if omitted > 0 {
            bytes.extend_from_slice(output::truncation_marker(omitted).as_bytes());
        }
        bytes.extend_from_slice(&self.tail);
        bytes
    }
}

fn text(bytes: &[u8]) -> String {
    output::normalize_newlines(&String::from_utf8_lossy(bytes)).into_owned()
}

/// `bytes` without a UTF-8 sequence cut off at its end.
fn trim_incomplete_end(bytes: &[u8]) -> &[u8] {
    match std::str::from_utf8(bytes) {
        Err(error) if error.error_len().is_none() => &bytes[..error.valid_up_to()],
        _ => bytes,
    }
}

/// `bytes` without the continuation bytes of a sequence whose start was cut off.
fn trim_incomplete_start(bytes: &[u8]) -> &[u8] {
    let skip = bytes
        .iter()
        .take(3)
        .take_while(|byte| (**byte & 0b1100_0000) == 0b1000_0000)
        .count();
    &bytes[skip..]
}

/// Keeps the first 80% of `cap` bytes and a ring of the last 20%.
#[derive(Debug)]
pub(crate) struct BoundedCapture {
    head: Vec<u8>,
    head_cap: usize,
    tail: VecDeque<u8>,
    tail_cap: usize,
    total: u64,
}

impl BoundedCapture {
    pub(crate) fn new(cap: usize) -> Self {
        let head_cap = output::head_share(cap);
        Self {
            head: Vec::new(),
            head_cap,
            tail: VecDeque::new(),
            tail_cap: cap - head_cap,
            total: 0,
        }
    }

    pub(crate) fn push(&mut self, mut bytes: &[u8]) {
        self.total = self
            .total
            .saturating_add(u64::try_from(bytes.len()).unwrap_or(u64::MAX));
        let room = self.head_cap - self.head.len();
        if room > 0 {
            let taken = room.min(bytes.len());
            self.head.extend_from_slice(&bytes[..taken]);
            bytes = &bytes[taken..];
        }
        if bytes.len() >= self.tail_cap {
            self.tail.clear();
            self.tail.extend(&bytes[bytes.len() - self.tail_cap..]);
            return;
        }
        let overflow = (self.tail.len() + bytes.len()).saturating_sub(self.tail_cap);
        self.tail.drain(..overflow);
        self.tail.extend(bytes);
    }

    pub(crate) fn finish(self) -> Captured {
        Captured {
            head: self.head,
            tail: self.tail.into(),
            total: self.total,
        }
    }
}

/// Reads `reader` to its end, or until `stop` is cancelled (a background process may hold
/// the pipe open long after the command is done), keeping at most `cap` bytes.
pub(crate) async fn read_bounded<R: AsyncRead + Unpin>(
    mut reader: R,
    cap: usize,
    stop: CancellationToken,
) -> Captured {
    let mut capture = BoundedCapture::new(cap);
    let mut buffer = vec![0u8; READ_CHUNK_BYTES];
    loop {
        tokio::select! {
            // Checked first: a stream that never pauses must still be stoppable.
            biased;
            () = stop.cancelled() => break,
            read = reader.read(&mut buffer) => match read {
                Ok(0) => break,
                Ok(n) => capture.push(&buffer[..n]),
                Err(error) if error.kind() == std::io::ErrorKind::Interrupted => {}
                Err(error) => {
                    tracing::debug!(%error, "reading command output failed");
                    break;
                }
            },
        }
    }
    capture.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn capture(cap: usize, chunks: &[&[u8]]) -> Captured {
        let mut capture = BoundedCapture::new(cap);
        for chunk in chunks {
            capture.push(chunk);
        }
        capture.finish()
    }

    #[test]
    fn small_output_is_kept_whole_even_across_the_head_tail_seam() {
        let captured = capture(10, &[b"abcdef", b"ghij"]);
        assert_eq!(captured.omitted(), 0);
        assert_eq!(captured.to_bytes(), b"abcdefghij");
        assert_eq!(captured.to_clipped(), Clipped::whole("abcdefghij"));
    }

    #[test]
    fn a_flood_keeps_exactly_head_and_tail_and_counts_the_rest() {
        let chunk = [b'x'; 1000];
        let mut capture = BoundedCapture::new(100);
        capture.push(b"HEAD");
        for _ in 0..10_000 {
            capture.push(&chunk);
        }
        capture.push(b"TAIL");
        let captured = capture.finish();
        assert_eq!(captured.total, 10_000_008);
        assert_eq!(captured.head.len(), 80);
        assert_eq!(captured.tail.len(), 20);
        assert!(captured.head.starts_with(b"HEAD"));
        assert!(captured.tail.ends_with(b"xxTAIL"));
        assert_eq!(captured.omitted(), 10_000_008 - 100);
        let bytes = captured.to_bytes();
        assert!(String::from_utf8_lossy(&bytes).contains("\n[... truncated 9999908 bytes ...]\n"));
        // Truncating the capture equals truncating the whole stream.
        let mut whole = b"HEAD".to_vec();
        whole.extend(std::iter::repeat_n(b'x', 10_000_000));
        whole.extend(b"TAIL");
        let whole = String::from_utf8(whole).unwrap();
        assert_eq!(
            captured.to_clipped().truncate(50),
            crate::output::truncate(&whole, 50)
        );
    }

    #[test]
    fn chunks_smaller_than_the_ring_slide_it() {
        let captured = capture(10, &[b"01234567", b"ab", b"cd", b"e"]);
        assert_eq!(captured.head, b"01234567");
        assert_eq!(captured.tail, b"de");
        assert_eq!(captured.omitted(), 3);
    }

    #[test]
    fn characters_cut_at_the_gap_are_dropped_not_mangled() {
        // Head cap 8: "aaaaaaa" + the first byte of "é"; tail cap 2: the last byte of "é" + "z".
        let captured = capture(10, &["aaaaaaaé".as_bytes(), &[b'-'; 20], "éz".as_bytes()]);
        let clipped = captured.to_clipped();
        assert_eq!(clipped.head, "aaaaaaa");
        assert_eq!(clipped.tail, "z");
        assert_eq!(clipped.len(), captured.total);
    }

    #[test]
    fn crlf_is_normalised_for_the_model_but_not_in_the_artifact() {
        let captured = capture(100, &[b"a\r\nb\r\n"]);
        assert_eq!(captured.to_clipped().head, "a\nb\n");
        assert_eq!(captured.to_bytes(), b"a\r\nb\r\n");
    }

    #[tokio::test]
    async fn reading_stops_at_eof_or_when_told() {
        let captured = read_bounded(&b"hello"[..], 100, CancellationToken::new()).await;
        assert_eq!(captured.to_bytes(), b"hello");
        let (_writer, reader) = tokio::io::duplex(16);
        let stop = CancellationToken::new();
        stop.cancel();
        // The writer stays open: only the stop ends the read (bounded, so a reader that
        // ignores it fails instead of hanging).
        let captured = tokio::time::timeout(
            std::time::Duration::from_secs(5),
            read_bounded(reader, 100, stop),
        )
        .await
        .expect("the reader ignored the stop");
        assert_eq!(captured.total, 0);
    }
}
