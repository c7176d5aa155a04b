//! RunCommand (local-tool-runtime.md §4.4, §6.2, §8.2): a command string run by the platform
//! shell, its exit code, stdout and stderr returned as
//!
//! ```text
//! Exit code: 0
//! --- stdout ---
//! {stdout content}
//! --- stderr ---
//! {stderr content}
//! ```
//!
//! Each section's content ends with a newline (one is added when the output lacks it; an
//! empty section is just its header). A non-zero exit is a succeeded call whose text shows
//! the code: the command ran, and the model reads the failure from the output (§4.4 step 7).
//! A command killed by a signal shows `128 + n` as shells do, with the signal named.

pub(crate) mod code;
pub(crate) mod exec;

use std::path::{Path, PathBuf};
use std::time::Duration;

use agent_protocol::{ErrorCode, ToolDefinition, ToolRequest, ToolResult};
use async_trait::async_trait;
use serde_json::json;

use crate::args::Args;
use crate::output::{self, Clipped};
use crate::platform::capture;
use crate::platform::run::{DEFAULT_DRAIN, Exit, Outcome, Settings};
use crate::platform::{self, DirError, process, shell};
use crate::tool::Tool;

/// §4.4: "Default: 300"; §8.2: "between 1 and 600 seconds".
pub(crate) const DEFAULT_TIMEOUT_SECONDS: u64 = 300;
pub(crate) const MIN_TIMEOUT_SECONDS: u64 = 1;
pub(crate) const MAX_TIMEOUT_SECONDS: u64 = 600;

#[derive(Debug, Clone)]
pub(crate) struct RunCommand {
    settings: Settings,
}

impl RunCommand {
    pub(crate) fn new() -> Self {
        Self {
            settings: Settings {
                kill_grace: process::DEFAULT_KILL_GRACE,
                capture_bytes: capture::DEFAULT_CAPTURE_BYTES,
                drain: DEFAULT_DRAIN,
            },
        }
    }

    /// How its process trees are handled, for ExecuteCode to launch the same way.
    pub(crate) fn settings(&self) -> Settings {
        self.settings
    }

    /// Time between `SIGTERM` and `SIGKILL` when ending a tree (§6.2: 5 s).
    pub(crate) fn with_kill_grace(mut self, grace: Duration) -> Self {
        self.settings.kill_grace = grace;
        self
    }

    /// Most bytes kept per stream (the memory bound of a flood, and the largest artifact);
    /// `maxOutputBytes` above it is lowered to it.
    #[cfg(all(test, unix))]
    pub(crate) fn with_capture_bytes(mut self, bytes: usize) -> Self {
        self.settings.capture_bytes = bytes;
        self
    }

    /// How long output pipes may stay open after the shell exited.
    #[cfg(all(test, unix))]
    pub(crate) fn with_drain(mut self, drain: Duration) -> Self {
        self.settings.drain = drain;
        self
    }
}

impl Default for RunCommand {
    fn default() -> Self {
        Self::new()
    }
}

#[async_trait]
impl Tool for RunCommand {
    fn definition(&self) -> ToolDefinition {
        ToolDefinition {
            tool_name: "RunCommand".to_owned(),
            description: "Execute a shell command and return stdout, stderr, and exit code"
                .to_owned(),
            input_schema: json!({
                "type": "object",
                "required": ["command"],
                "additionalProperties": false,
                "properties": {
                    "command": { "type": "string", "minLength": 1, "description": "Shell command to execute" },
                    "cwd": { "type": "string", "description": "Working directory. Default: workspace root" },
                    "timeout": {
                        "type": "integer",
                        "minimum": MIN_TIMEOUT_SECONDS,
                        "maximum": MAX_TIMEOUT_SECONDS,
                        "default": DEFAULT_TIMEOUT_SECONDS,
                        "description": "Timeout in seconds (1-600). Default: 300"
                    },
                    "stdin": { "type": "string", "description": "Standard input to pipe to the command" }
                }
            }).into(),
        }
    }

    async fn run(&self, request: &ToolRequest) -> ToolResult {
        let args = Args::new("RunCommand", &request.arguments);
        let parsed = args
            .only(&["command", "cwd", "timeout", "stdin"])
            .and_then(|()| {
                Ok((
                    args.required_str("command")?,
                    args.optional_str("cwd")?,
                    args.optional_u64_between("timeout", MIN_TIMEOUT_SECONDS, MAX_TIMEOUT_SECONDS)?,
                    args.optional_str("stdin")?,
                ))
            });
        let (command, cwd, timeout, stdin) = match parsed {
            Ok(parsed) => parsed,
            Err(error) => return ToolResult::failed(request, ErrorCode::InvalidRequest, error.0),
        };
        if let Err(message) = validate_command(command) {
            return ToolResult::failed(request, ErrorCode::InvalidRequest, message);
        }
        let cwd = match working_directory(request, cwd) {
            Ok(cwd) => cwd,
            Err(failure) => return *failure,
        };
        let timeout = effective_timeout(timeout, request.limits.timeout_ms);
        let shell = shell::resolve_shell();
        let outcome = exec::run(
            request,
            &shell,
            command,
            &cwd,
            stdin,
            timeout,
            self.settings,
        )
        .await;
        match outcome {
            Ok(outcome) => self.result(request, &outcome, timeout),
            Err(error) => {
                let code = match error.kind() {
                    std::io::ErrorKind::PermissionDenied => ErrorCode::PermissionDenied,
                    _ => ErrorCode::ToolExecutionFailed,
                };
                ToolResult::failed(
                    request,
                    code,
                    format!(
                        "Could not start {} in {}: {error}",
                        shell.program().display(),
                        cwd.display()
                    ),
                )
            }
        }
    }
}

impl RunCommand {
    fn result(&self, request: &ToolRequest, outcome: &Outcome, timeout: Duration) -> ToolResult {
        let max_output = output::max_output_bytes(request.limits.max_output_bytes)
            .min(self.settings.capture_bytes);
        let text = layout(outcome, max_output);
        let mut result = match outcome.exit {
            Exit::TimedOut => {
                // The message is the spec's (§7.3); what was printed before the kill is kept
                // for whoever looks at the result.
                let mut failed = ToolResult::failed(
                    request,
                    ErrorCode::ToolExecutionTimeout,
                    format!("Command timed out after {} seconds", seconds(timeout)),
                );
                failed.output_text = Some(text);
                failed
            }
            _ => ToolResult::succeeded(request, text),
        };
        if outcome.stdout.total > u64::try_from(output::ARTIFACT_THRESHOLD_BYTES).unwrap_or(0) {
            result.artifacts.push(output::tool_output_artifact(
                "stdout.txt",
                &outcome.stdout.to_bytes(),
            ));
        }
        result
    }
}

/// The §4.4 layout of a finished process, followed by what the sandbox refused or undid:
/// the model and the user see why, not a bare "Permission denied" (INTEROP.md §10).
fn layout(outcome: &Outcome, max_output: usize) -> String {
    let mut text = format_output(
        outcome.exit,
        &outcome.stdout.to_clipped(),
        &outcome.stderr.to_clipped(),
        max_output,
    );
    if !outcome.notes.is_empty() {
        text.push_str("--- sandbox ---\n");
        for note in &outcome.notes {
            text.push_str(note);
            text.push('\n');
        }
    }
    text
}

/// §8.2: non-empty, no NUL bytes (an OS argument cannot carry one).
fn validate_command(command: &str) -> Result<(), String> {
    if command.trim().is_empty() {
        Err("RunCommand: the command is empty".to_owned())
    } else if command.contains('\0') {
        Err("RunCommand: the command contains a NUL byte".to_owned())
    } else {
        Ok(())
    }
}

/// `cwd` resolved against the project folder; without one, the project folder itself, or,
/// for a session without a project (a general chat), the home directory.
fn working_directory(request: &ToolRequest, cwd: Option<&str>) -> Result<PathBuf, Box<ToolResult>> {
    let fail = |code, message: String| Box::new(ToolResult::failed(request, code, message));
    let root = request.workspace_root.as_deref().map(Path::new);
    let dir = match (cwd, root) {
        (Some(raw), _) => platform::resolve(raw, root).map_err(|error| {
            fail(
                ErrorCode::InvalidRequest,
                format!("RunCommand: cwd: {error}"),
            )
        })?,
        (None, Some(root)) => platform::normalize(root),
        (None, None) => platform::home()
            .or_else(|| std::env::current_dir().ok())
            .unwrap_or_else(|| PathBuf::from("/")),
    };
    platform::existing_dir(&dir).map_err(|error| match error {
        DirError::NotADirectory => fail(
            ErrorCode::InvalidRequest,
            format!("RunCommand: cwd {} is not a directory", dir.display()),
        ),
        DirError::NotFound => fail(
            ErrorCode::FileNotFound,
            format!("Working directory not found: {}", dir.display()),
        ),
        DirError::Unusable(error) => fail(
            ErrorCode::PermissionDenied,
            format!(
                "Cannot use {} as the working directory: {error}",
                dir.display()
            ),
        ),
    })?;
    Ok(dir)
}

/// The argument's timeout (default 300 s), capped by the host's `limits.timeoutMs`.
fn effective_timeout(seconds: Option<u64>, limit_ms: Option<u64>) -> Duration {
    crate::output::effective_timeout(seconds, DEFAULT_TIMEOUT_SECONDS, limit_ms)
}

use crate::output::format_seconds as seconds;

/// The §4.4 layout. stdout and stderr share `max_output` (§4.4: "combined stdout + stderr");
/// each is cut by §7.1 within its share, so both headers and the exit code always remain.
fn format_output(exit: Exit, stdout: &Clipped, stderr: &Clipped, max_output: usize) -> String {
    let (stdout_budget, stderr_budget) =
        output::split_budget(stdout.len(), stderr.len(), max_output);
    let exit_line = match exit {
        Exit::Code(code) => code.to_string(),
        Exit::Signal(signal) => format!("{} (terminated by signal {signal})", 128 + signal),
        Exit::TimedOut => "none (timed out; the process tree was ended)".to_owned(),
        Exit::Unknown => "unknown".to_owned(),
    };
    let section = |text: String| {
        if text.is_empty() || text.ends_with('\n') {
            text
        } else {
            text + "\n"
        }
    };
    format!(
        "Exit code: {exit_line}\n--- stdout ---\n{}--- stderr ---\n{}",
        section(stdout.truncate(stdout_budget)),
        section(stderr.truncate(stderr_budget))
    )
}

#[cfg(test)]
mod tests;
