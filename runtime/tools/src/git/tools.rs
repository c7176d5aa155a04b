//! GitStatus, GitDiff, GitCommit and GitPush: each validates its arguments (naming the field),
//! finds its repository folder, runs git and turns what git printed into a readable result.

use agent_protocol::{ErrorCode, ToolDefinition, ToolRequest, ToolResult};
use async_trait::async_trait;
use serde_json::{Value, json};

use super::{
    GitSettings, confine, git, git_failed, git_to_server, git_with, identity, plain_name,
    repository_dir,
};
use crate::args::Args;
use crate::output;
use crate::tool::Tool;

const PATH_PROPERTY: &str =
    "Repository folder (absolute, or relative to the workspace root). Default: workspace root";

fn invalid(request: &ToolRequest, message: String) -> ToolResult {
    ToolResult::failed(request, ErrorCode::InvalidRequest, message)
}

fn schema(required: &[&str], properties: Value) -> Value {
    json!({
        "type": "object",
        "required": required,
        "additionalProperties": false,
        "properties": properties,
    })
}

// ---- GitStatus -------------------------------------------------------------------------------

#[derive(Debug, Clone, Default)]
pub(crate) struct GitStatus {
    pub settings: GitSettings,
}

#[async_trait]
impl Tool for GitStatus {
    fn definition(&self) -> ToolDefinition {
        ToolDefinition {
            tool_name: "GitStatus".to_owned(),
            description:
                "Show the branch and the changed, staged and untracked files of a git repository"
                    .to_owned(),
            input_schema: schema(
                &[],
                json!({ "path": { "type": "string", "description": PATH_PROPERTY } }),
            )
            .into(),
        }
    }

    async fn run(&self, request: &ToolRequest) -> ToolResult {
        let args = Args::new("GitStatus", &request.arguments);
        let path = match args
            .only(&["path"])
            .and_then(|()| args.optional_str("path"))
        {
            Ok(path) => path,
            Err(error) => return invalid(request, error.0),
        };
        let dir = match repository_dir("GitStatus", request, path) {
            Ok(dir) => dir,
            Err(failure) => return *failure,
        };
        let status = [
            "status",
            "--porcelain=v1",
            "--branch",
            "--untracked-files=all",
        ];
        match git(request, self.settings, &dir, &status).await {
            Ok(run) if run.ok() => ToolResult::succeeded(request, format_status(&run.stdout)),
            Ok(run) => git_failed(request, "git status", &run),
            Err(failure) => *failure,
        }
    }
}

/// `## main...origin/main [ahead 1]` and ` M a.txt` lines → a short report: the branch,
/// then one line per file in git's two-letter code (first letter staged, second unstaged).
pub(crate) fn format_status(porcelain: &str) -> String {
    let mut lines = porcelain.lines();
    let mut text = String::new();
    let mut files = Vec::new();
    for line in lines.by_ref() {
        match line.strip_prefix("## ") {
            Some(branch) => text.push_str(&format!("Branch: {branch}\n")),
            None if !line.is_empty() => files.push(line),
            None => {}
        }
    }
    if files.is_empty() {
        text.push_str("Nothing to commit, working tree clean\n");
    } else {
        text.push_str(
            "Changes (XY PATH: X = staged, Y = not staged; M modified, A added, D deleted, R renamed, ?? untracked):\n",
        );
        for file in files {
            text.push_str(file);
            text.push('\n');
        }
    }
    text
}

// ---- GitDiff ---------------------------------------------------------------------------------

#[derive(Debug, Clone, Default)]
pub(crate) struct GitDiff {
    pub settings: GitSettings,
}

#[async_trait]
impl Tool for GitDiff {
    fn definition(&self) -> ToolDefinition {
        ToolDefinition {
            tool_name: "GitDiff".to_owned(),
            description: "Show the unified diff of the changes in a git repository".to_owned(),
            input_schema: schema(
                &[],
                json!({
                    "path": { "type": "string", "description": PATH_PROPERTY },
                    "staged": { "type": "boolean", "default": false, "description": "Diff the staged changes instead of the unstaged ones" },
                    "ref": { "type": "string", "description": "Compare the working tree with this commit, branch or tag" },
                    "files": { "type": "array", "items": { "type": "string" }, "description": "Only these files (paths relative to the repository)" }
                }),
            ).into(),
        }
    }

    async fn run(&self, request: &ToolRequest) -> ToolResult {
        let args = Args::new("GitDiff", &request.arguments);
        let parsed = args
            .only(&["path", "staged", "ref", "files"])
            .and_then(|()| {
                Ok((
                    args.optional_str("path")?,
                    args.optional_bool("staged")?.unwrap_or(false),
                    args.optional_str("ref")?,
                    args.optional_strings("files")?,
                ))
            });
        let (path, staged, reference, files) = match parsed {
            Ok(parsed) => parsed,
            Err(error) => return invalid(request, error.0),
        };
        if let Some(reference) = reference
            && let Err(message) = plain_name("GitDiff", "ref", reference)
        {
            return invalid(request, message);
        }
        let dir = match repository_dir("GitDiff", request, path) {
            Ok(dir) => dir,
            Err(failure) => return *failure,
        };
        let mut command = vec!["diff", "--no-ext-diff", "--no-textconv"];
        if staged {
            command.push("--cached");
        }
        command.extend(reference);
        command.push("--");
        command.extend(files);
        let run = match git(request, self.settings, &dir, &command).await {
            Ok(run) if run.ok() => run,
            Ok(run) => return git_failed(request, "git diff", &run),
            Err(failure) => return *failure,
        };
        if run.stdout_raw.total == 0 {
            let what = match (staged, reference) {
                (_, Some(reference)) => format!("No differences from {reference}"),
                (true, None) => "No staged changes".to_owned(),
                (false, None) => "No unstaged changes".to_owned(),
            };
            return ToolResult::succeeded(request, format!("{what}.\n"));
        }
        let mut result = ToolResult::succeeded(request, run.stdout.clone());
        if run.stdout_raw.total > u64::try_from(output::ARTIFACT_THRESHOLD_BYTES).unwrap_or(0) {
            result.artifacts.push(output::tool_output_artifact(
                "git.diff",
                &run.stdout_raw.to_bytes(),
            ));
        }
        result
    }
}

// ---- GitCommit -------------------------------------------------------------------------------

#[derive(Debug, Clone, Default)]
pub(crate) struct GitCommit {
    pub settings: GitSettings,
}

#[async_trait]
impl Tool for GitCommit {
    fn definition(&self) -> ToolDefinition {
        ToolDefinition {
            tool_name: "GitCommit".to_owned(),
            description: "Create a git commit of the staged changes".to_owned(),
            input_schema: schema(
                &["message"],
                json!({
                    "message": { "type": "string", "minLength": 1, "description": "Commit message" },
                    "path": { "type": "string", "description": PATH_PROPERTY },
                    "files": { "type": "array", "items": { "type": "string" }, "description": "Stage these files (paths relative to the repository) before committing" },
                    "all": { "type": "boolean", "default": false, "description": "Stage every modified and deleted tracked file before committing" }
                }),
            ).into(),
        }
    }

    async fn run(&self, request: &ToolRequest) -> ToolResult {
        let args = Args::new("GitCommit", &request.arguments);
        let parsed = args
            .only(&["message", "path", "files", "all"])
            .and_then(|()| {
                Ok((
                    args.required_str("message")?,
                    args.optional_str("path")?,
                    args.optional_strings("files")?,
                    args.optional_bool("all")?.unwrap_or(false),
                ))
            });
        let (message, path, files, all) = match parsed {
            Ok(parsed) => parsed,
            Err(error) => return invalid(request, error.0),
        };
        if message.trim().is_empty() || message.contains('\0') {
            return invalid(
                request,
                "GitCommit: argument \"message\" must be a non-empty text without NUL bytes"
                    .to_owned(),
            );
        }
        if let Some(message) = files
            .iter()
            .find_map(|file| confine::plain_pathspec("GitCommit", file).err())
        {
            return invalid(request, message);
        }
        let dir = match repository_dir("GitCommit", request, path) {
            Ok(dir) => dir,
            Err(failure) => return *failure,
        };
        if !files.is_empty() {
            let mut add = vec!["add", "--"];
            add.extend(files);
            match git(request, self.settings, &dir, &add).await {
                Ok(run) if run.ok() => {}
                Ok(run) => return git_failed(request, "Staging the files (git add)", &run),
                Err(failure) => return *failure,
            }
        }
        let mut commit = vec!["commit"];
        if all {
            commit.push("--all");
        }
        commit.extend(["--message", message]);
        let who = match identity(request, self.settings, &dir).await {
            Ok(who) => who,
            Err(failure) => return *failure,
        };
        match git_with(request, self.settings, &dir, &who, &commit).await {
            Ok(run) if run.ok() => ToolResult::succeeded(request, run.stdout),
            Ok(run)
                if run.stdout.contains("nothing to commit")
                    || run.stdout.contains("no changes added to commit") =>
            {
                ToolResult::failed(
                    request,
                    ErrorCode::ToolExecutionFailed,
                    format!(
                        "Nothing to commit: no changes are staged. Name the files to stage with \"files\" or set \"all\".\n{}",
                        run.said()
                    ),
                )
            }
            Ok(run) => git_failed(request, "git commit", &run),
            Err(failure) => *failure,
        }
    }
}

// ---- GitPush ---------------------------------------------------------------------------------

#[derive(Debug, Clone, Default)]
pub(crate) struct GitPush {
    pub settings: GitSettings,
}

#[async_trait]
impl Tool for GitPush {
    fn definition(&self) -> ToolDefinition {
        ToolDefinition {
            tool_name: "GitPush".to_owned(),
            description: "Push commits of a git repository to its remote".to_owned(),
            input_schema: schema(
                &[],
                json!({
                    "path": { "type": "string", "description": PATH_PROPERTY },
                    "remote": { "type": "string", "description": "Remote name. Default: the branch's upstream, else origin" },
                    "branch": { "type": "string", "description": "Branch to push. Default: the current branch" },
                    "setUpstream": { "type": "boolean", "default": false, "description": "Make the remote branch the upstream of the local one" }
                }),
            ).into(),
        }
    }

    async fn run(&self, request: &ToolRequest) -> ToolResult {
        let args = Args::new("GitPush", &request.arguments);
        let parsed = args
            .only(&["path", "remote", "branch", "setUpstream"])
            .and_then(|()| {
                Ok((
                    args.optional_str("path")?,
                    args.optional_str("remote")?,
                    args.optional_str("branch")?,
                    args.optional_bool("setUpstream")?.unwrap_or(false),
                ))
            });
        let (path, remote, branch, set_upstream) = match parsed {
            Ok(parsed) => parsed,
            Err(error) => return invalid(request, error.0),
        };
        for (field, value) in [("remote", remote), ("branch", branch)] {
            if let Some(value) = value
                && let Err(message) = plain_name("GitPush", field, value)
            {
                return invalid(request, message);
            }
        }
        let dir = match repository_dir("GitPush", request, path) {
            Ok(dir) => dir,
            Err(failure) => return *failure,
        };
        let remote = match remote {
            Some(remote) => remote.to_owned(),
            None => match push_remote(request, self.settings, &dir).await {
                Ok(remote) => remote,
                Err(failure) => return *failure,
            },
        };
        let confined = crate::sandbox::confines_processes();
        let server = match check_destination(request, self.settings, &dir, &remote, confined).await
        {
            Ok(server) => server,
            Err(failure) => return *failure,
        };
        if branch.is_some_and(|branch| branch.starts_with('+')) {
            return invalid(
                request,
                "GitPush: argument \"branch\" must not start with \"+\" (a forced push)".to_owned(),
            );
        }
        // Never forced: no such argument exists, and a refspec cannot carry a leading "+".
        // The remote is always named, so the destination checked is the one pushed to.
        let mut push = vec!["push"];
        if set_upstream {
            push.push("--set-upstream");
        }
        push.push(&remote);
        push.extend(branch);
        let pushed = match &server {
            Some(server) => git_to_server(request, self.settings, &dir, server, &push).await,
            None => git(request, self.settings, &dir, &push).await,
        };
        match pushed {
            Ok(run) if run.ok() => {
                ToolResult::succeeded(request, format!("git push succeeded.\n{}\n", run.said()))
            }
            Ok(run) => git_failed(request, "git push", &run),
            Err(failure) => *failure,
        }
    }
}

/// The remote a push without `remote` goes to: the current branch's push remote (its
/// `pushRemote`, `remote.pushDefault`, its upstream's remote), else `origin`.
async fn push_remote(
    request: &ToolRequest,
    settings: GitSettings,
    dir: &std::path::Path,
) -> Result<String, Box<ToolResult>> {
    let head = git(request, settings, dir, &["symbolic-ref", "-q", "HEAD"]).await?;
    let head = head.stdout.trim();
    if head.is_empty() {
        return Ok("origin".to_owned());
    }
    let format = ["for-each-ref", "--format=%(push:remotename)", head];
    let named = git(request, settings, dir, &format).await?;
    let named = named.stdout.trim();
    Ok(if named.is_empty() { "origin" } else { named }.to_owned())
}

/// A push reaches a server on the policy's remote allowlist (the host's check in
/// `limits.urlCheck`), or a folder the policy grants (`grantedPaths`; any folder when it
/// names none): never a folder elsewhere on this machine nor another server, whatever the
/// repository's config (or the `remote` argument) says the remote is. While processes are
/// `confined` by the OS sandbox, a server is reached through the egress proxy, which carries
/// HTTP(S) only: a remote over ssh (or git://) is refused, since the sandbox can allow a
/// port but not a host. `Ok` carries the server (as [`confine::server_url`] spells it) when
/// the destination is one, for [`git_to_server`].
pub(super) async fn check_destination(
    request: &ToolRequest,
    settings: GitSettings,
    dir: &std::path::Path,
    remote: &str,
    confined: bool,
) -> Result<Option<String>, Box<ToolResult>> {
    let url = git(
        request,
        settings,
        dir,
        &["remote", "get-url", "--push", remote],
    )
    .await?;
    // Not a configured remote: git reads the argument itself as the URL. `get-url` applies
    // the repository's `insteadOf`/`pushInsteadOf` rewrites, as the push will.
    let url = if url.ok() {
        url.stdout.trim().to_owned()
    } else {
        remote.to_owned()
    };
    let Some(local) = confine::local_destination(&url) else {
        let server = confine::server_url(&url);
        let refused = |message: String| {
            Box::new(ToolResult::failed(
                request,
                ErrorCode::PermissionDenied,
                message,
            ))
        };
        if let Some(check) = &request.limits.url_check {
            check.check(&server).map_err(|reason| {
                refused(format!(
                    "GitPush: the remote \"{remote}\" ({url}) may not be pushed to: {reason}"
                ))
            })?;
        }
        if confined && let Some(scheme) = confine::unproxied_scheme(&server) {
            return Err(refused(format!(
                "GitPush: the remote \"{remote}\" ({url}) is reached over {scheme}, which the command sandbox cannot hold to the Git.Push remote allowlist (only HTTP and HTTPS pass the runtime's egress proxy; the OS sandbox can allow a port, not a host). Push to an https URL of the repository, or run the runtime with AGENT_RUNTIME_SANDBOX=off to push over {scheme} unconfined."
            )));
        }
        return Ok(Some(server));
    };
    let Some(granted) = &request.granted_paths else {
        return Ok(None);
    };
    let target = crate::platform::normalize(&dir.join(local));
    let real = std::fs::canonicalize(&target).unwrap_or(target);
    let os = crate::platform::Os::current();
    if granted
        .iter()
        .any(|folder| crate::platform::paths::is_within(os, &real.to_string_lossy(), folder))
    {
        return Ok(None);
    }
    Err(Box::new(ToolResult::failed(
        request,
        ErrorCode::PermissionDenied,
        format!(
            "GitPush: the remote \"{remote}\" is the folder {} on this machine, outside the paths the policy grants ({}); a push may reach a server or a granted folder only",
            real.display(),
            granted.join(", ")
        ),
    )))
}
