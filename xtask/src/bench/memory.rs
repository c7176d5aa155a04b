//! `cargo xtask bench --memory-parts`: where a runtime's resident memory is, read from
//! `/proc/PID/smaps` at the two points the targets name (right after CreateSession and at
//! the end of a task of ReadFile calls), grouped by what the pages belong to, with the
//! thread count and names. A peak (`VmHWM`) says how much; this says where, so a
//! regression can be traced to the binary, the heap, the threads or the libraries.
//! Linux only (there is no `/proc` elsewhere).

use std::collections::BTreeMap;
use std::time::Duration;

use anyhow::Context;

use super::process::{RuntimeCommand, peak_rss};
use super::process_figures::{self, Services};

/// Resident kibibytes by part, plus the process's threads, at one point.
#[derive(Debug, Default)]
pub(super) struct Parts {
    pub kib: BTreeMap<&'static str, u64>,
    pub peak_kib: u64,
    pub threads: Vec<String>,
}

/// The part of the process a mapping of `/proc/PID/smaps` belongs to.
fn part(perms: &str, path: &str, exe: &str) -> &'static str {
    if !exe.is_empty() && path == exe {
        if perms.contains('x') {
            "binary: code"
        } else if perms.contains('w') {
            "binary: writable data"
        } else {
            "binary: read-only data"
        }
    } else if path == "[heap]" {
        "heap (brk)"
    } else if path == "[stack]" {
        "main thread stack"
    } else if path.contains(".so") {
        "shared libraries"
    } else if path.is_empty() {
        "anonymous (thread stacks, malloc arenas, large allocations)"
    } else {
        "other mappings"
    }
}

/// Reads `pid`'s resident memory by part.
pub(super) fn parts(pid: u32) -> anyhow::Result<Parts> {
    let smaps = std::fs::read_to_string(format!("/proc/{pid}/smaps"))
        .with_context(|| format!("cannot read /proc/{pid}/smaps"))?;
    let exe = std::fs::read_link(format!("/proc/{pid}/exe"))
        .map(|path| path.display().to_string())
        .unwrap_or_default();
    let mut result = Parts {
        peak_kib: peak_rss(pid).unwrap_or(0) / 1024,
        ..Parts::default()
    };
    let mut current = "other mappings";
    for line in smaps.lines() {
        let mut words = line.split_whitespace();
        let Some(first) = words.next() else { continue };
        if first.contains('-') && !first.ends_with(':') {
            // A mapping's header: range perms offset dev inode [path].
            let perms = words.next().unwrap_or_default();
            let path = words.nth(3).unwrap_or_default();
            current = part(perms, path, &exe);
        } else if first == "Rss:" {
            let kib: u64 = words.next().and_then(|n| n.parse().ok()).unwrap_or(0);
            *result.kib.entry(current).or_default() += kib;
        }
    }
    if let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) {
        for task in tasks.flatten() {
            let name = std::fs::read_to_string(task.path().join("comm")).unwrap_or_default();
            result.threads.push(name.trim().to_owned());
        }
    }
    result.threads.sort();
    Ok(result)
}

/// How many names of `runtime/cli/hot-symbols.txt` the binary at `program` defines (`nm`),
/// of how many: the list names symbols with their crates' hashes, which change with the
/// compiler and the dependencies, and every name no longer found is hot code left scattered
/// over the binary — resident memory (`runtime/cli/build.rs`). `None` without `nm`.
fn hot_symbols_found(program: &std::path::Path) -> Option<(usize, usize)> {
    let list = std::fs::read_to_string(crate::workspace_root().join("runtime/cli/hot-symbols.txt"))
        .ok()?;
    let output = std::process::Command::new("nm")
        .arg("--defined-only")
        .arg(program)
        .output()
        .ok()
        .filter(|output| output.status.success())?;
    let defined: std::collections::HashSet<&str> = std::str::from_utf8(&output.stdout)
        .ok()?
        .lines()
        .filter_map(|line| line.split_whitespace().nth(2))
        .collect();
    let names: Vec<&str> = list.lines().filter(|name| !name.is_empty()).collect();
    let found = names.iter().filter(|name| defined.contains(**name)).count();
    Some((found, names.len()))
}

/// The two snapshots, as a Markdown section.
pub(super) fn report(
    command: &RuntimeCommand,
    steps: usize,
    timeout: Duration,
) -> anyhow::Result<String> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let services = Services::start().await?;
        let (created, ended) =
            process_figures::memory_snapshots(command, &services, steps, timeout).await?;
        let mut text = render(&created, &ended, steps);
        if let Some((found, listed)) = hot_symbols_found(&command.program) {
            text.push_str(&format!(
                "\nhot-symbols.txt: {found} of {listed} names found in the binary (re-run `cargo xtask hot-symbols` when few are)\n"
            ));
        }
        Ok(text)
    })
}

fn render(created: &Parts, ended: &Parts, steps: usize) -> String {
    let mib = |kib: u64| format!("{:.2} MiB", kib as f64 / 1024.0);
    let mut text = format!(
        "## Resident memory by part (KiB → MiB, /proc/PID/smaps)\n\n| part | after CreateSession | after a {steps}-call task |\n|---|---|---|\n"
    );
    let mut names: Vec<&str> = created
        .kib
        .keys()
        .chain(ended.kib.keys())
        .copied()
        .collect();
    names.sort_unstable();
    names.dedup();
    for name in names {
        let get = |parts: &Parts| mib(parts.kib.get(name).copied().unwrap_or(0));
        text.push_str(&format!("| {name} | {} | {} |\n", get(created), get(ended)));
    }
    let total = |parts: &Parts| mib(parts.kib.values().sum());
    text.push_str(&format!(
        "| total resident now (VmRSS) | {} | {} |\n| peak (VmHWM) | {} | {} |\n| threads | {} ({}) | {} ({}) |\n",
        total(created),
        total(ended),
        mib(created.peak_kib),
        mib(ended.peak_kib),
        created.threads.len(),
        created.threads.join(", "),
        ended.threads.len(),
        ended.threads.join(", "),
    ));
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The report against the debug runtime: the binary's own parts, the heap and the threads
    /// are found at both points (no figure is held).
    #[cfg(target_os = "linux")]
    #[test]
    fn memory_parts_of_the_debug_runtime_are_reported() {
        let root = crate::workspace_root();
        let status = crate::certify::cargo()
            .current_dir(&root)
            .args(["build", "-p", "agent-runtime"])
            .status()
            .unwrap_or_else(|error| panic!("cannot run cargo: {error}"));
        assert!(status.success(), "building the debug runtime failed");
        let runtime = RuntimeCommand {
            program: crate::certify::target_dir()
                .join("debug")
                .join("agent-runtime"),
            args: Vec::new(),
        };
        let text = report(&runtime, 3, Duration::from_secs(30))
            .unwrap_or_else(|error| panic!("the memory report failed: {error:#}"));
        for row in [
            "| binary: code |",
            "| heap (brk) |",
            "| peak (VmHWM) |",
            "| threads |",
        ] {
            let line = text
                .lines()
                .find(|line| line.starts_with(row))
                .unwrap_or_else(|| panic!("no row {row:?} in\n{text}"));
            assert!(!line.contains("| 0.00 MiB |"), "{line}");
        }
    }

    #[test]
    fn mappings_are_told_apart_by_path_and_permissions() {
        let exe = "/t/release/agent-runtime";
        assert_eq!(part("r-xp", exe, exe), "binary: code");
        assert_eq!(part("r--p", exe, exe), "binary: read-only data");
        assert_eq!(part("rw-p", exe, exe), "binary: writable data");
        assert_eq!(part("rw-p", "[heap]", exe), "heap (brk)");
        assert_eq!(
            part("r-xp", "/usr/lib/x86_64-linux-gnu/libc.so.6", exe),
            "shared libraries"
        );
        assert!(part("rw-p", "", exe).starts_with("anonymous"));
        assert_eq!(part("r--p", "[vvar]", exe), "other mappings");
    }
}
