//! `cargo xtask bench`: the speed figures that live in benchmarks, never in timed tests.
//!
//! 1. Criterion micro-benchmarks of the agent host's hot paths (context window fitting and
//!    request building for 10/1 000/10 000 messages, SSE chunk parsing, a policy check).
//! 2. Whole-process cold start of the release runtime: spawn → first JSON-RPC answer.
//! 3. The wall time of a full certification against the release runtime.
//!
//! Results go to `target/bench-report.md`. `--quick` shortens everything (a smoke run).

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};

use crate::certify::{cargo, target_dir};

#[derive(clap::Args)]
pub struct Args {
    /// A short smoke run: fewer samples, shorter measurement.
    #[arg(long)]
    quick: bool,
    /// Skip the criterion micro-benchmarks.
    #[arg(long)]
    no_micro: bool,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let root = crate::workspace_root();
    let mut report = String::from("# Benchmark report\n\n");
    report.push_str(&format!(
        "Machine: {} {}, {} CPUs\n\n",
        std::env::consts::OS,
        std::env::consts::ARCH,
        std::thread::available_parallelism().map_or(0, usize::from)
    ));

    println!("xtask: building the release runtime and kit");
    let status = cargo()
        .current_dir(&root)
        .args([
            "build",
            "--release",
            "-p",
            "agent-runtime",
            "-p",
            "conformance",
        ])
        .status()
        .context("cannot run cargo")?;
    if !status.success() {
        bail!("the release build failed ({status})");
    }
    let release = target_dir().join("release");
    let runtime = release.join(format!("agent-runtime{}", std::env::consts::EXE_SUFFIX));

    let samples = if args.quick { 5 } else { 50 };
    let mut starts = (0..samples)
        .map(|_| cold_start(&runtime))
        .collect::<anyhow::Result<Vec<_>>>()?;
    starts.sort();
    report.push_str("## Cold start (spawn → first JSON-RPC response, release build)\n\n");
    report.push_str(&format!(
        "| samples | min | median | max |\n|---|---|---|---|\n| {samples} | {} | {} | {} |\n\n",
        ms(starts[0]),
        ms(starts[starts.len() / 2]),
        ms(starts[starts.len() - 1])
    ));

    println!("xtask: timing a full certification");
    let kit = release.join(format!("conformance{}", std::env::consts::EXE_SUFFIX));
    let started = Instant::now();
    let status = Command::new(&kit)
        .current_dir(&root)
        .arg("--runtime")
        .arg(&runtime)
        .stdout(Stdio::null())
        .status()
        .context("cannot run the conformance kit")?;
    let wall = started.elapsed();
    report.push_str(&format!(
        "## Full certification\n\n{} against the release runtime: {} ({})\n\n",
        if status.success() {
            "CERTIFIED"
        } else {
            "NOT CERTIFIED"
        },
        ms(wall),
        status
    ));

    if !args.no_micro {
        println!("xtask: criterion micro-benchmarks (cargo bench -p agent-host)");
        let mut bench = cargo();
        bench
            .current_dir(&root)
            .args(["bench", "-p", "agent-host", "--bench", "hot_paths", "--"]);
        if args.quick {
            bench.args(["--warm-up-time", "0.2", "--measurement-time", "0.5"]);
        }
        let output = bench.output().context("cannot run cargo bench")?;
        let text = String::from_utf8_lossy(&output.stdout);
        report.push_str("## Micro-benchmarks (criterion)\n\n```\n");
        for line in text.lines().filter(|line| {
            line.contains("time:") || line.starts_with(|c: char| c.is_ascii_lowercase())
        }) {
            report.push_str(line);
            report.push('\n');
        }
        report.push_str("```\n");
        if !output.status.success() {
            bail!(
                "cargo bench failed: {}",
                String::from_utf8_lossy(&output.stderr)
            );
        }
    }

    let path = target_dir().join("bench-report.md");
    std::fs::write(&path, &report).with_context(|| format!("cannot write {}", path.display()))?;
    println!("{report}\nreport: {}", path.display());
    Ok(ExitCode::SUCCESS)
}

fn ms(duration: Duration) -> String {
    format!("{:.2} ms", duration.as_secs_f64() * 1000.0)
}

/// Spawns the runtime and times the first answer to GetSessionState. The services it
/// points at are never contacted for that answer.
fn cold_start(runtime: &std::path::Path) -> anyhow::Result<Duration> {
    let unreachable = "http://127.0.0.1:9";
    let started = Instant::now();
    let mut child = Command::new(runtime)
        .env("LLM_GATEWAY_ENDPOINT", format!("{unreachable}/v1"))
        .env("LLM_GATEWAY_AUTH_TOKEN", "bench")
        .env("SESSION_SERVICE_URL", unreachable)
        .env("WORKSPACE_SERVICE_URL", unreachable)
        .env("LOG_LEVEL", "error")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .context("cannot start the runtime")?;
    let mut stdin = child.stdin.take().context("no stdin")?;
    stdin.write_all(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"GetSessionState\"}\n")?;
    stdin.flush()?;
    let mut line = String::new();
    BufReader::new(child.stdout.take().context("no stdout")?).read_line(&mut line)?;
    let elapsed = started.elapsed();
    drop(stdin);
    let _ = child.wait();
    if !line.contains("\"id\":1") {
        bail!("unexpected first line from the runtime: {line}");
    }
    Ok(elapsed)
}
