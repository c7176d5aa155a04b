//! `cargo xtask bench-sandbox`: what the command sandbox adds to a command.
//! A RunCommand spawns its shell either directly (unsandboxed) or through the launcher
//! (`agent-runtime --sandbox-exec <plan> -- sh -c …`); everything else on the call's path is
//! the same, so the two spawn → exit times, alternated run by run so load hits both, are the
//! figure. The plan is the one a default Shell.Exec grant yields on this machine: the
//! workspace and a private temporary folder writable, `.git`'s config and hooks read-only,
//! the credential stores of the home folder hidden, the tool caches behind private layers,
//! no network — once in namespaces of its own (the full sandbox), once with Landlock and
//! seccomp alone (the fallback where user namespaces are refused).

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::Instant;

use anyhow::{Context, bail};

use super::stats::{percentile, sorted};

#[derive(clap::Args)]
pub(crate) struct Args {
    /// The agent-runtime binary to use as the launcher (default: the release build, else the
    /// debug build, of this checkout's target directory).
    #[arg(long)]
    launcher: Option<PathBuf>,
    /// Runs of each side.
    #[arg(long, default_value_t = 200)]
    runs: usize,
}

fn launcher(args: &Args) -> anyhow::Result<PathBuf> {
    if let Some(path) = &args.launcher {
        return Ok(path.clone());
    }
    let target = crate::certify::target_dir();
    ["release", "debug"]
        .iter()
        .map(|profile| target.join(profile).join("agent-runtime"))
        .find(|path| path.is_file())
        .context("no agent-runtime binary: cargo build --release -p agent-runtime first")
}

fn timed(command: &mut Command) -> anyhow::Result<f64> {
    let started = Instant::now();
    let status = command
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()?;
    let millis = started.elapsed().as_secs_f64() * 1000.0;
    if !status.success() {
        bail!("{command:?} failed: {status}");
    }
    Ok(millis)
}

fn plan(workspace: &Path, tmp: &Path, namespaces: bool) -> String {
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let under_home = |names: &[&str]| -> Vec<PathBuf> {
        home.iter()
            .flat_map(|home| names.iter().map(move |name| home.join(name)))
            .collect()
    };
    serde_json::json!({
        "write": [workspace, tmp],
        "read_only": [workspace.join(".git/config"), workspace.join(".git/hooks")],
        "hidden": under_home(&[".ssh", ".aws", ".gnupg", ".netrc", ".git-credentials", ".config/gh"]),
        "caches": under_home(&[".cargo", ".rustup", ".npm", ".cache", ".pyenv"]),
        "tmp": tmp,
        "network": false,
        "required": namespaces,
        "namespaces": namespaces,
    })
    .to_string()
}

pub(crate) fn run(args: Args) -> anyhow::Result<ExitCode> {
    let launcher = launcher(&args)?;
    let root = tempfile::tempdir()?;
    let workspace = root.path().join("workspace");
    let tmp = root.path().join("tmp");
    std::fs::create_dir_all(workspace.join(".git"))?;
    std::fs::create_dir_all(&tmp)?;
    std::fs::write(workspace.join(".git/config"), "[core]\n")?;
    let full = plan(&workspace, &tmp, true);
    let wall = plan(&workspace, &tmp, false);
    let plain = || {
        let mut command = Command::new("/bin/sh");
        command.args(["-c", "true"]).current_dir(&workspace);
        command
    };
    let sandboxed = |plan: &str| {
        let mut command = Command::new(&launcher);
        command
            .args(["--sandbox-exec", plan, "--", "/bin/sh", "-c", "true"])
            .current_dir(&workspace);
        command
    };
    // The sandboxed side must really be confined, or the figure means nothing.
    let mut probe = Command::new(&launcher);
    probe
        .args([
            "--sandbox-exec",
            &full,
            "--",
            "/bin/sh",
            "-c",
            "echo x >> .git/config",
        ])
        .current_dir(&workspace);
    if timed(&mut probe).is_ok()
        || std::fs::read_to_string(workspace.join(".git/config"))? != "[core]\n"
    {
        bail!("the launcher did not confine the command: this machine cannot sandbox");
    }
    let (mut a, mut b, mut c, mut added, mut added_wall) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for run in 0..args.runs {
        let (x, y, z) = if run % 2 == 0 {
            let x = timed(&mut plain())?;
            let y = timed(&mut sandboxed(&full))?;
            (x, y, timed(&mut sandboxed(&wall))?)
        } else {
            let z = timed(&mut sandboxed(&wall))?;
            let y = timed(&mut sandboxed(&full))?;
            (timed(&mut plain())?, y, z)
        };
        a.push(x);
        b.push(y);
        c.push(z);
        added.push(y - x);
        added_wall.push(z - x);
    }
    let row = |name: &str, values: &[f64]| {
        let sorted = sorted(values);
        let at = |p| percentile(&sorted, p).unwrap_or(f64::NAN);
        format!(
            "| {name} | {:.2} | {:.2} | {:.2} |",
            at(50.0),
            at(90.0),
            at(100.0)
        )
    };
    println!(
        "launcher: {}, {} runs each, alternating\n",
        launcher.display(),
        args.runs
    );
    println!("| spawn → exit of `sh -c true`, ms | median | p90 | max |");
    println!("|---|---|---|---|");
    println!("{}", row("unsandboxed", &a));
    println!(
        "{}",
        row("sandboxed: namespaces, mount view, Landlock, seccomp", &b)
    );
    println!("{}", row("added (paired difference)", &added));
    println!("{}", row("fallback: Landlock and seccomp alone", &c));
    println!(
        "{}",
        row("added by the fallback (paired difference)", &added_wall)
    );
    Ok(ExitCode::SUCCESS)
}
