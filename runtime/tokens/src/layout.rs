//! The layout of the vocabulary table, shared by the build script that writes it and the
//! crate that reads it (the build script includes this file), so the two cannot drift.
//!
//! All integers are little-endian `u32`:
//!
//! ```text
//! header   MAGIC, token count N, table bits B, 0
//! table    2^B slots, open addressing with linear probing from hash(bytes); a slot
//!          holds rank + 1 in its low RANK_BITS and a fingerprint of the hash above them,
//!          or 0 when empty
//! checks   N entries: check(hash(bytes of token r)) at index r
//! ```
//!
//! The tokens' bytes are not in the table. A lookup matches when the slot's fingerprint
//! and the rank's check both equal the looked-up bytes' (46 bits of the hash; the slot
//! bits are not compared, since linear probing passes entries from other home slots).
//! The build script asserts that every token is found at its own rank, so no token is
//! mistaken for another; a byte string that is no token passes only by a 46-bit
//! coincidence, about once in 10^13 lookups, and then miscounts one token of an estimate. Dropping the bytes (and their
//! offsets) halved the table: its pages are what counting keeps resident, and the kernel
//! maps file pages in 64 KiB windows around each fault, so nearly the whole table is
//! resident after the first few counts.

pub(crate) const MAGIC: [u8; 4] = *b"O2K3";
pub(crate) const HEADER_LEN: usize = 16;
/// 2^18 slots (1 MiB) for ~200 000 tokens. Most lookups of a byte-pair merge fail; the
/// fingerprint settles nearly all of them in the table itself, and the checks (in rank
/// order, so the common tokens cluster) are read only for a real token.
pub(crate) const TABLE_BITS: u32 = 18;
/// Rank + 1 fits in 18 bits (o200k_base has ~200 000 ordinary tokens).
pub(crate) const RANK_BITS: u32 = 18;
pub(crate) const RANK_MASK: u32 = (1 << RANK_BITS) - 1;

/// The slot's fingerprint of `hash`: its top bits, which do not choose the slot.
pub(crate) fn fingerprint(hash: u64) -> u32 {
    (hash >> (64 - (32 - RANK_BITS))) as u32
}

/// The rank's check of `hash`: the 32 bits between the slot's and the fingerprint's.
pub(crate) fn check(hash: u64) -> u32 {
    (hash >> TABLE_BITS) as u32
}

/// FNV-1a: short keys, no seed (the table is computed at build time), good spread.
pub(crate) fn hash(bytes: &[u8]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for &byte in bytes {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    hash
}
