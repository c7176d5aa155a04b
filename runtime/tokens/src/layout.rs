//! The layout of the vocabulary table, shared by the build script that writes it and the
//! crate that reads it (the build script includes this file), so the two cannot drift.
//!
//! All integers are little-endian `u32`:
//!
//! ```text
//! header   MAGIC, token count N, table bits B, arena length A
//! offsets  N + 1 entries: token r is arena[offsets[r] .. offsets[r + 1]]
//! table    2^B slots, open addressing with linear probing from hash(bytes); a slot
//!          holds rank + 1 in its low RANK_BITS and a fingerprint of the hash above them,
//!          or 0 when empty
//! arena    the tokens' bytes, in rank order
//! ```

pub const MAGIC: [u8; 4] = *b"O2K2";
pub const HEADER_LEN: usize = 16;
/// 2^18 slots (1 MiB) for ~200 000 tokens. Most lookups of a byte-pair merge fail; the
/// fingerprint settles nearly all of them in the table itself, whose neighbouring slots
/// share a cache line, so a lookup touches the offsets and the arena only for a real
/// token. Resident memory is what this buys: with 2^19 slots and no fingerprint a long
/// session touched almost all of the 4 MB table, now mostly the 1 MiB of slots and the
/// (rank-ordered, so clustered) common tokens.
pub const TABLE_BITS: u32 = 18;
/// Rank + 1 fits in 18 bits (o200k_base has ~200 000 ordinary tokens).
pub const RANK_BITS: u32 = 18;
pub const RANK_MASK: u32 = (1 << RANK_BITS) - 1;

/// The slot's fingerprint of `hash`: its top bits, which do not choose the slot.
pub fn fingerprint(hash: u64) -> u32 {
    (hash >> (64 - (32 - RANK_BITS))) as u32
}

/// FNV-1a: short keys, no seed (the table is computed at build time), good spread.
pub fn hash(bytes: &[u8]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for &byte in bytes {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    hash
}
