//! Running one prepared program (local-tool-runtime.md §4.4 steps 2–6, §6.2): a process
//! tree of its own, stdin fed, stdout and stderr captured separately and bounded, the
//! timeout enforced by ending the whole tree. RunCommand runs the platform shell through it
//! and the git tools run `git` (no shell in between).
//!
//! Everything runs inside the caller's future (no spawned tasks), so a caller that abandons
//! the call — the host's own timeout, a cancelled task — drops the [`Started`] program, which
//! ends the tree: nothing outlives the call by accident.

use std::path::Path;
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use tokio::io::AsyncWriteExt;
use tokio::process::Command;
use tokio_util::sync::CancellationToken;

use super::capture::{self, Captured};
use super::process::Started;

/// After the program exits, how long its output pipes may stay open (background jobs still
/// writing) before the rest of the tree is ended.
pub(crate) const DEFAULT_DRAIN: Duration = Duration::from_millis(250);

/// How the process tree is handled (RunCommand's builder methods, `GitSettings`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Settings {
    pub kill_grace: Duration,
    pub capture_bytes: usize,
    pub drain: Duration,
}

/// How the program ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Exit {
    Code(i32),
    /// Ended by a signal it did not handle (unix).
    #[cfg_attr(not(unix), allow(dead_code))]
    Signal(i32),
    /// The timeout elapsed first; the tree was ended.
    TimedOut,
    /// The status could not be read.
    Unknown,
}

impl Exit {
    fn of(status: &ExitStatus) -> Self {
        #[cfg(unix)]
        if let Some(signal) = std::os::unix::process::ExitStatusExt::signal(status) {
            return Exit::Signal(signal);
        }
        status.code().map_or(Exit::Unknown, Exit::Code)
    }
}

#[derive(Debug)]
pub(crate) struct Outcome {
    pub exit: Exit,
    pub stdout: Captured,
    pub stderr: Captured,
    /// What the OS sandbox refused or undid, one sentence each, for the tool result.
    pub notes: Vec<String>,
}

/// Runs a prepared program (its arguments set) in `cwd` to its end or its timeout: own
/// process tree, stdin fed, bounded capture, the tree ended on timeout or drop. `Err` only
/// when the program cannot be started.
pub(crate) async fn run_prepared(
    mut builder: Command,
    cwd: &Path,
    stdin: Option<&str>,
    timeout: Duration,
    settings: Settings,
) -> std::io::Result<Outcome> {
    builder
        .current_dir(cwd)
        // Never the runtime's own stdin: that is the JSON-RPC channel.
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    super::child_env::scrub(&mut builder);
    let mut child = Started::spawn(builder)?;

    let stop = CancellationToken::new();
    let (stdout_done, stderr_done) = (CancellationToken::new(), CancellationToken::new());
    let cap = settings.capture_bytes;
    let stdout_pipe = child.take_stdout();
    let stderr_pipe = child.take_stderr();
    let stdin_pipe = child.take_stdin();
    let read_stdout = async {
        let captured = match stdout_pipe {
            Some(pipe) => capture::read_bounded(pipe, cap, stop.clone()).await,
            None => Captured::default(),
        };
        stdout_done.cancel();
        captured
    };
    let read_stderr = async {
        let captured = match stderr_pipe {
            Some(pipe) => capture::read_bounded(pipe, cap, stop.clone()).await,
            None => Captured::default(),
        };
        stderr_done.cancel();
        captured
    };
    // A command that never reads its stdin must not block the call: writing stops with the
    // readers. Dropping the pipe at the end sends EOF.
    let feed = async {
        if let (Some(mut pipe), Some(text)) = (stdin_pipe, stdin) {
            tokio::select! {
                () = stop.cancelled() => {}
                written = pipe.write_all(text.as_bytes()) => {
                    if let Err(error) = written {
                        tracing::debug!(%error, "the command did not take all of its stdin");
                    }
                }
            }
        }
    };
    let (stdout_seen, stderr_seen) = (&stdout_done, &stderr_done);
    let drained = move || async move {
        stdout_seen.cancelled().await;
        stderr_seen.cancelled().await;
    };
    let supervise = async {
        let waited = tokio::time::timeout(timeout, child.wait()).await;
        let (exit, gone) = match waited {
            Ok(status) => {
                let exit = status.as_ref().map_or(Exit::Unknown, Exit::of);
                // Background jobs that detached from the output may outlive the program, as
                // in any shell; one still holding the pipes would block (or lose) output
                // nobody reads, so the tree is ended.
                let open = tokio::time::timeout(settings.drain, drained())
                    .await
                    .is_err();
                let gone = if open {
                    tracing::debug!(pid = child.pid(), "output still open after exit");
                    child.end_tree(settings.kill_grace).await
                } else {
                    true
                };
                (exit, gone)
            }
            Err(_) => (Exit::TimedOut, child.end_tree(settings.kill_grace).await),
        };
        // Whatever the pipes still hold is read; then the readers stop.
        let _ = tokio::time::timeout(settings.drain, drained()).await;
        stop.cancel();
        (exit, gone)
    };
    let (stdout, stderr, (), (exit, gone)) =
        tokio::join!(read_stdout, read_stderr, feed, supervise);
    if gone {
        child.disarm();
    }
    Ok(Outcome {
        exit,
        stdout,
        stderr,
        notes: Vec::new(),
    })
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn exit_statuses_distinguish_codes_and_signals() {
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(Exit::of(&ExitStatus::from_raw(3 << 8)), Exit::Code(3));
        assert_eq!(Exit::of(&ExitStatus::from_raw(9)), Exit::Signal(9));
    }
}
