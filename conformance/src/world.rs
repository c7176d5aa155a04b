//! The cucumber World: one scenario's universe — a fresh set of fakes, fresh temp dirs
//! (workspace, checkpoints, logs, HOME) and one runtime process, plus what the steps learned
//! along the way (the last response, the session, the task).
//!
//! The fakes and the runtime start lazily, on the first step that needs them, so `Given`
//! steps can still shape the runtime's environment (e.g. a per-scenario approval timeout)
//! before it is spawned. Nothing is shared between scenarios: own ports, own dirs, own HOME.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use agent_mocks::Fakes;
use anyhow::{Context, bail};
use serde_json::Value;

use crate::config::KitConfig;
use crate::driver::{LaunchSpec, RuntimeDriver, Transport};
use crate::env::{ScenarioDirs, contract_env};
use crate::ledger::Judged;

/// Where this scenario comes from, for transcripts and messages.
#[derive(Debug, Clone, Default)]
pub(crate) struct ScenarioId {
    pub feature_path: Option<PathBuf>,
    pub name: String,
    pub line: usize,
    /// The feature's, rule's and scenario's tags, without `@`.
    pub tags: Vec<String>,
}

/// The session the scenario created, as the runtime reported it.
#[derive(Debug, Clone)]
pub(crate) struct SessionInfo {
    pub session_id: String,
    pub workspace_id: String,
    /// The whole CreateSession result.
    pub result: Value,
}

impl SessionInfo {
    /// The session a CreateSession (or ResumeSession) result names; missing ids stay
    /// empty, for the step that checks the result to report.
    pub(crate) fn from_result(result: Value) -> Self {
        let id = |key: &str| {
            result
                .get(key)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned()
        };
        Self {
            session_id: id("sessionId"),
            workspace_id: id("workspaceId"),
            result,
        }
    }
}

/// The task the scenario started.
#[derive(Debug, Clone)]
pub(crate) struct TaskInfo {
    pub task_id: String,
    pub prompt: String,
    /// The whole StartTask response.
    pub response: Value,
    /// stdout position of the StartTask response, to order it against events.
    pub response_seq: u64,
    /// Model requests the gateway had received before StartTask was sent: the later ones
    /// are this task's (tied by order, not by the reference runtime's `X-Task-Id` header).
    pub requests_before: usize,
}

#[derive(Default, cucumber::World)]
pub(crate) struct ConformanceWorld {
    config: Option<Arc<KitConfig>>,
    pub scenario: ScenarioId,
    dirs: Option<ScenarioDirs>,
    fakes: Option<Fakes>,
    runtime: Option<RuntimeDriver>,
    /// Runtime processes this scenario killed (crash recovery); judged with the last one.
    crashed: Vec<RuntimeDriver>,
    env_overrides: BTreeMap<String, String>,
    /// Added to every wait: the spec's default timing of something the runtime does not
    /// shorten (see [`ConformanceWorld::allow_default_timing`]).
    default_timing: Duration,
    /// The last whole response a step received (request or raw read), for `Then` steps.
    pub last_response: Option<Value>,
    /// The method that `last_response` answers, when known.
    pub last_method: Option<String>,
    /// A raw line was sent and its answer not read yet (the next `Then` step reads it).
    pub awaiting_raw_answer: bool,
    pub session: Option<SessionInfo>,
    pub task: Option<TaskInfo>,
    /// Counters captured at a moment (e.g. uploads when Shutdown was sent) to compare later.
    pub marks: BTreeMap<&'static str, usize>,
    /// MCP server fakes by the name the policy gives them.
    pub mcp_servers: Vec<(String, agent_mocks::McpServerFake)>,
    /// The Backend Tool Service fake, when a scenario uses one.
    pub backend_tools: Option<agent_mocks::BackendToolServiceFake>,
    /// The web server fake HttpRequest scenarios call (`${WEB}` in arguments).
    pub web: Option<agent_mocks::WebFake>,
    /// Sandbox transport: the session the kit, as the Session Service, provisioned.
    pub sandbox_launch: Option<agent_mocks::SandboxLaunch>,
    /// What the sandbox steps keep between them.
    pub sandbox: crate::driver::sandbox_scratch::SandboxScratch,
}

impl std::fmt::Debug for ConformanceWorld {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ConformanceWorld")
            .field("scenario", &self.scenario.name)
            .field("runtime", &self.runtime)
            .field("session", &self.session.as_ref().map(|s| &s.session_id))
            .field("task", &self.task.as_ref().map(|t| &t.task_id))
            .finish_non_exhaustive()
    }
}

impl Drop for ConformanceWorld {
    fn drop(&mut self) {
        // See `drop_fakes`: never drop a fake on an async task (cucumber drops the World
        // in its writers, on the runner's own thread).
        let servers = self.take_servers();
        if servers.is_some()
            && let Ok(handle) = tokio::runtime::Handle::try_current()
        {
            handle.spawn_blocking(move || drop(servers));
        }
    }
}

/// Every fake of a scenario that runs a server: dropped together, off the async tasks.
type Servers = (
    Option<Fakes>,
    Vec<(String, agent_mocks::McpServerFake)>,
    Option<agent_mocks::BackendToolServiceFake>,
    Option<agent_mocks::WebFake>,
);

impl ConformanceWorld {
    /// Called by the `before` hook: the run's configuration and the scenario's identity.
    pub(crate) fn prepare(&mut self, config: Arc<KitConfig>, scenario: ScenarioId) {
        self.config = Some(config);
        self.scenario = scenario;
    }

    pub(crate) fn config(&self) -> anyhow::Result<&KitConfig> {
        self.config
            .as_deref()
            .context("the kit's configuration was not handed to this scenario")
    }

    /// The transport of this run, once configured.
    pub(crate) fn transport(&self) -> Option<Transport> {
        self.config.as_ref().map(|config| config.transport)
    }

    /// The default bound for every wait in a step.
    pub(crate) fn timeout(&self) -> Duration {
        self.config
            .as_ref()
            .map_or(Duration::from_secs(5), |c| c.timeout)
            + self.default_timing
    }

    /// Lets this scenario's waits take `delay` longer when the runtime runs `knob` (e.g.
    /// `LLM_RETRY_BASE_DELAY`) on the spec's default: the manifest does not set it. A runtime
    /// is never failed for keeping a default the documents give it.
    pub(crate) fn allow_default_timing(&mut self, knob: &str, delay: Duration) {
        let set = self
            .config
            .as_ref()
            .is_some_and(|config| config.manifest.sets_knob(knob));
        if !set {
            self.default_timing += delay;
        }
    }

    pub(crate) fn dirs(&mut self) -> anyhow::Result<&ScenarioDirs> {
        if self.dirs.is_none() {
            self.dirs = Some(ScenarioDirs::create()?);
        }
        self.dirs.as_ref().context("scenario dirs")
    }

    /// The fakes of this scenario, started on first use.
    pub(crate) async fn fakes(&mut self) -> anyhow::Result<&Fakes> {
        if self.fakes.is_none() {
            let fakes = Fakes::start()
                .await
                .context("cannot start the fake services")?;
            self.fakes = Some(fakes);
        }
        self.fakes.as_ref().context("fakes")
    }

    /// The fakes, which must already run (for `Then` steps that inspect them).
    pub(crate) fn started_fakes(&self) -> anyhow::Result<&Fakes> {
        self.fakes
            .as_ref()
            .context("no fake service was started in this scenario")
    }

    /// The OS the runtime under test runs on (its manifest's `os`; unix without a config).
    pub(crate) fn runtime_os(&self) -> crate::runtime_manifest::RuntimeOs {
        self.config
            .as_ref()
            .map(|config| config.manifest.os)
            .unwrap_or_default()
    }

    /// Fails the step as not applicable when the scenario's command lines are written for
    /// another shell than the runtime's: POSIX sh (`@posix-shell`) on Windows, where commands
    /// go to cmd.exe, or cmd.exe (`@cmd-shell`) elsewhere.
    pub(crate) fn require_scenario_shell(&self) -> anyhow::Result<()> {
        let tagged = |name: &str| self.scenario.tags.iter().any(|tag| tag == name);
        let windows = self.runtime_os() == crate::runtime_manifest::RuntimeOs::Windows;
        if tagged(crate::contract::POSIX_SHELL_TAG) && windows {
            bail!(
                "{} the scenario's command is POSIX sh (@posix-shell) and the runtime's shell on Windows is cmd.exe",
                crate::contract::NOT_APPLICABLE
            );
        }
        if tagged(crate::contract::CMD_SHELL_TAG) && !windows {
            bail!(
                "{} the scenario's command is for cmd.exe (@cmd-shell) and the runtime's shell is POSIX sh",
                crate::contract::NOT_APPLICABLE
            );
        }
        Ok(())
    }

    /// Fails the step as not applicable when the runtime's machine has no git.
    pub(crate) fn require_git(&self) -> anyhow::Result<()> {
        if self
            .config
            .as_ref()
            .is_some_and(|config| !config.manifest.git)
        {
            bail!(
                "{} the runtime's manifest declares that its machine has no git",
                crate::contract::NOT_APPLICABLE
            );
        }
        Ok(())
    }

    /// Fails the step as not applicable when the runtime's machine has no Python interpreter
    /// (the manifest's `python = false`): code the scenario runs could not run there.
    pub(crate) fn require_python(&self) -> anyhow::Result<()> {
        if self
            .config
            .as_ref()
            .is_some_and(|config| !config.manifest.python)
        {
            bail!(
                "{} the runtime's manifest declares that its machine has no Python interpreter, and the scenario runs Python code",
                crate::contract::NOT_APPLICABLE
            );
        }
        Ok(())
    }

    /// Fails the step as not applicable when the runtime does not use the home folder the
    /// kit gives it (the manifest's `home = false`).
    pub(crate) fn require_home(&self) -> anyhow::Result<()> {
        if self
            .config
            .as_ref()
            .is_some_and(|config| !config.manifest.home)
        {
            bail!(
                "{} the runtime's manifest declares that the home folder the kit gives it (HOME, USERPROFILE) is not the one it uses",
                crate::contract::NOT_APPLICABLE
            );
        }
        Ok(())
    }

    /// Sets an environment variable for the runtime; only before it starts. A knob goes
    /// through the runtime's manifest: under the name it reads, or, when the runtime does not
    /// declare it, the step fails as "not applicable" (see [`crate::runtime_manifest`]).
    /// What `Given` steps set in the runtime's environment (under the runtime's names).
    pub(crate) fn runtime_env_overrides(&self) -> &BTreeMap<String, String> {
        &self.env_overrides
    }

    pub(crate) fn set_runtime_env(&mut self, name: &str, value: &str) -> anyhow::Result<()> {
        if self.runtime.is_some() {
            bail!("{name} must be set before the runtime starts (put this step earlier)");
        }
        let (name, value) = match &self.config {
            Some(config) => config
                .manifest
                .resolve(name, value)
                .map_err(anyhow::Error::msg)?,
            None => (name.to_owned(), value.to_owned()),
        };
        self.env_overrides.insert(name, value);
        Ok(())
    }

    /// The runtime of this scenario, spawned on first use with the contract environment
    /// pointed at this scenario's fakes and dirs.
    pub(crate) async fn runtime(&mut self) -> anyhow::Result<&mut RuntimeDriver> {
        if self.runtime.is_none() {
            if self.transport() == Some(Transport::Sandbox)
                && let Some(reason) =
                    crate::driver::sandbox::not_applicable(&self.scenario.tags, &self.scenario.name)
            {
                bail!("{} {reason}", crate::contract::NOT_APPLICABLE);
            }
            let spec = self.launch_spec().await?;
            let timeout = self.timeout();
            self.runtime = Some(RuntimeDriver::start(&spec, timeout).await?);
        }
        self.runtime.as_mut().context("runtime")
    }

    /// Kills the runtime process with SIGKILL, as a crash would, and keeps what it wrote
    /// for the scenario's verdict. The next step that needs a runtime starts a new process
    /// with the same environment, fakes and directories (so the same CHECKPOINT_DIR).
    pub(crate) async fn crash_runtime(&mut self) -> anyhow::Result<()> {
        if self.transport() == Some(Transport::Sandbox) {
            bail!(
                "{} a sandbox registers once per provisioned session (INTEROP.md §9); a restarted sandbox process is a new launch, not the desktop app's restart with the old sessionId",
                crate::contract::NOT_APPLICABLE
            );
        }
        let mut runtime = self
            .runtime
            .take()
            .context("the runtime was not started in this scenario, so it cannot be killed")?;
        runtime.kill().await;
        self.crashed.push(runtime);
        Ok(())
    }

    /// The runtime processes this scenario killed, oldest first.
    pub(crate) fn crashed_runtimes(&self) -> &[RuntimeDriver] {
        &self.crashed
    }

    /// The runtime, which must already run (for `Then` steps).
    pub(crate) fn started_runtime(&self) -> anyhow::Result<&RuntimeDriver> {
        self.runtime
            .as_ref()
            .context("the runtime was not started in this scenario")
    }

    pub(crate) fn started_runtime_mut(&mut self) -> anyhow::Result<&mut RuntimeDriver> {
        self.runtime
            .as_mut()
            .context("the runtime was not started in this scenario")
    }

    async fn launch_spec(&mut self) -> anyhow::Result<LaunchSpec> {
        let command = self.config()?.runtime.clone();
        let transport = self.config()?.transport;
        self.fakes().await?;
        self.dirs()?;
        let (Some(fakes), Some(dirs)) = (&self.fakes, &self.dirs) else {
            bail!("the fakes and the scenario dirs must exist before the runtime starts");
        };
        let manifest = match &self.config {
            Some(config) => Arc::clone(&config.manifest),
            None => Arc::default(),
        };
        let (env, remove_env) = contract_env(fakes, dirs, &manifest, &self.env_overrides);
        // Short on purpose: Unix socket paths are limited to ~104 bytes.
        let socket = (transport == Transport::Socket).then(|| dirs.root().join("rt.sock"));
        let sandbox = if transport == Transport::Sandbox {
            // The kit as the Session Service: a cloud_sandbox session waits for its sandbox.
            let launch = fakes
                .session
                .provision_sandbox(crate::contract::TENANT_ID, crate::contract::USER_ID);
            fakes
                .session
                .set_sandbox_workspace_service_url(&fakes.workspace.url());
            for (path, content) in &self.sandbox.preseed {
                fakes
                    .workspace
                    .put_file(&launch.workspace_id, path, content);
            }
            let spec = crate::driver::SandboxSpec {
                session_id: launch.session_id.clone(),
                registration_token: self
                    .sandbox
                    .token_override
                    .clone()
                    .unwrap_or_else(|| launch.registration_token.clone()),
                workspace_dir: dirs.workspace.clone(),
                registered: fakes.session.watch_registrations(),
            };
            self.sandbox_launch = Some(launch);
            Some(spec)
        } else {
            None
        };
        Ok(LaunchSpec {
            command,
            env,
            remove_env,
            cwd: None,
            socket,
            http: transport == Transport::Http,
            sandbox,
        })
    }

    pub(crate) fn session(&self) -> anyhow::Result<&SessionInfo> {
        self.session
            .as_ref()
            .context("no session was created in this scenario (add \"Given a running session\")")
    }

    pub(crate) fn task(&self) -> anyhow::Result<&TaskInfo> {
        self.task
            .as_ref()
            .context("no task was started in this scenario")
    }

    pub(crate) fn last_response(&self) -> anyhow::Result<&Value> {
        self.last_response
            .as_ref()
            .context("no response has been received yet in this scenario")
    }

    /// Ends the scenario: stops the runtime (killing it if needed), drains what it wrote, and
    /// returns what the kit judged of its messages. Malformed messages do not fail the
    /// scenario: they are charged to the requirement about that message (see
    /// [`crate::ledger`]). When the scenario failed (or a message was malformed) and the run
    /// keeps transcripts, writes this scenario's transcript, whose file name the report
    /// derives from the scenario's location.
    pub(crate) async fn finish(&mut self, scenario_failed: bool) -> Judged {
        let Some(mut runtime) = self.runtime.take().or_else(|| self.crashed.pop()) else {
            self.drop_fakes().await;
            return Judged::default();
        };
        runtime.stop().await;
        let mut judged = Judged {
            violations: runtime.violations(),
            observed: runtime.observed(),
            transcript_error: None,
        };
        // A killed process is judged too, for what it wrote before the kill.
        for crashed in &self.crashed {
            judged.violations.extend(crashed.violations());
            for (name, count) in crashed.observed() {
                *judged.observed.entry(name).or_default() += count;
            }
        }
        if (scenario_failed || !judged.violations.is_empty())
            && let Some(dir) = self.config.as_ref().and_then(|c| c.transcripts_dir.clone())
            && let Err(error) = self.write_transcript(&dir, &runtime, &judged.violations)
        {
            judged.transcript_error = Some(format!("could not write the transcript: {error:#}"));
        }
        self.drop_fakes().await;
        judged
    }

    /// Stops the fakes off the scenario's task. wiremock's `MockServer` blocks in its `Drop`
    /// (a `block_on` of an async lock); inside a tokio task whose cooperative budget is spent
    /// that `block_on` spins forever, so the drop happens on a blocking thread instead,
    /// bounded so that a stuck fake cannot hang the run.
    async fn drop_fakes(&mut self) {
        if let Some(servers) = self.take_servers() {
            let dropping = tokio::task::spawn_blocking(move || drop(servers));
            let _ = tokio::time::timeout(Duration::from_secs(5), dropping).await;
        }
    }

    /// Takes every server-running fake out of the World (`None` when there is none).
    fn take_servers(&mut self) -> Option<Servers> {
        let servers = (
            self.fakes.take(),
            std::mem::take(&mut self.mcp_servers),
            self.backend_tools.take(),
            self.web.take(),
        );
        let any = servers.0.is_some()
            || !servers.1.is_empty()
            || servers.2.is_some()
            || servers.3.is_some();
        any.then_some(servers)
    }

    fn write_transcript(
        &self,
        dir: &Path,
        runtime: &RuntimeDriver,
        violations: &[crate::driver::Violation],
    ) -> anyhow::Result<PathBuf> {
        std::fs::create_dir_all(dir)?;
        let path = dir.join(crate::report::transcript_file_name(
            self.scenario.feature_path.as_deref(),
            self.scenario.line,
        ));
        let mut text = format!(
            "scenario: {}\nfeature: {}:{}\n\n## protocol violations\n",
            self.scenario.name,
            self.scenario
                .feature_path
                .as_deref()
                .map(|p| p.display().to_string())
                .unwrap_or_default(),
            self.scenario.line
        );
        if violations.is_empty() {
            text.push_str("(none)\n");
        }
        for violation in violations {
            text.push_str(&format!("- {violation}\n"));
        }
        for (n, crashed) in self.crashed.iter().enumerate() {
            text.push_str(&format!(
                "\n## killed runtime process {} — stdin/stdout transcript\n",
                n + 1
            ));
            text.push_str(&crashed.transcript());
        }
        text.push_str("\n## stdin/stdout transcript\n");
        text.push_str(&runtime.transcript());
        text.push_str("\n## stderr (tail)\n");
        text.push_str(&runtime.stderr_tail(64 * 1024));
        std::fs::write(&path, text).with_context(|| format!("cannot write {}", path.display()))?;
        Ok(path)
    }
}
