//! The places bash reads a variable's value again as arithmetic (integer-attributed
//! variables, `((…))`, `read`/`printf -v`/`getopts`/`mapfile`/`for` into them) and the
//! wrappers that set variables the shell or the loader run (`env BASH_ENV=…`,
//! `export LD_PRELOAD=…`): with `X='a[$(touch M)]'` (or such a file) these forms run a
//! program the allowlist of builtins below does not admit (checked against bash 5.2), so
//! each is refused whatever the value; the look-alikes stay allowed.

use super::*;

fn judge(line: &str, allowed: &[&str]) -> Result<Vec<String>, CommandDenial> {
    let allowed: Vec<String> = allowed.iter().map(|a| (*a).to_owned()).collect();
    check(line, Some(&allowed), None)
}

const BUILTINS: &[&str] = &[
    "echo",
    "declare",
    "typeset",
    "local",
    "export",
    "readonly",
    "read",
    "printf",
    "getopts",
    "mapfile",
    "readarray",
    "command",
    "builtin",
    "exec",
    "env",
    "bash",
    "ls",
    "set",
];

fn refused(cases: &[(&str, &str)]) {
    let mut failures = Vec::new();
    for (line, reason) in cases {
        match judge(line, BUILTINS) {
            Err(denial) if denial.to_string().contains(reason) => {}
            other => failures.push(format!(
                "{line:?}: expected a denial naming {reason:?}, got {other:?}"
            )),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn assignments_bash_evaluates_as_arithmetic_are_refused() {
    refused(&[
        ("X='a[$(touch M)]'; RANDOM=X", "RANDOM"),
        ("RANDOM=X", "RANDOM"),
        ("OPTIND=X echo", "OPTIND"),
        ("SRANDOM=$X", "SRANDOM"),
        ("HISTCMD=X", "HISTCMD"),
        ("RANDOM+=X", "RANDOM"),
        ("declare -i n; n=X", "n"),
        ("declare -i n=X", "n"),
        ("declare -ai a; a=X", "a"),
        ("local -ri n; n=\"$V\"", "n"),
        ("declare -i n; echo ${n:=X}", "n"),
        ("echo ${RANDOM=X}", "RANDOM"),
        ("export RANDOM=X", "RANDOM"),
        ("command declare -x OPTIND=X", "OPTIND"),
        ("for RANDOM in X; do echo; done", "RANDOM"),
        ("declare -i n; for n in $X; do echo; done", "n"),
        ("declare -n r=RANDOM; r=X", "nameref"),
        ("declare $F n=X", "Cannot tell"),
        ("declare \"$N\"=1", "Cannot tell"),
    ]);
}

#[test]
fn the_arithmetic_command_is_judged_like_arithmetic_expansion() {
    refused(&[
        ("echo='a[$(touch M)]'; ((echo))", "Arithmetic"),
        ("((X + 1)) && echo", "Arithmetic"),
        ("(( $(touch M) ))", "Commands inside"),
        ("echo $( ((X)) )", "Arithmetic"),
    ]);
}

#[test]
fn reading_into_a_variable_bash_evaluates_is_refused() {
    refused(&[
        ("read -r RANDOM", "RANDOM"),
        ("echo x | read OPTIND", "OPTIND"),
        ("declare -i n; read -r -p '> ' n", "n"),
        ("declare -i REPLY; read", "REPLY"),
        ("declare -ai a; read -a a", "a"),
        ("read -r PS4", "PS4"),
        ("read $V", "Cannot tell"),
        ("read -r -X n", "option"),
        ("printf -v RANDOM %s X", "RANDOM"),
        ("printf -vOPTIND %s X", "OPTIND"),
        ("getopts a RANDOM -a", "RANDOM"),
        ("declare -ai a; mapfile -t a", "a"),
        ("declare -i MAPFILE; readarray", "MAPFILE"),
    ]);
}

#[test]
fn wrappers_that_set_code_or_loader_variables_are_refused() {
    refused(&[
        ("env BASH_ENV=./e.sh bash -c echo", "BASH_ENV"),
        ("env -i ENV=./e.sh bash -c echo", "ENV"),
        (
            "env 'BASH_FUNC_ls%%=() { touch M; }' bash -c ls",
            "BASH_FUNC_ls%%",
        ),
        ("exec env PROMPT_COMMAND=x bash -c echo", "PROMPT_COMMAND"),
        ("export BASH_ENV=./e.sh; bash -c echo", "BASH_ENV"),
        ("export 'PS4=$(touch M)'; set -x", "PS4"),
        ("declare -x PROMPT_COMMAND=x", "PROMPT_COMMAND"),
        ("command export BASH_ENV=x", "BASH_ENV"),
        ("builtin typeset -x ENV=x", "ENV"),
        ("readonly SHELLOPTS=x", "SHELLOPTS"),
        ("LD_PRELOAD=./l.so ls", "LD_PRELOAD"),
        ("LD_LIBRARY_PATH=. ls", "LD_LIBRARY_PATH"),
        ("env LD_PRELOAD=./l.so ls", "LD_PRELOAD"),
        ("export LD_AUDIT=./l.so; ls", "LD_AUDIT"),
        ("PATH=. ls", "PATH"),
        ("env PATH=. ls", "PATH"),
        ("export PATH=.:$PATH; ls", "PATH"),
        ("declare -x GCONV_PATH=.", "GCONV_PATH"),
        ("read -r LD_PRELOAD", "LD_PRELOAD"),
        ("echo ${PATH:=.}", "PATH"),
    ]);
}

#[test]
fn reading_and_assigning_inert_values_stays_allowed() {
    for line in [
        "RANDOM=42; OPTIND=1; echo $RANDOM",
        "declare -i n=3 m; n=1+2; m=0x1f; n+=2",
        "declare -i n; echo ${n:=5}",
        "declare x=a[1] y=$X; export FOO=bar BAZ=\"$X\"",
        "read -r line; echo \"$line\"",
        "read; read -a words; read -r -d '' -p 'x: ' a b",
        "printf -v out %s \"$X\"; getopts ab opt",
        "mapfile -t lines; readarray",
        "for i in 1 2 3; do echo $i; done",
        "for f in *; do echo \"$f\"; done",
        "((1 + 2)) && echo",
        "((echo a); echo b)",
        "export PATH; export -n FOO; declare -p",
    ] {
        let got = judge(line, BUILTINS);
        assert!(got.is_ok(), "{line:?}: {got:?}");
    }
}

#[test]
fn loader_variables_are_free_without_an_allowlist() {
    for line in [
        "PATH=$PATH:./bin make",
        "env PATH=/bin ls",
        "LD_LIBRARY_PATH=./lib ./app",
        "export PATH=$PATH:/x",
    ] {
        let got = check(line, None, Some(&["rm".to_owned()]));
        assert!(got.is_ok(), "{line:?}: {got:?}");
    }
    let got = check("export BASH_ENV=x", None, None);
    assert!(
        got.is_err(),
        "BASH_ENV stays refused without lists: {got:?}"
    );
}
