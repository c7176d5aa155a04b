//! GrepFiles and FindFiles against `rg` and `fd` on the same tree (issue goal: within 2×).
//! The tree is generated once (deterministically) under the target dir — 100 000 small
//! source files unless `SEARCH_BENCH_FILES` says otherwise — and reused by later runs. Each
//! search must scan the whole tree: the pattern matches 20 files, fewer than either tool's
//! result limit. The tools run in process through the router, as the agent host calls
//! them; `rg` and `fd` run as commands (their start, about a millisecond, is in their
//! figure). Run with `cargo xtask bench-search`, which prints the ratios.

// A benchmark is a test program: a tree it cannot write or a tool that finds the wrong
// files fails it loudly, and a missing comparison command is said on stderr.
#![allow(clippy::expect_used, clippy::print_stderr)]

use std::hint::black_box;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use agent_protocol::{ToolRequest, ToolRouter, ToolStatus};
use agent_tools::LocalToolRouter;
use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::{Value, json};

/// One file in this many carries the needle (in its name and its text).
const NEEDLE_EVERY: usize = 5_000;

fn file_count() -> usize {
    std::env::var("SEARCH_BENCH_FILES")
        .ok()
        .and_then(|count| count.parse().ok())
        .unwrap_or(100_000)
}

fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target"))
}

/// The tree of `count` files: `dNN/sN/` folders of 100 files of 30–60 lines each, every
/// `NEEDLE_EVERY`th named after the needle and its number, and holding them in one line.
fn tree(count: usize) -> PathBuf {
    let root = target_dir().join(format!("search-bench-tree-{count}"));
    let done = root.join(".complete");
    if done.exists() {
        return root;
    }
    let _ = std::fs::remove_dir_all(&root);
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move || {
        seed = seed
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        seed >> 33
    };
    let words = [
        "let", "value", "result", "config", "items", "parse", "render", "match", "state", "buffer",
        "index", "count", "handle", "request", "update", "stream",
    ];
    for i in 0..count {
        let folder = root
            .join(format!("d{:03}", i / 1_000))
            .join(format!("s{}", (i / 100) % 10));
        if i % 100 == 0 {
            std::fs::create_dir_all(&folder).expect("create the tree's folders");
        }
        let needle = i % NEEDLE_EVERY == NEEDLE_EVERY / 2;
        let name = if needle {
            format!("needle_{i}.rs")
        } else {
            format!("f{i}.rs")
        };
        let mut text = String::new();
        let lines = 30 + next() % 31;
        for line in 0..lines {
            if needle && line == lines / 2 {
                text.push_str(&format!("    let needle_{i} = find();\n"));
                continue;
            }
            let a = words[(next() % 16) as usize];
            let b = words[(next() % 16) as usize];
            let c = words[(next() % 16) as usize];
            text.push_str(&format!(
                "    let {a}_{line} = {b}.{c}({});\n",
                next() % 1000
            ));
        }
        let mut file = std::fs::File::create(folder.join(name)).expect("create a tree file");
        file.write_all(text.as_bytes()).expect("write a tree file");
    }
    std::fs::write(&done, "").expect("mark the tree complete");
    root
}

fn request(tool: &str, root: &Path, arguments: Value) -> ToolRequest {
    ToolRequest {
        tool_name: tool.to_owned(),
        arguments: arguments.as_object().cloned().unwrap_or_default(),
        session_id: "bench".to_owned(),
        task_id: "bench".to_owned(),
        step_id: "step_001".to_owned(),
        capability: None,
        tool_call_id: Some("call_1".to_owned()),
        workspace_root: Some(root.display().to_string()),
        limits: Default::default(),
        granted_paths: None,
        blocked_paths: None,
        sandbox: None,
    }
}

/// The first of `names` that runs on this machine (Debian names fd `fdfind`).
fn command(names: &[&str]) -> Option<String> {
    names.iter().find_map(|name| {
        Command::new(name)
            .arg("--version")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .ok()
            .filter(|status| status.success())
            .map(|_| (*name).to_owned())
    })
}

/// Runs a command and returns its output's line count (checked against the tool's).
fn lines_of(program: &str, args: &[&str]) -> usize {
    let output = Command::new(program)
        .args(args)
        .stderr(Stdio::null())
        .output()
        .expect("run the comparison command");
    output.stdout.iter().filter(|byte| **byte == b'\n').count()
}

fn search(c: &mut Criterion) {
    let count = file_count();
    let root = tree(count);
    let expected = count.div_ceil(NEEDLE_EVERY);
    let runtime = tokio::runtime::Runtime::new().expect("a tokio runtime");
    let router = LocalToolRouter::new();
    let grep = request(
        "GrepFiles",
        &root,
        json!({"directory": ".", "pattern": "needle_[0-9]+", "max_results": 200}),
    );
    let find = request(
        "FindFiles",
        &root,
        json!({"directory": ".", "pattern": "*needle*", "max_results": 500}),
    );
    for (name, call) in [("GrepFiles", &grep), ("FindFiles", &find)] {
        let result = runtime.block_on(router.execute(call.clone()));
        assert_eq!(result.status, ToolStatus::Succeeded, "{name}: {result:?}");
        let found = result
            .output_text
            .as_deref()
            .unwrap_or_default()
            .lines()
            .filter(|line| line.contains("needle_"))
            .count();
        assert_eq!(found, expected, "{name} found {found} of {expected}");
    }
    let tree = root.display().to_string();
    let rg = command(&["rg"]);
    let fd = command(&["fd", "fdfind"]);
    if let Some(rg) = &rg {
        assert_eq!(lines_of(rg, &["-n", "needle_[0-9]+", &tree]), expected);
    }
    if let Some(fd) = &fd {
        assert_eq!(lines_of(fd, &["-t", "f", "needle", &tree]), expected);
    }

    let mut group = c.benchmark_group(format!("search_{count}"));
    group.sample_size(10);
    group.warm_up_time(Duration::from_secs(1));
    group.bench_function("GrepFiles", |b| {
        b.iter(|| black_box(runtime.block_on(router.execute(grep.clone()))));
    });
    match &rg {
        Some(rg) => {
            group.bench_function("rg", |b| {
                b.iter(|| black_box(lines_of(rg, &["-n", "needle_[0-9]+", &tree])));
            });
        }
        None => eprintln!("rg is not installed (Debian: apt-get install ripgrep): no comparison"),
    }
    group.bench_function("FindFiles", |b| {
        b.iter(|| black_box(runtime.block_on(router.execute(find.clone()))));
    });
    match &fd {
        Some(fd) => {
            group.bench_function("fd", |b| {
                b.iter(|| black_box(lines_of(fd, &["-t", "f", "needle", &tree])));
            });
        }
        None => eprintln!("fd is not installed (Debian: apt-get install fd-find): no comparison"),
    }
    group.finish();
}

criterion_group!(benches, search);
criterion_main!(benches);
