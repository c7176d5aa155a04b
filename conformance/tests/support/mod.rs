//! What the kit's binary tests share: the built `conformance` and reference runtime, and
//! running the kit as a user would.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The `conformance` binary cargo built for these tests.
pub(crate) fn kit() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_conformance"))
}

/// The reference runtime from the same target dir (`cargo test --workspace` builds it;
/// `REFERENCE_RUNTIME` names another build).
pub(crate) fn reference_runtime() -> PathBuf {
    if let Some(path) = std::env::var_os("REFERENCE_RUNTIME") {
        return PathBuf::from(path);
    }
    let dir = kit().parent().map(Path::to_path_buf).unwrap_or_default();
    let runtime = dir.join(format!("agent-runtime{}", std::env::consts::EXE_SUFFIX));
    assert!(
        runtime.is_file(),
        "{} is missing: build it first (cargo build -p agent-runtime) or set REFERENCE_RUNTIME",
        runtime.display()
    );
    runtime
}

/// The repository's root.
pub(crate) fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .canonicalize()
        .unwrap()
}

/// Runs `program args` in `dir` and returns its output, echoing it for a failing test.
pub(crate) fn run(program: &Path, args: &[&str], dir: &Path) -> Output {
    let output = Command::new(program)
        .args(args)
        .current_dir(dir)
        .env_remove("CONFORMANCE_RUNTIME")
        .output()
        .unwrap();
    eprintln!(
        "$ {} {}\nexit {:?}\n{}{}",
        program.display(),
        args.join(" "),
        output.status.code(),
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

pub(crate) fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}
