//! The criterion micro-benchmarks of the agent host (`runtime/host/benches/hot_paths.rs`)
//! and the wall time of a full certification, as report sections.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Instant, SystemTime};

use anyhow::{Context, bail};
use serde_json::Value;

use crate::certify::{cargo, target_dir};

/// Runs `cargo bench -p agent-host --bench hot_paths` and reports every benchmark it
/// measured (criterion's own JSON estimates, not its console text).
pub(super) fn criterion_section(root: &Path, quick: bool) -> anyhow::Result<String> {
    println!("xtask: criterion micro-benchmarks (cargo bench -p agent-host)");
    let started = SystemTime::now();
    let mut bench = cargo();
    bench
        .current_dir(root)
        .args(["bench", "-p", "agent-host", "--bench", "hot_paths", "--"]);
    if quick {
        bench.args(["--warm-up-time", "0.2", "--measurement-time", "0.5"]);
    }
    let output = bench
        .stderr(Stdio::inherit())
        .output()
        .context("cannot run cargo bench")?;
    if !output.status.success() {
        bail!("cargo bench failed ({})", output.status);
    }
    let mut rows = Vec::new();
    collect(&target_dir().join("criterion"), started, &mut rows);
    rows.sort();
    let mut section = String::from(
        "## Micro-benchmarks (criterion, `cargo bench -p agent-host --bench hot_paths`)\n\n\
         | benchmark | median | throughput | bytes per iteration |\n|---|---|---|---|\n",
    );
    for (_, row) in &rows {
        section.push_str(row);
    }
    section.push_str(
        "\n`checkpoint/step_write_fsync/N` is one per-step checkpoint of an N-message thread \
         (the head serialised, the messages' stored JSON spliced in, temp file, fsync, rename, \
         fsync the directory); its bytes are the checkpoint's size. \
         `checkpoint/serialize_whole/N` serialises the whole checkpoint, as every step did \
         before the thread kept its stored JSON. `sse/accumulate_1000_text_chunks` is SSE chunk parsing and delta \
         accumulation (MB/s of `data:` payload).\n\n",
    );
    Ok(section)
}

/// Every `…/new/benchmark.json` + `estimates.json` pair written since `since`.
fn collect(dir: &Path, since: SystemTime, rows: &mut Vec<(String, String)>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if !path.is_dir() {
            continue;
        }
        if path.file_name().is_some_and(|name| name == "new") {
            if let Some(row) = row(&path, since) {
                rows.push(row);
            }
        } else if path
            .file_name()
            .is_none_or(|name| name != "base" && name != "report")
        {
            collect(&path, since, rows);
        }
    }
}

fn row(dir: &Path, since: SystemTime) -> Option<(String, String)> {
    let estimates = dir.join("estimates.json");
    let fresh = std::fs::metadata(&estimates)
        .and_then(|m| m.modified())
        .is_ok_and(|modified| modified >= since);
    if !fresh {
        return None;
    }
    let read = |name: &str| -> Option<Value> {
        serde_json::from_slice(&std::fs::read(dir.join(name)).ok()?).ok()
    };
    let benchmark = read("benchmark.json")?;
    let ns = read("estimates.json")?
        .pointer("/median/point_estimate")?
        .as_f64()?;
    let id = benchmark.get("full_id")?.as_str()?.to_owned();
    let bytes = benchmark
        .pointer("/throughput/Bytes")
        .and_then(Value::as_u64);
    let elements = benchmark
        .pointer("/throughput/Elements")
        .and_then(Value::as_u64);
    let throughput = match (bytes, elements) {
        (Some(bytes), _) => format!("{:.1} MB/s", bytes as f64 / ns * 1000.0),
        (None, Some(n)) => format!("{:.2} M elements/s", n as f64 / ns * 1000.0),
        _ => String::new(),
    };
    let size = bytes.map_or_else(String::new, |b| format!("{b}"));
    let row = format!("| `{id}` | {} | {throughput} | {size} |\n", time(ns));
    Some((id, row))
}

fn time(ns: f64) -> String {
    if ns >= 1e6 {
        format!("{:.2} ms", ns / 1e6)
    } else if ns >= 1e3 {
        format!("{:.2} µs", ns / 1e3)
    } else {
        format!("{ns:.0} ns")
    }
}

/// Runs the release conformance kit against `runtime` and reports the wall time.
pub(super) fn certification_section(
    root: &Path,
    runtime: &str,
    manifest: Option<&Path>,
) -> anyhow::Result<String> {
    println!("xtask: timing a full certification");
    let kit = target_dir()
        .join("release")
        .join(format!("conformance{}", std::env::consts::EXE_SUFFIX));
    let mut command = Command::new(&kit);
    command.current_dir(root).arg("--runtime").arg(runtime);
    if let Some(manifest) = manifest {
        command.arg("--manifest").arg(manifest);
    }
    let started = Instant::now();
    let status = command
        .stdout(Stdio::null())
        .status()
        .context("cannot run the conformance kit")?;
    let wall = started.elapsed();
    Ok(format!(
        "## Full certification\n\n{} against `{runtime}`: {:.1} s wall time ({status})\n\n",
        if status.success() {
            "CERTIFIED"
        } else {
            "NOT CERTIFIED"
        },
        wall.as_secs_f64(),
    ))
}
