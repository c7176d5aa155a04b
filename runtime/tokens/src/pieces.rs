//! The o200k_base pre-tokenizer: the text is cut into pieces by the encoding's pattern
//! and each piece is merged on its own.
//!
//! The pattern's `\s+(?!\S)` needs a look-ahead the `regex` crate does not have. It is the
//! second-to-last alternative, before a plain `\s+`, so it is emulated: a whitespace-only
//! match of the plain `\s+` that is followed by a non-space character gives back its last
//! character (which then starts the next piece, as in tiktoken: `"  word"` is `" "`,
//! `" word"`). Whitespace containing a line break is matched earlier by `\s*[\r\n]+`.

use std::sync::{Mutex, MutexGuard, OnceLock, TryLockError};

use regex_automata::hybrid::dfa::{Cache, DFA};
use regex_automata::nfa::thompson::{self, NFA, WhichCaptures};
use regex_automata::{Anchored, Input};

const PATTERN: &str = concat!(
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
    r"|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
    r"|\p{N}{1,3}",
    r"| ?[^\s\p{L}\p{N}]+[\r\n/]*",
    r"|\s*[\r\n]+",
    r"|\s+",
);

/// The pattern as a lazy DFA over a forward NFA without captures. Each piece begins
/// where the last ended, so a search is anchored and only its end is wanted: the `meta`
/// regex's reverse NFA, capture engines and their caches (about 0.8 MB, resident for
/// the life of the process) were never used.
struct Pretokenizer {
    dfa: DFA,
    cache: Mutex<Cache>,
}

fn pretokenizer() -> Option<&'static Pretokenizer> {
    static PRETOKENIZER: OnceLock<Option<Pretokenizer>> = OnceLock::new();
    PRETOKENIZER
        .get_or_init(|| {
            let nfa = NFA::compiler()
                .configure(thompson::Config::new().which_captures(WhichCaptures::None))
                .build(PATTERN)
                .ok()?;
            let dfa = DFA::builder().build_from_nfa(nfa).ok()?;
            let cache = Mutex::new(dfa.create_cache());
            Some(Pretokenizer { dfa, cache })
        })
        .as_ref()
}

pub(crate) fn warm_up() {
    let _ = pretokenizer();
}

/// The pieces of `text`, in order. Without the pattern (it always compiles; this is only
/// the no-panic path) the whole text is one piece. The shared search cache is held until
/// the pieces are dropped; while it is taken (a count on another thread), a fresh cache
/// is used, so no count ever waits for another.
pub(crate) fn split(text: &str) -> Pieces<'_> {
    Pieces {
        text,
        at: 0,
        searcher: pretokenizer().map(|pretokenizer| {
            let cache = match pretokenizer.cache.try_lock() {
                Ok(cache) => SearchCache::Shared(cache),
                Err(TryLockError::Poisoned(poisoned)) => {
                    // A panic may have left the cache mid-search: start it afresh.
                    let mut cache = poisoned.into_inner();
                    cache.reset(&pretokenizer.dfa);
                    SearchCache::Shared(cache)
                }
                Err(TryLockError::WouldBlock) => {
                    SearchCache::Own(Box::new(pretokenizer.dfa.create_cache()))
                }
            };
            (&pretokenizer.dfa, cache)
        }),
    }
}

enum SearchCache {
    Shared(MutexGuard<'static, Cache>),
    Own(Box<Cache>),
}

impl SearchCache {
    fn get(&mut self) -> &mut Cache {
        match self {
            Self::Shared(cache) => cache,
            Self::Own(cache) => cache,
        }
    }
}

pub(crate) struct Pieces<'t> {
    text: &'t str,
    at: usize,
    searcher: Option<(&'static DFA, SearchCache)>,
}

impl<'t> Iterator for Pieces<'t> {
    type Item = &'t str;

    fn next(&mut self) -> Option<&'t str> {
        if self.at >= self.text.len() {
            return None;
        }
        let Some((dfa, cache)) = &mut self.searcher else {
            self.at = self.text.len();
            return Some(self.text);
        };
        // Every character starts some alternative, so each piece begins where the last
        // ended: an anchored search, which needs no reverse pass to find where it began.
        let start = self.at;
        let input = Input::new(self.text)
            .span(start..self.text.len())
            .anchored(Anchored::Yes);
        let Some(found) = dfa.try_search_fwd(cache.get(), &input).ok().flatten() else {
            // Cannot happen (see above; and the lazy DFA never gives up without a
            // minimum clear count); if it did, the character is a piece of its own
            // rather than the end of the count.
            let width = self.text[self.at..]
                .chars()
                .next()
                .map_or(1, char::len_utf8);
            let piece = &self.text[self.at..self.at + width];
            self.at += width;
            return Some(piece);
        };
        let mut end = found.offset();
        let piece = &self.text[start..end];
        let followed_by_text = self.text[end..]
            .chars()
            .next()
            .is_some_and(|next| !next.is_whitespace());
        if followed_by_text
            && piece.chars().all(char::is_whitespace)
            && !piece.ends_with(['\r', '\n'])
            && let Some((last, _)) = piece.char_indices().last().filter(|(last, _)| *last > 0)
        {
            end = start + last;
        }
        self.at = end;
        Some(&self.text[start..end])
    }
}
