//! Unified diffs of file changes, for the `file_diff` artifact (local-tool-runtime.md §4.2)
//! and the patch preview's hunks (INTEROP.md §1).

use std::time::Duration;

use similar::TextDiff;

/// Content larger than this (either side) is not diffed line by line: the diff would be as
/// large as the file and costly to compute; a one-line summary stands in.
pub(crate) const MAX_DIFF_INPUT_BYTES: u64 = 4 * 1024 * 1024;

/// Bound on the diff computation; past it `similar` settles for a coarser (still correct)
/// diff instead of spending quadratic time on pathological input.
const DIFF_TIMEOUT: Duration = Duration::from_secs(2);

/// One side of a change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Side<'a> {
    /// The file does not exist on this side.
    Absent,
    Text(&'a str),
    /// Binary, not UTF-8, or too large to diff: only its size is known.
    Opaque {
        bytes: u64,
    },
}

impl<'a> Side<'a> {
    /// Text when `bytes` is UTF-8 without NUL bytes, else opaque.
    pub(crate) fn of(bytes: &'a [u8]) -> Self {
        match std::str::from_utf8(bytes) {
            Ok(text) if !bytes.contains(&0) => Side::Text(text),
            _ => Side::Opaque {
                bytes: u64::try_from(bytes.len()).unwrap_or(u64::MAX),
            },
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct FileDiff {
    /// `--- old` / `+++ new` header lines and the hunks; for an opaque side a single
    /// "Binary files … differ" line as git prints it; empty when nothing changed.
    pub full: String,
    /// Only the hunks, from the first `@@`: what a patch preview shows. Empty when there is
    /// no textual diff.
    pub hunks: String,
}

/// The diff from `old` to `new` of the file named `name` (used in the header lines; the
/// missing side of an added or deleted file is `/dev/null`, as in `diff -N` and git).
pub(crate) fn diff(name: &str, old: Side<'_>, new: Side<'_>) -> FileDiff {
    let label = |side: Side<'_>| match side {
        Side::Absent => "/dev/null",
        _ => name,
    };
    match (as_text(old), as_text(new)) {
        (Some(old_text), Some(new_text)) => {
            let diff = TextDiff::configure()
                .timeout(DIFF_TIMEOUT)
                .diff_lines(old_text, new_text);
            let hunks: String = diff
                .unified_diff()
                .iter_hunks()
                .map(|hunk| hunk.to_string())
                .collect();
            let full = if hunks.is_empty() {
                String::new()
            } else {
                format!("--- {}\n+++ {}\n{hunks}", label(old), label(new))
            };
            FileDiff { full, hunks }
        }
        _ => FileDiff {
            full: format!(
                "Files {} and {} differ ({} -> {} bytes; binary or too large to show)\n",
                label(old),
                label(new),
                size(old),
                size(new)
            ),
            hunks: String::new(),
        },
    }
}

fn as_text(side: Side<'_>) -> Option<&str> {
    match side {
        Side::Absent => Some(""),
        Side::Text(text) => Some(text),
        Side::Opaque { .. } => None,
    }
}

fn size(side: Side<'_>) -> u64 {
    match side {
        Side::Absent => 0,
        Side::Text(text) => u64::try_from(text.len()).unwrap_or(u64::MAX),
        Side::Opaque { bytes } => bytes,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modified_text_gives_a_unified_diff_and_bare_hunks() {
        let diff = diff(
            "/p/a.txt",
            Side::Text("one\ntwo\n"),
            Side::Text("one\nTWO\n"),
        );
        assert_eq!(
            diff.full,
            "--- /p/a.txt\n+++ /p/a.txt\n@@ -1,2 +1,2 @@\n one\n-two\n+TWO\n"
        );
        assert_eq!(diff.hunks, "@@ -1,2 +1,2 @@\n one\n-two\n+TWO\n");
    }

    #[test]
    fn added_and_deleted_files_diff_against_dev_null() {
        let added = diff("/p/n.txt", Side::Absent, Side::Text("hi\n"));
        assert_eq!(
            added.full,
            "--- /dev/null\n+++ /p/n.txt\n@@ -0,0 +1 @@\n+hi\n"
        );
        assert_eq!(added.hunks, "@@ -0,0 +1 @@\n+hi\n");
        let deleted = diff("/p/n.txt", Side::Text("hi"), Side::Absent);
        assert_eq!(
            deleted.full,
            "--- /p/n.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-hi\n\\ No newline at end of file\n"
        );
    }

    #[test]
    fn nothing_changed_means_no_diff_and_empty_files_add_no_hunks() {
        assert_eq!(
            diff("/p/a", Side::Text("same\n"), Side::Text("same\n")),
            FileDiff::default()
        );
        assert_eq!(
            diff("/p/a", Side::Absent, Side::Text("")),
            FileDiff::default()
        );
    }

    #[test]
    fn binary_or_oversized_sides_are_summarised_not_diffed() {
        assert_eq!(Side::of(b"a\0b"), Side::Opaque { bytes: 3 });
        assert_eq!(Side::of(b"caf\xE9"), Side::Opaque { bytes: 4 });
        assert_eq!(Side::of(b"text"), Side::Text("text"));
        let diff = diff("/p/img", Side::Opaque { bytes: 3 }, Side::Text("x"));
        assert_eq!(
            diff.full,
            "Files /p/img and /p/img differ (3 -> 1 bytes; binary or too large to show)\n"
        );
        assert_eq!(diff.hunks, "");
    }
}
