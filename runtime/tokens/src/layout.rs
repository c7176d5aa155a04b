//! The layout of the vocabulary table, shared by the build script that writes it and the
//! crate that reads it (the build script includes this file), so the two cannot drift.
//!
//! All integers are little-endian `u32`:
//!
//! ```text
//! header   MAGIC, token count N, table bits B, arena length A
//! offsets  N + 1 entries: token r is arena[offsets[r] .. offsets[r + 1]]
//! table    2^B slots, open addressing with linear probing from hash(bytes); a slot
//!          holds rank + 1, or 0 when empty
//! arena    the tokens' bytes, in rank order
//! ```

pub const MAGIC: [u8; 4] = *b"O2K1";
pub const HEADER_LEN: usize = 16;
/// 2^19 slots for ~200 000 tokens: a load under 0.4 keeps failed lookups — most lookups of
/// a byte-pair merge fail — to about two probes.
pub const TABLE_BITS: u32 = 19;

/// FNV-1a: short keys, no seed (the table is computed at build time), good spread.
pub fn hash(bytes: &[u8]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for &byte in bytes {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    hash
}
