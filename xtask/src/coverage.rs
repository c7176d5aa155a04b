//! `cargo xtask coverage`: the catalogue and the feature files must agree. Fails when a MUST
//! requirement has no scenario, a tag names no requirement, a requirement has no spec
//! reference, or a scenario certifies nothing (no requirement tag).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;

use crate::catalogue::{Catalogue, Coverage, Level, scan_features};

#[derive(clap::Args)]
pub struct Args {
    /// Features directory holding requirements.toml (default: the repository's features/).
    #[arg(long, value_name = "DIR")]
    features: Option<PathBuf>,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let features = args.features.unwrap_or_else(crate::features_dir);
    let catalogue = Catalogue::load(&features.join("requirements.toml"))?;
    let scenarios = scan_features(&features)?;
    let coverage = Coverage::compute(&catalogue, &scenarios);

    println!(
        "{} requirements, {} scenarios (outlines counted once) in {}",
        catalogue.requirements.len(),
        scenarios.len(),
        features.display()
    );
    println!(
        "\n{:<6} {:>5} {:>8} {:>8}   uncovered",
        "area", "reqs", "covered", "MUSTs"
    );
    let mut per_area: BTreeMap<&str, (usize, usize, usize, Vec<&str>)> = BTreeMap::new();
    for requirement in &catalogue.requirements {
        let entry = per_area.entry(requirement.area()).or_default();
        entry.0 += 1;
        let covered = coverage
            .by_requirement
            .get(&requirement.id)
            .is_some_and(|s| !s.is_empty());
        if covered {
            entry.1 += 1;
        } else {
            entry.3.push(requirement.id.as_str());
        }
        if requirement.level == Level::Must {
            entry.2 += 1;
        }
    }
    for area in &catalogue.areas {
        let (total, covered, musts, uncovered) =
            per_area.remove(area.id.as_str()).unwrap_or_default();
        let percent = (covered * 100).checked_div(total).unwrap_or(100);
        println!(
            "{:<6} {:>5} {:>7}% {:>8}   {}",
            area.id,
            total,
            percent,
            musts,
            if uncovered.is_empty() {
                "-".to_owned()
            } else {
                uncovered.join(", ")
            }
        );
    }

    let problems = coverage.problems(&catalogue);
    if problems.is_empty() {
        println!("\ncoverage OK");
        return Ok(ExitCode::SUCCESS);
    }
    println!("\n{} problem(s):", problems.len());
    for problem in &problems {
        println!("  - {problem}");
    }
    Ok(ExitCode::FAILURE)
}
