//! `cargo xtask demo`: try the reference runtime by hand. Starts `mock-services` with a
//! scripted model (`xtask/demo/script.json`: read a file, write one — which the demo policy
//! makes ask for approval —, answer) and a workspace holding `notes.txt`, drives
//! `agent-runtime` over stdio like the desktop app would, and renders the session: streamed
//! text, tool calls and their results, approvals answered with y/n on the terminal.

use std::io::{BufRead, BufReader, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use anyhow::{Context, bail};
use serde_json::{Value, json};

use crate::certify::{cargo, target_dir};

#[derive(clap::Args)]
pub(crate) struct Args {
    /// The task to give the agent.
    #[arg(
        long,
        default_value = "What is the launch code in notes.txt? Keep a summary."
    )]
    prompt: String,
    /// Answer every approval with yes (no questions asked; for scripted use).
    #[arg(long)]
    yes: bool,
    /// Bound for each wait on the runtime, in seconds.
    #[arg(long, default_value_t = 30)]
    timeout_secs: u64,
}

/// Kills a child when the demo ends, however it ends.
struct Guard(Child);

impl Drop for Guard {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn binary(name: &str) -> PathBuf {
    target_dir()
        .join("debug")
        .join(format!("{name}{}", std::env::consts::EXE_SUFFIX))
}

pub(crate) fn run(args: Args) -> anyhow::Result<std::process::ExitCode> {
    let root = crate::workspace_root();
    println!("xtask: building agent-runtime and mock-services");
    let status = cargo()
        .current_dir(&root)
        .args([
            "build",
            "-p",
            "agent-runtime",
            "-p",
            "agent-mocks",
            "--bins",
        ])
        .status()
        .context("cannot run cargo")?;
    if !status.success() {
        bail!("the build failed ({status})");
    }
    let (_mocks, env) = start_mock_services(&root.join("xtask/demo"))?;

    let scratch = std::env::temp_dir().join(format!("agent-demo-{}", std::process::id()));
    let workspace = scratch.join("workspace");
    std::fs::create_dir_all(&workspace)?;
    std::fs::write(
        workspace.join("notes.txt"),
        "Shopping: milk, eggs.\nThe launch code is 4-8-15-16-23-42.\n",
    )?;
    let mut runtime = Guard(
        Command::new(binary("agent-runtime"))
            .envs(env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
            .env("CHECKPOINT_DIR", scratch.join("checkpoints"))
            .env("LOG_DIR", scratch.join("logs"))
            .env("LOG_LEVEL", "warn")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .context("cannot start agent-runtime")?,
    );
    let mut stdin = runtime.0.stdin.take().context("no stdin")?;
    let stdout = runtime.0.stdout.take().context("no stdout")?;
    let (lines_tx, lines) = mpsc::channel::<Value>();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if let Ok(value) = serde_json::from_str(&line)
                && lines_tx.send(value).is_err()
            {
                break;
            }
        }
    });
    let timeout = Duration::from_secs(args.timeout_secs.max(1));
    let mut next_id = 0;
    let mut send = |method: &str, params: Value| -> anyhow::Result<i64> {
        next_id += 1;
        let mut line = json!({"jsonrpc": "2.0", "id": next_id, "method": method});
        // Shutdown carries no params member, as the desktop app sends it.
        if !params.is_null() {
            line["params"] = params;
        }
        writeln!(stdin, "{line}")?;
        stdin.flush()?;
        Ok(next_id)
    };

    let id = send(
        "CreateSession",
        json!({"userId": "user_demo", "tenantId": "tenant_demo", "executionEnvironment": "desktop",
               "workspaceHint": {"localPaths": [workspace.display().to_string()]},
               "clientInfo": {"desktopAppVersion": "demo", "localAgentHostVersion": "demo",
                              "osFamily": std::env::consts::OS, "osVersion": "demo"},
               "supportedCapabilities": ["File.Read", "File.Write", "LLM.Call"]}),
    )?;
    let session = wait_response(&lines, id, timeout)?;
    let session_id = session
        .pointer("/result/sessionId")
        .and_then(Value::as_str)
        .with_context(|| format!("CreateSession failed: {session}"))?
        .to_owned();
    let header = format!("session {session_id} — workspace {}", workspace.display());
    println!("\n{}", paint("2", &header));
    println!(
        "{} {}\n{}",
        paint("1", "you:"),
        args.prompt,
        paint("1", "agent:")
    );
    send(
        "StartTask",
        json!({"sessionId": session_id, "prompt": args.prompt}),
    )?;

    let outcome = follow_task(&lines, timeout, &args, &session_id, &mut send)?;
    println!(
        "\n\n{}",
        paint("2", &format!("task {outcome}; shutting down"))
    );
    let id = send("Shutdown", Value::Null)?;
    let _ = wait_response(&lines, id, timeout);
    if let Ok(summary) = std::fs::read_to_string(workspace.join("summary.md")) {
        println!("{}\n{summary}", paint("2", "summary.md:"));
    }
    let _ = std::fs::remove_dir_all(&scratch);
    Ok(std::process::ExitCode::SUCCESS)
}

/// Starts the fakes with the demo's script and policy; returns them and the environment
/// they print for the runtime.
fn start_mock_services(demo: &Path) -> anyhow::Result<(Guard, Vec<(String, String)>)> {
    let mut mocks = Guard(
        Command::new(binary("mock-services"))
            .arg("--script")
            .arg(demo.join("script.json"))
            .arg("--policy")
            .arg(demo.join("policy.json"))
            .arg("--quiet")
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .context("cannot start mock-services")?,
    );
    let mut env = Vec::new();
    let stdout = mocks
        .0
        .stdout
        .take()
        .context("mock-services has no stdout")?;
    let mut lines = BufReader::new(stdout).lines();
    for line in lines.by_ref() {
        let line = line?;
        if let Some((name, value)) = line.strip_prefix("export ").and_then(|l| l.split_once('=')) {
            env.push((name.to_owned(), value.to_owned()));
        }
        if env.len() == 4 {
            break;
        }
    }
    if env.len() < 4 {
        bail!("mock-services stopped before printing its addresses");
    }
    // The pipe stays open and drained for as long as mock-services runs: closing it made
    // its next write fail, and the fakes went down while a person read an approval.
    std::thread::spawn(move || lines.for_each(drop));
    Ok((mocks, env))
}

/// Shows the task's events as they come and answers its approvals; returns how it ended.
fn follow_task(
    lines: &mpsc::Receiver<Value>,
    timeout: Duration,
    args: &Args,
    session_id: &str,
    send: &mut impl FnMut(&str, Value) -> anyhow::Result<i64>,
) -> anyhow::Result<&'static str> {
    loop {
        let message = lines
            .recv_timeout(timeout)
            .context("the runtime went silent (no event within the timeout)")?;
        if message.get("method").and_then(Value::as_str) != Some("SessionEvent") {
            continue;
        }
        let event = &message["params"];
        let payload = &event["payload"];
        match event["eventType"].as_str().unwrap_or("") {
            "text_chunk" => {
                print!("{}", payload["text"].as_str().unwrap_or(""));
                std::io::stdout().flush()?;
            }
            "tool_requested" => {
                let call = format!(
                    "→ {} {}",
                    payload["toolName"].as_str().unwrap_or("?"),
                    payload["arguments"]
                );
                println!("\n  {}", paint("36", &call));
            }
            "tool_completed" => {
                let done = format!(
                    "← {} {}",
                    payload["toolName"].as_str().unwrap_or("?"),
                    payload["status"].as_str().unwrap_or("?")
                );
                println!("  {}", paint("36", &done));
            }
            "approval_requested" => {
                let title = payload["title"]
                    .as_str()
                    .unwrap_or("An action needs approval");
                let summary = payload["actionSummary"].as_str().unwrap_or("");
                let question = format!("? {title}: {summary} — approve? [y/n]");
                print!("\n  {} ", paint("33", &question));
                std::io::stdout().flush()?;
                let approved = args.yes || ask_yes()?;
                if args.yes {
                    println!("y");
                }
                send(
                    "ApproveAction",
                    json!({"sessionId": session_id,
                           "approvalId": payload["approvalId"].as_str().unwrap_or(""),
                           "decision": if approved { "approved" } else { "denied" }}),
                )?;
            }
            "task_completed" => return Ok("completed"),
            "task_failed" => {
                let failed = format!("task failed: {}", payload["message"]);
                println!("\n  {}", paint("31", &failed));
                return Ok("failed");
            }
            "task_cancelled" => return Ok("cancelled"),
            _ => {}
        }
    }
}

/// `text` in an ANSI style when stdout is a terminal, plain otherwise.
fn paint(style: &str, text: &str) -> String {
    if std::io::stdout().is_terminal() {
        format!("\x1b[{style}m{text}\x1b[0m")
    } else {
        text.to_owned()
    }
}

fn ask_yes() -> anyhow::Result<bool> {
    let mut answer = String::new();
    std::io::stdin().read_line(&mut answer)?;
    if !std::io::stdin().is_terminal() {
        // Piped answers are not echoed by a terminal: show them.
        println!("{}", answer.trim());
    }
    Ok(answer.trim().eq_ignore_ascii_case("y") || answer.trim().eq_ignore_ascii_case("yes"))
}

fn wait_response(
    lines: &mpsc::Receiver<Value>,
    id: i64,
    timeout: Duration,
) -> anyhow::Result<Value> {
    loop {
        let message = lines
            .recv_timeout(timeout)
            .with_context(|| format!("no answer to request {id} within {timeout:?}"))?;
        if message.get("id").and_then(Value::as_i64) == Some(id) {
            return Ok(message);
        }
    }
}
