//! Starting a runtime: the command, the transport, the process and its watcher. One path
//! for every transport — spawn with the transport's arguments, read stderr, watch the
//! process, open the protocol channel — with [`Channel`] as the only part that varies.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, bail};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::process::{Child, ChildStdin, Command};
use tokio::sync::oneshot;
#[cfg(unix)]
use tokio::time::Instant;

#[cfg(unix)]
use super::indent;
use super::state::{Direction, Shared};
use super::{http, reader, sandbox};

/// How to start a runtime: the program and its arguments, split like a shell would but
/// without a shell (so no expansion, no pipes, no surprises across platforms).
#[derive(Debug, Clone)]
pub struct RuntimeCommand {
    pub program: String,
    pub args: Vec<String>,
    /// The command as the user wrote it, for reports.
    pub display: String,
}

impl RuntimeCommand {
    /// Splits a command line with shell quoting rules (`shell-words`).
    pub fn parse(command_line: &str) -> anyhow::Result<Self> {
        let mut words = shell_words::split(command_line)
            .with_context(|| format!("cannot split the runtime command {command_line:?}"))?;
        if words.is_empty() {
            bail!("the runtime command is empty");
        }
        let program = words.remove(0);
        Ok(Self {
            program,
            args: words,
            display: command_line.to_owned(),
        })
    }

    /// A command that is one executable path, no arguments.
    pub fn from_program(path: &Path) -> Self {
        let program = path.display().to_string();
        Self {
            display: shell_words::quote(&program).into_owned(),
            program,
            args: Vec::new(),
        }
    }
}

/// How the kit talks to the runtime.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default, clap::ValueEnum)]
pub enum Transport {
    /// JSON-RPC over the child's stdin/stdout.
    #[default]
    Stdio,
    /// JSON-RPC over a Unix domain socket the runtime listens on (`--listen PATH`).
    Socket,
    /// JSON-RPC as `POST /rpc` bodies and SessionEvents on the SSE stream `GET /events` of
    /// an HTTP listener (`--listen http://127.0.0.1:PORT`, bearer token in
    /// `AGENT_RUNTIME_HTTP_TOKEN`): the web design's sandbox shape.
    Http,
    /// The Sandbox Agent Host behind the Session Service (INTEROP.md §9): the kit plays the
    /// service — launches the runtime with the launcher's env and flags, answers its
    /// registration, proxies `/rpc` and `/events` as the real proxy does (see [`sandbox`]).
    Sandbox,
}

impl Transport {
    /// The transport a label names (`stdio`, `socket`, `http`, `sandbox`).
    pub fn parse(label: &str) -> Option<Transport> {
        [
            Transport::Stdio,
            Transport::Socket,
            Transport::Http,
            Transport::Sandbox,
        ]
        .into_iter()
        .find(|t| t.label() == label)
    }

    pub fn label(self) -> &'static str {
        match self {
            Transport::Stdio => "stdio",
            Transport::Socket => "socket",
            Transport::Http => "http",
            Transport::Sandbox => "sandbox",
        }
    }
}

/// The argument the kit appends, followed by the socket path, in socket mode.
pub(crate) const LISTEN_ARG: &str = "--listen";

/// Unix domain socket paths are limited to ~104–108 bytes depending on the platform.
const MAX_SOCKET_PATH_BYTES: usize = 100;

/// Everything needed to spawn one runtime process.
#[derive(Debug, Clone)]
pub(crate) struct LaunchSpec {
    pub command: RuntimeCommand,
    /// Variables to set (on top of the kit's own environment).
    pub env: Vec<(String, String)>,
    /// Variables to remove from the inherited environment (the contract's variables the kit
    /// does not set, so a developer's shell cannot leak into a certification).
    pub remove_env: Vec<String>,
    /// Working directory; `None` inherits the kit's.
    pub cwd: Option<PathBuf>,
    /// `Some(path)`: socket transport, the runtime is started with `--listen <path>` and the
    /// kit connects there; `None`: stdio.
    pub socket: Option<PathBuf>,
    /// HTTP transport (takes precedence over `socket`): the runtime is started with
    /// `--listen http://127.0.0.1:<free port>` and a fresh `AGENT_RUNTIME_HTTP_TOKEN`.
    pub http: bool,
    /// Sandbox transport (takes precedence over the others): the session the kit, as the
    /// Session Service, provisioned for the sandbox.
    pub sandbox: Option<sandbox::SandboxSpec>,
}

/// Where requests go: the child's stdin, the socket's write half or the HTTP bridge.
pub(super) type Writer = Box<dyn AsyncWrite + Send + Unpin>;
/// Where protocol lines come from.
pub(super) type Reader = Box<dyn AsyncRead + Send + Unpin>;

/// A started runtime, its protocol channel open.
pub(super) struct Launched {
    pub shared: Arc<Shared>,
    pub pid: Option<u32>,
    /// Dropping this (or sending on it) kills the process.
    pub kill: oneshot::Sender<()>,
    pub writer: Writer,
    /// Socket and HTTP: the child's real stdin, kept open (and never written) so that a
    /// runtime watching it does not see end of input.
    pub idle_stdin: Option<ChildStdin>,
    pub transport: Transport,
}

/// The part of starting a runtime that depends on the transport.
enum Channel {
    Stdio,
    Socket(PathBuf),
    Http {
        base: String,
        token: String,
    },
    Sandbox {
        port: u16,
        spec: sandbox::SandboxSpec,
    },
}

impl Channel {
    /// Checks what can be checked before spawning (a socket path's length, a free port).
    fn for_spec(spec: &LaunchSpec) -> anyhow::Result<Self> {
        if let Some(sandbox) = &spec.sandbox {
            return Ok(Channel::Sandbox {
                port: http::free_port()?,
                spec: sandbox.clone(),
            });
        }
        if spec.http {
            let port = http::free_port()?;
            return Ok(Channel::Http {
                base: format!("http://127.0.0.1:{port}"),
                token: http::fresh_token(),
            });
        }
        let Some(path) = &spec.socket else {
            return Ok(Channel::Stdio);
        };
        if cfg!(not(unix)) {
            bail!(
                "the socket transport ({}) needs Unix domain sockets; Windows named pipes are not supported by the kit",
                path.display()
            );
        }
        if path.as_os_str().len() > MAX_SOCKET_PATH_BYTES {
            bail!(
                "the socket path {} is too long for a Unix domain socket (set TMPDIR to a shorter directory)",
                path.display()
            );
        }
        Ok(Channel::Socket(path.clone()))
    }

    fn transport(&self) -> Transport {
        match self {
            Channel::Stdio => Transport::Stdio,
            Channel::Socket(_) => Transport::Socket,
            Channel::Http { .. } => Transport::Http,
            Channel::Sandbox { .. } => Transport::Sandbox,
        }
    }

    /// The arguments appended to the command: none over stdio (the desktop app adds none).
    fn listen_args(&self) -> Vec<String> {
        match self {
            Channel::Stdio => Vec::new(),
            Channel::Socket(path) => vec![LISTEN_ARG.to_owned(), path.display().to_string()],
            Channel::Http { base, .. } => vec![LISTEN_ARG.to_owned(), base.clone()],
            Channel::Sandbox { port, spec } => spec.args(*port),
        }
    }

    fn extra_env(&self) -> Vec<(String, String)> {
        match self {
            Channel::Http { token, .. } => vec![(http::TOKEN_ENV.to_owned(), token.clone())],
            Channel::Sandbox { spec, .. } => spec.env(),
            Channel::Stdio | Channel::Socket(_) => Vec::new(),
        }
    }
}

/// How many times a runtime is started on a fresh port when the port the kit picked was
/// taken before the runtime could bind it.
const PORT_ATTEMPTS: u32 = 3;

/// Spawns the runtime over `spec`'s transport, starts the reader tasks and opens the protocol
/// channel (socket and HTTP: waiting, bounded by `timeout`, until the runtime accepts it).
///
/// The kit finds a free port by binding and releasing it, so another process can take it
/// before the runtime binds it. A runtime that then says its address is in use is the kit's
/// race, not the runtime's defect: it is started again on a new port.
pub(super) async fn launch(spec: &LaunchSpec, timeout: Duration) -> anyhow::Result<Launched> {
    let mut attempt = 1;
    loop {
        let channel = Channel::for_spec(spec)?;
        let on_picked_port = matches!(channel, Channel::Http { .. } | Channel::Sandbox { .. });
        match launch_on(spec, channel, timeout).await {
            Err(error) if on_picked_port && attempt < PORT_ATTEMPTS && lost_port(&error) => {
                attempt += 1;
            }
            launched => return launched,
        }
    }
}

/// Whether a failed start says the runtime's port was taken (the wording of Linux, macOS
/// and Windows, as Rust, Python and Node print it).
fn lost_port(error: &anyhow::Error) -> bool {
    let message = format!("{error:#}").to_ascii_lowercase();
    [
        "address already in use",
        "only one usage of each socket address",
        "eaddrinuse",
    ]
    .iter()
    .any(|words| message.contains(words))
}

async fn launch_on(
    spec: &LaunchSpec,
    channel: Channel,
    timeout: Duration,
) -> anyhow::Result<Launched> {
    let (mut child, pid, shared) =
        spawn_process(spec, &channel.listen_args(), &channel.extra_env())?;
    let stdin = child
        .stdin
        .take()
        .context("the runtime's stdin is not piped")?;
    let stdout = child
        .stdout
        .take()
        .context("the runtime's stdout is not piped")?;
    let stderr = child
        .stderr
        .take()
        .context("the runtime's stderr is not piped")?;
    tokio::spawn(reader::read_stderr(stderr, Arc::clone(&shared)));
    // Dropping `kill` (an early return below) kills the process.
    let kill = watch_child(child, Arc::clone(&shared));
    let (writer, protocol, idle_stdin): (Writer, Reader, _) = match &channel {
        Channel::Stdio => {
            shared.update(|s| s.stray_stdout_closed = true);
            (Box::new(stdin), Box::new(stdout), None)
        }
        Channel::Socket(path) => {
            // stdout must stay empty: every line on it is a violation.
            tokio::spawn(reader::read_stray_stdout(stdout, Arc::clone(&shared)));
            let (writer, protocol) = connect_socket(path, &shared, timeout).await?;
            let note = format!("connected to {}", path.display());
            shared.update(|s| s.note(Direction::Note, &note));
            (writer, protocol, Some(stdin))
        }
        Channel::Http { base, token } => {
            tokio::spawn(reader::read_stray_stdout(stdout, Arc::clone(&shared)));
            let (requests, lines) = http::connect(base, token, &shared, timeout).await?;
            shared.update(|s| s.note(Direction::Note, &format!("connected to {base}/events")));
            (Box::new(requests), Box::new(lines), Some(stdin))
        }
        Channel::Sandbox { spec, .. } => {
            tokio::spawn(reader::read_stray_stdout(stdout, Arc::clone(&shared)));
            let (requests, lines) = sandbox::connect(spec, pid, &shared, timeout).await?;
            (Box::new(requests), Box::new(lines), Some(stdin))
        }
    };
    tokio::spawn(reader::read_stdout(protocol, Arc::clone(&shared)));
    Ok(Launched {
        shared,
        pid,
        kill,
        writer,
        idle_stdin,
        transport: channel.transport(),
    })
}

/// Spawns the command (with `extra` arguments appended) with piped stdio and the prepared
/// environment plus `extra_env`; returns the child, its pid and a fresh shared state noting
/// the start.
fn spawn_process(
    spec: &LaunchSpec,
    extra: &[String],
    extra_env: &[(String, String)],
) -> anyhow::Result<(Child, Option<u32>, Arc<Shared>)> {
    let mut command = Command::new(&spec.command.program);
    command
        .args(&spec.command.args)
        .args(extra)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    // Its own process group, so that a crash kills the whole runtime — a wrapper script and
    // the program behind it — not just the process the kit started.
    #[cfg(unix)]
    command.process_group(0);
    for name in &spec.remove_env {
        command.env_remove(name);
    }
    for (name, value) in spec.env.iter().chain(extra_env) {
        command.env(name, value);
    }
    if let Some(cwd) = &spec.cwd {
        command.current_dir(cwd);
    }
    let child = command.spawn().with_context(|| {
        format!(
            "cannot start the runtime {:?} (is the path right and the file executable?)",
            spec.command.display
        )
    })?;
    let pid = child.id();
    let shared = Arc::new(Shared::new());
    let extra_text = if extra.is_empty() {
        String::new()
    } else {
        format!(" {}", shell_words::join(extra))
    };
    shared.update(|s| {
        s.note(
            Direction::Note,
            &format!("started {}{extra_text} (pid {pid:?})", spec.command.display),
        );
    });
    Ok((child, pid, shared))
}

/// The watcher owns the child: it records the exit status, and kills the process when asked
/// or when the returned sender is dropped.
fn watch_child(mut child: Child, shared: Arc<Shared>) -> oneshot::Sender<()> {
    let (kill_tx, kill_rx) = oneshot::channel::<()>();
    tokio::spawn(async move {
        let status = tokio::select! {
            status = child.wait() => status,
            _ = kill_rx => {
                kill_group(child.id());
                let _ = child.start_kill();
                child.wait().await
            }
        };
        shared.update(|s| match status {
            Ok(status) => {
                s.note(Direction::Note, &format!("process exited: {status}"));
                s.exit = Some(status);
            }
            Err(error) => s.note(
                Direction::Note,
                &format!("waiting for the process failed: {error}"),
            ),
        });
    });
    kill_tx
}

/// SIGKILL to the runtime's process group (its id is the runtime's pid).
#[cfg(unix)]
fn kill_group(pid: Option<u32>) {
    if let Some(pid) = pid.and_then(|p| i32::try_from(p).ok()) {
        let _ = nix::sys::signal::killpg(
            nix::unistd::Pid::from_raw(pid),
            nix::sys::signal::Signal::SIGKILL,
        );
    }
}

#[cfg(not(unix))]
fn kill_group(_pid: Option<u32>) {}

/// Connects to the runtime's socket. The runtime binds it some time after it starts, so
/// this is the one place the kit retries: a connect every few milliseconds (2 ms doubling to
/// 20 ms) while the socket does not exist or refuses, bounded by `timeout`, and given up at
/// once when the process exits.
#[cfg(unix)]
async fn connect_socket(
    path: &Path,
    shared: &Shared,
    timeout: Duration,
) -> anyhow::Result<(Writer, Reader)> {
    use std::io::ErrorKind;
    let deadline = Instant::now() + timeout;
    let mut delay = Duration::from_millis(2);
    loop {
        let error = match tokio::net::UnixStream::connect(path).await {
            Ok(stream) => {
                let (read_half, write_half) = stream.into_split();
                return Ok((Box::new(write_half), Box::new(read_half)));
            }
            Err(error)
                if matches!(
                    error.kind(),
                    ErrorKind::NotFound | ErrorKind::ConnectionRefused
                ) =>
            {
                error
            }
            Err(error) => {
                return Err(error).with_context(|| {
                    format!("cannot connect to the runtime's socket {}", path.display())
                });
            }
        };
        let exited = {
            let state = shared.lock();
            state.exit.map(|status| (status, state.stderr_tail(2000)))
        };
        if let Some((status, stderr)) = exited {
            bail!(
                "the runtime exited ({status}) before accepting a connection on {} (a runtime certified over the socket transport must accept `{LISTEN_ARG} PATH`)\n      last stderr:\n{}",
                path.display(),
                indent(&stderr)
            );
        }
        if Instant::now() >= deadline {
            let stderr = shared.lock().stderr_tail(2000);
            bail!(
                "timed out after {timeout:?} waiting for the runtime to listen on {} ({error}; it was started with `{LISTEN_ARG} PATH`)\n      last stderr:\n{}",
                path.display(),
                indent(&stderr)
            );
        }
        tokio::time::sleep(delay.min(deadline.saturating_duration_since(Instant::now()))).await;
        delay = (delay * 2).min(Duration::from_millis(20));
    }
}

#[cfg(not(unix))]
async fn connect_socket(path: &Path, _: &Shared, _: Duration) -> anyhow::Result<(Writer, Reader)> {
    bail!(
        "the socket transport ({}) needs Unix domain sockets; Windows named pipes are not supported by the kit",
        path.display()
    )
}
