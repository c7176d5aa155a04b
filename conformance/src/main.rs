//! `conformance --runtime "<command>"`: certify a runtime. Exit 0 when certified, 1 when
//! not, 2 when the run could not happen (bad options, missing features).

use std::process::ExitCode;
use std::time::Duration;

use clap::Parser as _;

fn main() -> ExitCode {
    let cli = conformance::cli::Cli::parse();
    let report_dir = cli.report_dir.clone();
    let options = match cli.into_options() {
        Ok(options) => options,
        Err(error) => {
            eprintln!("conformance: {error:#}");
            return ExitCode::from(2);
        }
    };
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
