//! `cargo xtask certify`: build the reference runtime (unless another runtime is given), run
//! the kit through `cargo run -p conformance` so the kit is built too, and point at the report.

use std::path::PathBuf;
use std::process::{Command, ExitCode};

use anyhow::Context;

#[derive(clap::Args)]
pub(crate) struct Args {
    /// The runtime command to certify (default: the freshly built reference agent-runtime).
    #[arg(long, value_name = "COMMAND")]
    runtime: Option<String>,
    /// Cucumber tag expression selecting scenarios.
    #[arg(long, value_name = "EXPR")]
    tags: Option<String>,
    /// Regex on scenario names (with --tags, both must match).
    #[arg(long, value_name = "REGEX")]
    name: Option<String>,
    /// The i-th of n deterministic, disjoint parts of the selection, e.g. `2/4`.
    #[arg(long, value_name = "I/N")]
    shard: Option<String>,
    /// Stop at the first failing scenario.
    #[arg(long)]
    fail_fast: bool,
    /// Scenarios run at once (each has its own runtime process and fakes).
    #[arg(long, value_name = "N")]
    concurrency: Option<u16>,
    /// Known failures (see the kit's `--baseline`); a relative path is taken from the current
    /// directory (options after `--` reach the kit unchanged, relative to the workspace root).
    #[arg(long, value_name = "FILE")]
    baseline: Option<PathBuf>,
    /// What the runtime declares (see the kit's `--manifest`); default: the reference
    /// runtime's `conformance/manifests/reference.toml` when certifying it, the kit's
    /// built-in default (core + interop over stdio, no knob) for another `--runtime`.
    #[arg(long, value_name = "FILE")]
    manifest: Option<PathBuf>,
    /// Where the reports go (default: target/conformance-report).
    #[arg(long, value_name = "DIR")]
    report_dir: Option<PathBuf>,
    /// Further options for the conformance binary (after `--`), e.g. `-- --concurrency 8`,
    /// `-- --baseline known-failures.toml`, `-- --transport socket`.
    #[arg(last = true)]
    rest: Vec<String>,
}

pub(crate) fn cargo() -> Command {
    Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned()))
}

pub(crate) fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| crate::workspace_root().join("target"))
}

/// Builds the release reference runtime and returns its path.
pub(crate) fn build_release_runtime() -> anyhow::Result<PathBuf> {
    println!("xtask: building the reference runtime (cargo build --release -p agent-runtime)");
    let status = cargo()
        .current_dir(crate::workspace_root())
        .args(["build", "--release", "-p", "agent-runtime"])
        .status()
        .context("cannot run cargo")?;
    if !status.success() {
        anyhow::bail!("cargo build --release -p agent-runtime failed ({status})");
    }
    Ok(target_dir()
        .join("release")
        .join(format!("agent-runtime{}", std::env::consts::EXE_SUFFIX)))
}

/// Certifies `runtime` (a command line) with the given manifest; `cargo xtask windows` uses it.
pub(crate) fn run_kit(
    runtime: &str,
    manifest: &std::path::Path,
    report_dir: &std::path::Path,
    rest: &[String],
) -> anyhow::Result<bool> {
    certify(Args {
        runtime: Some(quote(runtime)),
        tags: None,
        name: None,
        shard: None,
        fail_fast: false,
        concurrency: None,
        baseline: None,
        manifest: Some(manifest.to_path_buf()),
        report_dir: Some(report_dir.to_path_buf()),
        rest: rest.to_vec(),
    })
}

pub(crate) fn run(args: Args) -> anyhow::Result<ExitCode> {
    Ok(if certify(args)? {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// Whether the runtime is certified.
fn certify(args: Args) -> anyhow::Result<bool> {
    let root = crate::workspace_root();
    let manifest = match (&args.manifest, &args.runtime) {
        (Some(path), _) if path.is_absolute() => Some(path.clone()),
        (Some(path), _) => Some(std::env::current_dir()?.join(path)),
        (None, None) => Some(root.join("conformance/manifests/reference.toml")),
        (None, Some(_)) => None,
    };
    let runtime = match args.runtime {
        Some(runtime) => runtime,
        None => {
            println!("xtask: building the reference runtime (cargo build -p agent-runtime)");
            let status = cargo()
                .current_dir(&root)
                .args(["build", "-p", "agent-runtime"])
                .status()
                .context("cannot run cargo")?;
            if !status.success() {
                anyhow::bail!("cargo build -p agent-runtime failed ({status})");
            }
            let binary = target_dir()
                .join("debug")
                .join(format!("agent-runtime{}", std::env::consts::EXE_SUFFIX));
            quote(&binary.display().to_string())
        }
    };
    let report_dir = args
        .report_dir
        .unwrap_or_else(|| target_dir().join("conformance-report"));
    let report_dir = if report_dir.is_absolute() {
        report_dir
    } else {
        std::env::current_dir()?.join(report_dir)
    };

    let mut command = cargo();
    command
        .current_dir(&root)
        .args(["run", "--quiet", "-p", "conformance", "--"])
        .arg("--runtime")
        .arg(&runtime)
        .arg("--report-dir")
        .arg(&report_dir);
    if let Some(manifest) = &manifest {
        command.arg("--manifest").arg(manifest);
    }
    if let Some(tags) = &args.tags {
        command.arg("--tags").arg(tags);
    }
    if let Some(name) = &args.name {
        command.arg("--name").arg(name);
    }
    if let Some(shard) = &args.shard {
        command.arg("--shard").arg(shard);
    }
    if args.fail_fast {
        command.arg("--fail-fast");
    }
    if let Some(concurrency) = args.concurrency {
        command.arg("--concurrency").arg(concurrency.to_string());
    }
    if let Some(baseline) = &args.baseline {
        let baseline = if baseline.is_absolute() {
            baseline.clone()
        } else {
            std::env::current_dir()?.join(baseline)
        };
        command.arg("--baseline").arg(baseline);
    }
    command.args(&args.rest);
    println!("xtask: certifying `{runtime}`");
    // A kit that fails to build writes no outcome: an old one must not be reported as this
    // run's.
    let outcome_path = report_dir.join("outcome.json");
    let _ = std::fs::remove_file(&outcome_path);
    let status = command.status().context("cannot run the conformance kit")?;

    match std::fs::read_to_string(&outcome_path)
        .ok()
        .and_then(|text| serde_json::from_str::<serde_json::Value>(&text).ok())
    {
        Some(outcome) => print_summary(&outcome),
        None => println!(
            "\nxtask: no outcome was written to {}",
            outcome_path.display()
        ),
    }
    println!(
        "report: {} (and certification.html, manifest.json)",
        report_dir.join("certification.md").display()
    );
    Ok(status.success())
}

fn print_summary(outcome: &serde_json::Value) {
    let passed = outcome.get("passed").and_then(serde_json::Value::as_bool) == Some(true);
    let requirements = outcome
        .get("requirements")
        .and_then(serde_json::Value::as_array)
        .cloned()
        .unwrap_or_default();
    let count = |verdict: &str| {
        requirements
            .iter()
            .filter(|r| r.get("verdict").and_then(serde_json::Value::as_str) == Some(verdict))
            .count()
    };
    let profiles = outcome
        .get("profiles")
        .and_then(serde_json::Value::as_str)
        .unwrap_or("?");
    println!(
        "\nxtask: {} — requirements: {} passed, {} failed, {} not judged, {} not applicable, {} not run, {} without scenario; {} warning(s)",
        if passed {
            format!("CERTIFIED {profiles}")
        } else {
            format!("NOT CERTIFIED ({profiles})")
        },
        count("passed"),
        count("failed"),
        count("blocked"),
        count("notApplicable"),
        count("notRun") + count("notObserved"),
        count("uncovered"),
        outcome
            .get("warnings")
            .and_then(serde_json::Value::as_u64)
            .unwrap_or(0)
    );
    if let Some(baseline) = outcome.get("baseline") {
        let len = |key: &str| {
            baseline
                .get(key)
                .and_then(serde_json::Value::as_array)
                .map_or(0, Vec::len)
        };
        println!(
            "xtask: baseline {}: {} known failure(s), {} new failure(s), {} stale entr(y/ies)",
            baseline
                .get("file")
                .and_then(serde_json::Value::as_str)
                .unwrap_or("?"),
            len("knownFailures"),
            len("newFailures"),
            len("stale")
        );
        for stale in baseline
            .get("stale")
            .and_then(serde_json::Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default()
        {
            let name = stale
                .get("id")
                .or_else(|| stale.get("scenario"))
                .and_then(serde_json::Value::as_str)
                .unwrap_or("?");
            println!("xtask:   stale (now passes, remove it): {name}");
        }
    }
}

/// Quotes a path for the kit's shell-words splitting.
pub(crate) fn quote(path: &str) -> String {
    if path
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "/._-+:".contains(c))
    {
        path.to_owned()
    } else {
        format!("'{}'", path.replace('\'', r"'\''"))
    }
}
