//! Certifies the reference runtime with the conformance kit: every scenario in features/,
//! against this package's own `agent-runtime` binary, exactly as `conformance --runtime`
//! would certify any other runtime.
//!
//! This is a `harness = false` target, so libtest's arguments (`--nocapture`,
//! `--test-threads N`, a name filter, ...) reach `main`; they are accepted and ignored, so
//! `cargo test --workspace -- --nocapture` keeps working. `--list` (nextest's discovery)
//! lists nothing. `CONFORMANCE_TAGS` narrows the run to a tag expression and
//! `CONFORMANCE_REPORT_DIR` keeps the reports; `CONFORMANCE_TRANSPORT=socket` (or `http`)
//! runs it over the Unix socket (or HTTP + SSE) transport (`--listen`).
//!
//! Last, a short crash campaign (`conformance::crash`) kills the runtime at random moments
//! of a multi-step task and checks the resumed task; `cargo xtask crash` runs the long one.
//!
//! On Unix, a second, light run then certifies the JSON-RPC framing (REQ-RPC-001…013, 017)
//! and the end of input (REQ-SES-017) over the socket transport, so the `--listen` path stays
//! certified without doubling the time of `cargo test` (the full suite over the socket is
//! `conformance --transport socket`). A third light run does the same, plus the SessionEvent
//! envelope (REQ-EVT-001), over the HTTP transport (`--listen http://…`). A fourth runs the
//! sandbox transport (INTEROP.md §9: the kit as the Session Service): §9's scenarios
//! (REQ-SBX-*), a task, the event envelope, cancellation and the OS sandbox's status.
//!
//! The kit certifies a Windows runtime from Linux (`cargo xtask windows`), where it plays
//! the services and drives the `.exe` through Wine; on Windows this target runs nothing, and
//! the kit is no dependency of the Windows build.

// A test program: the kit's progress lines are kept for a failing run.
#![allow(clippy::print_stdout, clippy::print_stderr)]

#[cfg(not(windows))]
#[path = "conformance/kit.rs"]
mod kit;

#[cfg(not(windows))]
fn main() -> std::process::ExitCode {
    kit::main()
}

#[cfg(windows)]
fn main() {
    println!("the conformance kit certifies a Windows runtime from Linux: cargo xtask windows");
}
