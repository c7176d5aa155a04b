//! One runtime process driven over stdio the way the desktop app drives it: spawn with the
//! contract's environment, JSON-RPC requests, events timestamped as they are read from
//! stdout, peak RSS from `/proc`.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, Command};
use tokio::sync::mpsc;

/// A runtime command: a program and its arguments (`--runtime "python -m agent"` is split on
/// whitespace).
#[derive(Clone, Debug)]
pub(super) struct RuntimeCommand {
    pub program: PathBuf,
    pub args: Vec<String>,
}

impl RuntimeCommand {
    pub(super) fn parse(line: &str) -> anyhow::Result<Self> {
        let mut words = line.split_whitespace();
        let program = words.next().context("the runtime command is empty")?;
        Ok(Self {
            program: PathBuf::from(program),
            args: words.map(str::to_owned).collect(),
        })
    }

    pub(super) fn display(&self) -> String {
        std::iter::once(self.program.display().to_string())
            .chain(self.args.iter().cloned())
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// A line from stdout and when it was read.
pub(super) struct Line {
    pub at: Instant,
    pub value: Value,
}

pub(super) struct Runtime {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::UnboundedReceiver<Line>,
    /// Lines read while waiting for something else (events before a response, ...).
    backlog: Vec<Line>,
    next_id: u64,
    timeout: Duration,
    pub spawned_at: Instant,
}

impl Runtime {
    /// Spawns `command` with `env`; every `text_chunk` line read from stdout is also
    /// acknowledged on `acks` with the instant it was read.
    pub(super) fn spawn(
        command: &RuntimeCommand,
        env: &[(String, String)],
        acks: Option<mpsc::UnboundedSender<Instant>>,
        timeout: Duration,
    ) -> anyhow::Result<Self> {
        let spawned_at = Instant::now();
        let mut child = Command::new(&command.program)
            .args(&command.args)
            .envs(env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .with_context(|| format!("cannot start {}", command.display()))?;
        let stdin = child.stdin.take().context("no stdin")?;
        let stdout = child.stdout.take().context("no stdout")?;
        let (sender, lines) = mpsc::unbounded_channel();
        tokio::spawn(async move {
            let mut reader = BufReader::new(stdout).lines();
            while let Ok(Some(line)) = reader.next_line().await {
                let at = Instant::now();
                // The acknowledgement goes first: the gateway waits on it.
                if let Some(acks) = &acks
                    && line.contains("\"text_chunk\"")
                {
                    let _ = acks.send(at);
                }
                let value = serde_json::from_str(&line).unwrap_or(Value::String(line));
                if sender.send(Line { at, value }).is_err() {
                    break;
                }
            }
        });
        Ok(Self {
            child,
            stdin: Some(stdin),
            lines,
            backlog: Vec::new(),
            next_id: 1,
            timeout,
            spawned_at,
        })
    }

    pub(super) fn pid(&self) -> Option<u32> {
        self.child.id()
    }

    /// Sends a request and waits (bounded) for a successful response.
    pub(super) async fn request(&mut self, method: &str, params: Value) -> anyhow::Result<Line> {
        let response = self.call(method, params).await?;
        if let Some(error) = response.value.get("error") {
            bail!("{method} failed: {error}");
        }
        Ok(response)
    }

    /// Sends a request and waits (bounded) for its response, result or error; returns it
    /// and when it was read.
    pub(super) async fn call(&mut self, method: &str, params: Value) -> anyhow::Result<Line> {
        let id = self.next_id;
        self.next_id += 1;
        let line = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let stdin = self.stdin.as_mut().context("stdin already closed")?;
        stdin.write_all(format!("{line}\n").as_bytes()).await?;
        stdin.flush().await?;
        let response = self
            .wait_for(|value| value.get("id") == Some(&json!(id)) && value.get("method").is_none())
            .await
            .with_context(|| format!("waiting for the answer to {method}"))?;
        Ok(response)
    }

    /// The first line (already read or still to come) matching `wanted`; bounded.
    pub(super) async fn wait_for(
        &mut self,
        wanted: impl Fn(&Value) -> bool,
    ) -> anyhow::Result<Line> {
        if let Some(index) = self.backlog.iter().position(|line| wanted(&line.value)) {
            return Ok(self.backlog.remove(index));
        }
        let deadline = tokio::time::Instant::now() + self.timeout;
        loop {
            match tokio::time::timeout_at(deadline, self.lines.recv()).await {
                Ok(Some(line)) if wanted(&line.value) => return Ok(line),
                Ok(Some(line)) => self.backlog.push(line),
                Ok(None) => bail!("the runtime closed its stdout"),
                Err(_) => bail!("nothing within {:?}", self.timeout),
            }
        }
    }

    /// Waits for the task's terminal event; an error unless it is `task_completed`.
    pub(super) async fn wait_task_end(&mut self) -> anyhow::Result<Line> {
        let end = self
            .wait_for(|value| {
                matches!(
                    event_type(value),
                    Some("task_completed" | "task_failed" | "task_cancelled")
                )
            })
            .await
            .context("waiting for the task to end")?;
        if event_type(&end.value) != Some("task_completed") {
            bail!("the task did not complete: {}", end.value);
        }
        Ok(end)
    }

    /// Drops everything read so far (keeps memory flat over long runs).
    pub(super) fn clear_backlog(&mut self) {
        self.backlog.clear();
        while self.lines.try_recv().is_ok() {}
    }

    /// Shutdown, then end of input; the process is killed if it does not exit in time.
    pub(super) async fn stop(mut self) {
        let _ = self.call("Shutdown", json!({})).await;
        drop(self.stdin.take());
        if tokio::time::timeout(self.timeout, self.child.wait())
            .await
            .is_err()
        {
            let _ = self.child.kill().await;
        }
    }
}

pub(super) fn event_type(value: &Value) -> Option<&str> {
    (value.get("method")?.as_str()? == "SessionEvent")
        .then(|| value.pointer("/params/eventType")?.as_str())
        .flatten()
}

/// Peak resident set size in bytes (`VmHWM`); `None` where `/proc` does not exist (macOS).
pub(super) fn peak_rss(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|line| line.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// The CreateSession params the desktop app sends, on `workspace`.
pub(super) fn create_session_params(workspace: &Path) -> Value {
    json!({"userId": "user_bench", "tenantId": "tenant_bench", "executionEnvironment": "desktop",
           "workspaceHint": {"localPaths": [workspace.display().to_string()]},
           "clientInfo": {"desktopAppVersion": "bench", "localAgentHostVersion": "bench",
                          "osFamily": std::env::consts::OS, "osVersion": "bench"},
           "supportedCapabilities": ["File.Read", "File.Write", "LLM.Call"]})
}

pub(super) fn session_id(created: &Line) -> anyhow::Result<String> {
    created
        .value
        .pointer("/result/sessionId")
        .and_then(Value::as_str)
        .map(str::to_owned)
        .with_context(|| format!("CreateSession gave no sessionId: {}", created.value))
}
