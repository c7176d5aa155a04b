//! Counts are held equal to tiktoken-rs's on samples covering every alternative of the
//! pre-tokenizer pattern, and the embedded table is checked rank by rank.

use super::*;

/// Texts that exercise every alternative of the pattern: contractions in both cases,
/// digit runs, punctuation runs with trailing newlines and slashes, whitespace runs before
/// words / line breaks / the end, CJK, combining marks, emoji, code.
const SAMPLES: &[&str] = &[
    "",
    "hello world",
    "Hello, WORLD! It's the user's file; they'LL SEE it'D work.",
    "  leading spaces and trailing   ",
    "tabs\tand\t\tmore\ttabs",
    "line one\nline two\r\n\r\nline three\n\n\n   indented\n",
    "numbers 1 12 123 1234 12345 3.14159 1,000,000",
    "fn main() {\n    let x: Vec<u8> = vec![1, 2, 3];\n    println!(\"{x:?}\");\n}\n",
    "path/to/file.rs:42:7 -> src//lib.rs ///doc",
    "日本語のテキストと中文文本，还有한국어。",
    "Ünïcödé çømbíning: e\u{301}le\u{300}ve, naïve café",
    "emoji 🎉🚀 and flags 🇫🇷 plus zwj 👩‍💻",
    "    \n\t  \u{a0}non-breaking\u{2003}em space",
    "'s 't 're 've 'm 'll 'd 'S 'T 'RE",
    "==========================================",
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"StartTask\",\"params\":{\"prompt\":\"fix it\"}}",
    "a\u{0}b\u{7}c control characters",
    "CamelCaseWords and snake_case_words and SCREAMING_CASE",
];

fn reference() -> &'static tiktoken_rs::CoreBPE {
    static BPE: OnceLock<tiktoken_rs::CoreBPE> = OnceLock::new();
    BPE.get_or_init(|| match tiktoken_rs::o200k_base() {
        Ok(bpe) => bpe,
        Err(error) => panic!("tiktoken-rs: {error}"),
    })
}

#[test]
fn counts_equal_tiktoken_on_every_sample() {
    for sample in SAMPLES {
        let expected = reference().encode_ordinary(sample).len();
        assert_eq!(count(sample), expected, "{sample:?}");
    }
}

#[test]
fn counts_equal_tiktoken_on_this_crates_sources_and_mixed_text() {
    let mut text = String::new();
    for sample in SAMPLES {
        text.push_str(sample);
        text.push(' ');
    }
    text.push_str(include_str!("lib.rs"));
    text.push_str(include_str!("pieces.rs"));
    text.push_str(include_str!("../build.rs"));
    assert_eq!(count(&text), reference().encode_ordinary(&text).len());
    // Cut anywhere (at char boundaries): pieces shift, counts must still agree.
    for (cut, _) in text.char_indices().step_by(97) {
        let part = &text[cut..];
        assert_eq!(
            count(part),
            reference().encode_ordinary(part).len(),
            "from {cut}"
        );
    }
}

#[test]
fn pieces_follow_the_look_ahead_rule() {
    let pieces: Vec<&str> = pieces::split("a  b   \n  c  ").collect();
    assert_eq!(pieces, ["a", " ", " b", "   \n", " ", " c", "  "]);
}

#[test]
fn every_token_of_the_table_is_found_at_its_rank_and_nothing_else_is() {
    let vocabulary = Vocabulary::get().unwrap();
    assert!(vocabulary.tokens() > 199_000);
    let mut ranks = std::collections::HashMap::new();
    for rank in 0..vocabulary.tokens() as u32 {
        let bytes = reference().decode_bytes(&[rank]).unwrap();
        assert_eq!(vocabulary.rank(&bytes), rank, "{bytes:?}");
        ranks.insert(bytes, rank);
    }
    assert!(
        reference()
            .decode_bytes(&[vocabulary.tokens() as u32])
            .is_err()
    );
    // Every short byte string of the samples and sources, token or not.
    let text = SAMPLES.concat() + include_str!("lib.rs") + include_str!("pieces.rs");
    let bytes = text.as_bytes();
    for len in 1..=8 {
        for window in bytes.windows(len) {
            let expected = ranks.get(window).copied().unwrap_or(NO_RANK);
            assert_eq!(vocabulary.rank(window), expected, "{window:?}");
        }
    }
}

#[test]
fn long_pieces_count_as_tiktoken_counts_them() {
    let mut samples = vec![
        "=".repeat(40 * LONG_PIECE),
        "-=".repeat(3 * LONG_PIECE),
        " ".repeat(5 * LONG_PIECE) + "x",
        "Supercalifragilistic".repeat(LONG_PIECE / 4),
        "\u{1F600}".repeat(LONG_PIECE),
        "😀".repeat(LONG_PIECE),
        "a".repeat(LONG_PIECE + 1),
    ];
    samples.push(samples.concat());
    for sample in &samples {
        assert_eq!(
            count(sample),
            reference().encode_ordinary(sample).len(),
            "{}…",
            &sample[..40]
        );
    }
}

#[test]
fn both_merges_agree_on_every_piece() {
    let vocabulary = Vocabulary::get().unwrap();
    let text = SAMPLES.concat() + include_str!("lib.rs");
    for piece in pieces::split(&text).filter(|piece| piece.len() > 1) {
        let bytes = piece.as_bytes();
        assert_eq!(
            vocabulary.merge(bytes),
            vocabulary.merge_long(bytes),
            "{piece:?}"
        );
    }
    for bytes in [
        &b"aaaaaaaaaaaaaaaaa"[..],
        b"abababababababab",
        b"=-=-=-=-==--==--",
    ] {
        assert_eq!(vocabulary.merge(bytes), vocabulary.merge_long(bytes));
    }
}

#[test]
fn a_damaged_table_is_refused() {
    assert!(Vocabulary::parse(b"not a table at all").is_none());
    assert!(Vocabulary::parse(&TABLE[..TABLE.len() - 1]).is_none());
}
