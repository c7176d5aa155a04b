//! Property tests of the analyser: it never panics on any input, and a line it admits under
//! the allowlist `["echo"]` never makes bash start another program. The second property is
//! checked against bash itself: the line runs with an empty `PATH` in a temporary folder,
//! where every attempt to start a program is reported as "command not found" (echo is a
//! builtin and needs none). Skipped, saying so, where bash or timeout is missing.

use proptest::prelude::*;

use super::*;

/// Pieces of shell syntax, the nasty ones included, for lines close to the grammar.
const PIECES: &[&str] = &[
    "echo",
    " ",
    " ",
    "\t",
    "\n",
    ";",
    "&&",
    "||",
    "|",
    "&",
    "(",
    ")",
    "{ ",
    " }",
    "'",
    "\"",
    "\\",
    "`",
    "$",
    "$(",
    "$((",
    "))",
    "$[",
    "]",
    "[",
    "${",
    "}",
    "X",
    "Y",
    "a",
    "1",
    "=",
    "#",
    "*",
    "?",
    "!",
    "@P",
    "@Q",
    ":",
    "-",
    "<",
    ">",
    ">>",
    "2>&1",
    "<<<",
    "/dev/tcp/h/1",
    "X='a[$(t)]'",
    "$((X))",
    "$[X]",
    "${Y[X]}",
    "${Z:X}",
    "${X@P}",
    "${!X}",
    "`t`",
    "$(t)",
    "trap",
    "eval",
    "alias",
    "shopt",
    "sh -c",
    "env",
    "xargs",
    "if",
    "then",
    "fi",
    "for",
    "in",
    "do",
    "done",
    "case",
    "esac",
    "function",
    "unset",
    "let",
    "~",
    ",",
    "..",
    "/",
    "é",
    "\u{0}",
];

fn shellish() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(PIECES), 0..24).prop_map(|pieces| pieces.concat())
}

/// Pieces that build lines around `echo` with programs hidden in every construct.
const PAYLOADS: &[&str] = &[
    "echo ",
    "echo a ",
    " ",
    ";",
    "&&",
    "|",
    "X='a[$(t)]'; ",
    "X='$(t)'; ",
    "$((X))",
    "$[X]",
    "${Y[X]}",
    "${Z:X}",
    "${X@P}",
    "${X@Q}",
    "${!X}",
    "[`t`]",
    "[$(t)]",
    "$(t)",
    "`t`",
    "\"$(t)\"",
    "'$(t)'",
    "$((1+2))",
    "${X:-b}",
    "trap 't' EXIT; ",
    "alias e=t; e; ",
    "t ",
    "> f ",
    "2>&1 ",
    "{ echo; } ",
    "( echo ) ",
    "echo $X ",
    "echo \"$X\" ",
    "[a]",
    "x[1]",
];

fn echo_lines() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(PAYLOADS), 1..8).prop_map(|pieces| pieces.concat())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    #[test]
    fn the_analyser_never_panics_on_shell_like_text(line in shellish()) {
        let _ = check(&line, Some(&["echo".to_owned()]), Some(&["rm -rf /".to_owned()]));
        let _ = analyse(&line, None, None, agent_path_rules::Os::OtherUnix);
    }

    #[test]
    fn the_analyser_never_panics_on_any_text(line in any::<String>()) {
        let _ = check(&line, None, Some(&["rm".to_owned()]));
    }
}

fn tool(name: &str) -> Option<std::path::PathBuf> {
    ["/bin", "/usr/bin"]
        .iter()
        .map(|dir| std::path::Path::new(dir).join(name))
        .find(|path| path.exists())
}

#[test]
fn a_line_admitted_under_echo_only_starts_no_program_in_bash() {
    let (Some(bash), Some(timeout)) = (tool("bash"), tool("timeout")) else {
        eprintln!("skipped: bash or timeout is not installed");
        return;
    };
    let Ok(dir) = tempfile::tempdir() else {
        eprintln!("skipped: no temporary folder");
        return;
    };
    let allowed = ["echo".to_owned()];
    let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig::with_cases(300));
    let result = runner.run(&echo_lines(), |line| {
        if check(&line, Some(&allowed), None).is_err() {
            return Ok(());
        }
        let output = std::process::Command::new(&timeout)
            .arg("5")
            .arg(&bash)
            .args(["--norc", "--noprofile", "-c", &line])
            .current_dir(dir.path())
            .env_clear()
            .env("PATH", dir.path().join("no-programs-here"))
            .output();
        let Ok(output) = output else {
            return Ok(());
        };
        let stderr = String::from_utf8_lossy(&output.stderr);
        prop_assert!(
            !stderr.contains("command not found"),
            "admitted {line:?}, but bash tried to run a program: {stderr}"
        );
        Ok(())
    });
    if let Err(failure) = result {
        panic!("{failure}");
    }
}
