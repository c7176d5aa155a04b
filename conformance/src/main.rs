//! `conformance --runtime "<command>"`: certify a runtime. Exit 0 when certified, 1 when
//! not, 2 when the run could not happen (bad options, missing features). Subcommands for a
//! team adopting the kit: `init`, `baseline --write`, `diff`, `matrix` (see `adopt`).

// A program: the kit's summary and errors are for the person running it.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::process::ExitCode;
use std::time::Duration;

use clap::Parser as _;

fn main() -> ExitCode {
    let code = dispatch();
    conformance::builtin::cleanup();
    code
}

fn dispatch() -> ExitCode {
    match std::env::args().nth(1).as_deref() {
        Some("init") => return init(),
        Some("baseline") => return baseline(),
        Some("diff") => return diff(),
        Some("matrix") => return matrix(),
        _ => {}
    }
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

/// The arguments after the subcommand's name, with the name as the program.
fn sub_args() -> impl Iterator<Item = String> {
    let mut args: Vec<String> = std::env::args().collect();
    if args.len() > 1 {
        let name = args.remove(1);
        args[0] = format!("conformance {name}");
    }
    args.into_iter()
}

/// `conformance init`: a starter manifest.
fn init() -> ExitCode {
    let cli = conformance::adopt::InitCli::parse_from(sub_args());
    match conformance::adopt::init::write(&cli.name, &cli.output, cli.force) {
        Ok(()) => {
            println!(
                "wrote {}: fill in what {} supports, then
  conformance --runtime \"<command>\" --manifest {} --report-dir report
  conformance baseline --write baseline.toml --from report",
                cli.output.display(),
                cli.name,
                cli.output.display()
            );
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("conformance init: {error:#}");
            ExitCode::from(2)
        }
    }
}

/// `conformance baseline --write FILE [--from REPORT | run options]`.
fn baseline() -> ExitCode {
    let cli = conformance::adopt::BaselineCli::parse_from(sub_args());
    let record = match cli.from {
        Some(report) => conformance::adopt::record::RunRecord::load(&report),
        None => run_for_record(cli.run),
    };
    let written = record.and_then(|record| {
        let count = conformance::adopt::baseline_file::write(&record, &cli.write)?;
        Ok((record, count))
    });
    match written {
        Ok((record, count)) => {
            println!(
                "wrote {count} known failure(s) of {} to {}; certify with --baseline {}",
                record.label,
                cli.write.display(),
                cli.write.display()
            );
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("conformance baseline: {error:#}");
            ExitCode::from(2)
        }
    }
}

/// Runs the kit with `cli`'s options and reads its outcome back as a report would.
fn run_for_record(
    cli: conformance::cli::Cli,
) -> anyhow::Result<conformance::adopt::record::RunRecord> {
    let options = cli.into_options()?;
    let label = options.runtime.display.clone();
    let place = options
        .report_dir
        .as_ref()
        .map_or_else(|| "this run".into(), |dir| dir.join("outcome.json"));
    let tokio = runtime().ok_or_else(|| anyhow::anyhow!("cannot start tokio"))?;
    let outcome = tokio.block_on(conformance::run(options));
    tokio.shutdown_timeout(Duration::from_secs(2));
    let outcome = outcome?;
    println!("\n{}", outcome.summary());
    let mut record: conformance::adopt::record::RunRecord =
        serde_json::from_value(serde_json::to_value(&outcome)?)?;
    record.label = label;
    record.path = place;
    Ok(record)
}

/// `conformance diff OLD NEW`: exit 1 on a regression.
fn diff() -> ExitCode {
    let cli = conformance::adopt::DiffCli::parse_from(sub_args());
    let load = |path: &std::path::Path| conformance::adopt::record::RunRecord::load(path);
    let (old, new) = match (load(&cli.old), load(&cli.new)) {
        (Ok(old), Ok(new)) => (old, new),
        (Err(error), _) | (_, Err(error)) => {
            eprintln!("conformance diff: {error:#}");
            return ExitCode::from(2);
        }
    };
    let diff = conformance::adopt::diff::compare(&old, &new);
    let text = conformance::adopt::diff::render(&diff, &old, &new);
    print!("{text}");
    if let Some(file) = &cli.output
        && let Err(error) = std::fs::write(file, &text)
    {
        eprintln!("conformance diff: cannot write {}: {error}", file.display());
        return ExitCode::from(2);
    }
    if diff.regressed() {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

/// `conformance matrix REPORT…`.
fn matrix() -> ExitCode {
    let cli = conformance::adopt::MatrixCli::parse_from(sub_args());
    let runs: Result<Vec<_>, _> = cli
        .reports
        .iter()
        .map(|path| conformance::adopt::record::RunRecord::load(path))
        .collect();
    let written = runs.and_then(|runs| {
        let page = conformance::adopt::matrix::render(&runs);
        std::fs::write(&cli.output, page)
            .map_err(|error| anyhow::anyhow!("cannot write {}: {error}", cli.output.display()))?;
        Ok(runs.len())
    });
    match written {
        Ok(count) => {
            println!("wrote {} ({count} runtime(s))", cli.output.display());
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("conformance matrix: {error:#}");
            ExitCode::from(2)
        }
    }
}

fn runtime() -> Option<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .inspect_err(|error| eprintln!("conformance: cannot start tokio: {error}"))
        .ok()
}
