//! The stdio transport with every kind of standard stream the runtime may be given: pipes
//! (the desktop app; driven as non-blocking pipes on the runtime's thread), plain files
//! (tokio's stdio) and a stdout that is also stderr (`2>&1`, kept off the non-blocking
//! path). Each answers a request and exits when its input ends.

use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

const REQUEST: &str =
    "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"GetSessionState\",\"params\":{}}\n";

fn runtime(home: &std::path::Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_agent-runtime"));
    let unreachable = "http://127.0.0.1:9";
    command
        .env_clear()
        .env("HOME", home)
        .env("LLM_GATEWAY_ENDPOINT", format!("{unreachable}/v1"))
        .env("LLM_GATEWAY_AUTH_TOKEN", "test")
        .env("SESSION_SERVICE_URL", unreachable)
        .env("WORKSPACE_SERVICE_URL", unreachable)
        .env("APPROVAL_SERVICE_URL", unreachable)
        .env("LOG_LEVEL", "warn");
    command
}

/// Waits for `child` (whose input has ended) to exit, at most a minute: a runtime that
/// never notices the end of its input fails the test instead of hanging it.
fn exits(mut child: std::process::Child) -> std::process::ExitStatus {
    let (done, exited) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = done.send(child.wait());
    });
    match exited.recv_timeout(Duration::from_secs(60)) {
        Ok(Ok(status)) => status,
        other => panic!("the runtime did not exit after its input ended: {other:?}"),
    }
}

fn assert_answered(output: &str) {
    let answered = output.lines().any(|line| {
        serde_json::from_str::<serde_json::Value>(line)
            .is_ok_and(|value| value["id"] == 7 && value["error"]["message"].is_string())
    });
    assert!(answered, "no answer to request 7 in {output:?}");
}

#[test]
fn pipes_answer_and_the_end_of_input_ends_the_process() {
    use std::io::BufRead;
    let home = tempfile::tempdir().unwrap();
    let mut child = runtime(home.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(REQUEST.as_bytes()).unwrap();
    let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut answer = String::new();
    stdout.read_line(&mut answer).unwrap();
    assert_answered(&answer);
    // Both pipes are driven by the runtime's thread: non-blocking (O_NONBLOCK, 04000).
    #[cfg(target_os = "linux")]
    for fd in [0, 1] {
        let info = std::fs::read_to_string(format!("/proc/{}/fdinfo/{fd}", child.id())).unwrap();
        let flags = info
            .lines()
            .find_map(|line| line.strip_prefix("flags:"))
            .and_then(|flags| u32::from_str_radix(flags.trim(), 8).ok())
            .unwrap();
        assert_ne!(flags & 0o4000, 0, "fd {fd} is blocking: {info}");
    }
    drop(stdin);
    let mut rest = String::new();
    stdout.read_to_string(&mut rest).unwrap();
    assert!(exits(child).success());
}

#[test]
fn files_answer_too() {
    let home = tempfile::tempdir().unwrap();
    let input = home.path().join("input.jsonl");
    let output = home.path().join("output.jsonl");
    std::fs::write(&input, REQUEST).unwrap();
    let child = runtime(home.path())
        .stdin(std::fs::File::open(&input).unwrap())
        .stdout(std::fs::File::create(&output).unwrap())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    assert!(exits(child).success());
    assert_answered(&std::fs::read_to_string(&output).unwrap());
}

#[test]
fn a_stdout_shared_with_stderr_answers_too() {
    let home = tempfile::tempdir().unwrap();
    let (mut read_end, write_end) = std::io::pipe().unwrap();
    let mut child = runtime(home.path())
        .env("LOG_LEVEL", "debug")
        .stdin(Stdio::piped())
        .stdout(write_end.try_clone().unwrap())
        .stderr(write_end)
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(REQUEST.as_bytes())
        .unwrap();
    let mut output = String::new();
    read_end.read_to_string(&mut output).unwrap();
    assert!(exits(child).success());
    assert_answered(&output);
}
