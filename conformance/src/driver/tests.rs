//! The driver against tiny scripted "runtimes" (sh one-liners): routing, violations, bounds.

use std::time::{Duration, Instant};

use serde_json::json;

use super::{LaunchSpec, RuntimeCommand, RuntimeDriver};

async fn spawn(script: &str, timeout_ms: u64) -> RuntimeDriver {
    let command = RuntimeCommand {
        program: "sh".to_owned(),
        args: vec!["-c".to_owned(), script.to_owned()],
        display: script.to_owned(),
    };
    let spec = LaunchSpec {
        command,
        env: Vec::new(),
        remove_env: Vec::new(),
        cwd: None,
        socket: None,
        http: false,
        sandbox: None,
    };
    RuntimeDriver::start(&spec, Duration::from_millis(timeout_ms))
        .await
        .unwrap()
}

#[tokio::test]
async fn a_response_is_routed_to_its_request_and_events_are_collected() {
    let mut driver = spawn(
        r#"read line; echo '{"jsonrpc":"2.0","method":"SessionEvent","params":{"bad":true}}'; echo '{"jsonrpc":"2.0","id":1,"result":{"ok":true}}'; sleep 5"#,
        2000,
    ).await;
    let response = driver.request("Ping", Some(json!({}))).await.unwrap();
    assert_eq!(response["result"]["ok"], json!(true));
    assert_eq!(driver.events().len(), 1);
    // The event does not match the SessionEvent schema: recorded, not surfaced yet, and
    // charged to the envelope and, for its missing ids, to the ID chain.
    let violations = driver.violations();
    let judged: Vec<&str> = violations.iter().map(|v| v.judged.as_str()).collect();
    assert_eq!(
        judged,
        [
            crate::validation::judged::EVENT,
            crate::validation::judged::EVENT_ID_CHAIN
        ],
        "{violations:?}"
    );
    assert!(violations.iter().all(|v| !v.surfaced));
    driver.stop().await;
}

#[tokio::test]
async fn an_echoing_runtime_fails_the_request_at_once() {
    let mut driver = spawn("cat", 5000).await;
    let started = Instant::now();
    let error = driver.request("Ping", None).await.unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(2));
    assert!(
        format!("{error:#}").contains("where a response was expected"),
        "{error:#}"
    );
    driver.stop().await;
}

#[tokio::test]
async fn a_log_line_on_stdout_is_a_violation_and_ends_a_raw_read() {
    let mut driver = spawn("read line; echo 'INFO starting'; sleep 5", 5000).await;
    driver.send_raw_line(b"{not json").await.unwrap();
    let error = driver.read_next_response().await.unwrap_err();
    assert!(format!("{error:#}").contains("not JSON"), "{error:#}");
    driver.stop().await;
}

#[tokio::test]
async fn a_silent_runtime_times_out_within_the_bound() {
    let mut driver = spawn("sleep 30", 300).await;
    let started = Instant::now();
    let error = driver.request("Ping", None).await.unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(2));
    assert!(format!("{error:#}").contains("timed out"), "{error:#}");
    driver.stop().await;
    assert!(driver.exit_status().is_some(), "stop kills the process");
}

#[tokio::test]
async fn the_exit_code_is_observed() {
    let driver = spawn("echo oops >&2; exit 3", 2000).await;
    let status = driver.wait_exit(Duration::from_secs(2)).await.unwrap();
    assert_eq!(status.code(), Some(3));
}

#[tokio::test]
async fn an_id_answered_twice_is_a_violation() {
    let mut driver = spawn(
        r#"read line; echo '{"jsonrpc":"2.0","id":1,"result":{}}'; echo '{"jsonrpc":"2.0","id":1,"result":{}}'; sleep 5"#,
        500,
    ).await;
    driver.request("Ping", None).await.unwrap();
    let leftovers = driver.unclaimed_responses_after_probe().await;
    // The probe itself is never answered by this script; what matters is the duplicate.
    assert!(leftovers.is_err());
    assert!(
        driver
            .violations()
            .iter()
            .any(|v| v.problem.contains("more than once")),
        "{:?}",
        driver.violations()
    );
    driver.stop().await;
}

#[test]
fn commands_split_like_a_shell_without_one() {
    let command = RuntimeCommand::parse(r#"python3 -m "my runtime" --flag='a b'"#).unwrap();
    assert_eq!(command.program, "python3");
    assert_eq!(command.args, vec!["-m", "my runtime", "--flag=a b"]);
    assert!(RuntimeCommand::parse("  ").is_err());
}

#[cfg(unix)]
#[tokio::test]
async fn over_the_socket_a_runtime_that_exits_without_listening_fails_fast() {
    let dir = tempfile::tempdir().unwrap();
    let spec = LaunchSpec {
        command: RuntimeCommand::parse("sh -c 'echo \"unknown option $1\" >&2; exit 3' sh")
            .unwrap(),
        env: Vec::new(),
        remove_env: Vec::new(),
        cwd: None,
        socket: Some(dir.path().join("rt.sock")),
        http: false,
        sandbox: None,
    };
    let started = Instant::now();
    let error = RuntimeDriver::start(&spec, Duration::from_secs(5))
        .await
        .unwrap_err();
    let message = format!("{error:#}");
    assert!(started.elapsed() < Duration::from_secs(2), "{message}");
    assert!(message.contains("--listen PATH"), "{message}");
}

/// Starts `script` over HTTP and returns the error and how many times it was started.
#[cfg(unix)]
async fn start_over_http(script: &str) -> (String, usize) {
    let dir = tempfile::tempdir().unwrap();
    let starts = dir.path().join("starts");
    let spec = LaunchSpec {
        command: RuntimeCommand {
            program: "sh".to_owned(),
            args: vec!["-c".to_owned(), script.to_owned(), "sh".to_owned()],
            display: script.to_owned(),
        },
        env: vec![("STARTS".to_owned(), starts.display().to_string())],
        remove_env: Vec::new(),
        cwd: None,
        socket: None,
        http: true,
        sandbox: None,
    };
    let error = RuntimeDriver::start(&spec, Duration::from_secs(5))
        .await
        .err()
        .unwrap();
    let count = std::fs::read_to_string(&starts).unwrap().lines().count();
    (format!("{error:#}"), count)
}

#[cfg(unix)]
#[tokio::test]
async fn a_runtime_whose_port_was_taken_is_started_again_on_a_new_one() {
    let (message, starts) = start_over_http(
        r#"echo "$2" >> "$STARTS"; echo 'Error: Address already in use (os error 98)' >&2; exit 1"#,
    )
    .await;
    assert_eq!(starts, 3, "{message}");
    assert!(message.contains("Address already in use"), "{message}");
    let (message, starts) =
        start_over_http(r#"echo "$2" >> "$STARTS"; echo 'unknown option' >&2; exit 2"#).await;
    assert_eq!(
        starts, 1,
        "a runtime that fails otherwise is started once: {message}"
    );
}
