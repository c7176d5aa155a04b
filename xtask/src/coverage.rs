//! `cargo xtask coverage`: the catalogue and the feature files must agree. Fails when a MUST
//! requirement has no scenario, a tag names no requirement, a requirement has no spec
//! reference, or a scenario certifies nothing (no requirement tag); and when a spec walk
//! record (`features/walk/*.toml`) misses, misorders or invents a heading of its document,
//! names an unknown id, or leaves a section without ids and without a note.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use crate::catalogue::{
    Catalogue, Coverage, Level, NotCertified, load_not_certified, not_certified_problems,
    scan_features,
};

#[derive(clap::Args)]
pub(crate) struct Args {
    /// Features directory holding requirements.toml (default: the repository's features/).
    #[arg(long, value_name = "DIR")]
    features: Option<PathBuf>,
    /// The spec documents the walk records in features/walk/ are checked against
    /// (default: ../shared/spec next to the repository).
    #[arg(long, value_name = "DIR")]
    spec: Option<PathBuf>,
}

pub(crate) fn run(args: Args) -> anyhow::Result<ExitCode> {
    let features = args.features.unwrap_or_else(crate::features_dir);
    let catalogue = Catalogue::load(&features.join("requirements.toml"))?;
    let scenarios = scan_features(&features)?;
    let coverage = Coverage::compute(&catalogue, &scenarios);
    let not_certified = load_not_certified(&features.join("not-certified.toml"))?;

    println!(
        "{} requirements, {} scenarios (outlines counted once) in {}",
        catalogue.requirements.len(),
        scenarios.len(),
        features.display()
    );
    print_areas(&catalogue, &coverage, &not_certified);
    print_profiles(&catalogue);
    print_not_certified(&catalogue, &not_certified);
    let mut problems = coverage.problems(&catalogue);
    problems.extend(not_certified_problems(
        &not_certified,
        &catalogue,
        &scenarios,
    ));
    let spec = args.spec.unwrap_or_else(crate::spec_dir);
    problems.extend(spec_walk(&features, &spec, &catalogue, &not_certified)?);
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

/// Per area: requirements, the share with a scenario, MUSTs, statements not certified, and
/// the ids still without a scenario.
fn print_areas(catalogue: &Catalogue, coverage: &Coverage, not_certified: &[NotCertified]) {
    println!(
        "\n{:<6} {:>5} {:>8} {:>8} {:>6}   uncovered",
        "area", "reqs", "covered", "MUSTs", "not c."
    );
    let mut per_area: BTreeMap<&str, (usize, usize, usize, Vec<&str>)> = BTreeMap::new();
    for requirement in &catalogue.requirements {
        let entry = per_area.entry(requirement.area()).or_default();
        entry.0 += 1;
        // A requirement that judges a kind of message is judged on every such message of
        // every scenario: it needs no scenario of its own.
        let covered = requirement.judges.is_some()
            || coverage
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
        let skipped = not_certified
            .iter()
            .filter(|n| crate::catalogue::area_of(&n.id) == area.id)
            .count();
        println!(
            "{:<6} {:>5} {:>7}% {:>8} {:>6}   {}",
            area.id,
            total,
            percent,
            musts,
            skipped,
            if uncovered.is_empty() {
                "-".to_owned()
            } else {
                uncovered.join(", ")
            }
        );
    }
}

/// Who must meet what: a runtime declares the profiles it claims (conformance/README.md,
/// "The runtime manifest"); only the MUSTs of declared profiles decide its certification.
fn print_profiles(catalogue: &Catalogue) {
    println!(
        "\n{:<10} {:>5} {:>6} {:>7} {:>4}   ids",
        "profile", "reqs", "MUST", "SHOULD", "MAY"
    );
    for profile in crate::catalogue::Profile::ALL {
        let of: Vec<_> = catalogue
            .requirements
            .iter()
            .filter(|r| r.profile == profile)
            .collect();
        let level = |l: Level| of.iter().filter(|r| r.level == l).count();
        let ids: Vec<&str> = of.iter().map(|r| r.id.as_str()).collect();
        println!(
            "{:<10} {:>5} {:>6} {:>7} {:>4}   {}",
            profile.as_str(),
            of.len(),
            level(Level::Must),
            level(Level::Should),
            level(Level::May),
            if ids.is_empty() {
                "-".to_owned()
            } else {
                ids.join(" ")
            }
        );
    }
}

fn print_not_certified(catalogue: &Catalogue, not_certified: &[NotCertified]) {
    let other_areas: Vec<&str> = not_certified
        .iter()
        .map(|n| crate::catalogue::area_of(&n.id))
        .filter(|area| catalogue.area(area).is_none())
        .collect();
    println!(
        "\n{} statement(s) deliberately not certified (features/not-certified.toml){}",
        not_certified.len(),
        if other_areas.is_empty() {
            String::new()
        } else {
            format!(
                ", {} outside the catalogue's areas ({})",
                other_areas.len(),
                other_areas.join(", ")
            )
        }
    );
}

/// The spec walk: every heading of each walked document, with ids that exist. Prints the
/// walk and returns its problems.
fn spec_walk(
    features: &Path,
    spec: &Path,
    catalogue: &Catalogue,
    not_certified: &[NotCertified],
) -> anyhow::Result<Vec<String>> {
    let known: BTreeSet<String> = catalogue
        .requirements
        .iter()
        .map(|r| r.id.clone())
        .chain(not_certified.iter().map(|n| n.id.clone()))
        .collect();
    let walk = crate::walk::check(&features.join("walk"), spec, &known)?;
    println!("\nspec walk (features/walk/ against {}):", spec.display());
    for doc in &walk.docs {
        println!(
            "  {:<24} walked {}/{} sections, {} ids{}",
            doc.doc,
            doc.walked,
            doc.headings,
            doc.ids,
            if doc.problems.is_empty() {
                ""
            } else {
                "  (problems below)"
            }
        );
    }
    let mut problems = Vec::new();
    if walk.spec_missing {
        println!(
            "  warning: {} does not exist, so the records' headings were not compared with the \
             documents (their ids were checked); pass --spec DIR",
            spec.display()
        );
    } else {
        for doc in &walk.not_walked {
            println!("  {doc:<24} not walked");
            problems.push(format!(
                "{doc} has no walk record (features/walk/{}.toml): every heading of it must be listed",
                doc.trim_end_matches(".md")
            ));
        }
    }
    problems.extend(walk.problems().cloned());
    Ok(problems)
}
