//! `cargo xtask bench-search`: GrepFiles and FindFiles against `rg` and `fd` on one
//! generated tree (`runtime/tools/benches/search.rs`), and the ratio of each pair's medians
//! from that one run. The goal the coding tools are held to: within 2× of the commands.

use std::path::Path;
use std::process::{ExitCode, Stdio};

use anyhow::{Context, bail};
use serde_json::Value;

use crate::certify::{cargo, target_dir};

#[derive(clap::Args)]
pub(crate) struct Args {
    /// Files in the generated tree (generated once under the target dir, then reused).
    #[arg(long, default_value_t = 100_000)]
    files: usize,
    /// A short smoke run: short warm-up and measurement.
    #[arg(long)]
    quick: bool,
}

/// The pairs compared: the tool, the command.
const PAIRS: [(&str, &str); 2] = [("GrepFiles", "rg"), ("FindFiles", "fd")];

/// The goal: a tool's median at most this many times the command's.
const GOAL: f64 = 2.0;

pub(crate) fn run(args: Args) -> anyhow::Result<ExitCode> {
    let root = crate::workspace_root();
    println!(
        "xtask: cargo bench -p agent-tools --bench search on {} files",
        args.files
    );
    let mut bench = cargo();
    bench
        .current_dir(&root)
        .env("SEARCH_BENCH_FILES", args.files.to_string())
        .args(["bench", "-p", "agent-tools", "--bench", "search", "--"]);
    if args.quick {
        bench.args(["--warm-up-time", "0.2", "--measurement-time", "1"]);
    }
    let status = bench
        .stdout(Stdio::inherit())
        .status()
        .context("cannot run cargo bench")?;
    if !status.success() {
        bail!("cargo bench failed ({status})");
    }
    let group = target_dir()
        .join("criterion")
        .join(format!("search_{}", args.files));
    let report = report(&group, args.files)?;
    print!("{report}");
    let path = target_dir().join("bench-search.md");
    std::fs::write(&path, &report).with_context(|| format!("cannot write {}", path.display()))?;
    println!("xtask: report written to {}", path.display());
    Ok(ExitCode::SUCCESS)
}

/// Criterion's median of one benchmark of the group, in nanoseconds.
fn median(group: &Path, name: &str) -> Option<f64> {
    let text = std::fs::read(group.join(name).join("new").join("estimates.json")).ok()?;
    let estimates: Value = serde_json::from_slice(&text).ok()?;
    estimates.pointer("/median/point_estimate")?.as_f64()
}

fn report(group: &Path, files: usize) -> anyhow::Result<String> {
    let mut text = format!(
        "## Search tools against rg and fd ({files} files, one run)\n\n\
         | tool | median | command | median | ratio | within {GOAL}× |\n|---|---|---|---|---|---|\n"
    );
    for (tool, command) in PAIRS {
        let ours = median(group, tool)
            .with_context(|| format!("no estimate for {tool} in {}", group.display()))?;
        let row = match median(group, command) {
            Some(theirs) => {
                let ratio = ours / theirs;
                format!(
                    "| {tool} | {:.1} ms | {command} | {:.1} ms | {ratio:.2} | {} |\n",
                    ours / 1e6,
                    theirs / 1e6,
                    if ratio <= GOAL { "yes" } else { "no" }
                )
            }
            None => format!(
                "| {tool} | {:.1} ms | {command} | not installed | | |\n",
                ours / 1e6
            ),
        };
        text.push_str(&row);
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn estimate(group: &Path, name: &str, ns: f64) {
        let dir = group.join(name).join("new");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("estimates.json"),
            serde_json::json!({"median": {"point_estimate": ns}}).to_string(),
        )
        .unwrap();
    }

    #[test]
    fn the_report_gives_each_pair_its_ratio_against_the_goal() {
        let group = tempfile::tempdir().unwrap();
        estimate(group.path(), "GrepFiles", 300e6);
        estimate(group.path(), "rg", 100e6);
        estimate(group.path(), "FindFiles", 150e6);
        estimate(group.path(), "fd", 100e6);
        let text = report(group.path(), 10).unwrap();
        assert!(
            text.contains("| GrepFiles | 300.0 ms | rg | 100.0 ms | 3.00 | no |"),
            "{text}"
        );
        assert!(
            text.contains("| FindFiles | 150.0 ms | fd | 100.0 ms | 1.50 | yes |"),
            "{text}"
        );
        std::fs::remove_dir_all(group.path().join("fd")).unwrap();
        assert!(
            report(group.path(), 10)
                .unwrap()
                .contains("| fd | not installed |")
        );
        std::fs::remove_dir_all(group.path().join("GrepFiles")).unwrap();
        assert!(report(group.path(), 10).is_err());
    }
}
