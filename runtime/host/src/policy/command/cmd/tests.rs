//! Table tests of the cmd.exe reading, with the Windows grammar chosen by argument: every
//! program a line runs is found, hostile spellings are caught, and what cannot be told is
//! denied with its reason.

use agent_path_rules::Os;

use super::super::{Analysis, CommandDenial, WriteTarget, analyse};

fn list(items: &[&str]) -> Vec<String> {
    items.iter().map(|item| (*item).to_owned()).collect()
}

fn cmd(
    line: &str,
    allowed: Option<&[&str]>,
    blocked: Option<&[&str]>,
) -> Result<Analysis, CommandDenial> {
    let allowed = allowed.map(list);
    let blocked = blocked.map(list);
    analyse(line, allowed.as_deref(), blocked.as_deref(), Os::Windows)
}

/// "ok", "blocked: …", "not allowed: …" or "opaque: <reason>".
fn verdict(line: &str, allowed: Option<&[&str]>, blocked: Option<&[&str]>) -> String {
    match cmd(line, allowed, blocked) {
        Ok(_) => "ok".to_owned(),
        Err(CommandDenial::Blocked(what)) => format!("blocked: {what}"),
        Err(CommandDenial::NotAllowed(what)) => format!("not allowed: {what}"),
        Err(CommandDenial::Unanalysable(why)) => format!("opaque: {why}"),
    }
}

fn assert_cases(cases: &[(&str, &str)], allowed: Option<&[&str]>, blocked: Option<&[&str]>) {
    crate::testing::assert_cases(cases, "opaque: ", |line| verdict(line, allowed, blocked));
}

/// The kit's Windows forms of its commands.
const KIT_LINES: &[&str] = &[
    "for /L %i in (1,1,3000) do @echo %i",
    "type nul > started& (for /L %i in (1,1,30) do @if not exist release ping -n 2 127.0.0.1 >nul)& echo finished",
    "echo to-stdout& echo to-stderr>&2",
    "set A=sk-proj-& call echo key=%A%Zx9Qw8Er7Ty6Ui5Op4As& echo the-command-ran",
    "cd& set /p LINE=& call echo %LINE%",
    "type nul > started& (for /L %i in (1,1,30) do @if not exist release ping -n 2 127.0.0.1 >nul)& set /a N=40+2 >nul& call echo finished-%N%",
    "(for /L %i in (1,1,30) do @if not exist release ping -n 2 127.0.0.1 >nul)& echo result-one",
    "echo %DEPLOY_API_TOKEN%& echo %LLM_GATEWAY_AUTH_TOKEN%& echo visible-after-the-secrets",
    "echo partial& exit 3",
    "echo a & exit /b 3",
    "type nul > pids& ping -n 30 127.0.0.1",
];

#[test]
fn the_kits_windows_lines_pass_and_are_judged() {
    for line in KIT_LINES {
        assert!(
            cmd(line, None, None).is_ok(),
            "{line}: {:?}",
            cmd(line, None, None)
        );
    }
    let blocked: &[&str] = &["del", "rd /s", "powershell"];
    for line in KIT_LINES {
        let verdict = verdict(line, None, Some(blocked));
        // `set /p` reads a value the model sends as input, and `call` parses it again.
        let want = if line.contains("set /p") {
            "opaque: Cannot tell which commands run: call expands %LINE% again"
        } else {
            "ok"
        };
        assert!(verdict.starts_with(want), "{line}: {verdict}");
    }
    let names: &[&str] = &["echo", "type", "ping", "set", "call", "exit"];
    for line in KIT_LINES.iter().filter(|line| !line.contains("set /p")) {
        assert_eq!(verdict(line, Some(names), None), "ok", "{line}");
    }
    assert_eq!(
        verdict(KIT_LINES[1], Some(&["echo", "type"]), None),
        "not allowed: ping"
    );
    let programs = |line: &str| cmd(line, None, None).unwrap().programs;
    assert_eq!(programs(KIT_LINES[0]), list(&["echo"]));
    assert_eq!(programs(KIT_LINES[1]), list(&["type", "ping", "echo"]));
    assert_eq!(programs(KIT_LINES[3]), list(&["set", "call", "echo"]));
    assert_eq!(programs(KIT_LINES[4]), list(&["cd", "set", "call", "echo"]));
}

#[test]
fn every_program_of_a_cmd_line_is_found() {
    let cases: &[(&str, &[&str])] = &[
        ("", &[]),
        ("a & b && c || d", &["a", "b", "c", "d"]),
        ("a | b | c", &["a", "b", "c"]),
        ("(a & (b)) & c", &["a", "b", "c"]),
        ("@echo off", &["echo"]),
        ("  ,;= @ calc", &["calc"]),
        ("dir/w", &["dir"]),
        ("del/q x", &["del"]),
        ("rd,/s x", &["rd"]),
        ("echo.", &["echo.", "echo"]),
        ("echo(hi", &["echo"]),
        ("C:\\Windows\\System32\\DEL.EXE x", &["DEL.EXE"]),
        ("..\\x\\rm.bat y", &["rm.bat"]),
        ("\"C:\\Program Files\\x\\calc.exe\" a", &["calc.exe"]),
        ("\"calc\" x", &["calc"]),
        ("c^alc", &["calc"]),
        ("echo ^& calc", &["echo"]),
        ("echo \"& calc\"", &["echo"]),
        ("echo a & :: note & calc", &["echo", "calc"]),
        ("rem note & calc", &["calc"]),
        ("> out echo hi", &["echo"]),
        ("2>nul del x", &["del"]),
        ("if exist x del y", &["del"]),
        (
            "if /i not \"a\"==\"b\" (del x) else (calc)",
            &["del", "calc"],
        ),
        ("if errorlevel 1 calc", &["calc"]),
        ("if defined X calc", &["calc"]),
        ("if a equ b calc", &["calc"]),
        ("if a==b calc", &["calc"]),
        ("if 1==1(calc)", &["calc"]),
        ("for %i in(a)do(calc)", &["calc"]),
        (
            "if exist a (echo a) else if exist b (calc) else notepad",
            &["echo", "calc", "notepad"],
        ),
        ("if a == b calc & notepad", &["calc", "notepad"]),
        ("if 1==1 echo a else calc", &["echo", "calc"]),
        ("for %i in (*.txt) do del %i", &["del"]),
        ("for/L %i in (1,1,3) do calc", &["calc"]),
        ("f^or /L %i in (1,1,3) do calc", &["calc"]),
        ("for /r C:\\x %i in (*) do calc", &["calc"]),
        ("for /d %i in (*) do (calc & notepad)", &["calc", "notepad"]),
        (
            "for /f \"tokens=1\" %i in ('where calc') do calc",
            &["where", "calc"],
        ),
        (
            "for /f \"usebackq\" %i in (`del x`) do echo %i",
            &["del", "echo"],
        ),
        ("set X=1& echo %X%", &["set", "echo"]),
        ("call calc", &["call", "calc"]),
        ("call echo a^&calc", &["call", "echo", "calc"]),
        ("cmd /c del x", &["cmd", "del"]),
        ("cmd /s /c \"del x\"", &["cmd", "del"]),
        ("cmd /d /q /v:on /c del", &["cmd", "del"]),
        ("cmd /c \"echo\" \"&calc\"", &["cmd", "echo ", "calc"]),
        ("cmd /c echo a^&calc", &["cmd", "echo", "calc"]),
        ("start \"\" /b /wait calc x", &["start", "calc"]),
        ("start /d C:\\x calc", &["start", "calc"]),
        ("start \"title\" cmd /c del x", &["start", "cmd", "del"]),
        ("echo a | findstr a", &["echo", "findstr"]),
        ("echo x ^& calc | more", &["echo", "calc", "more"]),
    ];
    let mut failures = Vec::new();
    for (line, expected) in cases {
        match cmd(line, None, None) {
            Ok(found) if found.programs == list(expected) => {}
            other => failures.push(format!("{line:?}: expected {expected:?}, got {other:?}")),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn hidden_blocked_programs_are_caught() {
    let blocked: &[&str] = &["del", "rd /s", "format"];
    let cases: &[(&str, &str)] = &[
        ("dir", "ok"),
        ("rd x", "ok"),
        ("echo del", "ok"),
        ("echo \"x & del y\"", "ok"),
        ("echo x ^& del y", "ok"),
        ("type del.txt > del", "ok"),
        ("d^el x", "blocked: del"),
        ("\"del\" x", "blocked: del"),
        ("\"d\"el x", "blocked: del"),
        ("DEL x", "blocked: DEL"),
        ("del.exe x", "blocked: del.exe"),
        ("del.bat x", "blocked: del.bat"),
        ("DeL.CmD x", "blocked: DeL.CmD"),
        ("del. x", "blocked: del."),
        ("C:\\Windows\\System32\\DEL.EXE x", "blocked: DEL.EXE"),
        ("..\\x\\del.com", "blocked: del.com"),
        ("C:del x", "blocked: C:del"),
        ("del.exe::$DATA x", "blocked: del.exe::$DATA"),
        ("@del x", "blocked: del"),
        ("^@del x", "blocked: @del"),
        (",;=del x", "blocked: del"),
        ("del/q x", "blocked: del"),
        ("(del x)", "blocked: del"),
        ("((echo a) & ((del x)))", "blocked: del"),
        ("echo a&&del x", "blocked: del"),
        ("echo a||del x", "blocked: del"),
        ("echo a|del x", "blocked: del"),
        ("if 1==1 del x", "blocked: del"),
        ("if exist y (echo a) else (del x)", "blocked: del"),
        ("if exist y (echo a) else del x", "blocked: del"),
        ("for %i in (a) do del %i", "blocked: del"),
        ("for /f %i in ('del x') do echo %i", "blocked: del"),
        ("for /f %i in ('echo a^&del x') do echo %i", "blocked: del"),
        (
            "for /f %i in ('echo a ^| del x') do echo %i",
            "blocked: del",
        ),
        (
            "for /f \"usebackq\" %i in (`del x`) do echo",
            "blocked: del",
        ),
        ("start \"\" del x", "blocked: del"),
        ("start /b /min del", "blocked: del"),
        ("start \"d\"el x", "blocked: del"),
        ("start \"t\" \"del\" x", "blocked: del"),
        ("start \"t\" /min cmd /c del x", "blocked: del"),
        ("cmd/c del", "blocked: del"),
        ("c^md /c del x", "blocked: del"),
        ("cmd /c \"del\" x", "blocked: del"),
        ("cmd /c \"echo\" \"&del x\"", "blocked: del"),
        ("cmd /c \"\"C:\\x\\del.exe\" y\"", "blocked: del.exe"),
        ("cmd /c echo a^&del x", "blocked: del"),
        ("cmd /c cmd /c del x", "blocked: del"),
        ("call del x", "blocked: del"),
        ("call echo a^&del x", "blocked: del"),
        ("call echo a^^^&del x", "blocked: del"),
        ("echo x ^& del y | more", "blocked: del"),
        ("echo \"x\" | (del y)", "blocked: del"),
        ("rd /S /Q C:\\", "blocked: rd /s"),
        ("RD /s x", "blocked: RD /s"),
        ("rd,/s x", "blocked: rd /s"),
        ("rd /s,/q x", "blocked: rd /s"),
        ("rmdir /s x", "blocked: rmdir /s"),
        ("erase x", "blocked: erase"),
        ("ERASE.exe x", "blocked: ERASE.exe"),
        (
            "rd %X% x",
            "opaque: Cannot tell whether rd %X% x is the blocked command rd /s",
        ),
        (
            "%COMSPEC% /c del",
            "opaque: Cannot tell which command runs: %COMSPEC%",
        ),
        ("!X! x", "opaque: Cannot tell which command runs: !X!"),
        (
            "set X=del& call %X% x",
            "opaque: Cannot tell which command runs: %X%",
        ),
        ("cmd /c %X%", "opaque: Cannot tell which command runs: %X%"),
        (
            "set X=a^&del x& call echo %X%",
            "opaque: Cannot tell which commands run: call expands %X% again",
        ),
        (
            "set /p X=& echo %X% | more",
            "opaque: Cannot tell which commands run: a pipe expands %X% again",
        ),
        (
            "for %i in (a) do echo %i | more",
            "opaque: Cannot tell which commands run: a pipe inside a loop expands",
        ),
        (
            "set X=a^&del x& set X=b | sort.exe & call echo %X%",
            "opaque: Cannot tell which commands run: call expands %X% again",
        ),
        (
            "foo& call echo %X%",
            "opaque: Cannot tell which commands run: call expands %X% again",
        ),
    ];
    assert_cases(cases, None, Some(blocked));
}

#[test]
// A table of cases: its length is the list's.
#[allow(clippy::too_many_lines)]
fn what_cannot_be_told_is_denied_with_the_reason() {
    let cases: &[(&str, &str)] = &[
        (
            "echo \"abc",
            "opaque: Cannot tell which commands run: unbalanced double quote",
        ),
        (
            "(echo a",
            "opaque: Cannot tell which commands run: unbalanced parenthesis",
        ),
        (
            "echo a)",
            "opaque: Cannot tell which commands run: unbalanced parenthesis",
        ),
        (
            "(echo a))",
            "opaque: Cannot tell which commands run: unbalanced parenthesis",
        ),
        ("echo a\ndel x", "opaque: Line breaks are not analysed"),
        ("echo a\r\ndel x", "opaque: Line breaks are not analysed"),
        (
            "echo %PATH:~0,1%",
            "opaque: Cannot tell which commands run: substrings",
        ),
        (
            "echo %X:a=&%",
            "opaque: Cannot tell which commands run: substrings",
        ),
        (
            "echo %CD%",
            "opaque: Cannot tell which commands run: %CD% holds text",
        ),
        (
            "echo %cmdcmdline%",
            "opaque: Cannot tell which commands run: %cmdcmdline%",
        ),
        ("echo %=C:%", "opaque: Cannot tell which commands run"),
        (
            "if a b calc",
            "opaque: Cannot tell which commands run: the condition of if",
        ),
        (
            "if",
            "opaque: Cannot tell which commands run: if is incomplete",
        ),
        (
            "for %i do calc",
            "opaque: Cannot tell which commands run: the for command",
        ),
        (
            "for /x %i in (a) do calc",
            "opaque: Cannot tell which commands run: the for option /x",
        ),
        (
            "for %i in (a do calc",
            "opaque: Cannot tell which commands run: unbalanced parenthesis",
        ),
        (
            "for /f %i in ('del x) do echo",
            "opaque: Cannot tell which commands run: unbalanced quote",
        ),
        (
            "cmd /z /c calc",
            "opaque: Cannot tell which command cmd runs: its option /z",
        ),
        (
            "cmd x /c calc",
            "opaque: Cannot tell which command cmd runs: x /c calc",
        ),
        (
            "echo del x | cmd",
            "opaque: Cannot tell which commands cmd runs: without /c",
        ),
        (
            "cmd /q < script.txt",
            "opaque: Cannot tell which commands cmd runs: without /c",
        ),
        (
            "cmd /k echo a",
            "opaque: Cannot tell which commands cmd runs: without /c",
        ),
        (
            "start /foo calc",
            "opaque: Cannot tell which command start runs: its option /foo",
        ),
        (
            "(\"del\") x",
            "opaque: Cannot tell which commands run: unexpected text after a block",
        ),
        (
            "echo >",
            "opaque: Cannot tell which commands run: a redirection has no target",
        ),
        (
            "echo >&x",
            "opaque: Cannot tell which commands run: a redirection to a handle",
        ),
        ("echo\0", "opaque: Command contains a NUL byte"),
        (
            "if exist==exist calc",
            "opaque: Cannot tell which commands run: the condition of if",
        ),
        (
            "for %i in (a>b) do echo",
            "opaque: Cannot tell which commands run: an operator or redirection in the set",
        ),
        (
            "for /f %i in ('dir | find x') do echo",
            "opaque: Cannot tell which commands run: an operator or redirection in the set",
        ),
        (
            "set COMSPEC=calc.exe& echo a | more",
            "opaque: Setting ComSpec is not allowed",
        ),
        (
            "set \"ComSpec=x\"",
            "opaque: Setting ComSpec is not allowed",
        ),
        (
            "c^^md /c del x !",
            "opaque: Cannot tell which command runs: c^^md",
        ),
        (
            "for. %i in a do calc",
            "opaque: Cannot tell which commands run: for. may be for",
        ),
        (
            "IF[ a==a calc",
            "opaque: Cannot tell which commands run: IF[ may be if",
        ),
        (
            "rem.x & calc",
            "opaque: Cannot tell which commands run: rem.x may be rem",
        ),
        (
            "(echo a\u{1a}del x)",
            "opaque: Control characters are not analysed",
        ),
        ("del\u{c}x", "opaque: Control characters are not analysed"),
    ];
    assert_cases(cases, None, None);
    let deep = format!("{}calc{}", "(".repeat(200), ")".repeat(200));
    assert!(verdict(&deep, None, None).contains("nested too deeply"));
    let calls = format!("{}calc", "cmd /c ".repeat(200));
    assert!(verdict(&calls, None, None).contains("nested too deeply"));
}

#[test]
fn only_allowed_programs_pass_and_cmd_syntax_needs_no_entry() {
    let allowed: &[&str] = &["echo", "type", "git status"];
    let cases: &[(&str, &str)] = &[
        ("echo a & type x", "ok"),
        ("@echo a", "ok"),
        ("for /L %i in (1,1,3) do @echo %i", "ok"),
        ("if 1==1 (echo a) else (type b)", "ok"),
        ("rem anything", "ok"),
        ("git status", "ok"),
        ("echo a & del x", "not allowed: del"),
        ("set X=1", "not allowed: set"),
        ("call echo a", "not allowed: call"),
        ("git status,x", "not allowed: git"),
        ("git \"status\"x", "not allowed: git"),
        ("ECHO a", "not allowed: ECHO"),
        ("echo. a", "not allowed: echo."),
        ("cmd /c echo a", "not allowed: cmd"),
        ("echo %X% a", "ok"),
        (
            "cd& set /p LINE=& call echo %LINE%",
            "opaque: Cannot tell which commands run: call expands %LINE% again",
        ),
    ];
    assert_cases(cases, Some(allowed), None);
}

#[test]
fn redirection_targets_are_the_files_written() {
    let writes = |line: &str| cmd(line, None, None).map(|analysis| analysis.writes);
    let path = |p: &str| WriteTarget::Path(p.to_owned());
    assert_eq!(writes("type nul > started"), Ok(vec![path("started")]));
    assert_eq!(
        writes("echo a>>log.txt 2>err.txt <in.txt"),
        Ok(vec![path("log.txt"), path("err.txt")])
    );
    assert_eq!(writes("echo a 2>&1 >&2 1>&2"), Ok(vec![]));
    assert_eq!(writes("echo a 2>>err.log"), Ok(vec![path("err.log")]));
    assert_eq!(writes("echo a 1>out 0<in"), Ok(vec![path("out")]));
    assert_eq!(
        writes("echo a > \"out file.txt\""),
        Ok(vec![path("out file.txt")])
    );
    assert_eq!(
        writes("echo a > %TEMP%\\x"),
        Ok(vec![WriteTarget::Unknown("%TEMP%\\x".to_owned())])
    );
    assert_eq!(writes("(echo a) > out"), Ok(vec![path("out")]));
    assert_eq!(writes("echo a ^> notafile"), Ok(vec![]));
    assert_eq!(writes("echo \"a > b\""), Ok(vec![]));
    assert_eq!(writes("cmd /c \"echo a > x\""), Ok(vec![path("x")]));
    assert_eq!(writes(">out echo a"), Ok(vec![path("out")]));
}

#[test]
fn hostile_input_never_panics_nor_takes_long() {
    let started = std::time::Instant::now();
    let mut nested = "a".to_owned();
    for _ in 0..11 {
        nested = format!("({nested}|b)|c");
    }
    let _ = cmd(&nested, None, Some(&["del"]));
    let pipes = "echo a|".repeat(3000) + "echo b";
    assert!(cmd(&pipes, None, Some(&["del"])).is_ok());
    let calls = "call ".repeat(3000) + "echo";
    let _ = cmd(&calls, None, None);
    let mut wrapped = "del x".to_owned();
    for _ in 0..12 {
        wrapped = format!(
            "cmd /c \"{wrapped}\" & start \"\" {wrapped} | for /f %i in ('x') do {wrapped}"
        );
        wrapped.truncate(20_000);
    }
    let _ = cmd(&wrapped, None, Some(&["del"]));
    for line in [
        "^", "\"", "(", ")", "%", "!", "if", "for", "cmd /c", "start", "set", "call", "é^", "(é",
        "^é",
    ] {
        let _ = cmd(line, Some(&["echo"]), Some(&["del"]));
    }
    assert!(
        started.elapsed() < std::time::Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );
}
