//! ExecuteCode (INTEROP.md §11): a snippet of code run by the language's interpreter in the
//! command sandbox, launched exactly as RunCommand's shell is ([`super::exec::run_program`]:
//! the request's sandbox grant, the egress proxy when the grant has network — for
//! ExecuteCode only under `Code.Execute`'s `allowCodeNetwork` —, a process tree of its own,
//! bounded capture, the tree ended on timeout or cancellation). The result has RunCommand's
//! layout (exit code, stdout, stderr, what the sandbox refused), cut to
//! `limits.maxOutputBytes`.
//!
//! - The code reaches the interpreter on its standard input (`node -`, `bash -s`, …; for
//!   Python a small bootstrap, `python3 -c`, that reads it as `python3 -` does): no file is
//!   written, and no argument length limit applies.
//! - The language is `language` (an argument beyond the Python runtime's, default
//!   `python`); the host has judged it against `allowedLanguages`. Each language names the
//!   interpreters tried in order on the `PATH`; none found is a readable
//!   `TOOL_EXECUTION_FAILED` naming them.
//! - It runs in the project folder (without one, the home folder); `timeout_seconds`
//!   (1–600, default 120) is lowered to `limits.timeoutMs` (which carries the bundle's
//!   `maxExecutionTimeSeconds`) and ends the call with `TOOL_EXECUTION_TIMEOUT`.
//! - `description` says what the code is for; it is shown to the user with the call and
//!   not used here.
//! - Each call has an output folder of its own, named to the code by `COWORK_OUTPUT_DIR`
//!   (the Python runtime's variable, so code written for it runs unchanged): fresh, empty,
//!   writable inside the sandbox at that same path and removed when the call ends
//!   ([`CallFolder`]). Python's `pyplot.show()` saves the open figures there ([`python`]).
//!   The PNG, JPEG, GIF and WebP images left there go to the model with the result, like
//!   ViewImage's ([`images`]), where the gateway takes image parts
//!   (`AGENT_RUNTIME_LLM_IMAGE_PARTS`, the switch that offers ViewImage); elsewhere the
//!   result's text names them as not shown.

use std::path::{Path, PathBuf};
use std::time::Duration;

use agent_protocol::{ErrorCode, ToolDefinition, ToolRequest, ToolResult};
use async_trait::async_trait;
use serde_json::json;

use super::exec;
use crate::args::Args;
use crate::output;
use crate::platform::run::{Exit, Outcome, Settings};
use crate::sandbox::CallFolder;
use crate::tool::Tool;

mod images;
mod python;

/// The variable naming the call's output folder to the code: the Python runtime's name.
pub(crate) const OUTPUT_DIR_VARIABLE: &str = "COWORK_OUTPUT_DIR";

/// INTEROP.md §11: `timeout_seconds (default 120, max 600)`.
pub(crate) const DEFAULT_TIMEOUT_SECONDS: u64 = 120;
pub(crate) const MIN_TIMEOUT_SECONDS: u64 = 1;
pub(crate) const MAX_TIMEOUT_SECONDS: u64 = 600;

/// The language of a call that names none: the one the Python runtime runs.
pub(crate) const DEFAULT_LANGUAGE: &str = "python";

/// One language: the names it goes by, the interpreters tried in order, the arguments
/// that make each read its program from standard input, and the environment it runs with.
struct Language {
    names: &'static [&'static str],
    interpreters: &'static [&'static str],
    stdin_arguments: &'static [&'static str],
    environment: &'static [(&'static str, &'static str)],
}

const LANGUAGES: &[Language] = &[
    Language {
        names: &["python", "python3", "py"],
        interpreters: &["python3", "python"],
        stdin_arguments: &["-c", python::BOOTSTRAP],
        // No display in the sandbox: matplotlib draws off-screen, whatever the user's
        // environment names.
        environment: &[("MPLBACKEND", "Agg")],
    },
    Language {
        names: &["javascript", "js", "node", "nodejs"],
        interpreters: &["node", "nodejs"],
        stdin_arguments: &["-"],
        environment: &[],
    },
    Language {
        names: &["bash"],
        interpreters: &["bash"],
        stdin_arguments: &["-s"],
        environment: &[],
    },
    Language {
        names: &["sh", "shell"],
        interpreters: &["sh"],
        stdin_arguments: &["-s"],
        environment: &[],
    },
    Language {
        names: &["ruby", "rb"],
        interpreters: &["ruby"],
        stdin_arguments: &["-"],
        environment: &[],
    },
    Language {
        names: &["perl", "pl"],
        interpreters: &["perl"],
        stdin_arguments: &["-"],
        environment: &[],
    },
];

fn language(name: &str) -> Option<&'static Language> {
    let name = name.trim();
    LANGUAGES.iter().find(|language| {
        language
            .names
            .iter()
            .any(|known| known.eq_ignore_ascii_case(name))
    })
}

/// The first of `names` found as an executable file in one of `path`'s folders.
fn find_interpreter(names: &[&str], path: Option<&std::ffi::OsStr>) -> Option<PathBuf> {
    let folders: Vec<PathBuf> = path
        .map(std::env::split_paths)
        .into_iter()
        .flatten()
        .collect();
    names.iter().find_map(|name| {
        folders.iter().find_map(|folder| {
            let candidates = [folder.join(name), folder.join(format!("{name}.exe"))];
            candidates
                .into_iter()
                .find(|candidate| executable(candidate))
        })
    })
}

#[cfg(unix)]
fn executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path)
        .is_ok_and(|metadata| metadata.is_file() && metadata.permissions().mode() & 0o111 != 0)
}

#[cfg(not(unix))]
fn executable(path: &Path) -> bool {
    path.is_file()
}

#[derive(Debug, Clone)]
pub(crate) struct ExecuteCode {
    settings: Settings,
    /// Where interpreters are looked for instead of the `PATH` (tests).
    search_path: Option<std::ffi::OsString>,
    /// Whether the images the code writes go to the model (`AGENT_RUNTIME_LLM_IMAGE_PARTS`).
    image_parts: bool,
}

/// The images the code wrote to its output folder, each within `max_bytes`.
async fn collect_images(
    folder: Result<&CallFolder, &std::io::Error>,
    max_bytes: Option<u64>,
) -> images::Collected {
    match folder {
        Ok(folder) => {
            let path = folder.path().to_path_buf();
            tokio::task::spawn_blocking(move || images::collect(&path, max_bytes))
                .await
                .unwrap_or_else(|error| images::Collected {
                    unreadable: Some(error.to_string()),
                    ..Default::default()
                })
        }
        Err(error) => images::Collected {
            unreadable: Some(format!("no output folder could be made: {error}")),
            ..Default::default()
        },
    }
}

impl ExecuteCode {
    /// With RunCommand's process settings (kill grace, capture bound, drain).
    pub(crate) fn new(settings: Settings) -> Self {
        Self {
            settings,
            search_path: None,
            image_parts: false,
        }
    }

    /// The images the code writes go to the model: the gateway takes image parts.
    pub(crate) fn with_image_parts(mut self, image_parts: bool) -> Self {
        self.image_parts = image_parts;
        self
    }

    /// Interpreters looked for in `path` instead of the `PATH`.
    #[cfg(test)]
    pub(crate) fn with_search_path(mut self, path: impl Into<std::ffi::OsString>) -> Self {
        self.search_path = Some(path.into());
        self
    }
}

#[async_trait]
impl Tool for ExecuteCode {
    fn definition(&self) -> ToolDefinition {
        let names: Vec<&str> = LANGUAGES.iter().map(|language| language.names[0]).collect();
        let mut description =
            "Execute a code snippet in a sandbox and return its output".to_owned();
        if self.image_parts {
            description.push_str(&format!(
                ". PNG, JPEG, GIF and WebP images the code writes to the folder named by the \
                 {OUTPUT_DIR_VARIABLE} environment variable are shown to you (at most {}); in \
                 Python, matplotlib's plt.show() saves the open figures there",
                images::MAX_IMAGES
            ));
        }
        ToolDefinition {
            tool_name: "ExecuteCode".to_owned(),
            description,
            input_schema: json!({
                "type": "object",
                "required": ["code"],
                "additionalProperties": false,
                "properties": {
                    "code": { "type": "string", "minLength": 1, "description": "The code to execute" },
                    "description": { "type": "string", "description": "What the code does, shown to the user" },
                    "timeout_seconds": {
                        "type": "integer",
                        "minimum": MIN_TIMEOUT_SECONDS,
                        "maximum": MAX_TIMEOUT_SECONDS,
                        "default": DEFAULT_TIMEOUT_SECONDS,
                        "description": "Timeout in seconds (1-600). Default: 120"
                    },
                    "language": {
                        "type": "string",
                        "enum": names,
                        "default": DEFAULT_LANGUAGE,
                        "description": "Language of the code. Default: python"
                    }
                }
            }).into(),
        }
    }

    async fn run(&self, request: &ToolRequest) -> ToolResult {
        let args = Args::new("ExecuteCode", &request.arguments);
        let parsed = args
            .only(&["code", "description", "timeout_seconds", "language"])
            .and_then(|()| {
                Ok((
                    args.required_str("code")?,
                    args.optional_str("description")?,
                    args.optional_u64_between(
                        "timeout_seconds",
                        MIN_TIMEOUT_SECONDS,
                        MAX_TIMEOUT_SECONDS,
                    )?,
                    args.optional_str("language")?,
                ))
            });
        let (code, _description, timeout, asked_language) = match parsed {
            Ok(parsed) => parsed,
            Err(error) => return ToolResult::failed(request, ErrorCode::InvalidRequest, error.0),
        };
        if code.trim().is_empty() {
            return ToolResult::failed(
                request,
                ErrorCode::InvalidRequest,
                "ExecuteCode: the code is empty",
            );
        }
        let asked_language = asked_language.unwrap_or(DEFAULT_LANGUAGE);
        let Some(language) = language(asked_language) else {
            let known: Vec<&str> = LANGUAGES.iter().map(|language| language.names[0]).collect();
            return ToolResult::failed(
                request,
                ErrorCode::InvalidRequest,
                format!(
                    "ExecuteCode: unsupported language \"{asked_language}\" (supported: {})",
                    known.join(", ")
                ),
            );
        };
        let Some(interpreter) = find_interpreter(
            language.interpreters,
            self.search_path
                .clone()
                .or_else(|| std::env::var_os("PATH"))
                .as_deref(),
        ) else {
            return ToolResult::failed(
                request,
                ErrorCode::ToolExecutionFailed,
                format!(
                    "ExecuteCode: no {} interpreter was found on this machine (looked for {} on the PATH)",
                    language.names[0],
                    language.interpreters.join(", ")
                ),
            );
        };
        let cwd = match super::working_directory(request, None) {
            Ok(cwd) => cwd,
            Err(failure) => return *failure,
        };
        let timeout =
            output::effective_timeout(timeout, DEFAULT_TIMEOUT_SECONDS, request.limits.timeout_ms);
        // Dropped (so removed) when the call ends, however it ends.
        let folder = CallFolder::create();
        let confined = match &folder {
            Ok(folder) => folder.granted(request),
            Err(_) => request.clone(),
        };
        let outcome = exec::run_program(
            &confined,
            interpreter.as_os_str(),
            |builder| {
                builder.args(language.stdin_arguments);
                builder.envs(language.environment.iter().copied());
                if let Ok(folder) = &folder {
                    builder.env(OUTPUT_DIR_VARIABLE, folder.path());
                }
            },
            &cwd,
            Some(code),
            timeout,
            self.settings,
        )
        .await;
        match outcome {
            Ok(outcome) => {
                let images =
                    collect_images(folder.as_ref(), request.limits.max_file_size_bytes).await;
                self.result(request, &outcome, timeout, images)
            }
            Err(error) => {
                let code = match error.kind() {
                    std::io::ErrorKind::PermissionDenied => ErrorCode::PermissionDenied,
                    _ => ErrorCode::ToolExecutionFailed,
                };
                ToolResult::failed(
                    request,
                    code,
                    format!(
                        "ExecuteCode: could not start {} in {}: {error}",
                        interpreter.display(),
                        cwd.display()
                    ),
                )
            }
        }
    }
}

impl ExecuteCode {
    fn result(
        &self,
        request: &ToolRequest,
        outcome: &Outcome,
        timeout: Duration,
        images: images::Collected,
    ) -> ToolResult {
        let max_output = output::max_output_bytes(request.limits.max_output_bytes)
            .min(self.settings.capture_bytes);
        let mut text = super::layout(outcome, max_output);
        text.push_str(&images.section(OUTPUT_DIR_VARIABLE, self.image_parts));
        let mut result = if outcome.exit == Exit::TimedOut {
            let mut failed = ToolResult::failed(
                request,
                ErrorCode::ToolExecutionTimeout,
                format!(
                    "Code execution timed out after {} seconds",
                    output::format_seconds(timeout)
                ),
            );
            failed.output_text = Some(text);
            failed
        } else {
            ToolResult::succeeded(request, text)
        };
        if outcome.stdout.total > u64::try_from(output::ARTIFACT_THRESHOLD_BYTES).unwrap_or(0) {
            result.artifacts.push(output::tool_output_artifact(
                "stdout.txt",
                &outcome.stdout.to_bytes(),
            ));
        }
        if self.image_parts {
            result
                .images
                .extend(images.images.into_iter().map(|image| image.part));
        }
        result
    }
}

#[cfg(test)]
mod tests;
