//! The stdio proxy the wrapper runtimes share (`variance-runtime`, `mutant-runtime`): it
//! starts the wrapped runtime, passes every line from the kit through a [`LineRewriter`] on
//! its way in and every line of the runtime on its way out, and forwards SIGTERM, so the
//! wrapper is a runtime the kit can certify like any other.

use std::process::Stdio;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use anyhow::Context;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::Command;

/// What a wrapper changes, line by line (a line without its `\n`).
pub(crate) trait LineRewriter: Send + 'static {
    /// A line from the kit on its way to the wrapped runtime: the lines to pass on.
    fn request(&mut self, line: Vec<u8>) -> Vec<Vec<u8>>;
    /// A line from the wrapped runtime on its way to the kit: the lines to pass on.
    fn response(&mut self, line: Vec<u8>) -> Vec<Vec<u8>>;
}

/// Runs `program args…` behind `rewriter`, with the environment changed by `env` (each
/// `(name, Some(value))` set, `(name, None)` removed). Returns the wrapped runtime's exit code.
pub(crate) async fn run<R: LineRewriter>(
    program: &str,
    args: &[String],
    env: &[(String, Option<String>)],
    rewriter: R,
) -> anyhow::Result<i32> {
    let mut command = Command::new(program);
    command
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true);
    for (name, value) in env {
        match value {
            Some(value) => command.env(name, value),
            None => command.env_remove(name),
        };
    }
    let mut child = command
        .spawn()
        .with_context(|| format!("cannot start the wrapped runtime {program:?}"))?;
    let child_stdin = child.stdin.take().context("no stdin pipe")?;
    let child_stdout = child.stdout.take().context("no stdout pipe")?;
    let pid = child.id();
    let state = Arc::new(Mutex::new(rewriter));

    let inbound = {
        let state = Arc::clone(&state);
        tokio::spawn(async move {
            let mut lines = BufReader::new(tokio::io::stdin()).split(b'\n');
            let mut to_child = child_stdin;
            while let Ok(Some(line)) = lines.next_segment().await {
                let out = lock(&state).request(line);
                for line in out {
                    if to_child.write_all(&line).await.is_err()
                        || to_child.write_all(b"\n").await.is_err()
                    {
                        return;
                    }
                }
                let _ = to_child.flush().await;
            }
            // End of the kit's input is the end of the wrapped runtime's.
            let _ = to_child.shutdown().await;
        })
    };
    let outbound = {
        let state = Arc::clone(&state);
        tokio::spawn(async move {
            let mut lines = BufReader::new(child_stdout).split(b'\n');
            let mut stdout = tokio::io::stdout();
            while let Ok(Some(line)) = lines.next_segment().await {
                let out = lock(&state).response(line);
                for line in out {
                    if stdout.write_all(&line).await.is_err()
                        || stdout.write_all(b"\n").await.is_err()
                    {
                        return;
                    }
                }
                let _ = stdout.flush().await;
            }
        })
    };
    let status = wait_forwarding_sigterm(&mut child, pid).await?;
    let _ = outbound.await;
    inbound.abort();
    Ok(status.code().unwrap_or(1))
}

/// Waits for the child; a SIGTERM to the wrapper (the OS ending the app) is passed on.
#[cfg(unix)]
async fn wait_forwarding_sigterm(
    child: &mut tokio::process::Child,
    pid: Option<u32>,
) -> anyhow::Result<std::process::ExitStatus> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut term = signal(SignalKind::terminate()).context("cannot watch SIGTERM")?;
    loop {
        tokio::select! {
            status = child.wait() => return Ok(status?),
            _ = term.recv() => {
                if let Some(pid) = pid.and_then(|p| i32::try_from(p).ok()) {
                    let _ = nix::sys::signal::kill(
                        nix::unistd::Pid::from_raw(pid),
                        nix::sys::signal::Signal::SIGTERM,
                    );
                }
            }
        }
    }
}

#[cfg(not(unix))]
async fn wait_forwarding_sigterm(
    child: &mut tokio::process::Child,
    _pid: Option<u32>,
) -> anyhow::Result<std::process::ExitStatus> {
    Ok(child.wait().await?)
}

fn lock<R>(state: &Mutex<R>) -> MutexGuard<'_, R> {
    state.lock().unwrap_or_else(PoisonError::into_inner)
}
