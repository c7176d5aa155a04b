//! Steps of the hardening profile (features/hardening/confinement.feature): a
//! hostile model prepares the workspace — a repository whose config, hooks or attributes
//! name programs, a `.git` file leading elsewhere, a file swapped for a link while an
//! approval waits, files too large to hold — and the kit judges from outside: a marker file
//! that must not appear, a folder outside that must stay untouched, the runtime's peak
//! memory.

use std::path::{Path, PathBuf};

use anyhow::Context as _;
use cucumber::{given, then, when};

use crate::steps::hardening::sandbox::listener_port;
use crate::steps::support::StepResult;
use crate::steps::task::wait_task_end;
use crate::steps::tools::git::{git, init_with_commit};
use crate::world::ConformanceWorld;

fn workspace(world: &mut ConformanceWorld) -> anyhow::Result<PathBuf> {
    Ok(world.dirs()?.workspace.clone())
}

/// The folder that holds the workspace: "beside the workspace".
fn beside(world: &mut ConformanceWorld) -> anyhow::Result<PathBuf> {
    let workspace = workspace(world)?;
    Ok(workspace
        .parent()
        .context("the workspace has no parent directory")?
        .to_path_buf())
}

/// A shell command that creates `marker`, for a config value or a hook: whatever runs it
/// leaves the trace the scenario looks for.
fn creates(marker: &Path) -> String {
    format!("touch '{}'", marker.display())
}

#[given(
    expr = "the workspace repository's config sets {string} to a program that creates the file {string} beside the workspace"
)]
async fn config_program(world: &mut ConformanceWorld, key: String, marker: String) -> StepResult {
    let marker = beside(world)?.join(marker);
    let workspace = workspace(world)?;
    git(world, &workspace, &["config", &key, &creates(&marker)]).await?;
    Ok(())
}

#[given(
    expr = "the workspace repository has the hook {string} that creates the file {string} beside the workspace"
)]
async fn hook(world: &mut ConformanceWorld, name: String, marker: String) -> StepResult {
    let marker = beside(world)?.join(marker);
    let hooks = workspace(world)?.join(".git/hooks");
    std::fs::create_dir_all(&hooks)?;
    let path = hooks.join(&name);
    std::fs::write(&path, format!("#!/bin/sh\n{}\n", creates(&marker)))
        .with_context(|| format!("cannot write {}", path.display()))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))?;
    }
    Ok(())
}

#[given(
    expr = "the workspace repository filters every file through a driver that creates the file {string} beside the workspace"
)]
async fn filter_driver(world: &mut ConformanceWorld, marker: String) -> StepResult {
    let marker = beside(world)?.join(marker);
    let workspace = workspace(world)?;
    std::fs::write(
        workspace.join(".gitattributes"),
        "* filter=trace diff=trace\n",
    )?;
    let program = format!("{}; cat", creates(&marker));
    for key in [
        "filter.trace.clean",
        "filter.trace.smudge",
        "diff.trace.textconv",
    ] {
        git(world, &workspace, &["config", key, &program]).await?;
    }
    Ok(())
}

#[given(
    expr = "the workspace's .git is a file pointing to a repository beside the workspace that committed {string} holding {string}"
)]
async fn git_file_outside(
    world: &mut ConformanceWorld,
    name: String,
    content: String,
) -> StepResult {
    let outside = beside(world)?.join("elsewhere");
    std::fs::create_dir_all(&outside)?;
    std::fs::write(outside.join(&name), format!("{content}\n"))?;
    init_with_commit(world, &outside, &name, "Elsewhere").await?;
    // Seen through the workspace (its work tree), the committed file differs: a diff would
    // print the outside repository's content.
    let workspace = workspace(world)?;
    std::fs::write(workspace.join(&name), "replaced\n")?;
    std::fs::write(
        workspace.join(".git"),
        format!("gitdir: {}\n", outside.join(".git").display()),
    )?;
    Ok(())
}

#[given(
    expr = "the bare remote {string} beside the workspace is the workspace repository's origin"
)]
async fn bare_origin(world: &mut ConformanceWorld, name: String) -> StepResult {
    let remote = beside(world)?.join(&name);
    std::fs::create_dir_all(&remote)?;
    git(world, &remote, &["init", "-q", "--bare", "-b", "main"]).await?;
    let url = remote.display().to_string();
    let workspace = workspace(world)?;
    git(world, &workspace, &["remote", "add", "origin", &url]).await?;
    Ok(())
}

#[given("the workspace repository's origin is a git server on the loopback listener")]
async fn loopback_origin(world: &mut ConformanceWorld) -> StepResult {
    let port = listener_port(world)?;
    let url = format!("http://127.0.0.1:{port}/repo.git");
    let workspace = workspace(world)?;
    git(world, &workspace, &["remote", "add", "origin", &url]).await?;
    Ok(())
}

#[given(expr = "the workspace file {string} is a sparse file of {int} MiB")]
async fn sparse(world: &mut ConformanceWorld, name: String, mib: u64) -> StepResult {
    let path = workspace(world)?.join(name);
    let file = std::fs::File::create(&path)
        .with_context(|| format!("cannot create {}", path.display()))?;
    // Holes read as NUL bytes and take no disk space.
    file.set_len(mib << 20)?;
    Ok(())
}

#[given(expr = "the workspace file {string} holds {int} MiB of numbered lines")]
async fn numbered_lines(world: &mut ConformanceWorld, name: String, mib: u64) -> StepResult {
    use std::io::Write as _;
    let path = workspace(world)?.join(name);
    let file = std::fs::File::create(&path)
        .with_context(|| format!("cannot create {}", path.display()))?;
    let mut out = std::io::BufWriter::new(file);
    let mut written = 0u64;
    let mut line = 1u64;
    while written < mib << 20 {
        let text = format!("line {line}\n");
        out.write_all(text.as_bytes())?;
        written += text.len() as u64;
        line += 1;
    }
    out.flush()?;
    Ok(())
}

#[when(expr = "the workspace file {string} is replaced by a symlink to {string}")]
async fn swapped(world: &mut ConformanceWorld, name: String, target: String) -> StepResult {
    let path = workspace(world)?.join(&name);
    std::fs::remove_file(&path).with_context(|| format!("cannot remove {}", path.display()))?;
    link(&path, &target)
}

#[when(expr = "the workspace folder {string} is replaced by a symlink to {string}")]
async fn folder_swapped(world: &mut ConformanceWorld, name: String, target: String) -> StepResult {
    let path = workspace(world)?.join(&name);
    std::fs::remove_dir_all(&path).with_context(|| format!("cannot remove {}", path.display()))?;
    link(&path, &target)
}

fn link(path: &Path, target: &str) -> StepResult {
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(target, path)
            .with_context(|| format!("cannot link {} to {target}", path.display()))?;
        Ok(())
    }
    #[cfg(not(unix))]
    fail!(
        "symlinks are made on Unix only ({} to {target})",
        path.display()
    )
}

#[then(expr = "the bare remote {string} beside the workspace has no commits")]
async fn remote_empty(world: &mut ConformanceWorld, name: String) -> StepResult {
    wait_task_end(world).await?;
    let remote = beside(world)?.join(&name);
    let refs = git(world, &remote, &["for-each-ref"]).await?;
    check!(
        refs.trim().is_empty(),
        "the push reached {}, outside the granted paths: {}",
        remote.display(),
        refs.trim()
    );
    Ok(())
}

#[then(expr = "the runtime's peak memory stayed under {int} MiB")]
async fn peak_memory(world: &mut ConformanceWorld, mib: u64) -> StepResult {
    wait_task_end(world).await?;
    let pid = world
        .started_runtime()?
        .pid()
        .context("the runtime's process id is unknown (it was not started as a process)")?;
    // Linux reports the high-water mark of the resident set; elsewhere this is not certified.
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))
        .with_context(|| format!("cannot read /proc/{pid}/status (Linux only)"))?;
    let peak_kib: u64 = status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|value| value.split_whitespace().next())
        .and_then(|kib| kib.parse().ok())
        .context("no VmHWM line in /proc/<pid>/status")?;
    check!(
        peak_kib < mib << 10,
        "the runtime's peak resident memory was {} MiB, more than {mib} MiB",
        peak_kib >> 10
    );
    Ok(())
}
