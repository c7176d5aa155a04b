//! Process-tree termination (local-tool-runtime.md §6.2). A command runs as the leader of a
//! process group of its own, so everything it starts — pipelines, background jobs,
//! grandchildren — can be stopped together: on unix `SIGTERM` to the group, `SIGKILL` after
//! a grace period; on Windows `taskkill /T /F /PID`.
//!
//! Linux, macOS: the group is signalled with `killpg`. A process that leaves the group
//! (`setsid`, `setpgid`) escapes on unix; a process that leaves the tree escapes `taskkill`.

use std::time::Duration;

/// The spec's grace between `SIGTERM` and `SIGKILL` (§6.2).
pub const DEFAULT_KILL_GRACE: Duration = Duration::from_secs(5);

/// How long to wait, after `SIGKILL`, for the kernel to finish off the group before reporting
/// that something survived. `SIGKILL` cannot be caught, so this only covers scheduling.
#[cfg(unix)]
const KILL_SETTLE: Duration = Duration::from_secs(2);

/// How often the group is checked while waiting for it to empty.
#[cfg(unix)]
const POLL_INTERVAL: Duration = Duration::from_millis(10);

#[cfg(windows)]
const CREATE_NEW_PROCESS_GROUP: u32 = 0x0000_0200;
#[cfg(windows)]
const CREATE_NO_WINDOW: u32 = 0x0800_0000;

/// Makes `command` start a process tree of its own (and, on Windows, without a console
/// window popping up over the desktop app).
pub fn isolate(command: &mut tokio::process::Command) {
    #[cfg(unix)]
    command.process_group(0);
    #[cfg(windows)]
    command.creation_flags(CREATE_NEW_PROCESS_GROUP | CREATE_NO_WINDOW);
}

/// The arguments of `taskkill` that end the tree rooted at `pid` (§6.2); tested everywhere.
#[cfg(any(windows, test))]
pub fn taskkill_args(pid: u32) -> [String; 4] {
    ["/T".into(), "/F".into(), "/PID".into(), pid.to_string()]
}

/// The tree of processes started by a child that was spawned with [`isolate`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProcessTree {
    /// The root's pid; on unix also the process group id.
    root: i32,
}

impl ProcessTree {
    /// `None` for a pid that cannot name a process group of its own: signalling group 0 or a
    /// negative one would hit the runtime's own group, so such a value is never accepted.
    pub fn new(root_pid: u32) -> Option<Self> {
        i32::try_from(root_pid)
            .ok()
            .filter(|pid| *pid > 0)
            .map(|root| Self { root })
    }

    pub fn root_pid(&self) -> u32 {
        self.root.unsigned_abs()
    }

    /// Ends the whole tree: `SIGTERM`, then `SIGKILL` to whatever is still running after
    /// `grace`. Returns whether nothing of the tree is left running.
    #[cfg(unix)]
    pub async fn terminate(&self, grace: Duration) -> bool {
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

    /// Windows has no catchable termination request for console processes: `taskkill /F`
    /// at once (§6.2), so `grace` does not apply.
    #[cfg(windows)]
    pub async fn terminate(&self, _grace: Duration) -> bool {
        let mut command = tokio::process::Command::new("taskkill");
        command
            .args(taskkill_args(self.root_pid()))
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .creation_flags(CREATE_NO_WINDOW);
        match command.status().await {
            Ok(status) => status.success(),
            Err(error) => {
                tracing::warn!(%error, "could not run taskkill");
                false
            }
        }
    }

    /// `SIGKILL` to the whole tree without waiting: for paths that cannot wait (a dropped
    /// tool call).
    pub fn kill_now(&self) {
        #[cfg(unix)]
        self.signal(nix::sys::signal::Signal::SIGKILL);
        #[cfg(windows)]
        {
            let _ = std::process::Command::new("taskkill")
                .args(taskkill_args(self.root_pid()))
                .stdin(std::process::Stdio::null())
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .spawn();
        }
    }

    #[cfg(unix)]
    fn signal(&self, signal: nix::sys::signal::Signal) {
        use nix::unistd::Pid;
        if let Err(error) = nix::sys::signal::killpg(Pid::from_raw(self.root), signal) {
            tracing::debug!(pgid = self.root, %error, ?signal, "killpg failed");
        }
    }

    /// Whether a process of the group is still running. Zombies do not count: they hold no
    /// resources but their exit status, and where no init reaps orphans (a container whose
    /// pid 1 is not an init) they would make a dead group look alive forever.
    #[cfg(unix)]
    pub fn is_running(&self) -> bool {
        #[cfg(target_os = "linux")]
        if let Some(running) = linux::group_has_running_member(self.root) {
            return running;
        }
        let probe = nix::sys::signal::killpg(nix::unistd::Pid::from_raw(self.root), None);
        !matches!(probe, Err(nix::errno::Errno::ESRCH))
    }

    #[cfg(unix)]
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

/// Kills the tree when dropped, unless disarmed: a tool call abandoned by its caller (the
/// host's own timeout, a cancelled task) must not leave its command running.
#[derive(Debug)]
pub struct TreeGuard(Option<ProcessTree>);

impl TreeGuard {
    pub fn new(tree: Option<ProcessTree>) -> Self {
        Self(tree)
    }

    /// The tree is known to be gone, or may outlive the call by design.
    pub fn disarm(&mut self) {
        self.0 = None;
    }
}

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

    #[test]
    fn pids_that_would_signal_our_own_group_are_refused() {
        assert_eq!(ProcessTree::new(0), None);
        assert_eq!(ProcessTree::new(u32::MAX), None);
        assert_eq!(ProcessTree::new(42).map(|tree| tree.root_pid()), Some(42));
    }

    #[test]
    fn taskkill_ends_the_whole_tree_by_force() {
        assert_eq!(taskkill_args(4321), ["/T", "/F", "/PID", "4321"]);
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
        isolate(&mut command);
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
}
