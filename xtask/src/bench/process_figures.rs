//! The whole-process measurements, one function per figure, each run in a fresh sandbox
//! (workspace, checkpoint, log and home directories) against the service fakes.

use std::path::Path;
use std::time::{Duration, Instant};

use agent_mocks::{SessionServiceFake, WorkspaceFake};
use anyhow::Context;
use serde_json::{Value, json};
use tokio::sync::mpsc;

use super::gateway::{BenchGateway, Mode};
use super::process::{Runtime, RuntimeCommand, create_session_params, peak_rss, session_id};

/// The environment variable that makes the reference runtime skip the checkpoint fsyncs
/// (`agent_host::state`), so the per-step figure can be split into fsync and the rest.
/// For measurement only; a runtime that ignores it simply shows no difference.
pub(super) const NO_FSYNC_ENV: &str = "AGENT_RUNTIME_BENCH_NO_FSYNC";

/// The Session and Workspace Service fakes, shared by every run.
pub(super) struct Services {
    session: SessionServiceFake,
    workspace: WorkspaceFake,
}

impl Services {
    pub(super) async fn start() -> anyhow::Result<Self> {
        Ok(Self {
            session: SessionServiceFake::start().await?,
            workspace: WorkspaceFake::start().await?,
        })
    }
}

/// A fresh set of directories for one runtime process.
struct Sandbox {
    dir: tempfile::TempDir,
}

impl Sandbox {
    fn new() -> anyhow::Result<Self> {
        let dir = tempfile::tempdir().context("cannot create a temp dir")?;
        for sub in ["workspace", "checkpoints", "logs", "home"] {
            std::fs::create_dir_all(dir.path().join(sub))?;
        }
        Ok(Self { dir })
    }

    fn workspace(&self) -> std::path::PathBuf {
        self.dir.path().join("workspace")
    }

    fn checkpoints(&self) -> std::path::PathBuf {
        self.dir.path().join("checkpoints")
    }

    fn env(&self, services: &Services, gateway_url: &str) -> Vec<(String, String)> {
        let path = |sub: &str| self.dir.path().join(sub).display().to_string();
        [
            ("LLM_GATEWAY_ENDPOINT", gateway_url.to_owned()),
            (
                "LLM_GATEWAY_AUTH_TOKEN",
                agent_mocks::FAKE_GATEWAY_TOKEN.to_owned(),
            ),
            ("SESSION_SERVICE_URL", services.session.url()),
            ("WORKSPACE_SERVICE_URL", services.workspace.url()),
            ("APPROVAL_SERVICE_URL", String::new()),
            ("CHECKPOINT_DIR", path("checkpoints")),
            ("LOG_DIR", path("logs")),
            ("HOME", path("home")),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v))
        .collect()
    }
}

fn ms(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1000.0
}

/// Spawn → the answer to GetSessionState, in ms, and the peak RSS (bytes) then. The
/// services are never contacted for it.
pub(super) async fn cold_start(
    command: &RuntimeCommand,
    services: &Services,
    timeout: Duration,
) -> anyhow::Result<(f64, Option<u64>)> {
    let sandbox = Sandbox::new()?;
    let env = sandbox.env(services, "http://127.0.0.1:9/v1");
    let mut runtime = Runtime::spawn(command, &env, None, timeout)?;
    // Before CreateSession the answer may be an error ("no session"): any answer counts.
    let answer = runtime.call("GetSessionState", json!({})).await?;
    let elapsed = answer.at.duration_since(runtime.spawned_at);
    let rss = runtime.pid().and_then(peak_rss);
    runtime.stop().await;
    Ok((ms(elapsed), rss))
}

/// Spawn → CreateSession answered (ms), and the peak RSS (bytes) right after it.
pub(super) async fn create_session(
    command: &RuntimeCommand,
    services: &Services,
    timeout: Duration,
) -> anyhow::Result<(f64, Option<u64>)> {
    let sandbox = Sandbox::new()?;
    let env = sandbox.env(services, "http://127.0.0.1:9/v1");
    let mut runtime = Runtime::spawn(command, &env, None, timeout)?;
    let created = runtime
        .request("CreateSession", create_session_params(&sandbox.workspace()))
        .await?;
    session_id(&created)?;
    let elapsed = created.at.duration_since(runtime.spawned_at);
    let rss = runtime.pid().and_then(peak_rss);
    runtime.stop().await;
    Ok((ms(elapsed), rss))
}

/// What a task of ReadFile steps showed.
pub(super) struct StepRun {
    /// Runtime time per LLM round trip (task wall time minus the fake's own time, divided
    /// by the number of gateway requests), ms.
    pub per_step_ms: f64,
    /// The fake gateway's own time per request, ms.
    pub fake_ms: f64,
    pub peak_rss: Option<u64>,
    /// Messages in the checkpointed thread and the thread's JSON size.
    pub thread_messages: usize,
    pub thread_bytes: usize,
}

/// Steps of one task at most: runtimes may bound `maxSteps` (the Python runtime clamps it
/// to 200), so a longer session is run as several tasks in one session.
const MAX_STEPS_PER_TASK: usize = 100;

/// `steps` ReadFile calls (each reading a 2 KiB file) and a final answer, in one task, or in
/// tasks of [`MAX_STEPS_PER_TASK`] steps when there are more.
pub(super) async fn tool_steps(
    command: &RuntimeCommand,
    services: &Services,
    steps: usize,
    no_fsync: bool,
    timeout: Duration,
) -> anyhow::Result<StepRun> {
    let sandbox = Sandbox::new()?;
    let line = "The quick brown fox jumps over the lazy dog; benchmarks read this file. \n";
    std::fs::write(
        sandbox.workspace().join("data.txt"),
        line.repeat(2048 / line.len()),
    )?;
    let tasks = steps.div_ceil(MAX_STEPS_PER_TASK).max(1);
    if !steps.is_multiple_of(tasks) {
        anyhow::bail!("{steps} steps do not split into {tasks} equal tasks");
    }
    let per_task = steps / tasks;
    let gateway = BenchGateway::start(Mode::ToolSteps {
        tool_steps: per_task,
        path: "data.txt".into(),
    })
    .await?;
    let mut env = sandbox.env(services, gateway.url());
    if no_fsync {
        env.push((NO_FSYNC_ENV.to_owned(), "1".to_owned()));
    }
    let mut runtime = Runtime::spawn(command, &env, None, timeout)?;
    let created = runtime
        .request("CreateSession", create_session_params(&sandbox.workspace()))
        .await?;
    let session = session_id(&created)?;
    runtime.clear_backlog();
    gateway.take_observed();
    let mut wall = Duration::ZERO;
    for _ in 0..tasks {
        gateway.start_task();
        let started = Instant::now();
        runtime
            .request(
                "StartTask",
                json!({"sessionId": session, "prompt": "Read data.txt again and again.",
                       "taskOptions": {"maxSteps": per_task + 5}}),
            )
            .await?;
        let end = runtime.wait_task_end().await?;
        wall += end.at.duration_since(started);
    }
    let observed = gateway.take_observed();
    if let Some(error) = observed.error {
        anyhow::bail!("the bench gateway failed: {error}");
    }
    let peak = runtime.pid().and_then(peak_rss);
    // Read before Shutdown, which may remove the checkpoint of a finished session.
    let (thread_messages, thread_bytes) = checkpointed_thread(&sandbox.checkpoints())?;
    runtime.stop().await;
    // One request per tool step and one for each final answer at least, or the tasks were
    // not the ones measured (a policy refusal). More is a runtime's own extra round trip
    // (the Python runtime's verification phase asks the model once more after an answer,
    // and gets text); each counts as a step.
    let expected = tasks * (per_task + 1);
    if observed.requests < expected {
        anyhow::bail!(
            "the tasks made {} gateway requests, expected at least {expected}",
            observed.requests
        );
    }
    let requests = observed.requests;
    Ok(StepRun {
        per_step_ms: ms(wall.saturating_sub(observed.fake_time)) / requests as f64,
        fake_ms: ms(observed.fake_time) / requests as f64,
        peak_rss: peak,
        thread_messages,
        thread_bytes,
    })
}

/// The thread of the (one) checkpoint in `dir`: message count and JSON bytes; zeros when the
/// runtime wrote none there.
fn checkpointed_thread(dir: &Path) -> anyhow::Result<(usize, usize)> {
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.extension().is_some_and(|ext| ext == "json") {
            let value: Value = serde_json::from_slice(&std::fs::read(&path)?)
                .with_context(|| format!("reading {}", path.display()))?;
            if let Some(thread) = value.get("thread").and_then(Value::as_array) {
                return Ok((thread.len(), serde_json::to_vec(thread)?.len()));
            }
        }
    }
    Ok((0, 0))
}

/// Streams `chunks` text deltas, one at a time (see [`Mode::Stream`]); returns each chunk's
/// latency from leaving the fake gateway to its `text_chunk` line read from stdout, in ms.
pub(super) async fn streaming(
    command: &RuntimeCommand,
    services: &Services,
    chunks: usize,
    timeout: Duration,
) -> anyhow::Result<Vec<f64>> {
    let sandbox = Sandbox::new()?;
    let (acks_sender, acks) = mpsc::unbounded_channel();
    let gateway = BenchGateway::start(Mode::Stream {
        chunks,
        acks,
        ack_timeout: timeout,
    })
    .await?;
    let env = sandbox.env(services, gateway.url());
    let mut runtime = Runtime::spawn(command, &env, Some(acks_sender), timeout)?;
    let created = runtime
        .request("CreateSession", create_session_params(&sandbox.workspace()))
        .await?;
    let session = session_id(&created)?;
    runtime
        .request(
            "StartTask",
            json!({"sessionId": session, "prompt": "Say a lot."}),
        )
        .await?;
    let end = runtime.wait_task_end().await;
    let observed = gateway.take_observed();
    runtime.stop().await;
    if let Some(error) = observed.error {
        anyhow::bail!("the bench gateway failed: {error}");
    }
    end?;
    if observed.chunk_seen.len() != chunks {
        anyhow::bail!(
            "{} of {chunks} chunks were seen on stdout",
            observed.chunk_seen.len()
        );
    }
    Ok(observed
        .chunk_sent
        .iter()
        .zip(&observed.chunk_seen)
        .map(|(sent, seen)| ms(seen.saturating_duration_since(*sent)))
        .collect())
}

/// The runtime's resident memory by part right after CreateSession and at the end of a task
/// of `steps` ReadFile calls (the same task as [`tool_steps`]), in one process.
pub(super) async fn memory_snapshots(
    command: &RuntimeCommand,
    services: &Services,
    steps: usize,
    timeout: Duration,
) -> anyhow::Result<(super::memory::Parts, super::memory::Parts)> {
    let sandbox = Sandbox::new()?;
    let line = "The quick brown fox jumps over the lazy dog; benchmarks read this file. \n";
    std::fs::write(
        sandbox.workspace().join("data.txt"),
        line.repeat(2048 / line.len()),
    )?;
    let gateway = BenchGateway::start(Mode::ToolSteps {
        tool_steps: steps,
        path: "data.txt".into(),
    })
    .await?;
    let env = sandbox.env(services, gateway.url());
    let mut runtime = Runtime::spawn(command, &env, None, timeout)?;
    let pid = runtime.pid().context("the runtime has no pid")?;
    let created = runtime
        .request("CreateSession", create_session_params(&sandbox.workspace()))
        .await?;
    let session = session_id(&created)?;
    let after_create = super::memory::parts(pid)?;
    runtime
        .request(
            "StartTask",
            json!({"sessionId": session, "prompt": "Read data.txt again and again.",
                   "taskOptions": {"maxSteps": steps + 5}}),
        )
        .await?;
    runtime.wait_task_end().await?;
    let after_task = super::memory::parts(pid)?;
    runtime.stop().await;
    Ok((after_create, after_task))
}
