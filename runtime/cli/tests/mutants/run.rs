//! The mutant runs (see the target's header).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use conformance::mutant::{MUTANTS, Mutant};
use conformance::report::Verdict;
use conformance::{Outcome, RunOptions, RuntimeCommand};

/// The argument that makes this test binary act as the mutant wrapper.
const MUTANT_WRAP: &str = "--mutant-wrap";

/// Every wait of a focused run: a mutant that drops an event makes the scenarios waiting for
/// it wait this long, so it is short; the reference runtime answers in milliseconds.
const WAIT: Duration = Duration::from_millis(2500);

pub(crate) fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    if let Some(at) = args.iter().position(|arg| arg == MUTANT_WRAP) {
        return wrapper(&args[at + 1..]);
    }
    if args.iter().skip(1).any(|arg| arg == "--list") {
        return ExitCode::SUCCESS;
    }
    let tokio = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(tokio) => tokio,
        Err(error) => {
            eprintln!("cannot start tokio: {error}");
            return ExitCode::from(2);
        }
    };
    let only: Option<BTreeSet<String>> = std::env::var("CONFORMANCE_MUTANTS")
        .ok()
        .filter(|v| !v.trim().is_empty())
        .map(|v| v.split(',').map(|s| s.trim().to_owned()).collect());
    let mut problems = Vec::new();
    if only.is_none()
        && let Err(error) = tokio.block_on(fail_fast_both_ways())
    {
        problems.push(format!("--fail-fast: {error:#}"));
    }
    let started = Instant::now();
    let mut caught = 0;
    let mut total = 0;
    for mutant in MUTANTS
        .iter()
        .filter(|m| only.as_ref().is_none_or(|o| o.contains(m.name)))
    {
        total += 1;
        let at = Instant::now();
        match tokio.block_on(conformance::run(focused(mutant))) {
            Ok(outcome) => {
                let verdict = judge(mutant, &outcome);
                println!(
                    "{:<32} {:>5.1}s  {}",
                    mutant.name,
                    at.elapsed().as_secs_f64(),
                    verdict.as_ref().map_or_else(
                        |e| format!("WRONG: {e}"),
                        |()| format!("caught: fails {}", mutant.fails.join(", "))
                    )
                );
                match verdict {
                    Ok(()) => caught += 1,
                    Err(error) => {
                        problems.push(format!("{}: {error}\n{}", mutant.name, outcome.summary()))
                    }
                }
            }
            Err(error) => problems.push(format!("{}: the run failed: {error:#}", mutant.name)),
        }
    }
    println!(
        "\nmutants caught precisely: {caught} of {total} in {:.0}s",
        started.elapsed().as_secs_f64()
    );
    tokio.shutdown_timeout(Duration::from_secs(2));
    if problems.is_empty() {
        ExitCode::SUCCESS
    } else {
        for problem in &problems {
            eprintln!("FAILED {problem}\n");
        }
        ExitCode::FAILURE
    }
}

/// The mutant's verdict: not certified, and failed exactly the requirements it names.
fn judge(mutant: &Mutant, outcome: &Outcome) -> Result<(), String> {
    if outcome.passed {
        return Err("the kit certified it".to_owned());
    }
    let failed: BTreeSet<&str> = outcome
        .requirements
        .iter()
        .filter(|r| r.verdict == Verdict::Failed)
        .map(|r| r.id.as_str())
        .collect();
    let named: BTreeSet<&str> = mutant.fails.iter().copied().collect();
    if failed != named {
        let missed: Vec<_> = named.difference(&failed).collect();
        let extra: Vec<_> = failed.difference(&named).collect();
        return Err(format!(
            "failed {failed:?}; not failed although named: {missed:?}; failed although not named: {extra:?}"
        ));
    }
    Ok(())
}

/// The focused run of one mutant: the reference runtime behind it, its requirements and
/// witnesses, the reference manifest.
fn focused(mutant: &Mutant) -> RunOptions {
    let mut options = RunOptions::new(wrapped(mutant.name));
    options.tags = Some(mutant.tags());
    options.timeout = WAIT;
    options.features = features();
    options.manifest = reference_manifest();
    options.report_dir =
        std::env::var_os("CONFORMANCE_REPORT_DIR").map(|dir| PathBuf::from(dir).join(mutant.name));
    options
}

fn features() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../features"))
}

fn reference_manifest() -> conformance::runtime_manifest::RuntimeManifest {
    let path = conformance::runtime_manifest::reference_manifest_path();
    conformance::runtime_manifest::RuntimeManifest::load(&path).unwrap_or_else(|error| {
        eprintln!("{error:#}");
        std::process::exit(2)
    })
}

/// This test binary as the mutant `name` around the reference runtime.
fn wrapped(name: &str) -> RuntimeCommand {
    let exe = std::env::current_exe()
        .map(|p| p.display().to_string())
        .unwrap_or_default();
    RuntimeCommand {
        program: exe,
        args: vec![
            MUTANT_WRAP.to_owned(),
            name.to_owned(),
            env!("CARGO_BIN_EXE_agent-runtime").to_owned(),
        ],
        display: format!("mutant-runtime {name} (agent-runtime)"),
    }
}

fn wrapper(args: &[String]) -> ExitCode {
    let Some((name, command)) = args.split_first() else {
        eprintln!("{MUTANT_WRAP} needs a mutant's name and the wrapped runtime's command");
        return ExitCode::from(2);
    };
    let Some((program, rest)) = command.split_first() else {
        eprintln!("{MUTANT_WRAP} needs the wrapped runtime's command");
        return ExitCode::from(2);
    };
    let tokio = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(tokio) => tokio,
        Err(error) => {
            eprintln!("mutant wrapper: cannot start tokio: {error}");
            return ExitCode::from(2);
        }
    };
    let code = tokio.block_on(conformance::mutant::run(name, program, rest));
    tokio.shutdown_timeout(Duration::from_millis(200));
    match code {
        Ok(code) => ExitCode::from(u8::try_from(code).unwrap_or(1)),
        Err(error) => {
            eprintln!("mutant wrapper: {error:#}");
            ExitCode::from(2)
        }
    }
}

/// `--fail-fast` both ways, one scenario at a time so the order is the files'.
async fn fail_fast_both_ways() -> anyhow::Result<()> {
    // A runtime that declares no knob: the approval-timeout scenarios are not applicable,
    // and the run must go on past them and certify.
    let tags = "@REQ-APR-006 or @REQ-APR-007 or @REQ-RPC-005 or @REQ-RPC-006 or @REQ-RPC-009";
    let mut options = RunOptions::new(RuntimeCommand::from_program(Path::new(env!(
        "CARGO_BIN_EXE_agent-runtime"
    ))));
    options.features = features();
    options.tags = Some(tags.to_owned());
    options.fail_fast = true;
    options.concurrency = 1;
    let clean = conformance::run(options.clone()).await?;
    let not_run: Vec<&str> = clean
        .requirements
        .iter()
        .filter(|r| r.verdict == Verdict::NotRun)
        .map(|r| r.id.as_str())
        .filter(|id| tags.contains(id))
        .collect();
    anyhow::ensure!(
        clean.passed && clean.incomplete.is_none() && not_run.is_empty(),
        "past a not-applicable scenario the run must go on and certify; not run: {not_run:?}\n{}",
        clean.summary()
    );
    anyhow::ensure!(
        clean.count(Verdict::NotApplicable) > 0,
        "the run should have met a not-applicable scenario\n{}",
        clean.summary()
    );
    // The same selection through a mutant that breaks REQ-RPC-006: the run stops there,
    // says so and does not certify.
    options.runtime = wrapped("method-not-found-as-internal");
    let stopped = conformance::run(options).await?;
    anyhow::ensure!(
        !stopped.passed && stopped.incomplete.is_some() && stopped.count(Verdict::NotRun) > 0,
        "a failure must stop the run, incomplete and not certified\n{}",
        stopped.summary()
    );
    Ok(())
}
