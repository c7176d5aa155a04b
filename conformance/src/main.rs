//! `conformance --runtime "<command>"`: certify a runtime. Exit 0 when certified, 1 when
//! not, 2 when the run could not happen (bad options, missing features).

use std::process::ExitCode;

use clap::Parser as _;

#[tokio::main]
async fn main() -> ExitCode {
    let cli = conformance::cli::Cli::parse();
    let report_dir = cli.report_dir.clone();
    let options = match cli.into_options() {
        Ok(options) => options,
        Err(error) => {
            eprintln!("conformance: {error:#}");
            return ExitCode::from(2);
        }
    };
    match conformance::run(options).await {
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
