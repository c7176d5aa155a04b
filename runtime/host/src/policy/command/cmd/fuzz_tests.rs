//! Property tests of the cmd.exe reading: it never panics on any input, and a line made of
//! complete commands joined by `&`, one of which runs the blocked `del` however it is
//! spelt or wrapped, is never admitted under the blocklist `["del"]`.

use agent_path_rules::Os;
use proptest::prelude::*;

use super::super::analyse;

/// Pieces of cmd.exe syntax, the nasty ones included.
const PIECES: &[&str] = &[
    "echo", "del", " ", "\t", ",", ";", "=", "@", "&", "&&", "|", "||", "(", ")", "^", "\"", "%",
    "%X%", "%i", "!", "!X!", ">", ">>", "<", "2>&1", ">nul", "if", "not", "exist", "==", "else",
    "for", "/f", "/L", "%i", "in", "do", "'", "`", "set", "/a", "/p", "X=", "call", "cmd", "/c",
    "/s", "start", "\"\"", "rem", "::", ".", "/", "\\", "é", "\n", "\r", "*", "?",
];

fn cmdish() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(PIECES), 0..28).prop_map(|pieces| pieces.concat())
}

/// Complete commands that run nothing blocked (quotes and parentheses balanced, no caret
/// at the end): any of them before or after another leaves that one a command of its own.
const HARMLESS: &[&str] = &[
    "echo a",
    "echo \"a & del x\"",
    "echo a ^& del x",
    "echo %X%",
    "echo !X!",
    "type nul > out",
    "dir/w",
    "(echo a & echo b)",
    "if exist a echo b",
    "if /i \"a\"==\"b\" (echo a) else (echo b)",
    "for /L %i in (1,1,3) do @echo %i",
    "for /f \"tokens=1\" %i in ('echo a') do echo %i",
    "set X=1",
    "set /a N=1+2",
    "set /a N=1+2& call echo %N%",
    "cmd /c echo a",
    "start \"\" notepad",
    "echo a | more",
    "rem a",
    "echo a 2>&1",
    "ping -n 2 127.0.0.1 >nul",
];

/// The blocked `del`, spelt and wrapped in every way the reader knows.
const DEL: &[&str] = &[
    "del x",
    "DEL x",
    "d^el x",
    "\"del\" x",
    "\"d\"el x",
    "del.exe x",
    "del.cmd x",
    "C:\\Windows\\System32\\del.exe x",
    "@del x",
    ",;=del x",
    "del/q x",
    "(del x)",
    "((echo a) & (del x))",
    "if 1==1 del x",
    "if exist a (echo a) else (del x)",
    "for %i in (a) do del %i",
    "for /f %i in ('del x') do echo",
    "for /f \"usebackq\" %i in (`del x`) do echo",
    "cmd /c del x",
    "cmd/c del x",
    "c^md /c \"del x\"",
    "cmd /c echo a^&del x",
    "call del x",
    "call echo a^&del x",
    "start \"\" del x",
    "start /b cmd /c del x",
    "echo a | del x",
    "echo a ^& del x | more",
    "echo a && del x",
    "echo a || del x",
];

fn joined() -> impl Strategy<Value = String> {
    (
        prop::collection::vec(prop::sample::select(HARMLESS), 0..4),
        prop::sample::select(DEL),
        prop::collection::vec(prop::sample::select(HARMLESS), 0..4),
        prop::sample::select(&["&", "& ", " & ", "&&", " || "][..]),
    )
        .prop_map(|(before, del, after, join)| {
            before
                .iter()
                .chain(std::iter::once(&del))
                .chain(after.iter())
                .copied()
                .collect::<Vec<_>>()
                .join(join)
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    #[test]
    fn the_cmd_reader_never_panics_on_cmd_like_text(line in cmdish()) {
        let _ = analyse(&line, Some(&["echo".to_owned()]), Some(&["del /s".to_owned()]), Os::Windows);
        let _ = analyse(&line, None, None, Os::Windows);
    }

    #[test]
    fn the_cmd_reader_never_panics_on_any_text(line in any::<String>()) {
        let _ = analyse(&line, None, Some(&["del".to_owned()]), Os::Windows);
    }

    #[test]
    fn a_line_that_runs_del_is_never_admitted_under_a_blocked_del(line in joined()) {
        let verdict = analyse(&line, None, Some(&["del".to_owned()]), Os::Windows);
        prop_assert!(verdict.is_err(), "admitted {line:?}: {verdict:?}");
        let verdict = analyse(&line, Some(&["echo".to_owned()]), None, Os::Windows);
        prop_assert!(verdict.is_err(), "admitted under [echo] {line:?}: {verdict:?}");
    }

    #[test]
    fn the_harmless_commands_pass_together(
        parts in prop::collection::vec(prop::sample::select(HARMLESS), 1..6)
    ) {
        // In parentheses: an `if` or `for` body would otherwise run to the end of the line.
        let line = parts.iter().map(|part| format!("({part})")).collect::<Vec<_>>().join("& ");
        let verdict = analyse(&line, None, Some(&["del".to_owned()]), Os::Windows);
        prop_assert!(verdict.is_ok(), "{line:?}: {verdict:?}");
    }
}
