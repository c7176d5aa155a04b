//! RunCommand (local-tool-runtime.md §4.4): output limits and how output is cut, the process
//! tree after a call, and the command form for the runtime's OS.

use anyhow::Context;
use cucumber::{given, then};
use serde_json::{Value, json};

use crate::steps::support::model::explain_tool_failure;
use crate::steps::support::policy::grant;
use crate::steps::support::{StepResult, declares_reference};
use crate::steps::task::wait_task_end;
use crate::steps::tools::succeeded_result;
use crate::world::ConformanceWorld;

#[given(expr = "the policy grants Shell.Exec with at most {int} output bytes")]
async fn shell_output_limit(world: &mut ConformanceWorld, bytes: u64) -> StepResult {
    grant(world, "Shell.Exec", json!({"maxOutputBytes": bytes})).await?;
    Ok(())
}

#[derive(Debug, PartialEq, Eq)]
pub(crate) enum CommandForm {
    /// No `command@windows` key: the arguments go as written.
    Unchanged,
    /// The key was there and is gone; on Windows its value replaced `command`.
    Chosen,
    /// Windows, and the call has a `command` but no `command@windows` form.
    PosixOnly,
}

/// A scripted call's `command` for the runtime's OS: `command@windows`, when present, is
/// the cmd.exe form of the POSIX `command` (taken on Windows, dropped elsewhere).
pub(crate) fn command_for_os(
    arguments: &mut Value,
    os: crate::runtime_manifest::RuntimeOs,
) -> CommandForm {
    let Some(object) = arguments.as_object_mut() else {
        return CommandForm::Unchanged;
    };
    let windows = object.remove("command@windows");
    let is_windows = os == crate::runtime_manifest::RuntimeOs::Windows;
    match windows {
        Some(form) if is_windows => {
            object.insert("command".to_owned(), form);
            CommandForm::Chosen
        }
        Some(_) => CommandForm::Chosen,
        None if is_windows && object.contains_key("command") => CommandForm::PosixOnly,
        None => CommandForm::Unchanged,
    }
}

#[then(expr = "the processes listed in the workspace file {string} are no longer running")]
async fn processes_gone(world: &mut ConformanceWorld, name: String) -> StepResult {
    wait_task_end(world).await?;
    if world.runtime_os() == crate::runtime_manifest::RuntimeOs::Windows {
        Err(anyhow::anyhow!(
            "{} the kit looks processes up with ps on its own machine, where a Windows runtime's process tree has no pids to find (the command's Windows form lists none)",
            crate::runtime_manifest::NOT_APPLICABLE
        ))?;
    }
    let path = world.dirs()?.workspace.join(&name);
    let listed = match std::fs::read_to_string(&path) {
        Ok(listed) => listed,
        Err(error) => {
            let failure = anyhow::anyhow!("the command did not write {}: {error}", path.display());
            return Err(explain_tool_failure(world, "RunCommand", failure)
                .await
                .into());
        }
    };
    let pids: Vec<&str> = listed.split_whitespace().collect();
    check!(
        pids.len() >= 2,
        "expected at least two pids in {name}: {listed:?}"
    );
    #[cfg(target_os = "linux")]
    let workspace = world.dirs()?.workspace.clone();
    for pid in pids {
        check!(
            pid.bytes().all(|b| b.is_ascii_digit()),
            "{pid:?} is not a pid"
        );
        // A runtime that runs commands in a PID namespace of their own lists pids of that
        // namespace, which name other processes here: only one working in the workspace is
        // the command's (the scan below finds the namespace's survivors).
        #[cfg(target_os = "linux")]
        if !works_in(pid, &workspace) {
            continue;
        }
        // `ps` prints nothing for a process that is gone; a zombie (`Z`) has ended too.
        let probe = tokio::process::Command::new("ps")
            .args(["-o", "stat=", "-p", pid])
            .output();
        let out = tokio::time::timeout(world.timeout(), probe)
            .await
            .context("ps did not answer")?
            .context("cannot run ps")?;
        let stat = String::from_utf8_lossy(&out.stdout).trim().to_owned();
        check!(
            stat.is_empty() || stat.starts_with('Z'),
            "process {pid} of the timed-out command is still running (state {stat})"
        );
    }
    #[cfg(target_os = "linux")]
    {
        let left = working_in(&workspace);
        check!(
            left.is_empty(),
            "processes of the timed-out command are still running in the workspace: pids {left:?}"
        );
    }
    Ok(())
}

/// Whether process `pid` of this machine works in `folder` (its working directory).
#[cfg(target_os = "linux")]
fn works_in(pid: &str, folder: &std::path::Path) -> bool {
    let running = std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| {
            stat.rfind(')')
                .and_then(|end| stat[end + 1..].split_whitespace().next().map(str::to_owned))
        })
        .is_some_and(|state| state != "Z");
    running
        && std::fs::read_link(format!("/proc/{pid}/cwd")).is_ok_and(|cwd| cwd.starts_with(folder))
}

/// The running processes of this machine that work in `folder`.
#[cfg(target_os = "linux")]
fn working_in(folder: &std::path::Path) -> Vec<String> {
    std::fs::read_dir("/proc")
        .map(|entries| {
            entries
                .flatten()
                .filter_map(|entry| entry.file_name().to_str().map(str::to_owned))
                .filter(|name| name.bytes().all(|b| b.is_ascii_digit()))
                .filter(|pid| works_in(pid, folder))
                .collect()
        })
        .unwrap_or_default()
}

#[then(
    expr = "the stdout section is cut to {int} bytes: its first 80% and its last 20% around the truncation marker"
)]
async fn cut_80_20(world: &mut ConformanceWorld, budget: usize) -> StepResult {
    let result = succeeded_result(world).await?;
    if !declares_reference(world)?
        && let Some(head_only) = check_head_only_cut(&result, budget)
    {
        return head_only;
    }
    let stdout = result
        .split_once("--- stdout ---\n")
        .and_then(|(_, rest)| rest.split_once("--- stderr ---\n"))
        .map(|(stdout, _)| stdout)
        .with_context(|| format!("no stdout section in {result:?}"))?;
    check_cut_80_20("stdout section", stdout, budget)
}

/// The other cut the documents describe for command output (local-tool-runtime.md §4.4): the
/// first `budget` bytes of stdout and stderr together, then
/// `[Output truncated — {total} bytes, showing first {limit} bytes]`. `None` when `result`
/// carries no such marker.
pub(crate) fn check_head_only_cut(result: &str, budget: usize) -> Option<StepResult> {
    let marker_at = result.find("[Output truncated")?;
    let shown = result[..marker_at]
        .split_once("--- stdout ---\n")
        .map_or(&result[..marker_at], |(_, rest)| rest)
        .replacen("--- stderr ---\n", "", 1);
    let shown = shown.trim_end_matches('\n').len();
    // A cut may fall a few bytes short (a character or line ending is never split).
    Some(if shown <= budget && shown + 8 >= budget {
        Ok(())
    } else {
        Err(anyhow::anyhow!(
            "with maxOutputBytes {budget}, the output before \"[Output truncated …]\" must be the first {budget} bytes; it is {shown}"
        )
        .into())
    })
}

/// `section` is cut by local-tool-runtime.md §7.1 for `budget` bytes: about 80% of them
/// before the `[... truncated N bytes ...]` marker, about 20% after it.
pub(crate) fn check_cut_80_20(name: &str, section: &str, budget: usize) -> StepResult {
    let stdout = section;
    let marker_at = stdout.find("\n[... truncated ").with_context(|| {
        format!(
            "no truncation marker in the {name}: {}",
            crate::driver::excerpt(stdout)
        )
    })?;
    let after = &stdout[marker_at + 1..];
    let marker_end = after
        .find(" bytes ...]\n")
        .map(|end| end + " bytes ...]\n".len())
        .with_context(|| {
            format!(
                "the marker must read \"[... truncated N bytes ...]\": {}",
                crate::driver::excerpt(after)
            )
        })?;
    let head = &stdout[..marker_at];
    let tail = after[marker_end..].trim_end_matches('\n');
    let (head_share, tail_share) = (budget * 80 / 100, budget * 20 / 100);
    // A cut may fall a few bytes short (a character or line ending is never split).
    let near = |got: usize, share: usize| got <= share && got + 8 >= share;
    check!(
        near(head.len(), head_share) && near(tail.len(), tail_share),
        "with maxOutputBytes {budget}, the head must keep about {head_share} bytes and the tail about {tail_share}; got {} and {}",
        head.len(),
        tail.len()
    );
    Ok(())
}
