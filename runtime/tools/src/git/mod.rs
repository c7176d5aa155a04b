//! The git tools (system-design.md capability table: Git.Status, Git.Diff, Git.Commit,
//! Git.Push): the real `git` binary run as a subprocess — no shell in between, so arguments
//! are never re-parsed — in the workspace repository, or in the folder a `path` argument
//! names (resolved like every file path, §6.1, §8.1).
//!
//! Every git failure comes back as a `ToolResult` the model can read: a folder that is not a
//! repository, nothing to commit, a rejected push. Runs share RunCommand's machinery: own
//! process tree, bounded capture, the tree ended on timeout (TOOL_EXECUTION_TIMEOUT).

mod confine;
mod tools;

use std::path::{Path, PathBuf};
use std::time::Duration;

use tokio::process::Command;

use agent_protocol::{ErrorCode, ToolRequest, ToolResult};

use crate::output;
use crate::platform::run::{self, Exit, Settings};
use crate::platform::{self, DirError, capture, process};

pub(crate) use tools::{GitCommit, GitDiff, GitPush, GitStatus};

/// A git call's timeout when the host sets no shorter one: a push over a slow network takes
/// a while, everything else is quick.
pub(crate) const DEFAULT_TIMEOUT_SECONDS: u64 = 120;

/// How git runs: where the process tree is bounded, and how long it may take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct GitSettings {
    pub timeout: Duration,
    pub kill_grace: Duration,
    pub capture_bytes: usize,
}

impl Default for GitSettings {
    fn default() -> Self {
        Self {
            timeout: Duration::from_secs(DEFAULT_TIMEOUT_SECONDS),
            kill_grace: process::DEFAULT_KILL_GRACE,
            capture_bytes: capture::DEFAULT_CAPTURE_BYTES,
        }
    }
}

/// What one git run printed.
#[derive(Debug)]
pub(crate) struct GitRun {
    pub code: Option<i32>,
    /// stdout for the model: CRLF normalised, cut per §7.1 to `maxOutputBytes`.
    pub stdout: String,
    pub stderr: String,
    /// stdout as captured, for a `tool_output` artifact.
    pub stdout_raw: capture::Captured,
}

impl GitRun {
    pub(crate) fn ok(&self) -> bool {
        self.code == Some(0)
    }

    /// What git said, stdout and stderr together, for a failure message.
    pub(crate) fn said(&self) -> String {
        let mut said = String::new();
        for part in [self.stdout.trim(), self.stderr.trim()] {
            if !part.is_empty() {
                if !said.is_empty() {
                    said.push('\n');
                }
                said.push_str(part);
            }
        }
        said
    }
}

/// The repository folder of a call: `path` resolved against the project folder, else the
/// project folder itself. It must be an existing directory.
pub(crate) fn repository_dir(
    tool: &str,
    request: &ToolRequest,
    path: Option<&str>,
) -> Result<PathBuf, Box<ToolResult>> {
    let fail = |code, message: String| Box::new(ToolResult::failed(request, code, message));
    let root = request.workspace_root.as_deref().map(Path::new);
    let dir = match (path, root) {
        (Some(raw), _) => platform::resolve_within(raw, root)
            .map_err(|error| fail(ErrorCode::InvalidRequest, format!("{tool}: path: {error}")))?,
        (None, Some(root)) => platform::normalize(root),
        (None, None) => {
            return Err(fail(
                ErrorCode::InvalidRequest,
                format!(
                    "{tool}: the session has no project folder; name the repository with \"path\""
                ),
            ));
        }
    };
    platform::existing_dir(&dir).map_err(|error| match error {
        DirError::NotADirectory => fail(
            ErrorCode::InvalidRequest,
            format!("{tool}: {} is not a directory", dir.display()),
        ),
        DirError::NotFound => fail(
            ErrorCode::FileNotFound,
            format!("Repository folder not found: {}", dir.display()),
        ),
        DirError::Unusable(error) => fail(
            ErrorCode::PermissionDenied,
            format!(
                "Cannot open the repository folder {}: {error}",
                dir.display()
            ),
        ),
    })?;
    Ok(dir)
}

/// A name git would read as an option (`--force`, `-o…`) is refused: arguments are data.
pub(crate) fn plain_name(tool: &str, field: &str, value: &str) -> Result<(), String> {
    if value.is_empty() {
        Err(format!("{tool}: argument \"{field}\" is empty"))
    } else if value.starts_with('-') {
        Err(format!(
            "{tool}: argument \"{field}\" must not start with \"-\" (got \"{value}\")"
        ))
    } else if value.contains('\0') {
        Err(format!("{tool}: argument \"{field}\" contains a NUL byte"))
    } else {
        Ok(())
    }
}

/// Runs `git args…` in `dir`, confined ([`confine`]): the repository must lie inside the
/// granted folder, and nothing its config names is executed. `Err` is the finished
/// `ToolResult` for a run that was refused, could not start, timed out, or was not in a
/// repository.
pub(crate) async fn git(
    request: &ToolRequest,
    settings: GitSettings,
    dir: &Path,
    args: &[&str],
) -> Result<GitRun, Box<ToolResult>> {
    git_with(request, settings, dir, &[], args).await
}

/// [`git`] with extra `-c key=value` settings (an identity for a commit).
pub(crate) async fn git_with(
    request: &ToolRequest,
    settings: GitSettings,
    dir: &Path,
    extra: &[String],
    args: &[&str],
) -> Result<GitRun, Box<ToolResult>> {
    checked_run(request, settings, dir, extra, None, args).await
}

/// [`git`] for a run that connects to the server at `server` (a push): it goes through the
/// runtime's egress proxy under the sandbox, else where git's environment sends it, never
/// where the repository's config would ([`confine::forced_route`]).
pub(crate) async fn git_to_server(
    request: &ToolRequest,
    settings: GitSettings,
    dir: &Path,
    server: &str,
    args: &[&str],
) -> Result<GitRun, Box<ToolResult>> {
    checked_run(request, settings, dir, &[], Some(server), args).await
}

async fn checked_run(
    request: &ToolRequest,
    settings: GitSettings,
    dir: &Path,
    extra: &[String],
    server: Option<&str>,
    args: &[&str],
) -> Result<GitRun, Box<ToolResult>> {
    let repository = repository(request, dir)?;
    let listed = run(
        request,
        settings,
        dir,
        &repository,
        &[],
        None,
        confine::LIST_CONFIG,
    )
    .await?;
    if !listed.ok() {
        return Err(Box::new(git_failed(
            request,
            "Reading the repository's config (git config)",
            &listed,
        )));
    }
    if listed.stdout_raw.omitted() > 0 {
        return Err(Box::new(ToolResult::failed(
            request,
            ErrorCode::ToolExecutionFailed,
            format!(
                "The git config of {} is too large to check ({} bytes of setting names); git tools refuse it",
                repository.work_tree.display(),
                listed.stdout_raw.total
            ),
        )));
    }
    let listed = listed.stdout_raw.to_bytes();
    let mut neutral = confine::neutralise(&listed).map_err(|message| {
        Box::new(ToolResult::failed(
            request,
            ErrorCode::PermissionDenied,
            message,
        ))
    })?;
    neutral.extend(extra.iter().cloned());
    let route = match server {
        Some(server) => Some(confine::Route {
            scheme: server
                .split_once("://")
                .map_or("ssh", |(scheme, _)| scheme)
                .to_owned(),
            keys: confine::route_keys(&listed).map_err(|message| {
                Box::new(ToolResult::failed(
                    request,
                    ErrorCode::PermissionDenied,
                    message,
                ))
            })?,
        }),
        None => None,
    };
    run(
        request,
        settings,
        dir,
        &repository,
        &neutral,
        route.as_ref(),
        args,
    )
    .await
}

/// The user's `user.name`/`user.email` as `-c` settings: the global config is ignored by
/// every other run, but it is where most people keep who they are. Reading config runs
/// nothing.
pub(crate) async fn identity(
    request: &ToolRequest,
    settings: GitSettings,
    dir: &Path,
) -> Result<Vec<String>, Box<ToolResult>> {
    let repository = repository(request, dir)?;
    let mut builder = confine::command(Some(&repository), &[]);
    builder
        .env_remove("GIT_CONFIG_GLOBAL")
        .env_remove("GIT_CONFIG_NOSYSTEM")
        .args(["config", "--get-regexp", r"^user\.(name|email)$"]);
    let listed = spawn(request, settings, dir, builder, None, "config").await?;
    let mut found: Vec<(String, String)> = Vec::new();
    for line in listed.stdout.lines() {
        if let Some((key, value)) = line.split_once(' ') {
            found.retain(|(seen, _)| seen != key);
            found.push((key.to_owned(), value.to_owned()));
        }
    }
    Ok(found
        .into_iter()
        .map(|(key, value)| format!("{key}={value}"))
        .collect())
}

/// The checked repository of `dir`, searched no higher than the project folder (or `dir`
/// itself when it lies elsewhere).
fn repository(request: &ToolRequest, dir: &Path) -> Result<confine::Repository, Box<ToolResult>> {
    let os = platform::Os::current();
    let top = request
        .workspace_root
        .as_deref()
        .map(|root| platform::normalize(Path::new(root)))
        .filter(|root| {
            platform::paths::is_within(os, &dir.to_string_lossy(), &root.to_string_lossy())
        })
        .unwrap_or_else(|| dir.to_path_buf());
    match confine::find_repository(dir, &top) {
        Ok(Some(repository)) => Ok(repository),
        Ok(None) => Err(Box::new(ToolResult::failed(
            request,
            ErrorCode::ToolExecutionFailed,
            if top == dir {
                format!(
                    "{} is not a git repository (nor is any folder above it)",
                    dir.display()
                )
            } else {
                format!(
                    "{} is not a git repository (nor is any folder above it up to the project folder {})",
                    dir.display(),
                    top.display()
                )
            },
        ))),
        Err(message) => Err(Box::new(ToolResult::failed(
            request,
            ErrorCode::PermissionDenied,
            message,
        ))),
    }
}

async fn run(
    request: &ToolRequest,
    settings: GitSettings,
    dir: &Path,
    repository: &confine::Repository,
    neutral: &[String],
    route: Option<&confine::Route>,
    args: &[&str],
) -> Result<GitRun, Box<ToolResult>> {
    let mut builder = confine::command(Some(repository), neutral);
    builder.args(args);
    let subcommand = args.first().copied().unwrap_or("git");
    spawn(request, settings, dir, builder, route, subcommand).await
}

/// The same git command inside the OS sandbox the host granted this call (see
/// `crate::sandbox`): the repository's own config cannot name a program that escapes it.
/// A run with a `route` connects through the sandbox's egress proxy when there is one,
/// else through the proxy git's environment names (or none).
fn sandboxed(
    request: &ToolRequest,
    plain: Command,
    route: Option<&confine::Route>,
) -> Result<crate::sandbox::Confined, Box<ToolResult>> {
    let plain = plain.as_std();
    let mut confined =
        crate::sandbox::command(plain.get_program(), request).map_err(|message| {
            Box::new(ToolResult::failed(
                request,
                ErrorCode::PermissionDenied,
                message,
            ))
        })?;
    let proxy = route.map(|route| match &confined.egress {
        Some(egress) => egress.url(),
        None => confine::environment_proxy(&route.scheme, |name| {
            std::env::var_os(name).map(|value| value.to_string_lossy().into_owned())
        }),
    });
    let wrapped = &mut confined.command;
    wrapped.args(plain.get_args());
    for (name, value) in plain.get_envs() {
        match value {
            Some(value) => wrapped.env(name, value),
            None => wrapped.env_remove(name),
        };
    }
    // Command-line settings given through the environment git keeps its `-c` settings in
    // (any git version reads it, before the `-c` arguments): a proxy's URL may carry a
    // password, which the process list would show.
    if let (Some(route), Some(proxy)) = (route, proxy) {
        let forced = confine::forced_route(route, &proxy);
        wrapped.env("GIT_CONFIG_PARAMETERS", confine::config_parameters(&forced));
    }
    if let Some(dir) = plain.get_current_dir() {
        wrapped.current_dir(dir);
    }
    Ok(confined)
}

async fn spawn(
    request: &ToolRequest,
    settings: GitSettings,
    dir: &Path,
    builder: Command,
    route: Option<&confine::Route>,
    subcommand: &str,
) -> Result<GitRun, Box<ToolResult>> {
    // The host's budget is a limit, not a suggestion.
    let timeout = request.limits.timeout_ms.map_or(settings.timeout, |limit| {
        settings.timeout.min(Duration::from_millis(limit))
    });
    // The egress proxy, if any, lives until git has ended.
    let crate::sandbox::Confined {
        command: builder,
        egress: _egress,
        after,
    } = sandboxed(request, builder, route)?;
    let run_settings = Settings {
        kill_grace: settings.kill_grace,
        capture_bytes: settings.capture_bytes,
        drain: run::DEFAULT_DRAIN,
    };
    let outcome = run::run_prepared(builder, dir, None, timeout, run_settings).await;
    for note in after.settle(dir, "") {
        tracing::warn!(%note, "git made a path it may not create");
    }
    let outcome = outcome.map_err(|error| {
        let message = if error.kind() == std::io::ErrorKind::NotFound {
            "git is not installed or not on the PATH, so git tools cannot run".to_owned()
        } else {
            format!("Could not start git in {}: {error}", dir.display())
        };
        Box::new(ToolResult::failed(
            request,
            ErrorCode::ToolExecutionFailed,
            message,
        ))
    })?;
    let text = |captured: &capture::Captured| {
        captured
            .to_clipped()
            .truncate(output::max_output_bytes(request.limits.max_output_bytes))
    };
    let run = GitRun {
        code: match outcome.exit {
            Exit::Code(code) => Some(code),
            _ => None,
        },
        stdout: text(&outcome.stdout),
        stderr: text(&outcome.stderr),
        stdout_raw: outcome.stdout,
    };
    if outcome.exit == Exit::TimedOut {
        return Err(Box::new(ToolResult::failed(
            request,
            ErrorCode::ToolExecutionTimeout,
            format!(
                "git {subcommand} timed out after {} seconds",
                output::format_seconds(timeout)
            ),
        )));
    }
    if run.code == Some(128) && run.stderr.contains("not a git repository") {
        return Err(Box::new(ToolResult::failed(
            request,
            ErrorCode::ToolExecutionFailed,
            format!(
                "{} is not a git repository (nor is any folder above it)",
                dir.display()
            ),
        )));
    }
    Ok(run)
}

/// A failed git run as a ToolResult the model can act on.
pub(crate) fn git_failed(request: &ToolRequest, what: &str, run: &GitRun) -> ToolResult {
    let code = run
        .code
        .map_or_else(|| "none".to_owned(), |code| code.to_string());
    ToolResult::failed(
        request,
        ErrorCode::ToolExecutionFailed,
        format!("{what} failed (git exit code {code}): {}", run.said()),
    )
}

#[cfg(test)]
mod hostile_tests;
#[cfg(test)]
mod tests;
