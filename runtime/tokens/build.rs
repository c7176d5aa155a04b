//! Writes the o200k_base vocabulary as one static table (layout in `src/layout.rs`) that
//! the crate embeds. tiktoken-rs is the source of the vocabulary; its in-memory form (hash
//! maps of owned byte vectors, built from base64 at run time) costs ~30 MB and a noticeable
//! load, this one 1.8 MB of read-only data and no load at all.

// A build script talks to Cargo through stdout.
#![allow(clippy::print_stdout)]

#[path = "src/layout.rs"]
mod layout;

use std::io::Write;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=src/layout.rs");
    let bpe = match tiktoken_rs::o200k_base() {
        Ok(bpe) => bpe,
        Err(error) => panic!("cannot load o200k_base from tiktoken-rs: {error}"),
    };
    // Ordinary tokens have the dense ranks 0..N; the special tokens come after a gap.
    let mut tokens: Vec<Vec<u8>> = Vec::new();
    while let Ok(bytes) = bpe.decode_bytes(&[tokens.len() as u32]) {
        tokens.push(bytes);
    }
    assert!(
        tokens.len() > 100_000,
        "o200k_base has {} tokens?",
        tokens.len()
    );

    let slots = 1usize << layout::TABLE_BITS;
    assert!(tokens.len() * 5 < slots * 4, "the table would be too full");
    assert!(
        tokens.len() < layout::RANK_MASK as usize,
        "ranks must fit in RANK_BITS"
    );
    let mut table = vec![0u32; slots];
    let mut checks = Vec::with_capacity(tokens.len());
    for (rank, bytes) in tokens.iter().enumerate() {
        let hash = layout::hash(bytes);
        checks.push(layout::check(hash));
        let mut slot = hash as usize & (slots - 1);
        while table[slot] != 0 {
            slot = (slot + 1) & (slots - 1);
        }
        table[slot] = (layout::fingerprint(hash) << layout::RANK_BITS) | (rank as u32 + 1);
    }
    // Without the bytes, a token is told from another by its hash alone: each one must
    // be found at its own rank, by the reader's own probe.
    for (rank, bytes) in tokens.iter().enumerate() {
        let hash = layout::hash(bytes);
        let mut slot = hash as usize & (slots - 1);
        let found = loop {
            let entry = table[slot];
            let candidate = (entry & layout::RANK_MASK).wrapping_sub(1) as usize;
            if entry >> layout::RANK_BITS == layout::fingerprint(hash)
                && checks[candidate] == layout::check(hash)
            {
                break candidate;
            }
            slot = (slot + 1) & (slots - 1);
        };
        assert_eq!(found, rank, "token {rank} is shadowed by token {found}");
    }

    let mut out = Vec::with_capacity(layout::HEADER_LEN + 4 * (slots + checks.len()));
    out.extend_from_slice(&layout::MAGIC);
    for value in [tokens.len() as u32, layout::TABLE_BITS, 0] {
        out.extend_from_slice(&value.to_le_bytes());
    }
    for value in table.iter().chain(checks.iter()) {
        out.extend_from_slice(&value.to_le_bytes());
    }

    let dir = std::env::var_os("OUT_DIR").unwrap_or_default();
    let path = std::path::Path::new(&dir).join("o200k_base.bin");
    let written = std::fs::File::create(&path).and_then(|mut file| file.write_all(&out));
    if let Err(error) = written {
        panic!("cannot write {}: {error}", path.display());
    }
}
