//! RunCommand against real processes (unix shells), and its pure parts everywhere.

// The real-process tests, and so most helpers, are Unix-only.
#![cfg_attr(not(unix), allow(unused_imports, dead_code))]

use std::time::Instant;

use agent_protocol::ToolStatus;
use serde_json::{Value, json};

use super::*;
use crate::testing::{decoded, request};

fn command_request(dir: &Path, args: Value, timeout_ms: Option<u64>) -> ToolRequest {
    let mut request = request("RunCommand", dir, args);
    request.limits.timeout_ms = timeout_ms;
    request
}

/// Runs with a 20 s command timeout, and fails a call that hangs regardless.
async fn run_with(tool: &RunCommand, dir: &Path, args: Value) -> ToolResult {
    bounded(tool.run(&command_request(dir, args, Some(20_000)))).await
}

async fn bounded(call: impl Future<Output = ToolResult>) -> ToolResult {
    tokio::time::timeout(Duration::from_secs(30), call)
        .await
        .expect("the call hung")
}

async fn run(dir: &Path, args: Value) -> ToolResult {
    run_with(&RunCommand::new(), dir, args).await
}

fn text(result: &ToolResult) -> &str {
    result.output_text.as_deref().unwrap_or_default()
}

fn error(result: ToolResult) -> (ErrorCode, String) {
    let error = result.error.unwrap();
    (error.code, error.message)
}

#[test]
fn pure_parts_format_seconds_limits_and_layout() {
    assert_eq!(seconds(Duration::from_secs(300)), "300");
    assert_eq!(seconds(Duration::from_millis(300)), "0.3");
    assert_eq!(seconds(Duration::from_millis(1250)), "1.25");
    assert_eq!(effective_timeout(None, None), Duration::from_secs(300));
    assert_eq!(
        effective_timeout(Some(10), Some(200)),
        Duration::from_millis(200)
    );
    assert_eq!(
        effective_timeout(Some(1), Some(5000)),
        Duration::from_secs(1)
    );
    let empty = Clipped::default();
    assert_eq!(
        format_output(Exit::Code(0), &empty, &empty, 100),
        "Exit code: 0\n--- stdout ---\n--- stderr ---\n"
    );
    assert_eq!(
        format_output(
            Exit::Signal(9),
            &Clipped::whole("a"),
            &Clipped::whole("b\n"),
            100
        ),
        "Exit code: 137 (terminated by signal 9)\n--- stdout ---\na\n--- stderr ---\nb\n"
    );
    assert!(format_output(Exit::TimedOut, &empty, &empty, 100).starts_with("Exit code: none"));
    assert_eq!(
        validate_command("  \n"),
        Err("RunCommand: the command is empty".into())
    );
    assert!(validate_command("a\0b").unwrap_err().contains("NUL"));
}

#[test]
fn the_definition_states_the_spec_description_and_bounds() {
    let definition = RunCommand::new().definition();
    assert_eq!(
        definition.description,
        "Execute a shell command and return stdout, stderr, and exit code"
    );
    let schema = &definition.input_schema;
    assert_eq!(schema["required"], json!(["command"]));
    assert_eq!(schema["additionalProperties"], json!(false));
    assert_eq!(schema["properties"]["timeout"]["minimum"], json!(1));
    assert_eq!(schema["properties"]["timeout"]["maximum"], json!(600));
    assert_eq!(schema["properties"]["timeout"]["default"], json!(300));
}

#[tokio::test]
async fn invalid_arguments_are_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    for (args, needle) in [
        (json!({"command": "  "}), "the command is empty"),
        (json!({"command": "echo a\u{0}b"}), "NUL"),
        (
            json!({"command": "true", "timeout": 0}),
            "\"timeout\" must be an integer between 1 and 600, got 0",
        ),
        (json!({"command": "true", "timeout": 601}), "got 601"),
        (
            json!({"command": "true", "timeout": "10"}),
            "\"timeout\" must be an integer",
        ),
        (
            json!({"command": "true", "shell": "bash"}),
            "unknown argument \"shell\"",
        ),
        (json!({"cwd": "."}), "missing required argument \"command\""),
    ] {
        let (code, message) = error(run(dir.path(), args.clone()).await);
        assert_eq!(code, ErrorCode::InvalidRequest, "{args}");
        assert!(message.contains(needle), "{args}: {message}");
    }
}

#[cfg(unix)]
mod unix {
    use super::*;

    /// Whether `pid` is a process that is still running (not gone, not a zombie).
    fn running(pid: &str) -> bool {
        let output = std::process::Command::new("ps")
            .args(["-o", "stat=", "-p", pid])
            .output()
            .unwrap();
        let stat = String::from_utf8_lossy(&output.stdout);
        !stat.trim().is_empty() && !stat.trim().starts_with('Z')
    }

    #[tokio::test]
    async fn exit_code_stdout_and_stderr_use_the_spec_layout() {
        let dir = tempfile::tempdir().unwrap();
        let hello = run(dir.path(), json!({"command": "echo hello"})).await;
        assert_eq!(hello.status, ToolStatus::Succeeded);
        assert_eq!(
            text(&hello),
            "Exit code: 0\n--- stdout ---\nhello\n--- stderr ---\n"
        );
        // A failing command is a succeeded call: the model reads the code and the output.
        let failing = run(
            dir.path(),
            json!({"command": "printf out; echo err >&2; exit 3"}),
        )
        .await;
        assert_eq!(failing.status, ToolStatus::Succeeded);
        assert_eq!(
            text(&failing),
            "Exit code: 3\n--- stdout ---\nout\n--- stderr ---\nerr\n"
        );
        assert!(failing.artifacts.is_empty());
        let killed = run(dir.path(), json!({"command": "kill -9 $$"})).await;
        assert_eq!(
            text(&killed),
            "Exit code: 137 (terminated by signal 9)\n--- stdout ---\n--- stderr ---\n"
        );
    }

    #[tokio::test]
    async fn stdin_is_piped_when_given_and_empty_otherwise() {
        let dir = tempfile::tempdir().unwrap();
        let piped = run(dir.path(), json!({"command": "cat", "stdin": "a\nb"})).await;
        assert_eq!(
            text(&piped),
            "Exit code: 0\n--- stdout ---\na\nb\n--- stderr ---\n"
        );
        let none = run(dir.path(), json!({"command": "cat; echo done"})).await;
        assert_eq!(
            text(&none),
            "Exit code: 0\n--- stdout ---\ndone\n--- stderr ---\n"
        );
        // A command that never reads a large stdin still finishes.
        let ignored = run(
            dir.path(),
            json!({"command": "echo ok", "stdin": "x".repeat(4 << 20)}),
        )
        .await;
        assert_eq!(
            text(&ignored),
            "Exit code: 0\n--- stdout ---\nok\n--- stderr ---\n"
        );
    }

    #[tokio::test]
    async fn cwd_defaults_to_the_project_folder_and_resolves_against_it() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::create_dir(root.join("sub")).unwrap();
        std::fs::write(root.join("file"), "").unwrap();
        let default = run(dir.path(), json!({"command": "pwd -P"})).await;
        assert!(
            text(&default).contains(&format!("\n{}\n", root.display())),
            "{default:?}"
        );
        let sub = run(dir.path(), json!({"command": "pwd -P", "cwd": "sub"})).await;
        assert!(text(&sub).contains(&format!("\n{}\n", root.join("sub").display())));
        let (code, message) =
            error(run(dir.path(), json!({"command": "pwd", "cwd": "nope"})).await);
        assert_eq!(code, ErrorCode::FileNotFound);
        assert!(message.contains("nope"), "{message}");
        let (code, _) = error(run(dir.path(), json!({"command": "pwd", "cwd": "file"})).await);
        assert_eq!(code, ErrorCode::InvalidRequest);
    }

    #[tokio::test]
    async fn crlf_is_normalised_in_both_streams() {
        let dir = tempfile::tempdir().unwrap();
        let result = run(
            dir.path(),
            json!({"command": r"printf 'a\r\nb\r\n'; printf 'e\r\n' >&2"}),
        )
        .await;
        assert_eq!(
            text(&result),
            "Exit code: 0\n--- stdout ---\na\nb\n--- stderr ---\ne\n"
        );
    }

    #[tokio::test]
    async fn output_over_max_output_bytes_keeps_head_and_tail_and_short_stderr_whole() {
        let dir = tempfile::tempdir().unwrap();
        let mut request = command_request(
            dir.path(),
            json!({"command": r"head -c 3000 /dev/zero | tr '\0' a; echo E >&2"}),
            Some(20_000),
        );
        request.limits.max_output_bytes = Some(1000);
        let result = bounded(RunCommand::new().run(&request)).await;
        // stderr needs 2 bytes of the 1000; stdout gets 998: 798 head, 200 tail.
        let expected = format!(
            "Exit code: 0\n--- stdout ---\n{}\n[... truncated 2002 bytes ...]\n{}\n--- stderr ---\nE\n",
            "a".repeat(798),
            "a".repeat(200)
        );
        assert_eq!(text(&result), expected);
    }

    #[tokio::test]
    async fn stdout_over_10_kib_is_also_a_tool_output_artifact() {
        let dir = tempfile::tempdir().unwrap();
        let at = run(
            dir.path(),
            json!({"command": r"head -c 10240 /dev/zero | tr '\0' x"}),
        )
        .await;
        assert!(at.artifacts.is_empty());
        let over = run(
            dir.path(),
            json!({"command": r"head -c 10241 /dev/zero | tr '\0' x"}),
        )
        .await;
        let [artifact] = &over.artifacts[..] else {
            panic!("{:?}", over.artifacts)
        };
        assert_eq!(artifact.artifact_type, "tool_output");
        assert_eq!(artifact.content_type, "text/plain");
        assert_eq!(artifact.artifact_name, "stdout.txt");
        assert_eq!(decoded(artifact), "x".repeat(10241));
    }

    #[tokio::test]
    async fn a_flood_is_captured_within_the_cap() {
        let dir = tempfile::tempdir().unwrap();
        let tool = RunCommand::new().with_capture_bytes(1 << 20);
        let result = run_with(
            &tool,
            dir.path(),
            json!({"command": "yes | head -c 50000000"}),
        )
        .await;
        assert_eq!(result.status, ToolStatus::Succeeded);
        let shown = text(&result);
        assert!(
            shown.starts_with("Exit code: 0\n--- stdout ---\ny\ny\n"),
            "{}",
            &shown[..40]
        );
        // 100 KiB shown of 50 MB: the marker counts every byte left out.
        assert!(shown.contains(&format!(
            "\n[... truncated {} bytes ...]\n",
            50_000_000 - 102_400
        )));
        assert!(shown.len() < 102_400 + 200);
        let kept = decoded(&result.artifacts[0]);
        assert!(kept.contains(&format!(
            "[... truncated {} bytes ...]",
            50_000_000 - (1 << 20)
        )));
        assert!(kept.len() < (1 << 20) + 100);
    }

    #[tokio::test]
    async fn a_command_that_floods_forever_is_stopped_at_the_timeout() {
        let dir = tempfile::tempdir().unwrap();
        let tool = RunCommand::new().with_capture_bytes(1 << 20);
        let started = Instant::now();
        let result = bounded(tool.run(&command_request(
            dir.path(),
            json!({"command": "yes"}),
            Some(300),
        )))
        .await;
        assert!(
            started.elapsed() < Duration::from_secs(4),
            "{:?}",
            started.elapsed()
        );
        assert_eq!(result.status, ToolStatus::Failed);
        let shown = result.output_text.clone().unwrap();
        assert!(shown.len() < 102_400 + 200);
        assert!(decoded(&result.artifacts[0]).len() < (1 << 20) + 100);
        assert_eq!(
            error(result),
            (
                ErrorCode::ToolExecutionTimeout,
                "Command timed out after 0.3 seconds".into()
            )
        );
    }

    #[tokio::test]
    async fn a_timed_out_command_is_ended_without_waiting_out_the_grace() {
        let dir = tempfile::tempdir().unwrap();
        let started = Instant::now();
        let result = bounded(RunCommand::new().run(&command_request(
            dir.path(),
            json!({"command": "sleep 30"}),
            Some(200),
        )))
        .await;
        // SIGTERM ends `sleep`; the default 5 s grace must not be waited out.
        assert!(
            started.elapsed() < Duration::from_secs(3),
            "{:?}",
            started.elapsed()
        );
        assert_eq!(
            error(result),
            (
                ErrorCode::ToolExecutionTimeout,
                "Command timed out after 0.2 seconds".into()
            )
        );
    }

    #[tokio::test]
    async fn a_grandchild_that_ignores_sigterm_is_killed_with_the_tree() {
        let dir = tempfile::tempdir().unwrap();
        let grace = Duration::from_millis(200);
        let tool = RunCommand::new().with_kill_grace(grace);
        // One grandchild ignores SIGTERM (as do the `sleep`s it starts), reports its pid and
        // process group once the trap is set, and loops forever. Another records the SIGTERM
        // it gets: the whole group is asked to stop before it is killed.
        let log = dir.path().join("term.log");
        let command = format!(
            r#"sh -c 'trap "" TERM; echo ready $$ $(ps -o pgid= -p $$); while :; do sleep 1; done' &
            sh -c 'trap "echo got TERM > {}; exit 0" TERM; echo listening; while :; do sleep 1; done' &
            wait"#,
            log.display()
        );
        let started = Instant::now();
        let request = command_request(dir.path(), json!({"command": command}), Some(500));
        let result = bounded(tool.run(&request)).await;
        let elapsed = started.elapsed();
        let shown = result.output_text.clone().unwrap();
        let (code, _) = error(result);
        assert_eq!(code, ErrorCode::ToolExecutionTimeout);
        let line = shown
            .lines()
            .find(|line| line.starts_with("ready "))
            .unwrap();
        let fields: Vec<&str> = line.split_whitespace().collect();
        assert!(
            elapsed >= Duration::from_millis(500) + grace,
            "no SIGKILL was needed: {elapsed:?}"
        );
        assert!(!running(fields[1]), "the grandchild {} survived", fields[1]);
        let group = process::ProcessTree::new(fields[2].parse().unwrap()).unwrap();
        assert!(
            !group.is_running(),
            "a member of group {} survived",
            fields[2]
        );
        assert!(shown.contains("\nlistening\n"), "{shown}");
        assert_eq!(std::fs::read_to_string(&log).unwrap(), "got TERM\n");
    }

    #[tokio::test]
    async fn background_jobs_holding_the_output_are_ended_detached_ones_are_not() {
        let dir = tempfile::tempdir().unwrap();
        let started = Instant::now();
        let holding = run(dir.path(), json!({"command": "sleep 30 & echo $!"})).await;
        assert!(
            started.elapsed() < Duration::from_secs(4),
            "{:?}",
            started.elapsed()
        );
        let pid = text(&holding).lines().nth(2).unwrap().to_owned();
        assert_eq!(
            text(&holding),
            format!("Exit code: 0\n--- stdout ---\n{pid}\n--- stderr ---\n")
        );
        assert!(!running(&pid), "the job holding the output survived");
        let detached = run(
            dir.path(),
            json!({"command": "sleep 30 >/dev/null 2>&1 & echo $!"}),
        )
        .await;
        let pid = text(&detached).lines().nth(2).unwrap().to_owned();
        assert!(
            running(&pid),
            "a detached job should outlive the command like in any shell"
        );
        std::process::Command::new("kill")
            .args(["-9", &pid])
            .status()
            .unwrap();
    }

    #[tokio::test]
    async fn what_a_command_prints_as_it_is_terminated_is_kept() {
        let dir = tempfile::tempdir().unwrap();
        let command = "trap 'echo bye; exit 0' TERM; echo hi; while :; do sleep 1; done";
        let request = command_request(dir.path(), json!({"command": command}), Some(300));
        let result = bounded(RunCommand::new().run(&request)).await;
        let shown = result.output_text.unwrap();
        // (stderr may carry the shell's own "Terminated" notice for its `sleep`.)
        assert!(
            shown.contains("--- stdout ---\nhi\nbye\n--- stderr ---\n"),
            "{shown}"
        );
    }

    #[tokio::test]
    async fn output_written_just_after_the_shell_exits_is_kept() {
        let dir = tempfile::tempdir().unwrap();
        let tool = RunCommand::new().with_drain(Duration::from_secs(5));
        let result = run_with(
            &tool,
            dir.path(),
            json!({"command": "sh -c 'sleep 0.1; echo late' & echo early"}),
        )
        .await;
        assert_eq!(
            text(&result),
            "Exit code: 0\n--- stdout ---\nearly\nlate\n--- stderr ---\n"
        );
    }

    /// A process that left the tree (`setsid`) but holds the output pipe cannot be ended; the
    /// call still returns after the drain window instead of waiting for it.
    #[cfg(target_os = "linux")]
    #[tokio::test]
    async fn an_escaped_process_holding_the_pipe_does_not_hold_the_call() {
        let dir = tempfile::tempdir().unwrap();
        let tool = RunCommand::new().with_kill_grace(Duration::from_millis(100));
        let started = Instant::now();
        let result = run_with(
            &tool,
            dir.path(),
            json!({"command": "setsid sleep 30 & echo $!"}),
        )
        .await;
        assert!(
            started.elapsed() < Duration::from_secs(4),
            "{:?}",
            started.elapsed()
        );
        let pid = text(&result).lines().nth(2).unwrap().to_owned();
        std::process::Command::new("kill")
            .args(["-9", &pid])
            .status()
            .unwrap();
    }

    /// A call abandoned by its caller (the host's own timeout, a cancelled task) kills the
    /// tree. Linux: the check reads `/proc` to accept a process that is already condemned.
    #[cfg(target_os = "linux")]
    #[tokio::test]
    async fn an_abandoned_call_kills_its_tree() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("pid");
        assert!(
            std::process::Command::new("mkfifo")
                .arg(&fifo)
                .status()
                .unwrap()
                .success()
        );
        // The pid is a grandchild's: killing only the shell (kill_on_drop) would not do.
        let command = format!("sleep 30 & echo $! > '{}'; wait", fifo.display());
        let request = command_request(dir.path(), json!({"command": command}), Some(20_000));
        let call = tokio::spawn(async move { RunCommand::new().run(&request).await });
        // Opening the FIFO blocks until the shell writes its pid: the command is running.
        let pid = tokio::task::spawn_blocking(move || std::fs::read_to_string(fifo).unwrap())
            .await
            .unwrap();
        let pid = pid.trim().to_owned();
        assert!(running(&pid));
        call.abort();
        assert!(call.await.unwrap_err().is_cancelled());
        assert!(
            condemned(&pid),
            "{pid} still runs after the call was dropped"
        );
    }

    /// Gone, a zombie, or with SIGKILL pending (it dies as soon as it is scheduled).
    #[cfg(target_os = "linux")]
    fn condemned(pid: &str) -> bool {
        let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status")) else {
            return true;
        };
        let field = |name: &str| {
            status
                .lines()
                .find_map(|line| line.strip_prefix(name))
                .map(str::trim)
                .unwrap_or_default()
                .to_owned()
        };
        let sigkill_pending =
            |mask: String| u64::from_str_radix(&mask, 16).is_ok_and(|mask| mask & (1 << 8) != 0);
        field("State:").starts_with(['Z', 'X'])
            || sigkill_pending(field("SigPnd:"))
            || sigkill_pending(field("ShdPnd:"))
    }
}
