//! Certifies the reference runtime with the conformance kit: every scenario in features/,
//! against this package's own `agent-runtime` binary, exactly as `conformance --runtime`
//! would certify any other runtime.
//!
//! This is a `harness = false` target, so libtest's arguments (`--nocapture`,
//! `--test-threads N`, a name filter, ...) reach `main`; they are accepted and ignored, so
//! `cargo test --workspace -- --nocapture` keeps working. `--list` (nextest's discovery)
//! lists nothing. `CONFORMANCE_TAGS` narrows the run to a tag expression and
//! `CONFORMANCE_REPORT_DIR` keeps the reports.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use conformance::{RunOptions, RuntimeCommand};

fn main() -> ExitCode {
    if std::env::args().skip(1).any(|arg| arg == "--list") {
        return ExitCode::SUCCESS;
    }
    let runtime = RuntimeCommand::from_program(Path::new(env!("CARGO_BIN_EXE_agent-runtime")));
    let mut options = RunOptions::new(runtime);
    options.features = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../features"));
    options.tags = std::env::var("CONFORMANCE_TAGS")
        .ok()
        .filter(|t| !t.trim().is_empty());
    options.report_dir = std::env::var_os("CONFORMANCE_REPORT_DIR").map(PathBuf::from);

    let tokio = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(tokio) => tokio,
        Err(error) => {
            eprintln!("conformance: cannot start tokio: {error}");
            return ExitCode::from(2);
        }
    };
    let result = tokio.block_on(conformance::run(options));
    tokio.shutdown_timeout(std::time::Duration::from_secs(2));
    match result {
        Ok(outcome) => {
            println!("\n{}", outcome.summary());
            if outcome.passed {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            }
        }
        Err(error) => {
            eprintln!("conformance: {error:#}");
            ExitCode::from(2)
        }
    }
}
