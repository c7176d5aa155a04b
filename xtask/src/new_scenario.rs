//! `cargo xtask new-scenario <REQ-ID>`: appends a tagged scenario skeleton for a requirement
//! to its area's feature file (or prints it with `--print`), and lists the existing step
//! texts that share words with the requirement, so a new scenario reuses the vocabulary
//! instead of growing a synonym of it.
//!
//! The skeleton's steps are TODOs that match no step definition: the certification fails
//! (undefined steps fail the run) until someone writes the scenario for real.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use regex::Regex;

use crate::catalogue::{Catalogue, Coverage, scan_features};

#[derive(clap::Args)]
pub(crate) struct Args {
    /// The requirement to write a scenario for, e.g. REQ-RPC-018.
    id: String,
    /// Print the skeleton instead of appending it.
    #[arg(long)]
    print: bool,
    /// Feature file to append to, relative to features/ (default: the area's file from the
    /// catalogue's [[area]] table).
    #[arg(long, value_name = "FILE")]
    file: Option<PathBuf>,
}

/// Words too common to say anything about overlap.
const STOP_WORDS: &[&str] = &[
    "the", "a", "an", "and", "or", "of", "to", "in", "on", "is", "are", "be", "with", "for", "its",
    "it", "as", "at", "by", "that", "this", "every", "each", "from", "not", "no", "any", "when",
    "then", "than", "one", "has", "have", "into", "after", "before", "while", "runtime", "client",
];

fn words(text: &str) -> BTreeSet<String> {
    text.split(|c: char| !c.is_alphanumeric() && c != '_')
        .map(str::to_lowercase)
        .filter(|w| w.len() >= 3 && !STOP_WORDS.contains(&w.as_str()))
        .collect()
}

/// `(keyword, text)` of every step attribute in the kit's step modules.
fn step_texts() -> anyhow::Result<Vec<(String, String)>> {
    // `"text"`, `r"text"` or `r#"text"#` (steps whose regex contains quotes).
    let pattern = Regex::new(
        r##"#\[(given|when|then)\(\s*(?:(?:expr|regex)\s*=\s*)?(?:r#"(.*?)"#|r"([^"]*)"|"((?:[^"\\]|\\.)*)")\s*\)\]"##,
    )?;
    let dir = crate::workspace_root().join("conformance/src/steps");
    let mut found = Vec::new();
    let mut entries: Vec<_> = std::fs::read_dir(&dir)
        .with_context(|| format!("cannot list {}", dir.display()))?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "rs"))
        .collect();
    entries.sort();
    for path in entries {
        let text = std::fs::read_to_string(&path)?;
        for capture in pattern.captures_iter(&text) {
            let step = (2..=4)
                .find_map(|group| capture.get(group))
                .map_or("", |m| m.as_str());
            found.push((capture[1].to_owned(), step.to_owned()));
        }
    }
    Ok(found)
}

pub(crate) fn run(args: Args) -> anyhow::Result<ExitCode> {
    let features = crate::features_dir();
    let catalogue = Catalogue::load(&features.join("requirements.toml"))?;
    let requirement = catalogue.get(&args.id).with_context(|| {
        format!(
            "{} is not in features/requirements.toml; add it there first",
            args.id
        )
    })?;
    let area = catalogue
        .area(requirement.area())
        .with_context(|| format!("area {} has no [[area]] entry", requirement.area()))?;

    let scenarios = scan_features(&features)?;
    let coverage = Coverage::compute(&catalogue, &scenarios);
    if let Some(existing) = coverage
        .by_requirement
        .get(&requirement.id)
        .filter(|s| !s.is_empty())
    {
        println!("{} is already certified by:", requirement.id);
        for scenario in existing {
            println!("  {}:{}  {}", scenario.file, scenario.line, scenario.name);
        }
        println!();
    }

    let mut title = requirement.statement.trim_end_matches('.').to_owned();
    if let Some(first) = title.get(..1) {
        title = format!("{}{}", first.to_lowercase(), title.get(1..).unwrap_or(""));
    }
    let skeleton = format!(
        "\n  @{id}\n  Scenario: {title}\n    # {level}, {spec}\n    Given TODO the situation, in the domain's words\n    When TODO what the client or a service does\n    Then TODO what the client or a service observes\n",
        id = requirement.id,
        level = requirement.level,
        spec = requirement.spec,
    );

    let target = features.join(args.file.unwrap_or_else(|| PathBuf::from(&area.feature)));
    if args.print {
        println!("{skeleton}");
    } else {
        let mut text = std::fs::read_to_string(&target)
            .unwrap_or_else(|_| format!("Feature: {}\n", area.title));
        if !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str(&skeleton);
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(&target, text)
            .with_context(|| format!("cannot write {}", target.display()))?;
        println!(
            "appended a scenario skeleton for {} to {}",
            requirement.id,
            target.display()
        );
        println!(
            "(its TODO steps match no step definition, so certification fails until it is written)"
        );
    }

    let wanted = words(&requirement.statement);
    let mut ranked: Vec<(usize, String, String)> = step_texts()?
        .into_iter()
        .map(|(keyword, text)| {
            let shared = words(&text).intersection(&wanted).count();
            (shared, keyword, text)
        })
        .filter(|(shared, _, _)| *shared > 0)
        .collect();
    ranked.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.2.cmp(&b.2)));
    if ranked.is_empty() {
        println!("\nno existing step shares words with the requirement");
    } else {
        println!("\nexisting steps that share words with the requirement:");
        for (shared, keyword, text) in ranked.into_iter().take(12) {
            println!("  [{shared}] {:<5} {text}", keyword.to_uppercase());
        }
    }
    Ok(ExitCode::SUCCESS)
}
