//! The stdio transport with every kind of standard stream the runtime may be given: pipes
//! (the desktop app; driven as non-blocking pipes on the runtime's thread), plain files
//! (tokio's stdio) and a stdout that is also stderr (`2>&1`, kept off the non-blocking
//! path). Each answers a request and exits when its input ends.

// The sandbox launcher's tests, the path rules' agreement and the named pipe transport share
// this binary (one link instead of four).
mod launcher;
#[cfg(windows)]
mod named_pipe;
mod path_rules;

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

/// Whether `fd` of process `pid` is non-blocking (O_NONBLOCK, 04000 in fdinfo's flags).
#[cfg(target_os = "linux")]
fn nonblocking(pid: u32, fd: i32) -> bool {
    let path = format!("/proc/{pid}/fdinfo/{fd}");
    let Ok(info) = std::fs::read_to_string(&path) else {
        panic!("cannot read {path}");
    };
    let flags = info
        .lines()
        .find_map(|line| line.strip_prefix("flags:"))
        .and_then(|flags| u32::from_str_radix(flags.trim(), 8).ok());
    let Some(flags) = flags else {
        panic!("no flags in {path}: {info}");
    };
    flags & 0o4000 != 0
}

fn assert_answered(output: &str) {
    let answered = output.lines().any(|line| {
        serde_json::from_str::<serde_json::Value>(line)
            .is_ok_and(|value| value["id"] == 7 && value["error"]["message"].is_string())
    });
    assert!(answered, "no answer to request 7 in {output:?}");
}

/// Starts `command` on pipes and has it answer [`REQUEST`]: the child, its input (still
/// open) and the rest of its output.
fn answered(
    command: &mut Command,
) -> (
    std::process::Child,
    std::process::ChildStdin,
    std::io::BufReader<std::process::ChildStdout>,
) {
    use std::io::BufRead;
    let spawned = command.stdin(Stdio::piped()).stdout(Stdio::piped()).spawn();
    let Ok(mut child) = spawned else {
        panic!("cannot start the runtime: {spawned:?}");
    };
    let (Some(mut stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
        panic!("the runtime's pipes are missing");
    };
    let mut stdout = std::io::BufReader::new(stdout);
    let mut answer = String::new();
    let exchanged = stdin
        .write_all(REQUEST.as_bytes())
        .and_then(|()| stdout.read_line(&mut answer));
    assert!(exchanged.is_ok(), "{exchanged:?}");
    assert_answered(&answer);
    (child, stdin, stdout)
}

#[test]
fn pipes_answer_and_the_end_of_input_ends_the_process() {
    let home = tempfile::tempdir().unwrap();
    let (child, stdin, mut stdout) = answered(runtime(home.path()).stderr(Stdio::piped()));
    // Both pipes are driven by the runtime's thread: non-blocking.
    #[cfg(target_os = "linux")]
    for fd in [0, 1] {
        assert!(nonblocking(child.id(), fd), "fd {fd} is blocking");
    }
    drop(stdin);
    let mut rest = String::new();
    stdout.read_to_string(&mut rest).unwrap();
    assert!(exits(child).success());
}

/// The sandbox's private temporary folder (TMPDIR of confined commands, made at start when
/// the OS sandbox is enforced) is removed when the runtime exits, not left in the system's
/// temporary directory by every run.
#[test]
fn the_sandbox_temporary_folder_goes_with_the_process() {
    let home = tempfile::tempdir().unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let ours = |dir: &std::path::Path| -> Vec<String> {
        std::fs::read_dir(dir)
            .unwrap()
            .filter_map(|entry| entry.ok())
            .map(|entry| entry.file_name().to_string_lossy().into_owned())
            .filter(|name| name.starts_with("agent-runtime-sandbox-tmp-"))
            .collect()
    };
    let (child, stdin, mut stdout) = answered(
        runtime(home.path())
            .env("TMPDIR", tmp.path())
            .stderr(Stdio::null()),
    );
    // Where the OS sandbox is enforced (Linux with Landlock) the folder exists by now.
    let while_running = ours(tmp.path());
    drop(stdin);
    let mut rest = String::new();
    stdout.read_to_string(&mut rest).unwrap();
    assert!(exits(child).success());
    let after = ours(tmp.path());
    assert!(
        after.is_empty(),
        "left behind: {after:?} (while running: {while_running:?})"
    );
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
fn a_stdout_shared_with_stderr_answers_and_stays_blocking() {
    use std::io::BufRead;
    let home = tempfile::tempdir().unwrap();
    let (read_end, write_end) = std::io::pipe().unwrap();
    let mut child = runtime(home.path())
        .env("LOG_LEVEL", "debug")
        .stdin(Stdio::piped())
        .stdout(write_end.try_clone().unwrap())
        .stderr(write_end)
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(REQUEST.as_bytes()).unwrap();
    let mut output = std::io::BufReader::new(read_end);
    let mut seen = String::new();
    while !seen.lines().any(|line| line.starts_with("{\"jsonrpc\"")) {
        assert_ne!(output.read_line(&mut seen).unwrap(), 0, "ended: {seen}");
    }
    // O_NONBLOCK on the shared description would reach the log writer too.
    #[cfg(target_os = "linux")]
    {
        assert!(
            nonblocking(child.id(), 0),
            "stdin is still a pipe of its own"
        );
        assert!(!nonblocking(child.id(), 1), "stdout is shared with stderr");
    }
    drop(stdin);
    output.read_to_string(&mut seen).unwrap();
    assert!(exits(child).success());
    assert_answered(&seen);
}

/// libuv (Node, Electron) gives a child sockets, not pipes, as its stdio.
#[cfg(unix)]
#[test]
fn a_socket_answers_too() {
    use std::io::BufRead;
    use std::os::unix::net::UnixStream;
    let home = tempfile::tempdir().unwrap();
    let (ours, theirs) = UnixStream::pair().unwrap();
    let child = runtime(home.path())
        .stdin(std::os::fd::OwnedFd::from(theirs.try_clone().unwrap()))
        .stdout(std::os::fd::OwnedFd::from(theirs))
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    (&ours).write_all(REQUEST.as_bytes()).unwrap();
    let mut answer = String::new();
    std::io::BufReader::new(&ours)
        .read_line(&mut answer)
        .unwrap();
    assert_answered(&answer);
    #[cfg(target_os = "linux")]
    assert!(nonblocking(child.id(), 0) && nonblocking(child.id(), 1));
    ours.shutdown(std::net::Shutdown::Write).unwrap();
    assert!(exits(child).success());
}

/// The runtime leaves its stdin as it found it: blocking, for whoever shares it.
#[cfg(target_os = "linux")]
#[test]
fn stdin_is_blocking_again_once_the_runtime_exits() {
    use std::os::fd::AsRawFd;
    let home = tempfile::tempdir().unwrap();
    let (read_end, mut write_end) = std::io::pipe().unwrap();
    let mut child = runtime(home.path())
        .stdin(read_end.try_clone().unwrap())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    write_end.write_all(REQUEST.as_bytes()).unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let mut first = [0u8; 1];
    stdout.read_exact(&mut first).unwrap();
    // The same open file description as the child's fd 0.
    assert!(nonblocking(std::process::id(), read_end.as_raw_fd()));
    drop(write_end);
    let mut rest = String::new();
    stdout.read_to_string(&mut rest).unwrap();
    assert!(exits(child).success());
    assert!(!nonblocking(std::process::id(), read_end.as_raw_fd()));
}
