//! Where the host applies the [`Redactor`](super::Redactor): tool results before they enter
//! the thread, and model requests as a whole.

use agent_protocol::ToolResult;
use base64::Engine as _;
use serde_json::Value;

use super::Redactor;

/// Redacts what a tool returned — its text, its error message, and the text of its
/// artifacts (uploaded to the Workspace Service) and patch hunks — before anything else sees it.
/// True when something was replaced.
pub(crate) fn tool_result(redactor: &Redactor, result: &mut ToolResult) -> bool {
    let mut changed = false;
    if let Some(text) = result.output_text.as_mut() {
        changed |= redactor.redact_in_place(text);
        changed |= cut_fragments(text);
    }
    if let Some(error) = result.error.as_mut() {
        changed |= redactor.redact_in_place(&mut error.message);
    }
    for change in &mut result.file_changes {
        changed |= redactor.redact_in_place(&mut change.hunks);
    }
    let engine = base64::engine::general_purpose::STANDARD;
    for artifact in &mut result.artifacts {
        // Only text artifacts can be redacted; binary ones (images) pass as they are.
        let Ok(bytes) = engine.decode(&artifact.content_base64) else {
            continue;
        };
        let Ok(mut text) = String::from_utf8(bytes) else {
            continue;
        };
        if redactor.redact_in_place(&mut text) {
            artifact.content_base64 = engine.encode(text.as_bytes());
            changed = true;
        }
    }
    changed
}

/// Redacts every string of a JSON value in place (keys stay): for structured records such
/// as audit and telemetry envelopes, merged just before they leave the process. True when
/// something was replaced.
pub(crate) fn json_value(redactor: &Redactor, value: &mut Value) -> bool {
    match value {
        Value::String(text) => redactor.redact_in_place(text),
        Value::Array(items) => items
            .iter_mut()
            .fold(false, |changed, item| json_value(redactor, item) | changed),
        Value::Object(map) => map
            .values_mut()
            .fold(false, |changed, item| json_value(redactor, item) | changed),
        _ => false,
    }
}

/// The start and end of the tool runtime's truncation marker
/// (`\n[... truncated N bytes ...]\n`, `agent_tools::output::truncation_marker`).
const MARKER_HEAD: &str = "\n[... truncated ";
const MARKER_TAIL: &str = " bytes ...]\n";

/// Shortest run of key-like characters next to a cut that is treated as a fragment.
const MIN_FRAGMENT: usize = 8;

/// A secret cut in two by output truncation matches no rule, yet its halves are usable:
/// a run of key-like characters touching a truncation marker, long enough and looking
/// random — letters and digits, or letters whose case changes as in random text rather than
/// in words (`aBcDxYZqRs…`, not `HttpRequestError`) — becomes `[REDACTED:fragment]`. True when
/// something was replaced.
pub(crate) fn cut_fragments(text: &mut String) -> bool {
    let mut cuts = Vec::new();
    let mut from = 0;
    while let Some(at) = text[from..].find(MARKER_HEAD).map(|at| from + at) {
        let rest = &text[at + MARKER_HEAD.len()..];
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 || !rest[digits..].starts_with(MARKER_TAIL) {
            from = at + 1;
            continue;
        }
        let end = at + MARKER_HEAD.len() + digits + MARKER_TAIL.len();
        let before = at - run_back(&text[..at]);
        let after = end + run_forward(&text[end..]);
        cuts.push((before, at, end, after));
        from = end;
    }
    let mut changed = false;
    for (before, at, end, after) in cuts.into_iter().rev() {
        if fragment(&text[end..after]) {
            text.replace_range(end..after, "[REDACTED:fragment]");
            changed = true;
        }
        if fragment(&text[before..at]) {
            text.replace_range(before..at, "[REDACTED:fragment]");
            changed = true;
        }
    }
    changed
}

fn key_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '+' | '/' | '_' | '-')
}

fn run_back(text: &str) -> usize {
    text.chars().rev().take_while(|&c| key_char(c)).count()
}

fn run_forward(text: &str) -> usize {
    text.chars().take_while(|&c| key_char(c)).count()
}

fn fragment(run: &str) -> bool {
    run.len() >= MIN_FRAGMENT
        && run.bytes().any(|b| b.is_ascii_alphabetic())
        && (run.bytes().any(|b| b.is_ascii_digit()) || random_case(run))
}

/// Shortest letters-only run judged by its case pattern: shorter ones are too often words.
const MIN_CASE_FRAGMENT: usize = 12;

/// Whether the letters' case changes like random text: in a random key about half the
/// neighbouring letter pairs change case and both upper-upper and lower-lower pairs occur;
/// words and identifiers (camelCase, acronyms, SNAKE_CASE) change case rarely.
fn random_case(run: &str) -> bool {
    if run.len() < MIN_CASE_FRAGMENT {
        return false;
    }
    let (mut upper_pairs, mut lower_pairs, mut changes, mut pairs) = (0, 0, 0, 0);
    for pair in run.as_bytes().windows(2) {
        let [a, b] = [pair[0], pair[1]];
        if !(a.is_ascii_alphabetic() && b.is_ascii_alphabetic()) {
            continue;
        }
        pairs += 1;
        match (a.is_ascii_uppercase(), b.is_ascii_uppercase()) {
            (true, true) => upper_pairs += 1,
            (false, false) => lower_pairs += 1,
            _ => changes += 1,
        }
    }
    upper_pairs >= 2 && lower_pairs >= 2 && changes * 3 >= pairs
}
