//! Steps for the git tools (system-design.md: Git.Status, Git.Diff, Git.Commit, Git.Push) and
//! GetPatchPreview (INTEROP.md §1). The kit runs the real `git` itself to set a repository up
//! and to look at it afterwards; the runtime under test may run git however it likes.

use std::path::Path;

use anyhow::Context;
use cucumber::{given, then, when};
use serde_json::Value;

use crate::steps::support::task::task_request;
use crate::steps::support::{StepResult, expect_result, show, str_at};
use crate::steps::task::wait_task_end;
use crate::world::ConformanceWorld;

/// Runs `git args…` in `dir` (bounded), as the kit's own setup, and returns its stdout.
pub(crate) async fn git(
    world: &ConformanceWorld,
    dir: &Path,
    args: &[&str],
) -> anyhow::Result<String> {
    let run = tokio::process::Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("LC_ALL", "C")
        .kill_on_drop(true)
        .output();
    let out = tokio::time::timeout(world.timeout(), run)
        .await
        .with_context(|| format!("git {args:?} did not finish"))?
        .with_context(|| format!("cannot run git {args:?} (is git installed?)"))?;
    check!(
        out.status.success(),
        "git {args:?} in {} failed: {}",
        dir.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

#[given(expr = "the workspace is a git repository with {string} committed")]
async fn workspace_repo(world: &mut ConformanceWorld, name: String) -> StepResult {
    world.require_git()?;
    let workspace = world.dirs()?.workspace.clone();
    check!(
        workspace.join(&name).is_file(),
        "create the workspace file {name} before committing it"
    );
    init_with_commit(world, &workspace, &name, "Initial commit").await?;
    Ok(())
}

/// Makes `dir` a repository (branch `main`, the kit as author) with `file` committed.
pub(crate) async fn init_with_commit(
    world: &ConformanceWorld,
    dir: &Path,
    file: &str,
    message: &str,
) -> anyhow::Result<()> {
    for args in [
        &["init", "-q", "-b", "main"][..],
        &["config", "user.name", "Conformance Kit"],
        &["config", "user.email", "kit@conformance.invalid"],
        &["config", "commit.gpgsign", "false"],
        &["add", "--", file],
        &["commit", "-q", "-m", message],
    ] {
        git(world, dir, args).await?;
    }
    Ok(())
}

#[given(expr = "the workspace repository has the bare remote {string} beside the workspace")]
async fn bare_remote(world: &mut ConformanceWorld, name: String) -> StepResult {
    let dirs = world.dirs()?;
    let (root, workspace) = (dirs.root().to_path_buf(), dirs.workspace.clone());
    let remote = root.join(&name);
    std::fs::create_dir_all(&remote)?;
    git(world, &remote, &["init", "-q", "--bare", "-b", "main"]).await?;
    let url = remote.display().to_string();
    git(world, &workspace, &["remote", "add", "origin", &url]).await?;
    Ok(())
}

#[then(expr = "the workspace repository's last commit is {string} holding {string}")]
async fn last_commit(world: &mut ConformanceWorld, subject: String, file: String) -> StepResult {
    wait_task_end(world).await?;
    let workspace = world.dirs()?.workspace.clone();
    let got = git(world, &workspace, &["log", "-1", "--format=%s"]).await?;
    check!(
        got.trim_end() == subject,
        "the last commit must be {subject:?}, it is {:?}",
        got.trim_end()
    );
    let files = git(
        world,
        &workspace,
        &["show", "--name-only", "--format=", "HEAD"],
    )
    .await?;
    check!(
        files.lines().any(|line| line == file),
        "the last commit must hold {file}; it holds {files:?}"
    );
    Ok(())
}

#[then(expr = "the bare remote {string} has the workspace's last commit on main")]
async fn remote_has_commit(world: &mut ConformanceWorld, name: String) -> StepResult {
    wait_task_end(world).await?;
    let dirs = world.dirs()?;
    let (root, workspace) = (dirs.root().to_path_buf(), dirs.workspace.clone());
    let local = git(world, &workspace, &["rev-parse", "HEAD"]).await?;
    let remote = git(world, &root.join(&name), &["rev-parse", "main"]).await?;
    check!(
        local == remote,
        "the remote's main is {}, the workspace's HEAD is {}",
        remote.trim(),
        local.trim()
    );
    Ok(())
}

#[when("the client asks for the patch preview of the task")]
async fn asks_patch_preview(world: &mut ConformanceWorld) -> StepResult {
    wait_task_end(world).await?;
    let response = task_request(world, "GetPatchPreview").await?;
    world.last_response = Some(response);
    world.last_method = Some("GetPatchPreview".to_owned());
    Ok(())
}

fn preview_file(world: &mut ConformanceWorld, name: &str) -> anyhow::Result<Value> {
    let response = world
        .last_response
        .clone()
        .context("no GetPatchPreview was sent")?;
    let result = expect_result(&response, "GetPatchPreview")?;
    let task_id = world.task()?.task_id.clone();
    check!(
        str_at(result, &["taskId"]) == Some(task_id.as_str()),
        "the preview must name the task {task_id}: {}",
        show(result)
    );
    let path = world.dirs()?.workspace.join(name);
    let files = result
        .get("files")
        .and_then(Value::as_array)
        .with_context(|| format!("the preview has no files array: {}", show(result)))?;
    // The file may be named by its absolute path or relative to the workspace; a Windows
    // runtime spells a relative one with `\`.
    let windows = world.runtime_os() == crate::runtime_manifest::RuntimeOs::Windows;
    files
        .iter()
        .find(|f| {
            str_at(f, &["filePath"]).is_some_and(|p| {
                let relative = if windows {
                    p.replace('\\', "/")
                } else {
                    p.to_owned()
                };
                Path::new(p) == path
                    || relative == name
                    || relative.trim_start_matches("./") == name
            })
        })
        .cloned()
        .with_context(|| format!("the preview does not list {name}: {}", show(result)))
}

#[then(expr = "the patch preview lists {string} as {word} with a hunk containing {string}")]
async fn preview_lists(
    world: &mut ConformanceWorld,
    name: String,
    status: String,
    needle: String,
) -> StepResult {
    let file = preview_file(world, &name)?;
    check!(
        str_at(&file, &["status"]) == Some(status.as_str()),
        "{name} must be listed as {status}: {}",
        show(&file)
    );
    // Only the change itself: the hunks' form is REQ-TOOL-026's, judged by its own step, so a
    // header line fails that requirement alone.
    let hunks = str_at(&file, &["hunks"]).unwrap_or_default();
    check!(
        hunks.contains(&needle),
        "the hunks of {name} must contain {needle:?}: {hunks:?}"
    );
    Ok(())
}

#[then("the hunks of every file in the patch preview start at the first @@")]
async fn preview_hunks_start_at_the_first_hunk(world: &mut ConformanceWorld) -> StepResult {
    let response = world
        .last_response
        .clone()
        .context("no GetPatchPreview was sent")?;
    let result = expect_result(&response, "GetPatchPreview")?;
    let files = result
        .get("files")
        .and_then(Value::as_array)
        .with_context(|| format!("the preview has no files array: {}", show(result)))?;
    check!(
        !files.is_empty(),
        "the preview lists no file: {}",
        show(result)
    );
    for file in files {
        let hunks = str_at(file, &["hunks"]).unwrap_or_default();
        check!(
            hunks.starts_with("@@"),
            "the hunks of {} must start at the first \"@@\" (no ---/+++ header): {hunks:?}",
            str_at(file, &["filePath"]).unwrap_or("a file")
        );
    }
    Ok(())
}
