//! Reading what a runtime wrote the way its OS writes it (the manifest's `os`): on Windows
//! lines end with CRLF and paths use `\` after a drive letter, so `Z:\tmp\ws\a.txt` is the
//! Windows spelling of the kit's `/tmp/ws/a.txt` (Wine maps `/` to a drive; a real Windows
//! runtime is handed Windows paths). Nothing else is forgiven: a `\\?\` verbatim prefix in a
//! message people read stays a difference.

use crate::runtime_manifest::RuntimeOs;

/// The placeholders that make an expected text a path the runtime spells its own way.
const PATH_PLACEHOLDERS: [&str; 2] = ["${WORKSPACE}", "${HOME}"];

/// `got` as the kit compares it with `expected` (as written in the feature file, before its
/// placeholders are expanded): unchanged on Unix; on Windows with LF line ends and, when
/// `expected` names a kit path, with the paths in POSIX form.
pub(crate) fn as_written_on(os: RuntimeOs, expected: &str, got: &str) -> String {
    if os != RuntimeOs::Windows {
        return got.to_owned();
    }
    let lines = got.replace("\r\n", "\n");
    if PATH_PLACEHOLDERS.iter().any(|p| expected.contains(p)) {
        posix_paths(&lines)
    } else {
        lines
    }
}

/// `Z:\tmp\ws\a.txt` → `/tmp/ws/a.txt`: a drive letter that starts a path is dropped and
/// every `\` becomes `/`. A drive letter after a `\` (as in `\\?\Z:\…`) is kept.
fn posix_paths(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < chars.len() {
        let starts_path = i == 0 || !(chars[i - 1].is_alphanumeric() || chars[i - 1] == '\\');
        if starts_path
            && chars[i].is_ascii_alphabetic()
            && chars.get(i + 1) == Some(&':')
            && chars.get(i + 2) == Some(&'\\')
        {
            i += 2;
            continue;
        }
        out.push(if chars[i] == '\\' { '/' } else { chars[i] });
        i += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unix_output_is_taken_as_it_is() {
        let got = "a\r\nZ:\\tmp\\x";
        assert_eq!(as_written_on(RuntimeOs::Unix, "${WORKSPACE}", got), got);
    }

    #[test]
    fn windows_line_ends_are_lf_for_any_expectation() {
        assert_eq!(
            as_written_on(RuntimeOs::Windows, "1\\n2", "1\r\n2\r\n"),
            "1\n2\n"
        );
        assert_eq!(
            as_written_on(RuntimeOs::Windows, "x", "C:\\a\\b"),
            "C:\\a\\b"
        );
    }

    #[test]
    fn windows_paths_read_as_the_kit_s_when_a_path_is_expected() {
        assert_eq!(
            as_written_on(
                RuntimeOs::Windows,
                "Deleted ${WORKSPACE}/old.txt",
                "Deleted Z:\\tmp\\ws\\old.txt"
            ),
            "Deleted /tmp/ws/old.txt"
        );
        assert_eq!(
            as_written_on(RuntimeOs::Windows, "${HOME}", "in \\tmp\\home\r\n"),
            "in /tmp/home\n"
        );
    }

    #[test]
    fn a_verbatim_prefix_is_not_forgiven() {
        assert_eq!(
            as_written_on(RuntimeOs::Windows, "${WORKSPACE}", "\\\\?\\Z:\\tmp\\ws"),
            "//?/Z:/tmp/ws"
        );
    }
}
