//! The crash campaign: kills a runtime with SIGKILL at random moments of a multi-step task,
//! starts a new process on the same CHECKPOINT_DIR, resumes the session with the old id
//! and continues the task — as the desktop app does after a crash (INTEROP.md §1) — then
//! checks what local-agent-host.md §9 promises:
//!
//! - the checkpoint left by the killed process parses and validates (atomic writes);
//! - the resumed task completes, with every step's tool result in the thread exactly once
//!   and the prompt once (no completed step lost, none duplicated);
//! - no tool side effect of a checkpointed step is repeated: each step's tool appends a
//!   line to a log file, and the steps the checkpoint records appear there exactly once
//!   (only the step in flight at the kill may run twice).
//!
//! The model is a responder, not a script: it calls the next step's tool until the thread
//! holds every result, so it answers a restarted runtime consistently. Runs are seeded, so
//! a failing run can be replayed with its seed.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use agent_mocks::policy::{capability_entry, set_capability};
use agent_mocks::{Fakes, GatewayReply, ScriptedToolCall, StreamStep, Usage};
use anyhow::{Context, bail};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::{Value, json};

use crate::driver::{LaunchSpec, ReceivedEvent, RuntimeCommand, RuntimeDriver};
use crate::env::ScenarioDirs;
use crate::env::contract_env;
use crate::steps::support::task::TASK_TERMINAL_EVENTS;

/// The log each step's RunCommand appends its line to, in the workspace.
const STEP_LOG: &str = "steps.log";
const FINAL_ANSWER: &str = "All steps are done.";
const PROMPT: &str = "Run every step of the crash drill.";

#[derive(Debug, Clone)]
pub struct CrashOptions {
    pub runtime: RuntimeCommand,
    pub runs: usize,
    /// Tool-calling steps per task (the task has one more, the answer).
    pub steps: u32,
    pub seed: u64,
    /// Bound of every wait.
    pub timeout: Duration,
}

impl CrashOptions {
    pub fn new(runtime: RuntimeCommand) -> Self {
        Self {
            runtime,
            runs: 200,
            steps: 4,
            seed: 1,
            timeout: Duration::from_secs(20),
        }
    }
}

/// What a campaign saw.
#[derive(Debug, Default)]
pub struct CrashReport {
    pub runs: usize,
    /// Kills by the last event the killed process had written (the moment it died in).
    pub kills_by_moment: BTreeMap<String, usize>,
    /// Runs where the task had already ended when the kill came.
    pub finished_before_kill: usize,
    /// Runs whose checkpoint held at least one completed step.
    pub resumed_mid_task: usize,
    /// Step tools that ran twice (the step in flight at the kill; allowed).
    pub repeated_in_flight: usize,
    pub failures: Vec<String>,
    pub elapsed: Duration,
}

impl CrashReport {
    pub fn passed(&self) -> bool {
        self.failures.is_empty()
    }

    pub fn summary(&self) -> String {
        let moments = self
            .kills_by_moment
            .iter()
            .map(|(moment, n)| format!("{moment} {n}"))
            .collect::<Vec<_>>()
            .join(", ");
        format!(
            "crash campaign: {} runs in {:.1} s, {} failed; killed after: {moments}; task already over at the kill: {}; resumed mid-task: {}; in-flight step re-run: {}",
            self.runs,
            self.elapsed.as_secs_f64(),
            self.failures.len(),
            self.finished_before_kill,
            self.resumed_mid_task,
            self.repeated_in_flight,
        )
    }
}

/// Runs the campaign; one failing run does not stop the others.
pub async fn run_campaign(options: &CrashOptions) -> CrashReport {
    let started = Instant::now();
    let mut report = CrashReport::default();
    for run in 0..options.runs {
        let seed = options.seed.wrapping_add(run as u64);
        report.runs += 1;
        if let Err(error) = one_run(options, seed, &mut report).await {
            report
                .failures
                .push(format!("run {run} (seed {seed}): {error:#}"));
        }
    }
    report.elapsed = started.elapsed();
    report
}

/// The model: text, then the next step's RunCommand until `steps` results are in, then the
/// final answer. Text arrives in a few chunks with small pauses so kills land mid-stream.
fn responder(steps: u32, seed: u64) -> agent_mocks::Responder {
    let rng = std::sync::Mutex::new(StdRng::seed_from_u64(seed ^ 0x5eed));
    Arc::new(move |body: &Value| {
        let done = body
            .get("messages")
            .and_then(Value::as_array)
            .map_or(0, |messages| {
                messages
                    .iter()
                    .filter(|m| m.get("role").and_then(Value::as_str) == Some("tool"))
                    .count()
            }) as u32;
        let reply = if done < steps {
            let step = done + 1;
            let command = format!("echo step-{step} >> {STEP_LOG}");
            GatewayReply::ToolCalls {
                text: Some(format!("Running step {step} of the drill now.")),
                calls: vec![ScriptedToolCall::new(
                    format!("call_step_{step}"),
                    "RunCommand",
                    json!({ "command": command }).to_string(),
                )],
            }
        } else {
            GatewayReply::text(FINAL_ANSWER)
        };
        let chunks = StreamStep::from_reply(&reply, Some(Usage::default())).unwrap_or_default();
        let mut rng = match rng.lock() {
            Ok(rng) => rng,
            Err(poisoned) => poisoned.into_inner(),
        };
        let mut steps_out = Vec::with_capacity(chunks.len() * 2);
        for chunk in chunks {
            let pause = rng.random_range(0..=1500);
            steps_out.push(StreamStep::Delay(Duration::from_micros(pause)));
            steps_out.push(chunk);
        }
        steps_out
    })
}

struct Run<'a> {
    options: &'a CrashOptions,
    fakes: Fakes,
    dirs: ScenarioDirs,
}

impl Run<'_> {
    /// Starts the first process, creates the session and starts the task; returns the
    /// process and the session's id.
    async fn start_task(&self, task_id: &str) -> anyhow::Result<(RuntimeDriver, String)> {
        let workspace = self.dirs.workspace.display().to_string();
        let mut first = self.spawn().await?;
        let created = first
            .request(
                "CreateSession",
                Some(json!({"userId": "u_crash", "tenantId": "t_crash",
                            "workspaceHint": {"localPaths": [workspace]}})),
            )
            .await?;
        let session_id = result_of(&created, "CreateSession")?
            .get("sessionId")
            .and_then(Value::as_str)
            .context("CreateSession gave no sessionId")?
            .to_owned();
        let started = first
            .request(
                "StartTask",
                Some(json!({"sessionId": session_id, "taskId": task_id, "prompt": PROMPT})),
            )
            .await?;
        result_of(&started, "StartTask")?;
        Ok((first, session_id))
    }

    /// Resumes the session in a new process and finishes the interrupted task there (or
    /// checks it had finished before the kill).
    async fn resume_and_finish(
        &self,
        session_id: &str,
        task_id: &str,
        seen: &[ReceivedEvent],
        checkpoint: Option<&Value>,
        report: &mut CrashReport,
    ) -> anyhow::Result<()> {
        let mut second = self.spawn().await?;
        let resumed = second
            .request("ResumeSession", Some(json!({"sessionId": session_id})))
            .await?;
        result_of(&resumed, "ResumeSession in the new process")?;
        let state = second
            .request("GetSessionState", Some(json!({"sessionId": session_id})))
            .await?;
        let state = result_of(&state, "GetSessionState")?;
        let incomplete = state.get("incompleteTask").filter(|t| !t.is_null());
        // Over when the killed process saw it end, or had already checkpointed its end.
        let finished_already = seen.iter().any(|e| e.event_type() == "task_completed")
            || checkpoint.and_then(|c| c.pointer("/task/status").and_then(Value::as_str))
                == Some("completed");
        match incomplete {
            Some(task) => {
                if task.get("taskId").and_then(Value::as_str) != Some(task_id) {
                    bail!("the resumed session offers another task as incomplete: {task}");
                }
                let continued = second
                    .request(
                        "StartTask",
                        Some(json!({"sessionId": session_id, "taskId": task_id, "prompt": PROMPT})),
                    )
                    .await?;
                result_of(&continued, "StartTask continuing the interrupted task")?;
                let end = second
                    .wait_for_event("the continued task's end", self.options.timeout, |e| {
                        TASK_TERMINAL_EVENTS.contains(&e.event_type())
                    })
                    .await?;
                if end.event_type() != "task_completed" {
                    bail!(
                        "the continued task ended with {}: {}",
                        end.event_type(),
                        end.params
                    );
                }
            }
            None if finished_already => report.finished_before_kill += 1,
            None => bail!(
                "the task was interrupted (killed after {} events) but the resumed session offers no incomplete task: {state}",
                seen.len()
            ),
        }
        let _ = second.request("Shutdown", None).await;
        second.stop().await;
        Ok(())
    }

    async fn spawn(&self) -> anyhow::Result<RuntimeDriver> {
        let (env, remove_env) = contract_env(
            &self.fakes,
            &self.dirs,
            &crate::runtime_manifest::RuntimeManifest::default(),
            &BTreeMap::new(),
        );
        let spec = LaunchSpec {
            command: self.options.runtime.clone(),
            env,
            remove_env,
            cwd: None,
            socket: None,
            http: false,
            sandbox: None,
        };
        RuntimeDriver::start(&spec, self.options.timeout).await
    }

    fn log_lines(&self) -> Vec<String> {
        std::fs::read_to_string(self.dirs.workspace.join(STEP_LOG))
            .unwrap_or_default()
            .lines()
            .map(str::to_owned)
            .collect()
    }

    fn checkpoint(&self, session_id: &str) -> anyhow::Result<Option<Value>> {
        let path = self.dirs.checkpoints.join(format!("{session_id}.json"));
        let bytes = match std::fs::read(&path) {
            Ok(bytes) => bytes,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(error) => return Err(error).context("the checkpoint cannot be read"),
        };
        let value: Value = serde_json::from_slice(&bytes)
            .context("the checkpoint left by the killed process is not JSON (a torn write?)")?;
        crate::validation::check("checkpoint/Checkpoint", &value).map_err(|problem| {
            anyhow::anyhow!("the checkpoint left by the killed process is invalid: {problem}")
        })?;
        Ok(Some(value))
    }
}

fn result_of(response: &Value, what: &str) -> anyhow::Result<Value> {
    response
        .get("result")
        .cloned()
        .with_context(|| format!("{what} failed: {response}"))
}

async fn one_run(
    options: &CrashOptions,
    seed: u64,
    report: &mut CrashReport,
) -> anyhow::Result<()> {
    let mut rng = StdRng::seed_from_u64(seed);
    let fakes = Fakes::start().await.context("cannot start the fakes")?;
    fakes.session.update_policy(|policy| {
        set_capability(
            policy,
            capability_entry(
                "Shell.Exec",
                json!({ "allowedCommands": ["echo"], "requiresApproval": false }),
            ),
        );
    });
    fakes
        .streaming_gateway
        .set_responder(Some(responder(options.steps, seed)));
    let run = Run {
        options,
        fakes,
        dirs: ScenarioDirs::create()?,
    };
    let timeout = options.timeout;

    let task_id = format!("task_crash_{seed}");
    let (mut first, session_id) = run.start_task(&task_id).await?;

    // Kill after a random number of events (about 9 per step), then a random pause of up
    // to 3 ms, so kills land mid-stream, mid-tool and mid-checkpoint-write alike.
    let expected_events = (options.steps as usize + 1) * 9;
    let target = rng.random_range(1..=expected_events);
    let seen: Vec<ReceivedEvent> = first
        .wait_for_events("events of the task before the kill", timeout, |events| {
            let ended = events
                .iter()
                .any(|e| TASK_TERMINAL_EVENTS.contains(&e.event_type()));
            (events.len() >= target || ended).then(|| events.to_vec())
        })
        .await?;
    let jitter = rng.random_range(0..=3000);
    tokio::time::sleep(Duration::from_micros(jitter)).await;
    first.kill().await;
    let moment = seen.last().map_or("start", |e| e.event_type()).to_owned();
    *report.kills_by_moment.entry(moment).or_default() += 1;

    let checkpoint = run.checkpoint(&session_id)?;
    let checkpointed_steps = checkpoint
        .as_ref()
        .filter(|c| c.pointer("/task/taskId").and_then(Value::as_str) == Some(&task_id))
        .and_then(|c| c.pointer("/task/stepCount").and_then(Value::as_u64))
        .unwrap_or(0) as u32;
    let log_at_kill = run.log_lines();
    let steps_completed_before_kill = seen
        .iter()
        .filter(|e| e.event_type() == "step_completed")
        .count() as u32;
    if checkpointed_steps + 1 < steps_completed_before_kill.min(options.steps + 1) {
        bail!(
            "the killed process had reported {steps_completed_before_kill} completed steps but its checkpoint records {checkpointed_steps}: a completed step was lost"
        );
    }
    if checkpointed_steps > 0 {
        report.resumed_mid_task += 1;
    }

    run.resume_and_finish(&session_id, &task_id, &seen, checkpoint.as_ref(), report)
        .await?;

    check_side_effects(
        options.steps,
        checkpointed_steps,
        &log_at_kill,
        &run.log_lines(),
        report,
    )?;
    check_thread(&run, options.steps).await
}

/// Every step ran; a checkpointed step ran exactly once; only the step in flight may have
/// run twice.
fn check_side_effects(
    steps: u32,
    checkpointed: u32,
    at_kill: &[String],
    at_end: &[String],
    report: &mut CrashReport,
) -> anyhow::Result<()> {
    for step in 1..=steps {
        let line = format!("step-{step}");
        let count = at_end.iter().filter(|l| **l == line).count();
        match count {
            0 => bail!("step {step}'s command never ran (log: {at_end:?})"),
            1 => {}
            2 if step > checkpointed => report.repeated_in_flight += 1,
            n => bail!(
                "step {step}'s command ran {n} times although the checkpoint recorded {checkpointed} completed steps (log at the kill: {at_kill:?}, at the end: {at_end:?})"
            ),
        }
    }
    Ok(())
}

/// The last request to the model holds the prompt once and each step's result once.
async fn check_thread(run: &Run<'_>, steps: u32) -> anyhow::Result<()> {
    let requests = run.fakes.streaming_gateway.requests().await;
    let last = requests.last().context("the model received no request")?;
    let messages = last
        .body
        .get("messages")
        .and_then(Value::as_array)
        .context("the last model request has no messages")?;
    let prompts = messages
        .iter()
        .filter(|m| m.get("content").and_then(Value::as_str) == Some(PROMPT))
        .count();
    if prompts != 1 {
        bail!("the last model request holds the prompt {prompts} times, expected once");
    }
    for step in 1..=steps {
        let id = format!("call_step_{step}");
        let results = messages
            .iter()
            .filter(|m| m.get("tool_call_id").and_then(Value::as_str) == Some(id.as_str()))
            .count();
        if results != 1 {
            bail!(
                "the last model request holds step {step}'s tool result {results} times, expected once"
            );
        }
    }
    Ok(())
}

/// `conformance crash --runtime CMD [--runs N] [--steps N] [--seed S]`.
#[derive(Debug, clap::Parser)]
#[command(
    name = "conformance crash",
    about = "Kill a runtime with SIGKILL at random moments of a multi-step task, resume it in a new process and check that nothing was lost or repeated"
)]
pub struct CrashCli {
    /// The runtime command (as for certification).
    #[arg(long, value_name = "COMMAND", env = "CONFORMANCE_RUNTIME")]
    pub runtime: String,
    #[arg(long, default_value_t = 200)]
    pub runs: usize,
    /// Tool-calling steps per task.
    #[arg(long, default_value_t = 4)]
    pub steps: u32,
    /// Seed of the first run (run i uses seed + i), to replay a failure.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    #[arg(long, default_value_t = 20_000, value_name = "MS")]
    pub timeout_ms: u64,
}

impl CrashCli {
    pub fn into_options(self) -> anyhow::Result<CrashOptions> {
        Ok(CrashOptions {
            runtime: RuntimeCommand::parse(&self.runtime)?,
            runs: self.runs,
            steps: self.steps,
            seed: self.seed,
            timeout: Duration::from_millis(self.timeout_ms),
        })
    }
}
