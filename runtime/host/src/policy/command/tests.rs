//! Table tests of the shell-line judge: every program a line would run is found, and what
//! cannot be told is denied with its reason.

use super::*;

fn list(items: &[&str]) -> Vec<String> {
    items.iter().map(|item| (*item).to_owned()).collect()
}

/// "ok", "blocked: …", "not allowed: …" or "opaque: <substring of the reason>".
fn judge(line: &str, allowed: Option<&[&str]>, blocked: Option<&[&str]>) -> String {
    let allowed = allowed.map(list);
    let blocked = blocked.map(list);
    match check(line, allowed.as_deref(), blocked.as_deref()) {
        Ok(_) => "ok".to_owned(),
        Err(CommandDenial::Blocked(what)) => format!("blocked: {what}"),
        Err(CommandDenial::NotAllowed(what)) => format!("not allowed: {what}"),
        Err(CommandDenial::Unanalysable(why)) => format!("opaque: {why}"),
    }
}

fn assert_cases(cases: &[(&str, &str)], allowed: Option<&[&str]>, blocked: Option<&[&str]>) {
    crate::testing::assert_cases(cases, "opaque: ", |line| judge(line, allowed, blocked));
}

#[test]
fn every_program_of_a_line_is_found() {
    let cases: &[(&str, &[&str])] = &[
        ("pytest tests/ --verbose", &["pytest"]),
        ("", &[]),
        ("   # only a comment; rm -rf /", &[]),
        ("FOO=1", &[]),
        ("ls; rm x", &["ls", "rm"]),
        ("ls && curl x || wget y", &["ls", "curl", "wget"]),
        ("ls | grep a |& tee f", &["ls", "grep", "tee"]),
        ("sleep 1 & rm x", &["sleep", "rm"]),
        ("ls\nrm x\n", &["ls", "rm"]),
        ("(cd a && make)", &["cd", "make"]),
        ("{ ls; rm x; }", &["ls", "rm"]),
        ("echo $(curl x)", &["curl", "echo"]),
        ("echo \"$(curl x)\"", &["curl", "echo"]),
        ("echo `rm x`", &["rm", "echo"]),
        ("echo \"`rm x`\"", &["rm", "echo"]),
        ("echo $(echo $(rm x))", &["rm", "echo"]),
        ("echo `echo \\`rm x\\``", &["rm", "echo"]),
        ("echo $( (rm x) )", &["rm", "echo"]),
        ("echo $((1 + 2)) $(( (3) * 4 ))", &["echo"]),
        ("X=$(whoami) ls", &["whoami", "ls"]),
        ("FOO=1 BAR='a b' rm x", &["rm"]),
        ("ls > out.txt 2>&1", &["ls"]),
        ("ls >> out 2> err < in", &["ls"]),
        ("ls > x$(rm x)", &["rm", "ls"]),
        ("ls 2>/dev/null >&2 <>f >|g", &["ls"]),
        ("cat <<< 'rm -rf /'", &["cat"]),
        ("> out ls", &["ls"]),
        ("{fd}>log ls", &["ls"]),
        ("ls &> /dev/null", &["ls"]),
        ("ls &>/dev/null rm", &["ls", "rm"]),
        ("\"r\"m x", &["rm"]),
        ("r\\m x", &["rm"]),
        ("'rm' x", &["rm"]),
        ("/usr/bin/rm x", &["rm"]),
        ("./rm x", &["rm"]),
        ("../bin/rm x", &["rm"]),
        ("echo a#b # ; rm x", &["echo"]),
        ("ls \\\n  -la", &["ls"]),
        (
            "if test -f a; then rm a; else touch a; fi",
            &["test", "rm", "touch"],
        ),
        ("while true; do sleep 1; done", &["true", "sleep"]),
        ("for f in a b; do rm $f; done", &["rm"]),
        ("for f in $(ls); do cat $f; done", &["ls", "cat"]),
        ("! grep x f", &["grep"]),
        ("\"if\" x", &["if"]),
        ("[ -f a ] && [[ -d b ]]", &["[", "[["]),
        ("env rm x", &["env", "rm"]),
        ("env -i FOO=1 -u BAR rm x", &["env", "rm"]),
        ("env - PATH=/bin rm x", &["env", "rm"]),
        ("sudo rm x", &["sudo", "rm"]),
        ("sudo -u root -E -- rm x", &["sudo", "rm"]),
        ("sudo -uroot FOO=1 rm x", &["sudo", "rm"]),
        ("doas -u root rm", &["doas", "rm"]),
        ("nohup rm x &", &["nohup", "rm"]),
        ("nice -n 10 rm", &["nice", "rm"]),
        ("nice -10 rm", &["nice", "rm"]),
        ("time -p rm", &["time", "rm"]),
        ("timeout 5 rm", &["timeout", "rm"]),
        (
            "timeout -s KILL --preserve-status 5s rm",
            &["timeout", "rm"],
        ),
        ("timeout --signal=KILL 5 rm", &["timeout", "rm"]),
        ("xargs rm", &["xargs", "rm"]),
        ("xargs -n 1 -P4 rm", &["xargs", "rm"]),
        ("xargs", &["xargs", "echo"]),
        ("exec rm", &["exec", "rm"]),
        ("exec >log", &["exec"]),
        ("command rm", &["command", "rm"]),
        ("builtin eval 'rm x'", &["builtin", "eval", "rm"]),
        ("stdbuf -oL rm", &["stdbuf", "rm"]),
        ("stdbuf -o L rm", &["stdbuf", "rm"]),
        ("setsid -f rm", &["setsid", "rm"]),
        ("strace -f -o log rm", &["strace", "rm"]),
        ("chroot /jail rm", &["chroot", "rm"]),
        ("busybox rm x", &["busybox", "rm"]),
        (
            "sudo env nice timeout 5 rm",
            &["sudo", "env", "nice", "timeout", "rm"],
        ),
        ("sh -c 'rm -rf /'", &["sh", "rm"]),
        ("bash -c \"curl x\"", &["bash", "curl"]),
        ("bash -ec 'ls; rm x' name arg", &["bash", "ls", "rm"]),
        ("bash -o pipefail -c 'rm x'", &["bash", "rm"]),
        ("/bin/zsh --norc -c 'rm x'", &["zsh", "rm"]),
        ("sh -c 'sh -c \"rm x\"'", &["sh", "rm"]),
        ("bash script.sh -c rm", &["bash"]),
        ("eval 'rm x'", &["eval", "rm"]),
        ("eval rm x", &["eval", "rm"]),
        ("find . -name '*.o' -exec rm {} \\;", &["find", "rm"]),
        (
            "find . -execdir sh -c 'rm x' \\; -print",
            &["find", "sh", "rm"],
        ),
        ("find . -ok rm {} +", &["find", "rm"]),
    ];
    let mut failures = Vec::new();
    for (line, expected) in cases {
        match base_commands(line) {
            Ok(found) if found == list(expected) => {}
            other => failures.push(format!("{line:?}: expected {expected:?}, got {other:?}")),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn what_cannot_be_told_is_denied_with_the_reason() {
    let cases: &[(&str, &str)] = &[
        ("$CMD x", "opaque: Cannot tell which command runs: $CMD"),
        ("${X} x", "opaque: Cannot tell which command runs: ${X}"),
        (
            "$(echo rm) x",
            "opaque: Cannot tell which command runs: $(echo rm)",
        ),
        ("`echo rm` x", "opaque: Cannot tell which command runs"),
        (
            "\"$CMD\" x",
            "opaque: Cannot tell which command runs: \"$CMD\"",
        ),
        ("$'\\x72m' x", "opaque: Cannot tell which command runs"),
        (
            "/bin/r? x",
            "opaque: Cannot tell which command runs: /bin/r?",
        ),
        ("/bin/r* x", "opaque: Cannot tell which command runs"),
        ("/bin/[r]m x", "opaque: Cannot tell which command runs"),
        ("{rm,x} y", "opaque: Cannot tell which command runs: {rm,x}"),
        ("=rm x", "opaque: Cannot tell which command runs: =rm"),
        ("FOO=1 $CMD", "opaque: Cannot tell which command runs"),
        ("sudo $CMD", "opaque: Cannot tell which command sudo runs"),
        (
            "env \"$X\" rm",
            "opaque: Cannot tell which command env runs",
        ),
        (
            "timeout $T rm",
            "opaque: Cannot tell which command timeout runs",
        ),
        ("env -S 'rm x'", "opaque: its option -S is not known"),
        ("xargs -Q rm", "opaque: its option -Q is not known"),
        ("echo 'abc", "opaque: unbalanced single quote"),
        ("echo \"abc", "opaque: unbalanced double quote"),
        ("echo `abc", "opaque: unbalanced backquote"),
        ("echo $(ls", "opaque: unbalanced parenthesis"),
        ("(ls", "opaque: unbalanced parenthesis"),
        ("ls)", "opaque: unbalanced parenthesis"),
        ("echo ${X", "opaque: unbalanced ${"),
        ("echo $((1+2)", "opaque: unbalanced"),
        (
            "cat <<EOF\nrm -rf /\nEOF",
            "opaque: Here-documents are not analysed",
        ),
        (
            "cat <<-'EOF'\nx\nEOF",
            "opaque: Here-documents are not analysed",
        ),
        (
            "diff <(ls a) <(ls b)",
            "opaque: Process substitution is not analysed",
        ),
        (
            "tee >(rm x)",
            "opaque: Process substitution is not analysed",
        ),
        (
            "echo ${X:-$(rm x)}",
            "opaque: Commands inside ${…} are not analysed",
        ),
        (
            "echo $(( $(rm x) ))",
            "opaque: Commands inside $((…)) are not analysed",
        ),
        ("eval \"$X\"", "opaque: Cannot tell which command eval runs"),
        ("eval $X", "opaque: Cannot tell which command eval runs"),
        (
            "sh -c \"$X\"",
            "opaque: Cannot tell which command sh -c runs",
        ),
        (
            "bash -c $X",
            "opaque: Cannot tell which command bash -c runs",
        ),
        ("sh $OPTS", "opaque: Cannot tell which command sh runs"),
        ("fish --command='rm x'", "opaque: is not analysed"),
        (
            "find $DIR -delete",
            "opaque: Cannot tell which command find runs",
        ),
        (
            "find . -exec {} \\;",
            "opaque: Cannot tell which command runs: {}",
        ),
        (
            "find . -exec sh -c '{}' \\;",
            "opaque: Cannot tell which command sh -c runs",
        ),
        (
            "xargs -I{} sh -c '{}'",
            "opaque: Cannot tell which command sh -c runs",
        ),
        ("xargs -I % %", "opaque: Cannot tell which command runs"),
        (
            "case $x in a) rm;; esac",
            "opaque: case statements are not analysed",
        ),
        ("f() { rm x; }; f", "opaque: Function definitions"),
        (
            "function f { rm x; }",
            "opaque: Function definitions are not analysed",
        ),
        ("a=(1 2)", "opaque: Function definitions and arrays"),
        ("ls >", "opaque: a redirection has no target"),
        ("ls\0rm", "opaque: NUL byte"),
    ];
    assert_cases(cases, None, None);
}

#[test]
fn blocked_entries_catch_every_spelling() {
    let blocked: &[&str] = &["rm -rf /", "sudo", "curl", "shutdown"];
    let cases: &[(&str, &str)] = &[
        ("ls -la", "ok"),
        ("rm -rf /tmp/x", "ok"),
        ("rm temp.txt", "ok"),
        ("rm -rf", "ok"),
        ("rm -rf /", "blocked: rm -rf /"),
        ("rm -rf / --no-preserve-root", "blocked: rm -rf /"),
        ("/bin/rm -rf /", "blocked: rm -rf /"),
        ("./rm -rf /", "blocked: rm -rf /"),
        ("\"r\"m -rf '/'", "blocked: rm -rf /"),
        ("r\\m -rf /", "blocked: rm -rf /"),
        ("RM -rf /", "blocked: RM -rf /"),
        ("rm.exe -rf /", "blocked: rm.exe -rf /"),
        ("ls; rm -rf /", "blocked: rm -rf /"),
        ("ls && rm -rf /", "blocked: rm -rf /"),
        ("ls || rm -rf /", "blocked: rm -rf /"),
        ("ls | rm -rf /", "blocked: rm -rf /"),
        ("ls & rm -rf /", "blocked: rm -rf /"),
        ("ls\nrm -rf /", "blocked: rm -rf /"),
        ("(rm -rf /)", "blocked: rm -rf /"),
        ("{ rm -rf /; }", "blocked: rm -rf /"),
        ("echo $(rm -rf /)", "blocked: rm -rf /"),
        ("echo `rm -rf /`", "blocked: rm -rf /"),
        ("FOO=1 rm -rf /", "blocked: rm -rf /"),
        ("env rm -rf /", "blocked: rm -rf /"),
        ("nice -n 5 timeout 10 rm -rf /", "blocked: rm -rf /"),
        ("xargs rm -rf /", "blocked: rm -rf /"),
        ("sh -c 'rm -rf /'", "blocked: rm -rf /"),
        ("bash -c \"cd / && rm -rf /\"", "blocked: rm -rf /"),
        ("eval 'rm -rf /'", "blocked: rm -rf /"),
        ("eval rm -rf /", "blocked: rm -rf /"),
        ("find / -maxdepth 0 -exec rm -rf / \\;", "blocked: rm -rf /"),
        ("ls &>/dev/null rm -rf /", "blocked: rm -rf /"),
        ("rm &>x -rf /", "blocked: rm -rf /"),
        ("2>&1 rm -rf /", "blocked: rm -rf /"),
        (
            "rm -rf $DIR",
            "opaque: Cannot tell whether rm -rf $DIR is the blocked command rm -rf /",
        ),
        ("rm -rf \"$DIR\"", "opaque: Cannot tell whether"),
        ("rm -rf /*", "opaque: Cannot tell whether"),
        ("rm -rf {/,x}", "opaque: Cannot tell whether"),
        ("rm -rf *.o", "ok"),
        ("rm $FLAGS /", "opaque: Cannot tell whether"),
        ("xargs rm -rf", "opaque: Cannot tell whether"),
        ("find / -exec rm -rf {} \\;", "opaque: Cannot tell whether"),
        ("sudo ls", "blocked: sudo"),
        ("/usr/bin/sudo -u x ls", "blocked: sudo"),
        ("env sudo ls", "blocked: sudo"),
        ("curl x", "blocked: curl"),
        ("ls && curl x", "blocked: curl"),
        ("echo $(curl x)", "blocked: curl"),
        ("bash -c \"curl x\"", "blocked: curl"),
        ("echo \"curl x\"", "ok"),
        ("echo 'rm -rf /'", "ok"),
        ("grep curl notes.txt", "ok"),
        ("cat <<< 'curl x'", "ok"),
        ("ls > curl", "ok"),
        ("# curl x", "ok"),
    ];
    assert_cases(cases, None, Some(blocked));
}

#[test]
fn only_allowed_programs_pass() {
    let allowed: &[&str] = &[
        "ls",
        "echo",
        "cat",
        "grep",
        "git status",
        "/usr/bin/npm test",
    ];
    let blocked: &[&str] = &["rm -rf /"];
    let cases: &[(&str, &str)] = &[
        ("ls -la", "ok"),
        ("/bin/ls -la", "ok"),
        ("ls | grep x > out", "ok"),
        ("echo $(ls)", "ok"),
        ("FOO=1 ls", "ok"),
        ("git status --short", "ok"),
        ("git push", "not allowed: git"),
        ("git", "not allowed: git"),
        ("git \"$X\"", "not allowed: git"),
        ("git status*", "not allowed: git"),
        ("git \"status$X\"", "not allowed: git"),
        ("npm test", "ok"),
        ("npm install", "not allowed: npm"),
        ("ls; rm -rf /", "blocked: rm -rf /"),
        ("ls; rm x", "not allowed: rm"),
        ("ls && curl x", "not allowed: curl"),
        ("echo $(curl x)", "not allowed: curl"),
        ("echo `rm x`", "not allowed: rm"),
        ("FOO=1 rm", "not allowed: rm"),
        ("env ls", "not allowed: env"),
        ("sudo ls", "not allowed: sudo"),
        ("xargs ls", "not allowed: xargs"),
        ("/bin/rm x", "not allowed: rm"),
        ("./rm x", "not allowed: rm"),
        ("sh -c 'ls'", "not allowed: sh"),
        ("eval 'ls'", "not allowed: eval"),
        ("\"r\"m x", "not allowed: rm"),
        ("r\\m x", "not allowed: rm"),
        ("LS", "not allowed: LS"),
        ("$CMD", "opaque: Cannot tell which command runs: $CMD"),
        ("ls &>/dev/null rm", "not allowed: rm"),
        ("if true; then ls; fi", "not allowed: true"),
        ("for f in *; do cat \"$f\"; done", "ok"),
        ("{ ls; echo; } > out", "ok"),
        ("", "ok"),
    ];
    assert_cases(cases, Some(allowed), Some(blocked));
    assert_cases(&[("ls", "not allowed: ls")], Some(&[]), None);
    assert_eq!(
        check("ls | grep a; ls", Some(&list(allowed)), None),
        Ok(list(&["ls", "grep"]))
    );
}

#[test]
fn denials_read_as_the_spec_words_them() {
    assert_eq!(
        CommandDenial::Blocked("rm -rf /".into()).to_string(),
        "Command is blocked: rm -rf /"
    );
    assert_eq!(
        CommandDenial::NotAllowed("curl".into()).to_string(),
        "Command not in allowed commands: curl"
    );
}

#[test]
fn hostile_input_never_panics_nor_recurses_without_bound() {
    let deep = format!("{}ls{}", "( ".repeat(10_000), ")".repeat(10_000));
    assert!(
        matches!(check(&deep, None, None), Err(CommandDenial::Unanalysable(r)) if r.contains("nested too deeply"))
    );
    // `((…))` is the arithmetic command, whose body `((…ls…))` is refused as arithmetic.
    let arithmetic = format!("{}ls{}", "(".repeat(10_000), ")".repeat(10_000));
    assert!(check(&arithmetic, None, None).is_err());
    let substitutions = format!("{}ls{}", "$(".repeat(5_000), ")".repeat(5_000));
    assert!(check(&substitutions, None, None).is_err());
    let wrappers = format!("{}ls", "env ".repeat(10_000));
    assert!(check(&wrappers, None, None).is_err());
    let stars = format!("rm -rf {}x", "*?".repeat(2_000));
    assert!(check(&stars, None, Some(&list(&["rm -rf /"]))).is_ok());
    for line in [
        "'", "\"", "`", "$", "\\", "$(", "${", "$((", "&>", "<", "é$'\\", "[", "(é", "$'é",
    ] {
        let _ = check(line, Some(&list(&["ls"])), Some(&list(&["rm -rf /"])));
    }
}
