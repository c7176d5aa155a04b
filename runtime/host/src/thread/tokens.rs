//! Token counting in `o200k_base`, the encoding of current OpenAI models, by the
//! `agent-tokens` crate (a compact static table; counts equal tiktoken's). Counts are
//! estimates for budgeting and context management; the gateway's usage numbers replace
//! them where it sends any.
//!
//! The pre-tokenizer compiles on the first count (a few milliseconds, once per process):
//! compiling it when a session is created kept about a megabyte resident in sessions that
//! never ran a task.

use std::sync::Mutex;

/// Tokens of `text`, plus the few tokens of per-message framing the chat format adds.
pub(crate) fn count(text: &str) -> u64 {
    const MESSAGE_OVERHEAD: u64 = 4;
    agent_tokens::count(text) as u64 + MESSAGE_OVERHEAD
}

/// [`count`] for texts sent again and again unchanged — the system prompt and the tool
/// definitions of every request. Encoding them each step cost more than the rest of the
/// step's bookkeeping; the last few texts and their counts are kept.
pub(crate) fn count_repeated(text: &str) -> u64 {
    const KEPT: usize = 4;
    static RECENT: Mutex<Vec<(String, u64)>> = Mutex::new(Vec::new());
    let lock = || match RECENT.lock() {
        Ok(recent) => recent,
        Err(poisoned) => poisoned.into_inner(),
    };
    if let Some((_, tokens)) = lock().iter().find(|(known, _)| known == text) {
        return *tokens;
    }
    let tokens = count(text);
    let mut recent = lock();
    if recent.len() >= KEPT {
        recent.remove(0);
    }
    recent.push((text.to_owned(), tokens));
    tokens
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_grow_with_text_and_include_framing() {
        assert_eq!(count(""), 4);
        let short = count("hello world");
        let long = count(&"hello world ".repeat(100));
        assert!((5..=8).contains(&short), "{short}");
        assert!(long > 150 && long < 400, "{long}");
    }

    #[test]
    fn repeated_counts_equal_fresh_counts() {
        for text in ["system prompt", "tools", "system prompt", "other", "tools"] {
            assert_eq!(count_repeated(text), count(text));
        }
        let long = "lorem ipsum ".repeat(50);
        assert_eq!(count_repeated(&long), count(&long));
        assert_eq!(count_repeated(&long), count(&long));
    }
}
