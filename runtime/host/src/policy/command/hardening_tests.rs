//! The classes an attack corpus found: every line here ran a program the
//! allowlist `["echo"]` does not admit (or reached the network), so each must be refused
//! with a reason; the look-alikes that only read values stay allowed.

use super::*;

fn echo_only(line: &str) -> Result<Vec<String>, CommandDenial> {
    check(line, Some(&["echo".to_owned()]), None)
}

#[test]
fn constructs_that_run_hidden_text_are_refused() {
    let cases: &[(&str, &str)] = &[
        ("echo [`touch${IFS}/tmp/x`]", "touch"),
        ("echo [$(touch /tmp/x)]", "touch"),
        ("echo a[`touch x`]b", "touch"),
        ("X='a[$(touch /tmp/x)]'; echo $((X))", "Arithmetic"),
        ("echo $(( X + 1 ))", "Arithmetic"),
        ("echo $(($X))", "Arithmetic"),
        ("echo \"$((X))\"", "Arithmetic"),
        ("echo $[X]", "Arithmetic"),
        ("echo $[1+$X]", "Arithmetic"),
        ("echo ${Y[X]}", "subscript"),
        ("echo \"${Y[i+1]}\"", "subscript"),
        ("echo ${Z:X}", "substring"),
        ("echo ${Z:1:X}", "substring"),
        ("echo ${Z:-$((X))}", "Commands inside"),
        ("echo ${Z:-$[X]}", "Arithmetic"),
        ("echo ${Z:-${Y[X]}}", "subscript"),
        ("X='$(touch /tmp/x)'; echo ${X@P}", "transformations"),
        ("echo ${X@E}", "transformations"),
        ("echo ${X@A}", "transformations"),
        ("echo ${!X}", "Indirect"),
        ("echo ${!X@P}", "Indirect"),
        ("trap 'touch /tmp/x' EXIT; echo hi", "trap"),
        ("trap \"$X\" EXIT", "trap"),
        ("shopt -s expand_aliases; alias e=touch; e x", "shopt"),
        ("alias e=touch", "alias"),
        ("PS4='$(touch x)'; echo", "PS4"),
        ("PROMPT_COMMAND=x echo", "PROMPT_COMMAND"),
        ("echo hi > /dev/tcp/127.0.0.1/80", "/dev/tcp"),
        ("echo hi </dev/udp/10.0.0.1/53", "/dev/tcp or /dev/udp"),
        ("echo hi > /dev/$P/host/80", "/dev/tcp"),
        ("echo hi &>/dev/tcp/h/1", "/dev/tcp"),
        ("F=/dev/tcp/h/1; echo hi > $F", "/dev/tcp"),
        // Found by the bash oracle: an expansion before `>` is no descriptor number.
        ("CMD=touch; $CMD> f", "Cannot tell which command runs"),
        ("$((X))> f", "Arithmetic"),
    ];
    let mut failures = Vec::new();
    for (line, reason) in cases {
        match echo_only(line) {
            Err(CommandDenial::NotAllowed(name)) if name.contains(reason) => {}
            Err(CommandDenial::Unanalysable(why)) if why.contains(reason) => {}
            other => failures.push(format!(
                "{line:?}: expected a denial naming {reason:?}, got {other:?}"
            )),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn builtins_that_evaluate_text_are_refused_even_without_an_allowlist() {
    let cases: &[(&str, &str)] = &[
        ("unset 'a[$(touch x)]'", "subscript"),
        ("unset a[X]", "subscript"),
        ("declare 'a[i]=1'", "subscript"),
        ("printf -v 'a[X]' 1", "subscript"),
        ("read 'a[X]'", "subscript"),
        ("test -v 'a[X]'", "subscript"),
        ("let X", "let"),
        ("let 'a[$(touch x)]'", "let"),
        ("[[ $X -eq 1 ]]", "arithmetic"),
        ("[[ 1 -lt Y ]]", "arithmetic"),
        ("hash -p /bin/rm ls", "hash -p"),
        ("enable -f ./x.so x", "enable -f"),
        ("mapfile -C 'touch x' -c 1 a < f", "mapfile -C"),
        ("compgen -C 'touch x' a", "compgen"),
        ("bind -x '\"a\":touch x'", "bind -x"),
        ("fc -s", "fc"),
        ("trap 'rm -rf /' EXIT", "blocked"),
    ];
    let blocked = ["rm -rf /".to_owned()];
    let mut failures = Vec::new();
    for (line, reason) in cases {
        match check(line, None, Some(&blocked)) {
            Err(denial) if denial.to_string().contains(reason) => {}
            other => failures.push(format!(
                "{line:?}: expected a denial naming {reason:?}, got {other:?}"
            )),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn expansions_that_only_read_values_stay_allowed() {
    for line in [
        "echo $((1 + 2)) $(( (3) * 4 )) $((0x1f)) $((16#ff))",
        "echo $[1+2]",
        "echo ${X} ${X:-default} ${X:=a} ${X#pre} ${X%%.*} ${X/a/b} ${X^^} ${#X}",
        "echo ${X:1:2} ${@:2} ${#} ${#arr[@]} ${arr[0]} ${arr[*]}",
        "echo ${X@Q} ${X@U}",
        "echo ${X:-${Y:-z}}",
        "echo [abc] a[0-9]b",
        "echo hi > /dev/null 2>&1",
        "echo hi >&2",
        "trap '' TERM; echo $$",
        "trap - INT",
        "alias",
        "echo PS4",
    ] {
        let got = check(line, None, None);
        assert!(got.is_ok(), "{line:?}: {got:?}");
    }
}

#[test]
fn redirections_that_write_files_are_listed() {
    let writes =
        |line: &str| analyse(line, None, None, agent_path_rules::Os::OtherUnix).map(|a| a.writes);
    let path = |p: &str| WriteTarget::Path(p.to_owned());
    assert_eq!(writes("echo hi > out.txt 2>&1"), Ok(vec![path("out.txt")]));
    assert_eq!(
        writes("echo a >> log; echo b &> both; echo c >| f; cat <> rw"),
        Ok(vec![path("log"), path("both"), path("f"), path("rw")])
    );
    assert_eq!(writes("echo >&2; cat < in; echo 2>&-"), Ok(vec![]));
    assert_eq!(writes("echo >& file"), Ok(vec![path("file")]));
    assert_eq!(
        writes("echo $(echo x > inner) > \"out/$F\""),
        Ok(vec![
            path("inner"),
            WriteTarget::Unknown("\"out/$F\"".to_owned())
        ])
    );
}
