//! `conformance --runtime "<command>"`: certify a runtime. Exit 0 when certified, 1 when
//! not, 2 when the run could not happen (bad options, missing features).

// A program: the kit's summary and errors are for the person running it.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::process::ExitCode;
use std::time::Duration;

use clap::Parser as _;

fn main() -> ExitCode {
    if std::env::args().nth(1).as_deref() == Some("crash") {
        return crash(std::env::args().skip(1));
    }
    if std::env::args().nth(1).as_deref() == Some("variance-runtime") {
        return variance(std::env::args().skip(2).collect());
    }
    if std::env::args().nth(1).as_deref() == Some("mutant-runtime") {
        return mutant(std::env::args().skip(2).collect());
    }
    let cli = conformance::cli::Cli::parse();
    let report_dir = cli.report_dir.clone();
    let options = match cli.into_options() {
        Ok(options) => options,
        Err(error) => {
            eprintln!("conformance: {error:#}");
            return ExitCode::from(2);
        }
    };
    let Some(tokio) = runtime() else {
        return ExitCode::from(2);
    };
    let result = tokio.block_on(conformance::run(options));
    // Do not wait on a fake that would not stop: the verdict is already known.
    tokio.shutdown_timeout(Duration::from_secs(2));
    match result {
        Ok(outcome) => {
            println!("\n{}", outcome.summary());
            if let Some(dir) = report_dir {
                println!("report: {}", dir.join("certification.md").display());
            }
            if outcome.passed {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            }
        }
        Err(error) => {
            eprintln!("conformance: {error:#}");
            ExitCode::from(2)
        }
    }
}

/// `conformance variance-runtime PROGRAM [ARGS…]`: the permissible-variance runtime around
/// PROGRAM (see `conformance::variance`), to certify with `manifests/variance.toml`.
fn variance(args: Vec<String>) -> ExitCode {
    let Some((program, rest)) = args.split_first() else {
        eprintln!("usage: conformance variance-runtime PROGRAM [ARGS…]");
        return ExitCode::from(2);
    };
    let Some(tokio) = runtime() else {
        return ExitCode::from(2);
    };
    let code = tokio.block_on(conformance::variance::run(program, rest));
    tokio.shutdown_timeout(Duration::from_millis(200));
    match code {
        Ok(code) => ExitCode::from(u8::try_from(code).unwrap_or(1)),
        Err(error) => {
            eprintln!("conformance variance-runtime: {error:#}");
            ExitCode::from(2)
        }
    }
}

/// `conformance mutant-runtime --mutant NAME PROGRAM [ARGS…]` (or `--list`): PROGRAM with
/// one named thing broken on the wire (see `conformance::mutant`).
fn mutant(args: Vec<String>) -> ExitCode {
    const USAGE: &str = "usage: conformance mutant-runtime --mutant NAME PROGRAM [ARGS…] | --list";
    let name = match args.first().map(String::as_str) {
        Some("--list") => {
            println!("{}", conformance::mutant::listing());
            return ExitCode::SUCCESS;
        }
        Some("--mutant") => args.get(1),
        _ => None,
    };
    let (Some(name), Some((program, rest))) = (name, args.get(2..).and_then(<[_]>::split_first))
    else {
        eprintln!("{USAGE}");
        return ExitCode::from(2);
    };
    let Some(tokio) = runtime() else {
        return ExitCode::from(2);
    };
    let code = tokio.block_on(conformance::mutant::run(name, program, rest));
    tokio.shutdown_timeout(Duration::from_millis(200));
    match code {
        Ok(code) => ExitCode::from(u8::try_from(code).unwrap_or(1)),
        Err(error) => {
            eprintln!("conformance mutant-runtime: {error:#}");
            ExitCode::from(2)
        }
    }
}

/// `conformance crash …`: the crash campaign (see `conformance::crash`).
fn crash(args: impl Iterator<Item = String>) -> ExitCode {
    let options = match conformance::crash::CrashCli::parse_from(args).into_options() {
        Ok(options) => options,
        Err(error) => {
            eprintln!("conformance crash: {error:#}");
            return ExitCode::from(2);
        }
    };
    let Some(tokio) = runtime() else {
        return ExitCode::from(2);
    };
    let report = tokio.block_on(conformance::crash::run_campaign(&options));
    tokio.shutdown_timeout(Duration::from_secs(2));
    for failure in &report.failures {
        eprintln!("FAILED {failure}");
    }
    println!("{}", report.summary());
    if report.passed() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

fn runtime() -> Option<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .inspect_err(|error| eprintln!("conformance: cannot start tokio: {error}"))
        .ok()
}
