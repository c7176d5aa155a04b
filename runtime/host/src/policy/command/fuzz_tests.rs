//! Property tests of the analyser: it never panics on any input, and a line it admits under
//! the allowlist `["echo"]` never makes bash start another program. The second property is
//! checked against bash itself: the line runs with an empty `PATH` in a temporary folder,
//! where every attempt to start a program is reported as "command not found" (echo is a
//! builtin and needs none). Skipped, saying so, where bash or timeout is missing. A second
//! oracle admits the builtins that set variables and, through a folder holding only `env`
//! and `bash`, `env … bash -c`: lines that set integer, code or loader variables.

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

/// Pieces that set variables bash later evaluates or runs (`X` holds `a[$(t)]`).
#[cfg(unix)]
const SETTERS: &[&str] = &[
    "X='a[$(t)]'; ",
    "echo ",
    " ",
    ";",
    "RANDOM=X; ",
    "OPTIND=X; ",
    "RANDOM=5; ",
    "((X)); ",
    "((1+2)); ",
    "echo=X; ((echo)); ",
    "declare -i n; ",
    "n=X; ",
    "n=3; ",
    "declare -i n=X; ",
    "local -i n; ",
    "read -r RANDOM <<< X; ",
    "read -r n <<< X; ",
    "read -r v <<< X; ",
    "printf -v RANDOM %s X; ",
    "printf -v v %s X; ",
    "a=X; getopts a RANDOM -a; ",
    "for RANDOM in X; do echo; done; ",
    "for n in 1 2; do echo; done; ",
    "export RANDOM=X; ",
    "command declare -i n; ",
    "echo ${n:=X}; ",
    "echo t > e.sh; ",
    "env BASH_ENV=./e.sh bash -c echo; ",
    "export BASH_ENV=./e.sh; ",
    "declare -x BASH_ENV=./e.sh; ",
    "command export BASH_ENV=./e.sh; ",
    "exec env BASH_ENV=./e.sh bash -c echo; ",
    "bash -c echo; ",
    "export PS4=$X; ",
    "set -x; ",
];

#[cfg(unix)]
fn setter_lines() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(SETTERS), 1..8).prop_map(|pieces| pieces.concat())
}

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

#[cfg(unix)]
#[test]
fn a_line_admitted_under_setting_builtins_starts_no_other_program_in_bash() {
    let (Some(bash), Some(env), Some(timeout)) = (tool("bash"), tool("env"), tool("timeout"))
    else {
        eprintln!("skipped: bash, env or timeout is not installed");
        return;
    };
    let Ok(dir) = tempfile::tempdir() else {
        eprintln!("skipped: no temporary folder");
        return;
    };
    // Only env and bash can be found; every other program is "command not found".
    let bin = dir.path().join("bin");
    let work = dir.path().join("work");
    let linked = std::fs::create_dir_all(&bin)
        .and_then(|()| std::fs::create_dir_all(&work))
        .and_then(|()| std::os::unix::fs::symlink(&bash, bin.join("bash")))
        .and_then(|()| std::os::unix::fs::symlink(&env, bin.join("env")));
    if let Err(error) = linked {
        eprintln!("skipped: cannot prepare the folders: {error}");
        return;
    }
    let allowed: Vec<String> = [
        "echo", "declare", "local", "read", "printf", "getopts", "export", "command", "exec",
        "set", "env", "bash -c",
    ]
    .iter()
    .map(|entry| (*entry).to_owned())
    .collect();
    let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig::with_cases(300));
    let result = runner.run(&setter_lines(), |line| {
        if check(&line, Some(&allowed), None).is_err() {
            return Ok(());
        }
        let output = std::process::Command::new(&timeout)
            .arg("5")
            .arg(&bash)
            .args(["--norc", "--noprofile", "-c", &line])
            .current_dir(&work)
            .env_clear()
            .env("PATH", &bin)
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
