//! What a team adopting the kit runs besides a certification: `conformance init` (a starter
//! runtime manifest), `conformance baseline --write FILE` (today's failures as a baseline, so
//! the gate is green on day one and only shrinks), `conformance diff OLD NEW` (what a change
//! fixed or broke, for a pull request) and `conformance matrix REPORT…` (requirement ×
//! runtime on one page). Each reads the reports a run writes (`outcome.json`,
//! `manifest.json`) through [`record`], so they work on reports from any machine.

pub mod baseline_file;
pub mod diff;
pub mod init;
pub mod matrix;
pub mod record;

use std::path::PathBuf;

use clap::Parser;

/// `conformance baseline --write FILE`: from a report (`--from`) or from a run made now with
/// the usual options.
#[derive(Debug, Parser)]
#[command(name = "conformance baseline", version = crate::builtin::VERSION)]
pub struct BaselineCli {
    /// The baseline file to write (TOML `[[known_failure]]` entries).
    #[arg(long, value_name = "FILE")]
    pub write: PathBuf,

    /// Take the failures of this report (`outcome.json` or its directory) instead of
    /// running the kit now.
    #[arg(long, value_name = "REPORT")]
    pub from: Option<PathBuf>,

    #[command(flatten)]
    pub run: crate::cli::Cli,
}

/// `conformance init`: a starter runtime manifest.
#[derive(Debug, Parser)]
#[command(name = "conformance init", version = crate::builtin::VERSION)]
pub struct InitCli {
    /// The runtime's name, as reports show it.
    #[arg(long, default_value = "my-runtime")]
    pub name: String,

    /// Where to write the manifest.
    #[arg(long, value_name = "FILE", default_value = "conformance.toml")]
    pub output: PathBuf,

    /// Overwrite an existing file.
    #[arg(long)]
    pub force: bool,
}

/// `conformance diff OLD NEW`: what changed between two runs.
#[derive(Debug, Parser)]
#[command(name = "conformance diff", version = crate::builtin::VERSION)]
pub struct DiffCli {
    /// The earlier run's `outcome.json` (or its report directory).
    pub old: PathBuf,
    /// The later run's `outcome.json` (or its report directory).
    pub new: PathBuf,
    /// Also write the Markdown here (e.g. for a pull-request comment).
    #[arg(long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

/// `conformance matrix REPORT…`: requirement × runtime on one page.
#[derive(Debug, Parser)]
#[command(name = "conformance matrix", version = crate::builtin::VERSION)]
pub struct MatrixCli {
    /// Reports (`outcome.json` or report directories), one column each.
    #[arg(required = true, value_name = "REPORT")]
    pub reports: Vec<PathBuf>,
    /// The page to write.
    #[arg(long, value_name = "FILE", default_value = "conformance-matrix.html")]
    pub output: PathBuf,
}
