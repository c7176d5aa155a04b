//! Output formatting shared by the tools (local-tool-runtime.md §7): head-and-tail truncation
//! of what the model reads, and artifacts for what is too large for the thread.

use agent_protocol::tool::ArtifactData;
use base64::Engine as _;

/// `maxOutputBytes` when the policy scope sets none (§4.4: "default 100KB").
pub(crate) const DEFAULT_MAX_OUTPUT_BYTES: usize = 100 * 1024;

/// Output larger than this is also kept whole as an artifact (§7.2: "> 10KB").
pub(crate) const ARTIFACT_THRESHOLD_BYTES: usize = 10 * 1024;

/// Share of the budget kept from the start of a truncated text (§7.1); the rest is the tail.
const HEAD_PERCENT: usize = 80;

/// The head's share of `max_bytes`: 80%, rounded down, without overflow for any size.
pub(crate) fn head_share(max_bytes: usize) -> usize {
    max_bytes / 100 * HEAD_PERCENT + max_bytes % 100 * HEAD_PERCENT / 100
}

/// Longest token a cut moves around: secrets are shorter; a longer run (a blob, a minified
/// line) is cut where the budget says.
const MAX_TOKEN_BYTES: usize = 128;

/// Bytes of the tokens secrets are made of (base64, hex, URL-safe keys).
fn token_byte(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || matches!(byte, b'+' | b'/' | b'_' | b'-' | b'=')
}

/// Where a cut at `at` lies when it must not split a token: a secret cut in two matches no
/// redaction rule, yet its halves are usable. The head's end moves back to the start of the
/// token it would split, the tail's start forward past its end. `before`/`after` say whether
/// bytes already left out continue `text` there (a bounded capture): a token running into
/// them has an unknown length and is left as the budget cuts it, as for a long run. Token
/// bytes are ASCII, so the result is a character boundary when `at` is.
fn token_boundary(text: &str, at: usize, before: bool, after: bool, is_head: bool) -> usize {
    let bytes = text.as_bytes();
    let left = bytes[..at]
        .iter()
        .rev()
        .take_while(|b| token_byte(**b))
        .count();
    let right = bytes[at..].iter().take_while(|b| token_byte(**b)).count();
    let unknown = (left == at && before) || (at + right == bytes.len() && after);
    if left == 0 || right == 0 || unknown || left + right > MAX_TOKEN_BYTES {
        return at;
    }
    if is_head { at - left } else { at + right }
}

/// The marker that stands for the bytes removed from the middle (§7.1).
pub(crate) fn truncation_marker(omitted: u64) -> String {
    format!("\n[... truncated {omitted} bytes ...]\n")
}

/// The effective `maxOutputBytes` of a request: the policy's value, else the default.
pub(crate) fn max_output_bytes(limit: Option<u64>) -> usize {
    limit.map_or(DEFAULT_MAX_OUTPUT_BYTES, |limit| {
        usize::try_from(limit).unwrap_or(usize::MAX)
    })
}

/// Text of which a middle part may already be gone: `head`, then `omitted` bytes that were
/// never kept (a bounded capture of a flood), then `tail`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct Clipped {
    pub head: String,
    pub omitted: u64,
    pub tail: String,
}

impl Clipped {
    pub(crate) fn whole(text: impl Into<String>) -> Self {
        Self {
            head: text.into(),
            omitted: 0,
            tail: String::new(),
        }
    }

    /// The length of the original text in bytes.
    pub(crate) fn len(&self) -> u64 {
        len_u64(&self.head) + self.omitted + len_u64(&self.tail)
    }

    /// The text cut to `max_bytes` per §7.1: the first 80% of the budget, the marker with the
    /// number of bytes left out, the last 20%. Cuts fall on character boundaries, never
    /// inside a UTF-8 sequence, so a kept part may be a few bytes short of its share.
    pub(crate) fn truncate(&self, max_bytes: usize) -> String {
        if self.omitted == 0 {
            let mut text = String::with_capacity(self.head.len() + self.tail.len());
            text.push_str(&self.head);
            text.push_str(&self.tail);
            return truncate(&text, max_bytes).into_owned();
        }
        let head_budget = head_share(max_bytes);
        let tail_budget = max_bytes - head_budget;
        let head_end = floor_char_boundary(&self.head, head_budget);
        let head_end = token_boundary(&self.head, head_end, false, true, true);
        let tail_start =
            ceil_char_boundary(&self.tail, self.tail.len().saturating_sub(tail_budget));
        let tail_start = token_boundary(&self.tail, tail_start, true, false, false);
        let omitted =
            len_u64(&self.head[head_end..]) + self.omitted + len_u64(&self.tail[..tail_start]);
        let mut out = String::with_capacity(max_bytes + 64);
        out.push_str(&self.head[..head_end]);
        out.push_str(&truncation_marker(omitted));
        out.push_str(&self.tail[tail_start..]);
        out
    }
}

/// `text` unchanged when it fits in `max_bytes`; otherwise its head (80% of the budget), the
/// marker, and its tail (20%), per §7.1.
pub(crate) fn truncate(text: &str, max_bytes: usize) -> std::borrow::Cow<'_, str> {
    if text.len() <= max_bytes {
        return text.into();
    }
    let head_budget = head_share(max_bytes);
    let tail_budget = max_bytes - head_budget;
    let head_end = floor_char_boundary(text, head_budget);
    let head_end = token_boundary(text, head_end, false, false, true);
    let tail_start = ceil_char_boundary(text, text.len() - tail_budget).max(head_end);
    let tail_start = token_boundary(text, tail_start, false, false, false);
    let omitted = len_u64(&text[head_end..tail_start]);
    let mut out = String::with_capacity(max_bytes + 64);
    out.push_str(&text[..head_end]);
    out.push_str(&truncation_marker(omitted));
    out.push_str(&text[tail_start..]);
    out.into()
}

/// Splits `budget` between two texts of lengths `first` and `second` that together exceed
/// it: each gets up to half, and what one does not need goes to the other — so short stderr
/// is never cut because stdout is long, and neither drowns the other.
pub(crate) fn split_budget(first: u64, second: u64, budget: usize) -> (usize, usize) {
    let as_usize = |n: u64| usize::try_from(n).unwrap_or(usize::MAX);
    let (first, second) = (as_usize(first), as_usize(second));
    if first.saturating_add(second) <= budget {
        return (first, second);
    }
    let half = budget / 2;
    if first <= half {
        (first, budget - first)
    } else if second <= half {
        (budget - second, second)
    } else {
        (half, budget - half)
    }
}

/// `\r\n` becomes `\n` (§6.2: Windows line endings are normalised in output). A lone `\r`
/// (progress bars) is kept.
pub(crate) fn normalize_newlines(text: &str) -> std::borrow::Cow<'_, str> {
    if text.contains("\r\n") {
        text.replace("\r\n", "\n").into()
    } else {
        text.into()
    }
}

/// An artifact for the host to upload (§7.2); `content` is base64-encoded here.
pub(crate) fn artifact(
    artifact_type: &str,
    artifact_name: impl Into<String>,
    content_type: &str,
    content: &[u8],
) -> ArtifactData {
    ArtifactData {
        artifact_type: artifact_type.to_owned(),
        artifact_name: artifact_name.into(),
        content_type: content_type.to_owned(),
        content_base64: base64::engine::general_purpose::STANDARD.encode(content),
    }
}

/// The full output of a command (§4.4, §7.2).
pub(crate) fn tool_output_artifact(
    artifact_name: impl Into<String>,
    content: &[u8],
) -> ArtifactData {
    artifact("tool_output", artifact_name, "text/plain", content)
}

/// The unified diff of a file change (§4.2).
pub(crate) fn file_diff_artifact(artifact_name: impl Into<String>, diff: &str) -> ArtifactData {
    artifact("file_diff", artifact_name, "text/x-diff", diff.as_bytes())
}

fn len_u64(text: &str) -> u64 {
    u64::try_from(text.len()).unwrap_or(u64::MAX)
}

/// The largest character boundary of `text` at or below `index`.
pub(crate) fn floor_char_boundary(text: &str, index: usize) -> usize {
    let mut index = index.min(text.len());
    while !text.is_char_boundary(index) {
        index -= 1;
    }
    index
}

/// The smallest character boundary of `text` at or above `index`.
pub(crate) fn ceil_char_boundary(text: &str, index: usize) -> usize {
    let mut index = index.min(text.len());
    while !text.is_char_boundary(index) {
        index += 1;
    }
    index
}

/// A tool's timeout: the seconds the call asked for (or the tool's default), lowered to the
/// host's `limits.timeoutMs` when that is shorter — the host's budget is a limit, not a
/// suggestion.
pub(crate) fn effective_timeout(
    asked_seconds: Option<u64>,
    default_seconds: u64,
    limit_ms: Option<u64>,
) -> std::time::Duration {
    let asked = std::time::Duration::from_secs(asked_seconds.unwrap_or(default_seconds));
    limit_ms.map_or(asked, |limit| {
        asked.min(std::time::Duration::from_millis(limit))
    })
}

/// `300`, or `0.25` for a duration below a whole second, for messages people read.
pub(crate) fn format_seconds(duration: std::time::Duration) -> String {
    if duration.subsec_nanos() == 0 {
        duration.as_secs().to_string()
    } else {
        let text = format!("{:.3}", duration.as_secs_f64());
        text.trim_end_matches('0').trim_end_matches('.').to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_text_is_untouched() {
        assert_eq!(truncate("hello", 5), "hello");
        assert_eq!(Clipped::whole("hello").truncate(5), "hello");
        assert_eq!(truncate("", 0), "");
    }

    #[test]
    fn long_text_keeps_80_percent_head_and_20_percent_tail_around_the_marker() {
        let text: String = (0..200)
            .map(|i| char::from(b'a' + (i % 26) as u8))
            .collect();
        let cut = truncate(&text, 100);
        let expected = format!(
            "{}\n[... truncated 100 bytes ...]\n{}",
            &text[..80],
            &text[180..]
        );
        assert_eq!(cut, expected);
        assert_eq!(Clipped::whole(text.clone()).truncate(100), expected);
        // Odd budgets: the head share is rounded down, the tail gets the rest.
        let cut = truncate(&text, 7);
        assert_eq!(
            cut,
            format!("{}{}{}", &text[..5], truncation_marker(193), &text[198..])
        );
    }

    /// A key cut in two would leave usable halves no redaction rule recognises: cuts move
    /// to the token's edges, unless the run is too long to be a secret.
    #[test]
    fn cuts_never_split_a_token() {
        let key = "sk_live_qWERtyuIoPAsdFghJKLzxcVBNmqwERtyUIop";
        let text = format!("{} {key} {}", "word ".repeat(20), "more ".repeat(20));
        let cut = truncate(&text, 150);
        assert!(!cut.contains("sk_live"), "{cut}");
        assert!(!cut.contains("Nmqw"), "{cut}");
        assert!(cut.contains("[... truncated "), "{cut}");
        let clipped = Clipped {
            head: format!("{}{key} and more words", "a ".repeat(30)),
            omitted: 10,
            tail: format!("w {key} {}", "b ".repeat(3)),
        };
        let cut = clipped.truncate(100);
        assert!(!cut.contains("sk_") && !cut.contains("Iop"), "{cut}");
        // A blob longer than any secret is cut where the budget says.
        let blob = "x".repeat(2000);
        assert_eq!(
            truncate(&blob, 100).len(),
            100 + truncation_marker(1900).len()
        );
    }

    #[test]
    fn cuts_never_split_a_character() {
        let text = "é".repeat(100); // 200 bytes, 2 per character
        let cut = truncate(&text, 101); // head 80 bytes, tail 21 → 20
        assert_eq!(
            cut,
            format!(
                "{}{}{}",
                "é".repeat(40),
                truncation_marker(100),
                "é".repeat(10)
            )
        );
        let cut = truncate(&text, 11); // head 8, tail 3 → 2
        assert!(cut.starts_with(&"é".repeat(4)));
        assert!(cut.ends_with(&format!("]\n{}", "é")));
        assert!(cut.contains("truncated 190 bytes"), "{cut}");
    }

    #[test]
    fn clipped_text_counts_the_bytes_it_never_kept() {
        let clipped = Clipped {
            head: "a".repeat(1000),
            omitted: 5000,
            tail: "z".repeat(1000),
        };
        assert_eq!(clipped.len(), 7000);
        let cut = clipped.truncate(100);
        assert_eq!(
            cut,
            format!(
                "{}{}{}",
                "a".repeat(80),
                truncation_marker(6900),
                "z".repeat(20)
            )
        );
        // A head or tail shorter than its share is kept whole.
        let short = Clipped {
            head: "ab".into(),
            omitted: 10,
            tail: "yz".into(),
        };
        assert_eq!(
            short.truncate(100),
            format!("ab{}yz", truncation_marker(10))
        );
    }

    #[test]
    fn the_budget_is_shared_so_a_short_stream_survives_a_long_one() {
        assert_eq!(split_budget(10, 20, 100), (10, 20));
        assert_eq!(split_budget(1000, 20, 100), (80, 20));
        assert_eq!(split_budget(20, 1000, 100), (20, 80));
        assert_eq!(split_budget(1000, 1000, 101), (50, 51));
        assert_eq!(split_budget(u64::MAX, 0, 100), (100, 0));
    }

    #[test]
    fn crlf_becomes_lf_and_lone_cr_stays() {
        assert_eq!(normalize_newlines("a\r\nb\rc\n"), "a\nb\rc\n");
    }

    #[test]
    fn artifacts_are_base64_with_the_spec_types() {
        let output = tool_output_artifact("stdout.txt", b"pytest output");
        assert_eq!(output.artifact_type, "tool_output");
        assert_eq!(output.content_type, "text/plain");
        assert_eq!(output.content_base64, "cHl0ZXN0IG91dHB1dA==");
        let diff = file_diff_artifact("a.txt.diff", "@@ -1 +1 @@\n");
        assert_eq!(diff.artifact_type, "file_diff");
        assert_eq!(diff.content_type, "text/x-diff");
        assert_eq!(diff.artifact_name, "a.txt.diff");
        assert_eq!(max_output_bytes(None), 100 * 1024);
        assert_eq!(max_output_bytes(Some(10)), 10);
    }
}
