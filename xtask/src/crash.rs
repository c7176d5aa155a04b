//! `cargo xtask crash [--runs N] [--seed S] [--runtime CMD]`: the kit's crash campaign
//! (SIGKILL at random moments of a multi-step task, resume in a new process) against the
//! release build of the reference runtime, or any runtime command.

use std::process::ExitCode;

use anyhow::Context;

use crate::certify::{cargo, quote};

#[derive(clap::Args)]
pub(crate) struct Args {
    /// The runtime command (default: the reference agent-runtime, release build).
    #[arg(long, value_name = "COMMAND")]
    runtime: Option<String>,
    #[arg(long, default_value_t = 200)]
    runs: usize,
    #[arg(long, default_value_t = 1)]
    seed: u64,
}

pub(crate) fn run(args: Args) -> anyhow::Result<ExitCode> {
    let root = crate::workspace_root();
    let runtime = match args.runtime {
        Some(runtime) => runtime,
        None => {
            let binary = crate::certify::build_release_runtime()?;
            quote(&binary.display().to_string())
        }
    };
    let status = cargo()
        .current_dir(&root)
        .args([
            "run",
            "--quiet",
            "--release",
            "-p",
            "conformance",
            "--",
            "crash",
        ])
        .arg("--runtime")
        .arg(&runtime)
        .arg("--runs")
        .arg(args.runs.to_string())
        .arg("--seed")
        .arg(args.seed.to_string())
        .status()
        .context("cannot run the conformance kit")?;
    Ok(if status.success() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
