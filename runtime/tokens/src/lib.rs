//! Token counts in the `o200k_base` encoding (current OpenAI models), for budgeting and
//! context management (local-agent-host.md §5.3: a local count, approximate allowed — the
//! gateway's usage numbers are the truth where it sends any).
//!
//! Why not tiktoken-rs at run time: its tables are ~30 MB of hash maps built from base64
//! on load (hundreds of millions of instructions), which was most of the runtime's memory
//! and, on a two-core machine, most of the first task's per-step time. Here the vocabulary
//! is a table computed at build time (`build.rs`, layout in [`layout`]) and embedded as
//! read-only data: nothing is built at run time, and only the pages lookups touch are
//! resident. The pre-tokenizer is the encoding's own pattern and the merges are BPE's
//! (lowest rank first, leftmost on ties), so counts equal tiktoken-rs's (the tests compare
//! them). Pieces longer than [`LONG_PIECE`] bytes — a megabyte of `=` is one piece — are
//! merged with a heap instead of rescanning, so no input takes quadratic time.

mod layout;
mod pieces;

use std::sync::OnceLock;

/// Pieces longer than this many bytes are merged with a heap (see the crate doc); shorter
/// ones with a plain scan, which is faster for the few bytes of a typical piece.
pub const LONG_PIECE: usize = 256;

static TABLE: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/o200k_base.bin"));

/// The number of `o200k_base` tokens in `text` (ordinary text: special-token spellings
/// count as the text they are).
pub fn count(text: &str) -> usize {
    let Some(vocabulary) = Vocabulary::get() else {
        return text.len().div_ceil(4);
    };
    pieces::split(text)
        .map(|piece| vocabulary.count_piece(piece.as_bytes()))
        .sum()
}

/// Compiles the pre-tokenizer now (a few milliseconds), so that the first [`count`] does
/// not pay for it.
pub fn warm_up() {
    pieces::warm_up();
}

/// A view of the embedded table.
struct Vocabulary {
    mask: usize,
    table: &'static [u8],
    checks: &'static [u8],
}

const NO_RANK: u32 = u32::MAX;

impl Vocabulary {
    fn get() -> Option<&'static Vocabulary> {
        static VOCABULARY: OnceLock<Option<Vocabulary>> = OnceLock::new();
        VOCABULARY.get_or_init(|| Self::parse(TABLE)).as_ref()
    }

    fn parse(data: &'static [u8]) -> Option<Self> {
        let header = data.get(..layout::HEADER_LEN)?;
        if header.get(..4)? != layout::MAGIC {
            return None;
        }
        let tokens = read_u32(header, 1)? as usize;
        let bits = read_u32(header, 2)?;
        if bits != layout::TABLE_BITS {
            return None;
        }
        let slots = 1usize.checked_shl(bits)?;
        let rest = data.get(layout::HEADER_LEN..)?;
        let (table, checks) = rest.split_at_checked(4 * slots)?;
        (checks.len() == 4 * tokens).then_some(Self {
            mask: slots - 1,
            table,
            checks,
        })
    }

    /// Ordinary tokens: ranks `0..tokens()`.
    #[cfg(test)]
    fn tokens(&self) -> usize {
        self.checks.len() / 4
    }

    fn rank(&self, bytes: &[u8]) -> u32 {
        let hash = layout::hash(bytes);
        let fingerprint = layout::fingerprint(hash);
        let mut slot = hash as usize & self.mask;
        loop {
            match read_u32(self.table, slot) {
                None | Some(0) => return NO_RANK,
                Some(entry) => {
                    let rank = (entry & layout::RANK_MASK).wrapping_sub(1);
                    // Only a matching fingerprint is worth reading the rank's check.
                    if entry >> layout::RANK_BITS == fingerprint
                        && read_u32(self.checks, rank as usize) == Some(layout::check(hash))
                    {
                        return rank;
                    }
                }
            }
            slot = (slot + 1) & self.mask;
        }
    }

    fn count_piece(&self, piece: &[u8]) -> usize {
        if piece.is_empty() {
            return 0;
        }
        if self.rank(piece) != NO_RANK {
            return 1;
        }
        if piece.len() > LONG_PIECE {
            self.merge_long(piece)
        } else {
            self.merge(piece)
        }
    }

    /// [`Self::merge`] for long pieces, in O(n log n): the candidate merges wait in a heap
    /// ordered by (rank, start), and a candidate whose pair has changed since it was pushed
    /// is skipped when it comes out (a pair's bytes only ever grow, and a longer byte
    /// string has another rank, so a stale candidate never looks current).
    fn merge_long(&self, piece: &[u8]) -> usize {
        use std::cmp::Reverse;
        let len = piece.len();
        // Parts are identified by their start; `end[s]` is where part `s` ends,
        // `prev[s]` the start of the part before it, `pair[s]` the rank of part `s`
        // joined with the next part.
        let mut end: Vec<usize> = (1..=len).collect();
        let mut prev: Vec<usize> = (0..len).map(|start| start.wrapping_sub(1)).collect();
        let mut pair = vec![NO_RANK; len];
        let mut heap = std::collections::BinaryHeap::with_capacity(len);
        for start in 0..len - 1 {
            pair[start] = self.rank(&piece[start..start + 2]);
            if pair[start] != NO_RANK {
                heap.push(Reverse((pair[start], start)));
            }
        }
        let mut parts = len;
        while let Some(Reverse((rank, start))) = heap.pop() {
            if pair[start] != rank {
                continue;
            }
            let right = end[start];
            let right_end = end[right];
            end[start] = right_end;
            pair[right] = NO_RANK;
            parts -= 1;
            pair[start] = match end.get(right_end) {
                Some(&next_end) => {
                    prev[right_end] = start;
                    self.rank(&piece[start..next_end])
                }
                None => NO_RANK,
            };
            if pair[start] != NO_RANK {
                heap.push(Reverse((pair[start], start)));
            }
            if start > 0 {
                let before = prev[start];
                pair[before] = self.rank(&piece[before..right_end]);
                if pair[before] != NO_RANK {
                    heap.push(Reverse((pair[before], before)));
                }
            }
        }
        parts
    }

    /// tiktoken's byte-pair merge: repeatedly join the adjacent pair whose joined bytes
    /// have the lowest rank (the first such pair on ties) until no pair is a token; the
    /// parts left are the tokens. `parts[i] = (start, rank of parts i and i+1 joined)`.
    fn merge(&self, piece: &[u8]) -> usize {
        let mut parts: Vec<(usize, u32)> = Vec::with_capacity(piece.len() + 1);
        for start in 0..piece.len() - 1 {
            parts.push((start, self.rank(&piece[start..start + 2])));
        }
        parts.push((piece.len() - 1, NO_RANK));
        parts.push((piece.len(), NO_RANK));
        let joined = |parts: &[(usize, u32)], i: usize| match (parts.get(i), parts.get(i + 3)) {
            (Some(&(start, _)), Some(&(end, _))) => self.rank(&piece[start..end]),
            _ => NO_RANK,
        };
        loop {
            let mut lowest = (NO_RANK, 0);
            for (i, &(_, rank)) in parts[..parts.len() - 1].iter().enumerate() {
                if rank < lowest.0 {
                    lowest = (rank, i);
                }
            }
            if lowest.0 == NO_RANK {
                break;
            }
            let i = lowest.1;
            if i > 0 {
                parts[i - 1].1 = joined(&parts, i - 1);
            }
            parts[i].1 = joined(&parts, i);
            parts.remove(i + 1);
        }
        parts.len() - 1
    }
}

fn read_u32(data: &[u8], index: usize) -> Option<u32> {
    let bytes = data.get(4 * index..4 * index + 4)?;
    Some(u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]))
}

#[cfg(test)]
mod tests;
