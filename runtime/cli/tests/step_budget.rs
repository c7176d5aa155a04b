//! Deterministic budgets of the runtime's work, so that a memory or disk regression fails
//! `cargo test` instead of waiting for a benchmark run (BENCHMARKS.md, "Guards"): heap
//! allocations and bytes allocated per agent step, the checkpoint store's `write` calls and
//! fsyncs per step, the heap still held after CreateSession, and the resident memory and
//! threads of the real binary after CreateSession. Nothing here is timed.
//!
//! The in-process figures run the agent host and the tool runtime as the binary wires them,
//! on one current-thread runtime, against the service fakes, under a counting allocator. The
//! fakes allocate too (a fixed amount per request): the recorded figures include them.
//! Each figure is held to its recorded value plus a stated tolerance; a change that moves a
//! figure on purpose updates the record here and in BENCHMARKS.md.

// The fakes are Unix-only dev-dependencies (the Windows lane builds no kit).
#![cfg(not(windows))]
// Each figure is printed (`--nocapture`), so a run shows how close it is to its budget.
#![allow(clippy::print_stderr)]

use std::alloc::System;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use agent_host::{Host, HostConfig, Outbound};
use agent_mocks::{GatewayFake, GatewayReply, SessionServiceFake, WorkspaceFake};
use serde_json::{Value, json};
use stats_alloc::{INSTRUMENTED_SYSTEM, Region, StatsAlloc};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream};

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

/// ReadFile calls in the measured task (the "20-call task").
const CALLS: usize = 20;

/// A recorded figure and how far above it a run may go before the guard fails.
struct Budget {
    name: &'static str,
    recorded: f64,
    /// Allowed excess, as a fraction of `recorded`.
    tolerance: f64,
}

impl Budget {
    fn check(&self, measured: f64, failures: &mut Vec<String>) {
        let limit = self.recorded * (1.0 + self.tolerance);
        eprintln!(
            "{}: {measured:.1} (recorded {}, limit {limit:.1})",
            self.name, self.recorded
        );
        if measured > limit {
            failures.push(format!(
                "{} is {measured:.1}, above its budget {limit:.1} (recorded {} + {:.0} %)",
                self.name,
                self.recorded,
                self.tolerance * 100.0
            ));
        }
    }
}

/// Heap allocations per step of a 20-call task (the fakes' share included). Every step
/// offers the granted tools' definitions, the INTEROP.md §11 coding tools among them
/// (shared schemas, serialised again only when the offered tools change).
const ALLOCATIONS_PER_STEP: Budget = Budget {
    name: "allocations per step",
    recorded: 3_685.0,
    tolerance: 0.10,
};
/// Bytes allocated per step (not held: what the allocator was asked for).
const BYTES_PER_STEP: Budget = Budget {
    name: "bytes allocated per step",
    recorded: 869_500.0,
    tolerance: 0.10,
};
/// Checkpoint `write` calls reaching the file per step (a 64 KiB buffer in front of it;
/// the thread of this task stays below it, so one write per checkpoint).
const WRITES_PER_STEP: Budget = Budget {
    name: "checkpoint write calls per step",
    recorded: 1.0,
    tolerance: 0.5,
};
/// Checkpoint fsyncs per step: the file's and its directory's for each of the 22
/// checkpoints of 21 gateway requests (44 / 21); one more checkpoint per step would be 3.
const FSYNCS_PER_STEP: Budget = Budget {
    name: "checkpoint fsyncs per step",
    recorded: 2.1,
    tolerance: 0.05,
};
/// Heap bytes held after CreateSession (allocated − freed since the process started,
/// the fakes' state included).
const HEAP_AFTER_CREATE: Budget = Budget {
    name: "heap bytes held after CreateSession",
    recorded: 581_500.0,
    tolerance: 0.10,
};

/// Anonymous memory (heap, malloc arenas, thread stacks: what the code allocates, not the
/// binary's pages, which differ between debug and release builds) of the real binary right
/// after CreateSession, KiB.
const ANONYMOUS_AFTER_CREATE_KIB: Budget = Budget {
    name: "binary's anonymous memory after CreateSession (KiB)",
    recorded: 3_120.0,
    tolerance: 0.25,
};
/// The binary's lasting threads right after CreateSession (main, the stderr log worker, one
/// blocking worker; no LOG_DIR, so no file log worker). The start-up helpers that end by
/// themselves are not counted, and one more blocking worker is allowed: tokio starts a
/// second one when two blocking jobs overlap, which load decides.
const THREADS_AFTER_CREATE: Budget = Budget {
    name: "binary's threads after CreateSession",
    recorded: 3.0,
    tolerance: 0.34,
};

/// Threads that end on their own soon after start-up (thread names are cut to 15 bytes).
#[cfg(target_os = "linux")]
const TRANSIENT_THREADS: [&str; 2] = ["redact-warm-up", "sandbox-tmp-swe"];

/// The threads of `pid` but the [`TRANSIENT_THREADS`].
#[cfg(target_os = "linux")]
fn lasting_threads(pid: u32) -> f64 {
    let path = format!("/proc/{pid}/task");
    let tasks = std::fs::read_dir(&path).unwrap_or_else(|error| panic!("{path}: {error}"));
    tasks
        .flatten()
        .filter(|task| {
            let name = std::fs::read_to_string(task.path().join("comm")).unwrap_or_default();
            !TRANSIENT_THREADS.contains(&name.trim())
        })
        .count() as f64
}

/// The JSON-RPC client's end of an in-process host.
struct Client {
    input: DuplexStream,
    output: tokio::io::Lines<BufReader<DuplexStream>>,
    next_id: u64,
}

impl Client {
    async fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        let line = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let mut bytes = line.to_string().into_bytes();
        bytes.push(b'\n');
        if let Err(error) = self.input.write_all(&bytes).await {
            panic!("cannot send {method}: {error}");
        }
        self.read_until(|value| value["id"] == id).await
    }

    async fn read_until(&mut self, wanted: impl Fn(&Value) -> bool) -> Value {
        loop {
            let line = match tokio::time::timeout(Duration::from_secs(60), self.output.next_line())
                .await
            {
                Ok(Ok(Some(line))) => line,
                other => panic!("the host stopped answering: {other:?}"),
            };
            let value: Value = serde_json::from_str(&line)
                .unwrap_or_else(|error| panic!("not JSON ({error}): {line}"));
            if wanted(&value) {
                return value;
            }
        }
    }
}

fn create_session_params(workspace: &Path) -> Value {
    json!({"userId": "user_budget", "tenantId": "tenant_budget", "executionEnvironment": "desktop",
           "workspaceHint": {"localPaths": [workspace.display().to_string()]},
           "clientInfo": {"desktopAppVersion": "budget", "localAgentHostVersion": "budget",
                          "osFamily": std::env::consts::OS, "osVersion": "budget"},
           "supportedCapabilities": ["File.Read", "File.Write", "LLM.Call"]})
}

/// What the in-process run measured.
struct Measured {
    heap_after_create: f64,
    allocations: f64,
    bytes: f64,
    writes: f64,
    fsyncs: f64,
}

async fn measure() -> Measured {
    let dir = tempfile::tempdir().unwrap_or_else(|error| panic!("temp dir: {error}"));
    let workspace = dir.path().join("workspace");
    std::fs::create_dir_all(&workspace).unwrap_or_else(|error| panic!("workspace: {error}"));
    let line = "The quick brown fox jumps over the lazy dog; benchmarks read this file. \n";
    std::fs::write(workspace.join("data.txt"), line.repeat(2048 / line.len()))
        .unwrap_or_else(|error| panic!("data.txt: {error}"));

    let session = SessionServiceFake::start()
        .await
        .unwrap_or_else(|error| panic!("session fake: {error}"));
    let workspace_fake = WorkspaceFake::start()
        .await
        .unwrap_or_else(|error| panic!("workspace fake: {error}"));
    let gateway = GatewayFake::start()
        .await
        .unwrap_or_else(|error| panic!("gateway fake: {error}"));
    gateway.push_replies(
        (0..CALLS)
            .map(|index| {
                GatewayReply::tool_call(
                    format!("call_{index}"),
                    "ReadFile",
                    json!({"path": "data.txt"}).to_string(),
                )
            })
            .chain([GatewayReply::text("Done.")]),
    );
    let mut config = HostConfig::with_endpoints(
        gateway.url(),
        agent_mocks::FAKE_GATEWAY_TOKEN,
        session.url(),
        workspace_fake.url(),
    );
    config.dirs.checkpoints = dir.path().join("checkpoints");
    let tools = Arc::new(agent_tools::LocalToolRouter::with_options(
        agent_tools::ToolOptions::default(),
    ));

    let (client_input, host_input) = tokio::io::duplex(1 << 20);
    let (host_output, client_output) = tokio::io::duplex(1 << 20);
    let (outbound, writer) = Outbound::new(host_output);
    let writer = tokio::spawn(writer);
    let host = Host::new(config, tools, outbound.clone());
    let served = tokio::spawn(agent_host::transport::serve(
        host,
        agent_host::transport::buffered(host_input),
        outbound,
    ));
    let mut client = Client {
        input: client_input,
        output: BufReader::new(client_output).lines(),
        next_id: 1,
    };

    let created = client
        .request("CreateSession", create_session_params(&workspace))
        .await;
    let Some(session_id) = created["result"]["sessionId"].as_str().map(str::to_owned) else {
        panic!("CreateSession failed: {created}");
    };
    let stats = GLOBAL.stats();
    let heap_after_create = stats.bytes_allocated as f64 - stats.bytes_deallocated as f64;

    let disk_before = agent_host::bench::disk_counts();
    let region = Region::new(GLOBAL);
    let started = client
        .request(
            "StartTask",
            json!({"sessionId": session_id, "prompt": "Read data.txt again and again.",
                   "taskOptions": {"maxSteps": CALLS + 5}}),
        )
        .await;
    assert!(
        started.get("result").is_some(),
        "StartTask failed: {started}"
    );
    let end = client
        .read_until(|value| {
            value["method"] == "SessionEvent"
                && matches!(
                    value["params"]["eventType"].as_str(),
                    Some("task_completed" | "task_failed" | "task_cancelled")
                )
        })
        .await;
    let change = region.change();
    let disk = agent_host::bench::disk_counts();
    assert_eq!(
        end["params"]["eventType"], "task_completed",
        "the task did not complete: {end}"
    );
    assert_eq!(gateway.remaining_replies(), 0, "the task made fewer calls");

    let _ = client.request("Shutdown", json!({})).await;
    drop(client);
    let _ = served.await;
    let _ = writer.await;

    let steps = (CALLS + 1) as f64;
    Measured {
        heap_after_create,
        allocations: (change.allocations + change.reallocations) as f64 / steps,
        bytes: change.bytes_allocated as f64 / steps,
        writes: (disk.writes - disk_before.writes) as f64 / steps,
        fsyncs: (disk.fsyncs - disk_before.fsyncs) as f64 / steps,
    }
}

#[cfg(target_os = "linux")]
/// A field of `/proc/PID/<file>` in kB (or a plain count), e.g. `Anonymous:` of
/// `smaps_rollup`.
fn proc_field(pid: u32, file: &str, field: &str) -> f64 {
    let path = format!("/proc/{pid}/{file}");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|error| panic!("{path}: {error}"));
    text.lines()
        .find_map(|line| line.strip_prefix(field))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|number| number.parse().ok())
        .unwrap_or_else(|| panic!("no {field} in {path}"))
}

/// The real binary on stdio, after CreateSession against the Session Service fake: its
/// anonymous memory (KiB), threads and peak RSS (KiB).
#[cfg(target_os = "linux")]
async fn binary_after_create_session() -> (f64, f64, f64) {
    use std::process::Stdio;
    let dir = tempfile::tempdir().unwrap_or_else(|error| panic!("temp dir: {error}"));
    for sub in ["workspace", "checkpoints", "home"] {
        std::fs::create_dir_all(dir.path().join(sub))
            .unwrap_or_else(|error| panic!("{sub}: {error}"));
    }
    let session = SessionServiceFake::start()
        .await
        .unwrap_or_else(|error| panic!("session fake: {error}"));
    let unreachable = "http://127.0.0.1:9";
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_agent-runtime"))
        .env_clear()
        .env("HOME", dir.path().join("home"))
        .env("CHECKPOINT_DIR", dir.path().join("checkpoints"))
        .env("LLM_GATEWAY_ENDPOINT", format!("{unreachable}/v1"))
        .env("LLM_GATEWAY_AUTH_TOKEN", "test")
        .env("SESSION_SERVICE_URL", session.url())
        .env("WORKSPACE_SERVICE_URL", unreachable)
        .env("APPROVAL_SERVICE_URL", "")
        .env("LOG_LEVEL", "warn")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap_or_else(|error| panic!("cannot start the runtime: {error}"));
    let (Some(input), Some(output), Some(pid)) =
        (child.stdin.take(), child.stdout.take(), child.id())
    else {
        panic!("the runtime has no stdio or pid");
    };
    let mut input = input;
    let mut lines = BufReader::new(output).lines();
    let params = create_session_params(&dir.path().join("workspace"));
    let line = json!({"jsonrpc": "2.0", "id": 1, "method": "CreateSession", "params": params});
    if let Err(error) = input.write_all(format!("{line}\n").as_bytes()).await {
        panic!("cannot send CreateSession: {error}");
    }
    loop {
        let line = match tokio::time::timeout(Duration::from_secs(60), lines.next_line()).await {
            Ok(Ok(Some(line))) => line,
            other => panic!("the runtime stopped answering: {other:?}"),
        };
        let value: Value = serde_json::from_str(&line).unwrap_or(Value::Null);
        if value["id"] == 1 {
            assert!(
                value.get("result").is_some(),
                "CreateSession failed: {value}"
            );
            break;
        }
    }
    let measured = (
        proc_field(pid, "smaps_rollup", "Anonymous:"),
        lasting_threads(pid),
        proc_field(pid, "status", "VmHWM:"),
    );
    drop(input);
    let _ = tokio::time::timeout(Duration::from_secs(30), child.wait()).await;
    measured
}

/// One test, so no other test's allocations fall into the counted region.
#[test]
fn the_runtime_stays_within_its_recorded_budgets() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap_or_else(|error| panic!("runtime: {error}"));
    let measured = runtime.block_on(measure());
    let mut failures = Vec::new();
    #[cfg(target_os = "linux")]
    {
        let (anonymous, threads, peak) = runtime.block_on(binary_after_create_session());
        eprintln!("binary's peak RSS after CreateSession: {peak} KiB (not held: debug build)");
        ANONYMOUS_AFTER_CREATE_KIB.check(anonymous, &mut failures);
        THREADS_AFTER_CREATE.check(threads, &mut failures);
    }
    HEAP_AFTER_CREATE.check(measured.heap_after_create, &mut failures);
    ALLOCATIONS_PER_STEP.check(measured.allocations, &mut failures);
    BYTES_PER_STEP.check(measured.bytes, &mut failures);
    WRITES_PER_STEP.check(measured.writes, &mut failures);
    FSYNCS_PER_STEP.check(measured.fsyncs, &mut failures);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
