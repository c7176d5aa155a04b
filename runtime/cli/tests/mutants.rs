//! The kit against mutants of the reference runtime (`conformance::mutant`): each mutant
//! breaks one named thing on the wire, and a focused run of the kit (the requirements the
//! mutant names and a few witnesses that run the same path) must fail exactly the
//! requirements it names — not certify it, and not charge its defect to another requirement.
//! Then `--fail-fast` both ways: it runs on past a not-applicable scenario and certifies, and
//! it stops at a real failure with a run that says so and never certifies.
//!
//! A `harness = false` target, like `conformance`: libtest's arguments are accepted and
//! ignored, `--list` lists nothing. `CONFORMANCE_MUTANTS=a,b` runs only those mutants.

// A test program: the table of mutants is its output.
#![allow(clippy::print_stdout, clippy::print_stderr)]

#[cfg(not(windows))]
#[path = "mutants/run.rs"]
mod run;

#[cfg(not(windows))]
fn main() -> std::process::ExitCode {
    run::main()
}

#[cfg(windows)]
fn main() {
    println!("the mutant runtime wraps a runtime on Unix (the kit certifies Windows from Linux)");
}
