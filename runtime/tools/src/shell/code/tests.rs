//! ExecuteCode with the machine's interpreters (unconfined: the unit tests install no
//! sandbox; the kit runs it confined through the runtime binary). A test that runs code
//! needs its interpreter: where the machine has none (Wine has no Python) it says so on
//! stderr and checks nothing, since the tool's answer there is the missing-interpreter
//! failure, tested on its own below. The tests that spell POSIX paths or shell code are
//! Unix-only.

use std::path::Path;

use agent_protocol::ToolStatus;
use serde_json::{Value, json};

use super::*;
use crate::testing::assert_failed;

fn tool() -> ExecuteCode {
    ExecuteCode::new(crate::shell::RunCommand::new().settings())
}

fn request(dir: &Path, args: Value) -> ToolRequest {
    let mut request = crate::testing::request("ExecuteCode", dir, args);
    request.limits.timeout_ms = Some(30_000);
    request
}

async fn run(tool: &ExecuteCode, request: ToolRequest) -> ToolResult {
    tokio::time::timeout(Duration::from_secs(40), tool.run(&request))
        .await
        .expect("the call hung")
}

/// Whether the machine has an interpreter for `language`; if not, why the test checks
/// nothing is printed.
fn has_interpreter(language: &str) -> bool {
    let interpreters = super::language(language).map_or(&[][..], |l| l.interpreters);
    let found = find_interpreter(interpreters, std::env::var_os("PATH").as_deref()).is_some();
    if !found {
        eprintln!(
            "not applicable here: no {language} interpreter ({}) on the PATH",
            interpreters.join(", ")
        );
    }
    found
}

fn text(result: &ToolResult) -> &str {
    assert_eq!(result.status, ToolStatus::Succeeded, "{result:?}");
    result.output_text.as_deref().unwrap_or_default()
}

#[cfg(unix)]
#[tokio::test]
async fn python_runs_in_the_project_folder_and_its_output_has_run_commands_layout() {
    if !has_interpreter("python") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let code =
        "import os, sys\nprint('cwd', os.getcwd())\nprint('oops', file=sys.stderr)\nsys.exit(3)\n";
    let result = run(
        &tool(),
        request(dir.path(), json!({"code": code, "description": "check"})),
    )
    .await;
    let cwd = dir.path().canonicalize().unwrap();
    assert_eq!(
        text(&result),
        format!(
            "Exit code: 3\n--- stdout ---\ncwd {}\n--- stderr ---\noops\n",
            cwd.display()
        )
    );
}

#[tokio::test]
async fn code_longer_than_any_argument_reaches_the_interpreter_whole() {
    if !has_interpreter("python") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // Past Linux's 128 KiB limit of one argument: the code goes through stdin.
    let code = format!("x = '{}'\nprint(len(x))\n", "a".repeat(200_000));
    let result = run(&tool(), request(dir.path(), json!({ "code": code }))).await;
    assert!(
        text(&result).contains("--- stdout ---\n200000\n"),
        "{result:?}"
    );
}

#[cfg(unix)]
#[tokio::test]
async fn other_languages_run_by_their_interpreter() {
    if !has_interpreter("sh") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let result = run(
        &tool(),
        request(
            dir.path(),
            json!({"code": "echo from $0 \"$((6*7))\"", "language": "sh"}),
        ),
    )
    .await;
    assert!(text(&result).contains("42"), "{result:?}");
}

#[tokio::test]
async fn output_is_bounded_by_max_output_bytes_and_kept_whole_as_an_artifact() {
    if !has_interpreter("python") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut request = request(
        dir.path(),
        json!({"code": "for i in range(5000): print('line', i)"}),
    );
    request.limits.max_output_bytes = Some(500);
    let result = run(&tool(), request).await;
    let shown = text(&result);
    assert!(shown.contains("[... truncated"), "{shown}");
    assert!(shown.len() < 700, "{}", shown.len());
    assert!(shown.contains("line 4999"), "the tail is kept: {shown}");
    assert_eq!(result.artifacts.len(), 1, "{:?}", result.artifacts);
}

#[tokio::test]
async fn a_run_past_its_timeout_is_ended_with_tool_execution_timeout() {
    if !has_interpreter("python") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let started = std::time::Instant::now();
    let result = run(
        &tool(),
        request(
            dir.path(),
            json!({"code": "import time\nprint('started', flush=True)\ntime.sleep(60)", "timeout_seconds": 1}),
        ),
    )
    .await;
    assert_failed(
        &result,
        ErrorCode::ToolExecutionTimeout,
        "timed out after 1 seconds",
    );
    assert!(
        result
            .output_text
            .as_deref()
            .unwrap_or_default()
            .contains("started")
    );
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "{:?}",
        started.elapsed()
    );
    // The host's limit (maxExecutionTimeSeconds) lowers the asked timeout.
    let mut limited = request(dir.path(), json!({"code": "import time\ntime.sleep(60)"}));
    limited.limits.timeout_ms = Some(500);
    let result = run(&tool(), limited).await;
    assert_failed(
        &result,
        ErrorCode::ToolExecutionTimeout,
        "timed out after 0.5 seconds",
    );
}

#[tokio::test]
async fn a_missing_interpreter_and_bad_arguments_are_readable_failures() {
    let dir = tempfile::tempdir().unwrap();
    let empty = tempfile::tempdir().unwrap();
    let nowhere = tool().with_search_path(empty.path());
    let result = run(&nowhere, request(dir.path(), json!({"code": "print(1)"}))).await;
    assert_failed(
        &result,
        ErrorCode::ToolExecutionFailed,
        "no python interpreter was found on this machine (looked for python3, python on the PATH)",
    );
    for (args, says) in [
        (json!({}), "code"),
        (json!({"code": "  "}), "the code is empty"),
        (
            json!({"code": "x", "timeout_seconds": 601}),
            "timeout_seconds",
        ),
        (
            json!({"code": "x", "timeout_seconds": 0}),
            "timeout_seconds",
        ),
        (
            json!({"code": "x", "language": "cobol"}),
            "unsupported language \"cobol\"",
        ),
        (json!({"code": "x", "cwd": "/"}), "cwd"),
    ] {
        assert_failed(
            &run(&tool(), request(dir.path(), args)).await,
            ErrorCode::InvalidRequest,
            says,
        );
    }
}

#[test]
fn interpreters_are_found_in_path_order_and_languages_by_any_of_their_names() {
    let first = tempfile::tempdir().unwrap();
    let second = tempfile::tempdir().unwrap();
    for (dir, name) in [(&first, "python"), (&second, "python3")] {
        let file = dir.path().join(name);
        std::fs::write(&file, "").unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
    }
    let path = std::env::join_paths([first.path(), second.path()]).unwrap();
    // python3 is preferred over python, wherever it sits on the PATH.
    assert_eq!(
        find_interpreter(&["python3", "python"], Some(&path)),
        Some(second.path().join("python3"))
    );
    assert_eq!(find_interpreter(&["ruby"], Some(&path)), None);
    assert_eq!(find_interpreter(&["python3"], None), None);
    assert_eq!(
        language("Python").map(|l| l.interpreters[0]),
        Some("python3")
    );
    assert_eq!(language(" js ").map(|l| l.interpreters[0]), Some("node"));
    assert!(language("cobol").is_none());
}
