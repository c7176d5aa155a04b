//! Process-tree termination (local-tool-runtime.md §6.2). A command runs as the root of a
//! process tree of its own, so everything it starts — pipelines, background jobs,
//! grandchildren — can be stopped together.
//!
//! - Linux, macOS: the command leads a process group of its own; `SIGTERM` to the group,
//!   `SIGKILL` after a grace period. A process that leaves the group (`setsid`, `setpgid`)
//!   escapes.
//! - Windows: the command starts suspended, is put in a Job object that kills everything in
//!   it when its handle closes, and only then runs, so even a grandchild whose parent already
//!   exited (out of reach of `taskkill /T`) belongs to the job. Ending the tree is
//!   `TerminateJobObject`, at once: console processes have no catchable termination request.

use std::process::ExitStatus;
use std::time::Duration;

use tokio::process::{ChildStderr, ChildStdin, ChildStdout, Command};

/// The spec's grace between `SIGTERM` and `SIGKILL` (§6.2).
pub(crate) const DEFAULT_KILL_GRACE: Duration = Duration::from_secs(5);

/// How long to wait, after `SIGKILL`, for the kernel to finish off the group before reporting
/// that something survived. `SIGKILL` cannot be caught, so this only covers scheduling.
#[cfg(unix)]
const KILL_SETTLE: Duration = Duration::from_secs(2);

/// How often the group is checked while waiting for it to empty.
#[cfg(unix)]
const POLL_INTERVAL: Duration = Duration::from_millis(10);

/// A program started as the root of a process tree of its own, with its pipes. Dropping it
/// ends the tree, unless [`Started::disarm`]ed: a tool call abandoned by its caller (the
/// host's own timeout, a cancelled task) must not leave its command running.
#[derive(Debug)]
pub(crate) struct Started {
    #[cfg(unix)]
    child: tokio::process::Child,
    #[cfg(unix)]
    guard: TreeGuard,
    /// The job's handle closes with this value, which ends whatever is left in it.
    #[cfg(windows)]
    child: Box<dyn process_wrap::tokio::ChildWrapper>,
}

impl Started {
    /// Starts `command` as the root of a tree of its own (and, on Windows, without a console
    /// window popping up over the desktop app).
    pub(crate) fn spawn(command: Command) -> std::io::Result<Self> {
        #[cfg(unix)]
        {
            let mut command = command;
            command.process_group(0);
            let child = command.spawn()?;
            let guard = TreeGuard::new(child.id().and_then(ProcessTree::new));
            Ok(Self { child, guard })
        }
        #[cfg(windows)]
        {
            use process_wrap::tokio::{CommandWrap, CreationFlags, JobObject, KillOnDrop};
            use windows::Win32::System::Threading::{CREATE_NEW_PROCESS_GROUP, CREATE_NO_WINDOW};
            let child = CommandWrap::from(command)
                .wrap(CreationFlags(CREATE_NEW_PROCESS_GROUP | CREATE_NO_WINDOW))
                .wrap(JobObject)
                .wrap(KillOnDrop)
                .spawn()?;
            Ok(Self { child })
        }
    }

    /// The root's pid, for logs.
    pub(crate) fn pid(&self) -> Option<u32> {
        self.child.id()
    }

    pub(crate) fn take_stdin(&mut self) -> Option<ChildStdin> {
        #[cfg(unix)]
        return self.child.stdin.take();
        #[cfg(windows)]
        return self.child.stdin().take();
    }

    pub(crate) fn take_stdout(&mut self) -> Option<ChildStdout> {
        #[cfg(unix)]
        return self.child.stdout.take();
        #[cfg(windows)]
        return self.child.stdout().take();
    }

    pub(crate) fn take_stderr(&mut self) -> Option<ChildStderr> {
        #[cfg(unix)]
        return self.child.stderr.take();
        #[cfg(windows)]
        return self.child.stderr().take();
    }

    /// Waits for the program itself, not for the rest of its tree.
    pub(crate) async fn wait(&mut self) -> std::io::Result<ExitStatus> {
        #[cfg(unix)]
        return self.child.wait().await;
        // The job's own wait lasts until every process in the job has exited; its inner
        // child is the program alone.
        #[cfg(windows)]
        return self.child.inner_mut().wait().await;
    }

    /// Ends the whole tree, the program included, and reaps the program. Returns whether
    /// nothing of the tree is left running.
    pub(crate) async fn end_tree(&mut self, grace: Duration) -> bool {
        #[cfg(unix)]
        {
            let gone = match self.guard.tree() {
                Some(tree) => {
                    // A probe that cannot tell zombies apart needs the program reaped
                    // while the group is being ended.
                    let terminate = tree.terminate(grace);
                    tokio::pin!(terminate);
                    let mut reaped = false;
                    loop {
                        tokio::select! {
                            gone = &mut terminate => break gone,
                            _ = self.child.wait(), if !reaped => reaped = true,
                        }
                    }
                }
                None => false,
            };
            // The program itself, should it have left its group (or have no tree to signal).
            let _ = self.child.start_kill();
            let _ = tokio::time::timeout(grace, self.child.wait()).await;
            gone
        }
        #[cfg(windows)]
        {
            let gone = match self.child.start_kill() {
                Ok(()) => true,
                Err(error) => {
                    tracing::warn!(%error, "could not end the command's job");
                    false
                }
            };
            let _ = tokio::time::timeout(grace, self.wait()).await;
            gone
        }
    }

    /// The tree is known to be gone: dropping `self` must not signal a process group whose
    /// id the system may since have given to another. On Windows the job's handle still
    /// closes, which ends nothing that is gone.
    pub(crate) fn disarm(&mut self) {
        #[cfg(unix)]
        self.guard.disarm();
    }
}

/// A Unix process group led by a program [`Started`] by this module.
#[cfg(unix)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ProcessTree {
    /// The root's pid, which is also the process group id.
    root: i32,
}

#[cfg(unix)]
impl ProcessTree {
    /// `None` for a pid that cannot name a process group of its own: signalling group 0 or a
    /// negative one would hit the runtime's own group, so such a value is never accepted.
    pub(crate) fn new(root_pid: u32) -> Option<Self> {
        i32::try_from(root_pid)
            .ok()
            .filter(|pid| *pid > 0)
            .map(|root| Self { root })
    }

    #[cfg(test)]
    pub(crate) fn root_pid(&self) -> u32 {
        self.root.unsigned_abs()
    }

    /// Ends the whole tree: `SIGTERM`, then `SIGKILL` to whatever is still running after
    /// `grace`. Returns whether nothing of the tree is left running.
    pub(crate) async fn terminate(&self, grace: Duration) -> bool {
        use nix::sys::signal::Signal;
        if !self.is_running() {
            return true;
        }
        self.signal(Signal::SIGTERM);
        if self.wait_until_gone(grace).await {
            return true;
        }
        tracing::debug!(
            pgid = self.root,
            "process group outlived SIGTERM; sending SIGKILL"
        );
        self.signal(Signal::SIGKILL);
        self.wait_until_gone(KILL_SETTLE).await
    }

    /// `SIGKILL` to the whole tree without waiting: for paths that cannot wait (a dropped
    /// tool call).
    pub(crate) fn kill_now(&self) {
        self.signal(nix::sys::signal::Signal::SIGKILL);
    }

    fn signal(&self, signal: nix::sys::signal::Signal) {
        use nix::unistd::Pid;
        if let Err(error) = nix::sys::signal::killpg(Pid::from_raw(self.root), signal) {
            tracing::debug!(pgid = self.root, %error, ?signal, "killpg failed");
        }
    }

    /// Whether a process of the group is still running. Zombies do not count: they hold no
    /// resources but their exit status, and where no init reaps orphans (a container whose
    /// pid 1 is not an init) they would make a dead group look alive forever.
    pub(crate) fn is_running(&self) -> bool {
        #[cfg(target_os = "linux")]
        if let Some(running) = linux::group_has_running_member(self.root) {
            return running;
        }
        let probe = nix::sys::signal::killpg(nix::unistd::Pid::from_raw(self.root), None);
        !matches!(probe, Err(nix::errno::Errno::ESRCH))
    }

    async fn wait_until_gone(&self, within: Duration) -> bool {
        let deadline = tokio::time::Instant::now() + within;
        loop {
            if !self.is_running() {
                return true;
            }
            let now = tokio::time::Instant::now();
            if now >= deadline {
                return false;
            }
            tokio::time::sleep(POLL_INTERVAL.min(deadline - now)).await;
        }
    }
}

/// Kills the group when dropped, unless disarmed.
#[cfg(unix)]
#[derive(Debug)]
struct TreeGuard(Option<ProcessTree>);

#[cfg(unix)]
impl TreeGuard {
    fn new(tree: Option<ProcessTree>) -> Self {
        Self(tree)
    }

    fn tree(&self) -> Option<ProcessTree> {
        self.0
    }

    /// The tree is known to be gone.
    fn disarm(&mut self) {
        self.0 = None;
    }
}

#[cfg(unix)]
impl Drop for TreeGuard {
    fn drop(&mut self) {
        if let Some(tree) = self.0.take() {
            tree.kill_now();
        }
    }
}

/// Linux: group membership and state from `/proc/<pid>/stat`, which, unlike a `killpg`
/// probe, tells zombies apart.
#[cfg(any(target_os = "linux", test))]
mod linux {
    /// `(state, process group)` from the text of `/proc/<pid>/stat`. The command name
    /// (field 2) is in parentheses and may itself contain spaces and parentheses, so the
    /// fields are counted from the last `)`.
    pub(super) fn parse_stat(stat: &str) -> Option<(char, i32)> {
        let (_, rest) = stat.rsplit_once(')')?;
        let mut fields = rest.split_whitespace();
        let state = fields.next()?.chars().next()?;
        let _parent = fields.next()?;
        let group = fields.next()?.parse().ok()?;
        Some((state, group))
    }

    /// `None` when `/proc` cannot be read (the caller falls back to a signal probe).
    #[cfg(target_os = "linux")]
    pub(super) fn group_has_running_member(pgid: i32) -> Option<bool> {
        let entries = std::fs::read_dir("/proc").ok()?;
        let running = entries.flatten().any(|entry| {
            let is_pid = entry
                .file_name()
                .to_str()
                .is_some_and(|name| name.bytes().all(|b| b.is_ascii_digit()));
            is_pid
                && std::fs::read_to_string(entry.path().join("stat"))
                    .ok()
                    .and_then(|stat| parse_stat(&stat))
                    .is_some_and(|(state, group)| group == pgid && !matches!(state, 'Z' | 'X'))
        });
        Some(running)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn pids_that_would_signal_our_own_group_are_refused() {
        assert_eq!(ProcessTree::new(0), None);
        assert_eq!(ProcessTree::new(u32::MAX), None);
        assert_eq!(ProcessTree::new(42).map(|tree| tree.root_pid()), Some(42));
    }

    #[test]
    fn proc_stat_lines_parse_even_with_odd_command_names() {
        let stat = "4242 (my (odd) cmd) S 1 4240 4240 0 -1 4194560 107 0 0 0";
        assert_eq!(linux::parse_stat(stat), Some(('S', 4240)));
        assert_eq!(linux::parse_stat("17 (sleep) Z 1 16 16 0"), Some(('Z', 16)));
        assert_eq!(linux::parse_stat("garbage"), None);
        assert_eq!(linux::parse_stat("1 (x) R 0 notanumber"), None);
    }

    #[cfg(unix)]
    #[tokio::test]
    async fn terminate_ends_a_group_whose_members_ignore_sigterm() {
        use tokio::io::AsyncBufReadExt;
        let mut command = tokio::process::Command::new("/bin/sh");
        command
            .args(["-c", "trap '' TERM; sleep 30 & echo ready; wait"])
            .stdout(std::process::Stdio::piped());
        command.process_group(0);
        let mut child = command.spawn().unwrap();
        let tree = ProcessTree::new(child.id().unwrap()).unwrap();
        // "ready" comes after the trap and after `sleep` was forked: SIGTERM meets a group
        // in which every member ignores it.
        let mut lines = tokio::io::BufReader::new(child.stdout.take().unwrap()).lines();
        assert_eq!(lines.next_line().await.unwrap().as_deref(), Some("ready"));
        let started = std::time::Instant::now();
        let (gone, status) = tokio::join!(tree.terminate(Duration::from_millis(100)), child.wait());
        assert!(gone);
        let elapsed = started.elapsed();
        assert!(
            elapsed >= Duration::from_millis(100),
            "SIGTERM alone ended the group"
        );
        // Orphaned zombies (reaped late where pid 1 is slow to) must not count as running.
        assert!(
            elapsed < Duration::from_secs(1),
            "waited for zombies: {elapsed:?}"
        );
        assert!(!tree.is_running());
        assert!(!status.unwrap().success());
    }

    /// `taskkill /T` follows parent links, so it misses a grandchild whose parent has
    /// exited; the job does not. The grandchild holds the output pipe: the pipe ends only
    /// when every process of the tree is gone.
    #[cfg(windows)]
    #[tokio::test]
    async fn end_tree_reaches_a_grandchild_whose_parent_has_exited() {
        use tokio::io::{AsyncBufReadExt, AsyncReadExt};
        let mut command = Command::new("cmd.exe");
        command
            .raw_arg("/c cmd /c start /b ping -n 120 127.0.0.1& echo ready& ping -n 120 127.0.0.1")
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped());
        let mut started = Started::spawn(command).unwrap();
        let mut stdout = tokio::io::BufReader::new(started.take_stdout().unwrap());
        let mut line = String::new();
        while line.trim() != "ready" {
            line.clear();
            assert_ne!(
                stdout.read_line(&mut line).await.unwrap(),
                0,
                "no ready line"
            );
        }
        assert!(started.end_tree(Duration::from_secs(5)).await);
        let mut rest = Vec::new();
        let ended = tokio::time::timeout(Duration::from_secs(60), stdout.read_to_end(&mut rest));
        assert!(
            ended.await.is_ok(),
            "a process of the tree still holds the output"
        );
    }
}
