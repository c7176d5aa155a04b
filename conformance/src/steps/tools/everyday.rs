//! Steps for everyday developer commands under the runtime (INTEROP.md §10): a command the
//! real services' default policy allows must behave inside the runtime as it does on the
//! machine. The kit runs the same command itself first, in a copy of the scenario's
//! workspace with the same home folder, and the runtime's result must show the same exit
//! code and output. A command the machine cannot run outside the runtime either (no `cc`,
//! say) makes the scenario not applicable rather than vacuous.

use anyhow::Context as _;
use cucumber::{given, then};
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::steps::support::StepResult;
use crate::steps::support::policy::grant;
use crate::steps::tools::succeeded_result;
use crate::world::ConformanceWorld;

/// The file (beside the workspace) holding what the kit's own run printed.
const OUTSIDE_RUN: &str = "outside-run.json";

#[derive(Debug, Serialize, Deserialize)]
struct OutsideRun {
    command: String,
    code: i32,
    stdout: String,
    stderr: String,
}

/// The real Policy Service's default (INTEROP.md §5, §10): reads and writes in the project
/// folder, `.env` and `.git/config` blocked for the file tools, `.git/` blocked for writes
/// unless `git_writable`, and the named commands.
async fn real_default(
    world: &mut ConformanceWorld,
    commands: &str,
    git_writable: bool,
) -> anyhow::Result<()> {
    let commands: Vec<&str> = commands.split(',').map(str::trim).collect();
    grant(
        world,
        "File.Read",
        json!({"allowedPaths": ["."], "blockedPaths": [".env", ".git/config"]}),
    )
    .await?;
    let write_blocked: Vec<&str> = if git_writable { vec![] } else { vec![".git/"] };
    grant(
        world,
        "File.Write",
        json!({"allowedPaths": ["."], "blockedPaths": write_blocked}),
    )
    .await?;
    grant(world, "Shell.Exec", json!({"allowedCommands": commands})).await?;
    Ok(())
}

#[given(expr = "the policy is the real services' default with the commands {string}")]
async fn default_policy(world: &mut ConformanceWorld, commands: String) -> StepResult {
    real_default(world, &commands, false).await?;
    Ok(())
}

#[given(
    expr = "the policy is the real services' default with .git writable and the commands {string}"
)]
async fn default_policy_git_writable(world: &mut ConformanceWorld, commands: String) -> StepResult {
    real_default(world, &commands, true).await?;
    Ok(())
}

/// The machine's Rust toolchain as the user has it: the kit gives the runtime a home folder
/// of its own, so rustup's and cargo's homes are named (the kit's own, else under its home
/// folder), for the runtime and for the kit's own run alike.
#[given("the runtime and the kit use the machine's Rust toolchain")]
async fn rust_toolchain(world: &mut ConformanceWorld) -> StepResult {
    let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
    for (name, folder) in [("RUSTUP_HOME", ".rustup"), ("CARGO_HOME", ".cargo")] {
        let value = std::env::var_os(name)
            .map(std::path::PathBuf::from)
            .or_else(|| home.as_ref().map(|home| home.join(folder)))
            .filter(|path| path.is_dir());
        let Some(value) = value else {
            return Err(anyhow::anyhow!(
                "{} this machine has no {name} (no Rust toolchain installed with rustup)",
                crate::runtime_manifest::NOT_APPLICABLE
            )
            .into());
        };
        world.set_runtime_env(name, &value.display().to_string())?;
    }
    // The build's output in the project, as a developer's cargo puts it (not wherever the
    // kit's own build goes).
    world.set_runtime_env("CARGO_TARGET_DIR", "target")?;
    Ok(())
}

#[given(expr = "the kit has run {string} itself in a copy of the workspace")]
async fn run_outside(world: &mut ConformanceWorld, command: String) -> StepResult {
    world.require_scenario_shell()?;
    // What the scenario set for the runtime's environment holds for the kit's run too.
    let overrides: Vec<(String, String)> = world
        .runtime_env_overrides()
        .iter()
        .map(|(name, value)| (name.clone(), value.clone()))
        .collect();
    let dirs = world.dirs()?;
    let root = dirs
        .workspace
        .parent()
        .context("the workspace has no parent folder")?
        .to_path_buf();
    let twin = root.join("twin");
    let copied = tokio::process::Command::new("cp")
        .arg("-a")
        .arg(&dirs.workspace)
        .arg(&twin)
        .status()
        .await
        .context("cannot copy the workspace (cp)")?;
    if !copied.success() {
        return Err(anyhow::anyhow!("cp -a of the workspace failed").into());
    }
    let output = tokio::process::Command::new("sh")
        .arg("-c")
        .arg(&command)
        .current_dir(&twin)
        .envs(overrides)
        .env("HOME", &dirs.home)
        .stdin(std::process::Stdio::null())
        .output()
        .await
        .context("cannot run sh")?;
    // Paths the command prints name the copy; the runtime's run names the workspace.
    let (twin_text, workspace_text) = (
        twin.display().to_string(),
        dirs.workspace.display().to_string(),
    );
    let text = |bytes: &[u8]| {
        String::from_utf8_lossy(bytes)
            .replace("\r\n", "\n")
            .replace(&twin_text, &workspace_text)
    };
    let run = OutsideRun {
        command,
        code: output.status.code().unwrap_or(-1),
        stdout: text(&output.stdout),
        stderr: text(&output.stderr),
    };
    std::fs::write(root.join(OUTSIDE_RUN), serde_json::to_vec(&run)?)?;
    Ok(())
}

/// The exit code and stdout section of a RunCommand result (local-tool-runtime.md §4.4).
fn exit_and_stdout(result: &str) -> Option<(i32, String)> {
    let rest = result.strip_prefix("Exit code: ")?;
    let (code, rest) = rest.split_once('\n')?;
    let code = code.split_whitespace().next()?.parse().ok()?;
    let rest = rest.strip_prefix("--- stdout ---\n")?;
    let (stdout, _) = rest.split_once("--- stderr ---\n")?;
    Some((code, stdout.to_owned()))
}

#[then("the command's exit code and output are those the kit saw outside the runtime")]
async fn same_as_outside(world: &mut ConformanceWorld) -> StepResult {
    let root = world
        .dirs()?
        .workspace
        .parent()
        .context("the workspace has no parent folder")?
        .to_path_buf();
    let run: OutsideRun = serde_json::from_slice(
        &std::fs::read(root.join(OUTSIDE_RUN))
            .context("the kit has not run the command itself (a Given step is missing)")?,
    )?;
    if run.code != 0 {
        return Err(anyhow::anyhow!(
            "{} this machine does not run {:?} outside the runtime either (exit {}: {})",
            crate::runtime_manifest::NOT_APPLICABLE,
            run.command,
            run.code,
            run.stderr.trim()
        )
        .into());
    }
    let result = succeeded_result(world).await?;
    let (code, stdout) = exit_and_stdout(&result)
        .with_context(|| format!("the result is not in the §4.4 layout: {result:?}"))?;
    check!(
        code == run.code && stdout == run.stdout,
        "{:?} behaves differently inside the runtime: exit {code} and stdout {stdout:?}, where the machine gives exit {} and stdout {:?}; the whole result: {result:?}",
        run.command,
        run.code,
        run.stdout
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_exit_code_and_stdout_are_read_from_the_layout() {
        let result = "Exit code: 2\n--- stdout ---\na\nb\n--- stderr ---\noops\n";
        assert_eq!(exit_and_stdout(result), Some((2, "a\nb\n".to_owned())));
        assert_eq!(
            exit_and_stdout(
                "Exit code: 130 (terminated by signal 2)\n--- stdout ---\n--- stderr ---\n"
            ),
            Some((130, String::new()))
        );
        assert_eq!(exit_and_stdout("nonsense"), None);
    }
}
