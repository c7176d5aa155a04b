//! `cargo xtask bench`: the speed figures that live in benchmarks, never in timed tests.
//!
//! 1. Whole-process figures of a runtime (the release reference runtime unless `--runtime`)
//!    against the fakes, and — with `--peer` — of another runtime, in alternating A/B runs:
//!    cold start, spawn → CreateSession, peak RSS, per-step overhead (with the checkpoint
//!    fsync on its own line), streaming latency chunk → `text_chunk` (`report`).
//! 2. Criterion micro-benchmarks of the agent host's hot paths (`micro`).
//! 3. The wall time of a full certification (last; `--no-certify` skips it).
//!
//! Results go to `target/bench-report.md`; `BENCHMARKS.md` explains the method and keeps the
//! latest full run. `--quick` is a smoke run: few samples, short measurements.

mod gateway;
mod machine;
mod memory;
mod micro;
mod process;
mod process_figures;
mod report;
pub(crate) mod sandbox;
pub(crate) mod search;
mod stats;

use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, bail};

use crate::certify::{cargo, target_dir};
use process::RuntimeCommand;

#[derive(clap::Args)]
pub(crate) struct Args {
    /// The runtime command to measure (default: the release reference runtime, built first).
    #[arg(long)]
    runtime: Option<String>,
    /// A second runtime command measured the same way, run by run alternating with the first.
    #[arg(long)]
    peer: Option<String>,
    /// A short smoke run: few samples, short measurements.
    #[arg(long)]
    quick: bool,
    /// Skip the criterion micro-benchmarks.
    #[arg(long)]
    no_micro: bool,
    /// Skip the full certification's wall time.
    #[arg(long)]
    no_certify: bool,
    /// Bound on every wait for the runtime, in seconds.
    #[arg(long, default_value_t = 60)]
    timeout_secs: u64,
    /// Measure one group of whole-process figures only (the others' rows stay empty).
    #[arg(long, value_enum)]
    only: Option<Group>,
    /// Only report where the resident memory is (by part, from /proc/PID/smaps) after
    /// CreateSession and after a task of this many ReadFile calls (Linux).
    #[arg(long, value_name = "CALLS")]
    memory_parts: Option<usize>,
}

/// The groups of whole-process figures, for `--only`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Group {
    /// Cold start and CreateSession: time and peak RSS.
    Start,
    /// Per-step overhead, with and without the checkpoint fsync.
    Steps,
    /// The long session's and the 1-step task's peak RSS.
    Memory,
    /// Streaming latency.
    Stream,
}

/// How many samples of each whole-process figure.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Plan {
    pub cold_starts: usize,
    pub create_sessions: usize,
    pub step_runs: usize,
    pub steps: usize,
    pub memory_runs: usize,
    /// ReadFile steps of the long session: two messages each, ≈ 1 000 messages at 500.
    pub memory_steps: usize,
    pub stream_runs: usize,
    pub chunks: usize,
}

impl Plan {
    /// This plan with only `group`'s samples taken.
    pub(crate) fn only(self, group: Group) -> Plan {
        let keep = |wanted: Group, n: usize| if wanted == group { n } else { 0 };
        Plan {
            cold_starts: keep(Group::Start, self.cold_starts),
            create_sessions: keep(Group::Start, self.create_sessions),
            step_runs: keep(Group::Steps, self.step_runs),
            memory_runs: keep(Group::Memory, self.memory_runs),
            stream_runs: keep(Group::Stream, self.stream_runs),
            ..self
        }
    }

    pub(crate) const FULL: Plan = Plan {
        cold_starts: 30,
        create_sessions: 30,
        step_runs: 5,
        steps: 100,
        memory_runs: 3,
        memory_steps: 500,
        stream_runs: 3,
        chunks: 10_000,
    };
    pub(crate) const QUICK: Plan = Plan {
        cold_starts: 3,
        create_sessions: 3,
        step_runs: 1,
        steps: 10,
        memory_runs: 1,
        memory_steps: 20,
        stream_runs: 1,
        chunks: 200,
    };
}

pub(crate) fn run(args: Args) -> anyhow::Result<ExitCode> {
    let root = crate::workspace_root();
    // The runtime is built on its own, as the desktop app ships it: built together with the
    // kit, its dependencies would get the kit's features too — another binary, whose
    // symbols `hot-symbols.txt` does not name.
    if args.runtime.is_none() || (!args.no_certify && args.memory_parts.is_none()) {
        crate::certify::build_release_runtime()?;
    }
    if !args.no_certify && args.memory_parts.is_none() {
        println!("xtask: building the release kit");
        let status = cargo()
            .current_dir(&root)
            .args(["build", "--release", "-p", "conformance"])
            .status()
            .context("cannot run cargo")?;
        if !status.success() {
            bail!("the release build of the kit failed ({status})");
        }
    }
    let reference = target_dir()
        .join("release")
        .join(format!("agent-runtime{}", std::env::consts::EXE_SUFFIX));
    let a = match &args.runtime {
        Some(line) => RuntimeCommand::parse(line)?,
        None => RuntimeCommand {
            program: reference,
            args: Vec::new(),
        },
    };
    let b = args
        .peer
        .as_deref()
        .map(RuntimeCommand::parse)
        .transpose()?;
    let plan = if args.quick { Plan::QUICK } else { Plan::FULL };
    let plan = args.only.map_or(plan, |group| plan.only(group));
    let timeout = Duration::from_secs(args.timeout_secs);
    if let Some(calls) = args.memory_parts {
        let text = memory::report(&a, calls, timeout)?;
        println!("{text}");
        return Ok(ExitCode::SUCCESS);
    }

    let mut text = report::whole_process(&a, b.as_ref(), plan, timeout)?;
    if !args.no_micro {
        text.push_str(&micro::criterion_section(&root, args.quick)?);
    }
    if !args.no_certify {
        // The reference runtime is certified as `cargo xtask certify` does, with its own
        // manifest (its time knobs); another runtime on the kit's defaults.
        let manifest = args
            .runtime
            .is_none()
            .then(|| root.join("conformance/manifests/reference.toml"));
        text.push_str(&micro::certification_section(
            &root,
            &a.display(),
            manifest.as_deref(),
        )?);
    }
    let path = target_dir().join("bench-report.md");
    std::fs::write(&path, &text).with_context(|| format!("cannot write {}", path.display()))?;
    println!("{text}\nreport: {}", path.display());
    Ok(ExitCode::SUCCESS)
}

/// Runs the quick whole-process plan against `runtime_line` and discards the figures: a
/// session's typical work (start, CreateSession, steps, streaming) for a profiler wrapped
/// around the runtime (`cargo xtask hot-symbols`).
pub(crate) fn exercise(runtime_line: &str, timeout: Duration) -> anyhow::Result<()> {
    let command = RuntimeCommand::parse(runtime_line)?;
    // A long session well past the 50 messages a request may carry, so the context
    // window's cutting runs too, and whatever else only a long session reaches.
    let plan = Plan {
        memory_steps: 150,
        ..Plan::QUICK
    };
    report::whole_process(&command, None, plan, timeout).map(drop)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The bench machinery end to end against the debug runtime, as a smoke run: every
    /// figure must be in the report. No timing is asserted.
    #[test]
    fn quick_whole_process_run_reports_every_figure() {
        let root = crate::workspace_root();
        let status = cargo()
            .current_dir(&root)
            .args(["build", "-p", "agent-runtime"])
            .status()
            .unwrap_or_else(|error| panic!("cannot run cargo: {error}"));
        assert!(status.success(), "building the debug runtime failed");
        let runtime = RuntimeCommand {
            program: target_dir()
                .join("debug")
                .join(format!("agent-runtime{}", std::env::consts::EXE_SUFFIX)),
            args: Vec::new(),
        };
        let plan = Plan {
            cold_starts: 2,
            create_sessions: 2,
            step_runs: 1,
            steps: 5,
            memory_runs: 1,
            memory_steps: 8,
            stream_runs: 1,
            chunks: 50,
        };
        let text = report::whole_process(&runtime, Some(&runtime), plan, Duration::from_secs(30))
            .unwrap_or_else(|error| panic!("the bench failed: {error:#}"));
        for figure in [
            "| CPU |",
            "spawn → GetSessionState answered",
            "spawn → CreateSession answered",
            "per step, runtime time excluding the fake gateway",
            "checkpoint fsync per step",
            "text_chunk latency p50",
            "text_chunk latency p99",
        ] {
            let row = text
                .lines()
                .find(|line| line.contains(figure))
                .unwrap_or_else(|| panic!("no row for {figure:?} in\n{text}"));
            if figure == "| CPU |" {
                continue;
            }
            // A's and B's medians must be measured; the A/B ratio may be n/a when both
            // are 0 (a fast disk makes the fsync difference vanish in a 5-step run).
            let cells: Vec<&str> = row.split('|').map(str::trim).collect();
            for cell in [cells[3], cells[5]] {
                assert!(
                    !cell.is_empty() && cell != "n/a",
                    "{figure:?} has no value: {row}"
                );
            }
        }
        // Every measured row carries a value for A, B and the pair-by-pair ratio.
        let latency = text
            .lines()
            .find(|line| line.contains("text_chunk latency p99"))
            .unwrap_or_default();
        let cells: Vec<&str> = latency.split('|').map(str::trim).collect();
        assert_eq!(cells.len(), 9, "{latency}");
        for cell in [cells[3], cells[4], cells[5], cells[6]] {
            assert!(cell.ends_with(" ms"), "{cell:?} in {latency}");
        }
        assert!(cells[7].contains('×'), "{latency}");
    }
}
