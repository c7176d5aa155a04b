//! `agent-runtime`: the process the desktop app spawns, one per session. It reads its
//! configuration from the environment (the same variables as the existing Python runtime,
//! so it is a drop-in), wires the agent host to the tool runtime and serves JSON-RPC on
//! stdin/stdout until Shutdown, end of input or SIGTERM.

// Stderr carries start-up failures; stdout stays denied: only rpc::outbound writes it.
#![allow(clippy::print_stderr)]

mod audit_args;
mod config;
mod logging;
mod sandbox_host;
mod secrets;
mod stdio;

use std::sync::Arc;

use agent_host::Host;
use agent_host::Outbound;
use agent_host::transport::serve;
use agent_tools::LocalToolRouter;
use clap::Parser;

fn main() -> std::process::ExitCode {
    // The sandbox launcher (agent_tools::sandbox): confines itself and execs a command the
    // tools start. Checked first: it must stay single-threaded and read no configuration.
    #[cfg(target_os = "linux")]
    {
        let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
        if let Some(flag) = args.get(1).filter(|flag| {
            *flag == agent_tools::sandbox::LAUNCHER_FLAG
                || *flag == agent_tools::sandbox::linux::INIT_FLAG
        }) {
            return agent_tools::sandbox::linux::launch(flag, args.get(2..).unwrap_or_default());
        }
    }
    let cli = config::Cli::parse();
    let host_config = match cli.to_host_config() {
        Ok(config) => config,
        Err(error) => {
            eprintln!("agent-runtime: {error:#}");
            return std::process::ExitCode::from(2);
        }
    };
    let tool_options = match cli.tool_options() {
        Ok(options) => options,
        Err(error) => {
            eprintln!("agent-runtime: {error:#}");
            return std::process::ExitCode::from(2);
        }
    };
    match cli.redactor(&host_config) {
        Ok(redactor) => agent_host::redaction::install(redactor),
        Err(error) => {
            eprintln!("agent-runtime: {error:#}");
            return std::process::ExitCode::from(2);
        }
    }
    agent_host::redaction::warm_up_in_background();
    let _log_writer = logging::init(&cli.log_level, host_config.dirs.logs.as_deref());
    // One thread runs the protocol, the loop and the clients; blocking work (file tools,
    // durable checkpoint writes, stdio that is no pipe or socket) goes to tokio's blocking
    // pool. A session is one conversation at a time, and on two worker threads each step
    // paid for tasks waking each other across threads (per step 1.3 → 0.9 ms,
    // CreateSession 11 → 7 ms; BENCHMARKS.md).
    //
    // The blocking pool is capped at eight threads. Uncapped, a long session grew a dozen
    // idle threads — a new one whenever work arrived just before an idle thread was free
    // again — each with its own stack pages and malloc arena (≈ 0.1 MB). Eight leave room
    // for a stdin reader and a stdout write (the fallback stdio), a checkpoint and the
    // file tools of one step; the file tools refuse what could block forever (FIFOs).
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .max_blocking_threads(8)
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("agent-runtime: could not start the async runtime: {error}");
            return std::process::ExitCode::FAILURE;
        }
    };
    let sandbox_host = if sandbox_host::selected(cli.sandbox_host) {
        match sandbox_host::settings(&cli) {
            Ok(settings) => Some(settings),
            Err(error) => {
                eprintln!("agent-runtime: {error:#}");
                return std::process::ExitCode::from(2);
            }
        }
    } else {
        if cli.transport.is_some() || cli.port.is_some() || cli.workspace_dir.is_some() {
            eprintln!(
                "agent-runtime: --transport, --port and --workspace-dir belong to sandbox mode (SESSION_ID and REGISTRATION_TOKEN set, or --sandbox-host)"
            );
            return std::process::ExitCode::from(2);
        }
        None
    };
    // Read before the credentials leave the start-up environment.
    let http_token = std::env::var(agent_host::transport::TOKEN_ENV).unwrap_or_default();
    for problem in secrets::protect() {
        tracing::warn!(%problem, "a credential of the runtime is less protected");
    }
    agent_tools::sandbox::install(cli.sandbox(&host_config));
    let tools = Arc::new(LocalToolRouter::with_options(tool_options));
    let outcome = match sandbox_host {
        Some(settings) => runtime.block_on(sandbox_host::serve(host_config, tools, settings)),
        None => runtime.block_on(run(host_config, tools, cli.listen.clone(), http_token)),
    };
    // A fallback stdin reader sits in a blocking read that only the client can end; do
    // not wait for it (the client may keep stdin open after Shutdown).
    runtime.shutdown_background();
    agent_tools::sandbox::release();
    match outcome {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(error) => {
            tracing::error!(%error, "the runtime stopped with an error");
            eprintln!("agent-runtime: {error:#}");
            std::process::ExitCode::FAILURE
        }
    }
}

async fn run(
    config: agent_host::HostConfig,
    tools: Arc<LocalToolRouter>,
    listen: Option<std::path::PathBuf>,
    http_token: String,
) -> anyhow::Result<()> {
    match listen {
        None => {
            tracing::info!(
                version = env!("CARGO_PKG_VERSION"),
                "agent-runtime ready on stdio"
            );
            let (reader, writer, _restore) = stdio::streams();
            serve_streams(config, tools, reader, writer).await
        }
        Some(path) => match path.to_str().and_then(|p| p.strip_prefix("http://")) {
            Some(address) => serve_http(config, tools, address, http_token).await,
            None => serve_socket(config, tools, &path).await,
        },
    }
}

/// `--listen http://127.0.0.1:PORT`: the sandbox shape (POST /rpc, SSE GET /events, a
/// bearer token from AGENT_RUNTIME_HTTP_TOKEN).
async fn serve_http(
    config: agent_host::HostConfig,
    tools: Arc<LocalToolRouter>,
    address: &str,
    token: String,
) -> anyhow::Result<()> {
    use agent_host::transport::serve_http;
    use anyhow::Context;
    let address: std::net::SocketAddr =
        address.trim_end_matches('/').parse().with_context(|| {
            format!(
                "--listen http://{address}: expected http://IP:PORT, e.g. http://127.0.0.1:8700"
            )
        })?;
    if token.trim().is_empty() {
        anyhow::bail!("{}", agent_host::transport::HttpError::MissingToken);
    }
    let listener = tokio::net::TcpListener::bind(address)
        .await
        .with_context(|| format!("cannot listen on http://{address}"))?;
    tracing::info!(version = env!("CARGO_PKG_VERSION"), %address, "agent-runtime listening on HTTP");
    serve_http(listener, token, |outbound| {
        let host = Host::new(config, tools, outbound);
        spawn_signal_handler(Arc::clone(&host));
        host
    })
    .await?;
    Ok(())
}

async fn serve_streams<R, W>(
    config: agent_host::HostConfig,
    tools: Arc<LocalToolRouter>,
    reader: R,
    writer: W,
) -> anyhow::Result<()>
where
    R: tokio::io::AsyncRead + Unpin,
    W: tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let (outbound, writer) = Outbound::new(writer);
    let writer = tokio::spawn(writer);
    let host = Host::new(config, tools, outbound.clone());
    spawn_signal_handler(Arc::clone(&host));
    serve(host, agent_host::transport::buffered(reader), outbound).await?;
    writer.await??;
    Ok(())
}

/// One client on a Unix domain socket: the same protocol as stdio, one session per process.
#[cfg(unix)]
async fn serve_socket(
    config: agent_host::HostConfig,
    tools: Arc<LocalToolRouter>,
    path: &std::path::Path,
) -> anyhow::Result<()> {
    use anyhow::Context;
    // A socket file left by a previous run would make bind fail.
    if path.exists() {
        std::fs::remove_file(path)
            .with_context(|| format!("cannot remove the stale socket {}", path.display()))?;
    }
    let listener = tokio::net::UnixListener::bind(path)
        .with_context(|| format!("cannot listen on {}", path.display()))?;
    tracing::info!(version = env!("CARGO_PKG_VERSION"), socket = %path.display(), "agent-runtime listening");
    let (stream, _) = listener
        .accept()
        .await
        .context("accepting the client failed")?;
    drop(listener);
    let (reader, writer) = stream.into_split();
    let outcome = serve_streams(config, tools, reader, writer).await;
    let _ = std::fs::remove_file(path);
    outcome
}

/// One client on a named pipe (`\\.\pipe\NAME`), Windows' local socket: the same protocol
/// as stdio, one session per process. Only one instance of the pipe exists, created here
/// (a name another process already serves is refused), and remote clients are rejected.
#[cfg(windows)]
async fn serve_socket(
    config: agent_host::HostConfig,
    tools: Arc<LocalToolRouter>,
    path: &std::path::Path,
) -> anyhow::Result<()> {
    use anyhow::Context;
    use tokio::net::windows::named_pipe::ServerOptions;
    let name = path
        .to_str()
        .filter(|name| is_pipe_name(name))
        .with_context(|| {
            format!(
                "--listen {}: on Windows the local socket is a named pipe, \\\\.\\pipe\\NAME",
                path.display()
            )
        })?;
    let server = ServerOptions::new()
        .first_pipe_instance(true)
        .max_instances(1)
        .reject_remote_clients(true)
        .create(name)
        .with_context(|| format!("cannot listen on {name}"))?;
    tracing::info!(
        version = env!("CARGO_PKG_VERSION"),
        pipe = name,
        "agent-runtime listening"
    );
    server
        .connect()
        .await
        .context("accepting the client failed")?;
    let (reader, writer) = tokio::io::split(server);
    serve_streams(config, tools, reader, writer).await
}

/// Whether `name` names a local named pipe (`\\.\pipe\NAME`, any case, NAME not empty).
#[cfg(any(windows, test))]
fn is_pipe_name(name: &str) -> bool {
    const PREFIX: &str = r"\\.\pipe\";
    name.get(..PREFIX.len())
        .is_some_and(|prefix| prefix.eq_ignore_ascii_case(PREFIX))
        && name.len() > PREFIX.len()
}

#[cfg(not(any(unix, windows)))]
async fn serve_socket(
    _config: agent_host::HostConfig,
    _tools: Arc<LocalToolRouter>,
    path: &std::path::Path,
) -> anyhow::Result<()> {
    anyhow::bail!(
        "--listen {} needs Unix domain sockets or named pipes, which this build has neither of",
        path.display()
    )
}

/// SIGTERM (and Ctrl-C) take the same path as Shutdown.
pub(crate) fn spawn_signal_handler(host: Arc<Host>) {
    tokio::spawn(async move {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            let Ok(mut term) = signal(SignalKind::terminate()) else {
                return;
            };
            tokio::select! {
                _ = term.recv() => {}
                _ = tokio::signal::ctrl_c() => {}
            }
        }
        #[cfg(not(unix))]
        {
            let _ = tokio::signal::ctrl_c().await;
        }
        tracing::info!("termination signal received; shutting down");
        host.begin_shutdown("terminated");
    });
}

#[cfg(test)]
mod tests {
    #[test]
    fn pipe_names_are_local_named_pipes_with_a_name() {
        assert!(super::is_pipe_name(r"\\.\pipe\agent-runtime-1"));
        assert!(super::is_pipe_name(r"\\.\PIPE\x"));
        assert!(!super::is_pipe_name(r"\\.\pipe\"));
        assert!(!super::is_pipe_name(r"\\server\pipe\x"));
        assert!(!super::is_pipe_name("/tmp/agent.sock"));
        assert!(!super::is_pipe_name("é"));
    }
}
