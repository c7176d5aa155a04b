//! Project chores. `cargo xtask <command>` (alias in .cargo/config.toml):
//!
//! - `certify [--runtime CMD] [--tags EXPR] [--report-dir DIR]`: build what is needed and run
//!   the conformance kit; non-zero exit when the runtime is not certified.
//! - `coverage`: check the requirement catalogue against the feature files' tags, and the
//!   spec walk records (`features/walk/`) against the spec documents' headings.
//! - `new-scenario <REQ-ID>`: scaffold a tagged scenario and show step texts to reuse.
//! - `steps [--grep WORDS]`: the step vocabulary, with one use from `features/` each.
//! - `lint`: undefined or ambiguous steps, untagged or duplicate scenarios, requirements
//!   without a spec reference (and everything `coverage` checks).
//! - `bench [--runtime CMD] [--peer CMD] [--quick]`: whole-process figures (cold start,
//!   memory, per-step overhead, streaming latency; A/B against a peer), criterion
//!   micro-benchmarks, certification wall time. See BENCHMARKS.md.
//! - `crash [--runs N] [--seed S] [--runtime CMD]`: the kit's crash campaign.
//! - `demo [--yes]`: the reference runtime against mock-services with a scripted model,
//!   rendered in the terminal; approvals answered with y/n.
//! - `bench-sandbox [--launcher PATH] [--runs N]`: what the command sandbox adds to starting
//!   a command.
//! - `bench-search [--files N] [--quick]`: GrepFiles and FindFiles against `rg` and `fd` on one
//!   generated tree, with the ratios.
//! - `mutants [--area NAME] [--file GLOB] [--shard I/N] [--tags EXPR] [--in-place] [--iterate]`:
//!   behaviour mutants of the runtime with cargo-mutants, the kit as the test; results in
//!   `target/mutants/`.
//! - `hot-symbols`: re-profile which functions release builds link together.
//! - `workspace-hack [--check]`: regenerate the feature sets that let the kit, the mocks and
//!   xtask reuse the workspace's compiled dependencies.
//! - `windows [--install] [--build-only]`: cross-build for `x86_64-pc-windows-gnu` with
//!   Debian's toolchain, run the agent-tools/agent-host tests and certify the `.exe` under Wine.

// A program: every chore reports to the person running it.
#![allow(clippy::print_stdout, clippy::print_stderr)]

mod bench;
mod certify;
mod coverage;
mod crash;
mod demo;
mod hot_symbols;
mod lint;
mod mutants;
mod new_scenario;
mod steps;
mod vocabulary;
mod walk;
mod windows;
mod workspace_hack;

// The catalogue is the kit's own crate: xtask and the kit read it the same way.
use conformance_catalogue as catalogue;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "xtask",
    about = "Project chores: certify, coverage, lint, steps, new-scenario, bench, bench-sandbox, bench-search, crash, demo, hot-symbols, mutants, workspace-hack"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Certify a runtime with the conformance kit (default: the reference agent-runtime).
    Certify(certify::Args),
    /// Check that every MUST requirement has a scenario and every tag names a requirement.
    Coverage(coverage::Args),
    /// Scaffold a scenario for a requirement and list existing steps with overlapping words.
    NewScenario(new_scenario::Args),
    /// List the step vocabulary (every step definition) with one example use each.
    Steps(steps::Args),
    /// Reject undefined/ambiguous steps, untagged or duplicate scenarios, bad spec references.
    Lint(lint::Args),
    /// Benchmarks: whole-process figures (A/B with --peer), micro-benchmarks, certification time.
    Bench(bench::Args),
    /// What the command sandbox adds to a command's spawn → exit, A/B.
    BenchSandbox(bench::sandbox::Args),
    /// GrepFiles and FindFiles against rg and fd on one generated tree, with the ratios.
    BenchSearch(bench::search::Args),
    /// Crash campaign: SIGKILL at random moments of a task, resume in a new process, check.
    Crash(crash::Args),
    /// Try the reference runtime by hand against mock-services with a scripted model.
    Demo(demo::Args),
    /// Regenerate runtime/cli/hot-symbols.txt (the functions release builds link together).
    HotSymbols(hot_symbols::Args),
    /// Cross-build for Windows, run the tool/host tests and certify the `.exe` under Wine.
    Windows(windows::Args),
    /// Behaviour mutants of the runtime (cargo-mutants) with the kit as the test; not in CI.
    Mutants(mutants::Args),
    /// Regenerate conformance/workspace-hack's feature sets (one compilation for every command).
    WorkspaceHack(workspace_hack::Args),
}

/// The workspace root (this crate lives in `<root>/xtask`).
pub fn workspace_root() -> PathBuf {
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    manifest.parent().map(PathBuf::from).unwrap_or(manifest)
}

pub fn features_dir() -> PathBuf {
    workspace_root().join("features")
}

/// The spec documents (`../shared/spec` next to the repository), which the walk records of
/// `features/walk/` are checked against.
pub fn spec_dir() -> PathBuf {
    let root = workspace_root();
    root.parent().unwrap_or(&root).join("shared/spec")
}

/// Where the kit's step definitions live.
pub fn steps_dir() -> PathBuf {
    workspace_root().join("conformance/src/steps")
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Certify(args) => certify::run(args),
        Command::Coverage(args) => coverage::run(args),
        Command::NewScenario(args) => new_scenario::run(args),
        Command::Steps(args) => steps::run(args),
        Command::Lint(args) => lint::run(args),
        Command::Bench(args) => bench::run(args),
        Command::BenchSandbox(args) => bench::sandbox::run(args),
        Command::BenchSearch(args) => bench::search::run(args),
        Command::Crash(args) => crash::run(args),
        Command::Demo(args) => demo::run(args),
        Command::HotSymbols(args) => hot_symbols::run(args),
        Command::Windows(args) => windows::run(args),
        Command::WorkspaceHack(args) => workspace_hack::run(&args),
        Command::Mutants(args) => mutants::run(args),
    };
    match result {
        Ok(code) => code,
        Err(error) => {
            eprintln!("xtask: {error:#}");
            ExitCode::from(2)
        }
    }
}
