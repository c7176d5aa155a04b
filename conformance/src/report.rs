//! The certification report: which requirements the runtime meets, built from the
//! requirement catalogue and cucumber's JSON output (each scenario's tags name the
//! requirements it certifies). Written as `certification.md` for people and `outcome.json`
//! for tools (`cargo xtask certify` reads it).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::Context;
use serde::Serialize;
use serde_json::Value;

use crate::catalogue::{Catalogue, Level, REQUIREMENT_PREFIX, ScenarioRef};

/// Counters from cucumber's summarizing writer.
#[derive(Debug, Clone, Copy, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RunStats {
    pub passed_steps: usize,
    pub failed_steps: usize,
    pub skipped_steps: usize,
    pub parsing_errors: usize,
    pub hook_errors: usize,
    pub execution_failed: bool,
}

/// What the report says about the run besides results.
#[derive(Debug, Clone)]
pub struct ReportContext {
    pub runtime: String,
    pub started_at: time::OffsetDateTime,
    pub finished_at: time::OffsetDateTime,
    pub features: PathBuf,
    pub tags: Option<String>,
    pub name: Option<String>,
    pub stats: RunStats,
    pub transcripts_dir: Option<PathBuf>,
}

/// One scenario as cucumber reported it.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ScenarioResult {
    pub uri: String,
    pub feature: String,
    pub name: String,
    pub line: usize,
    pub tags: Vec<String>,
    pub passed: bool,
    /// The first failing step (or hook) and its error.
    pub failure: Option<String>,
}

impl ScenarioResult {
    fn requirement_ids(&self) -> impl Iterator<Item = &str> {
        self.tags
            .iter()
            .map(|t| t.trim_start_matches('@'))
            .filter(|t| t.starts_with(REQUIREMENT_PREFIX))
    }
}

/// A requirement's verdict in this run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Verdict {
    /// At least one of its scenarios failed.
    Failed,
    /// All of its scenarios that ran passed.
    Passed,
    /// It has scenarios, but the filter left them out.
    NotRun,
    /// No scenario carries its tag (a gap in the kit, see `cargo xtask coverage`).
    Uncovered,
}

impl Verdict {
    fn label(self) -> &'static str {
        match self {
            Verdict::Failed => "❌ failed",
            Verdict::Passed => "✅ passed",
            Verdict::NotRun => "⏭ not run",
            Verdict::Uncovered => "⚠ no scenario",
        }
    }
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RequirementOutcome {
    pub id: String,
    pub level: String,
    pub statement: String,
    pub spec: String,
    pub verdict: Verdict,
    /// Indexes into [`Outcome::scenarios`].
    pub scenarios: Vec<usize>,
}

/// The result of a run.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Outcome {
    /// Every scenario that ran passed, at least one ran, and cucumber saw no error.
    pub passed: bool,
    pub scenarios: Vec<ScenarioResult>,
    pub requirements: Vec<RequirementOutcome>,
    /// Requirement tags in the run that the catalogue does not know.
    pub unknown_tags: Vec<String>,
    pub stats: RunStats,
}

impl Outcome {
    pub fn count(&self, verdict: Verdict) -> usize {
        self.requirements
            .iter()
            .filter(|r| r.verdict == verdict)
            .count()
    }

    pub fn failed_scenarios(&self) -> usize {
        self.scenarios.iter().filter(|s| !s.passed).count()
    }

    /// Ids of the failed requirements, MUSTs first.
    pub fn failed_requirements(&self) -> Vec<&RequirementOutcome> {
        let mut failed: Vec<_> = self
            .requirements
            .iter()
            .filter(|r| r.verdict == Verdict::Failed)
            .collect();
        failed.sort_by_key(|r| (level_rank(&r.level), r.id.clone()));
        failed
    }

    /// A few lines for a terminal.
    pub fn summary(&self) -> String {
        let total = self.scenarios.len();
        let mut text = format!(
            "{}: {} of {} scenarios passed; requirements: {} passed, {} failed, {} not run, {} without scenario",
            if self.passed {
                "CERTIFIED"
            } else {
                "NOT CERTIFIED"
            },
            total - self.failed_scenarios(),
            total,
            self.count(Verdict::Passed),
            self.count(Verdict::Failed),
            self.count(Verdict::NotRun),
            self.count(Verdict::Uncovered),
        );
        let failed = self.failed_requirements();
        if !failed.is_empty() {
            text.push_str("\nfailed requirements:");
            for requirement in failed {
                let _ = write!(
                    text,
                    "\n  {} [{}] {}",
                    requirement.id, requirement.level, requirement.statement
                );
            }
        }
        if total == 0 {
            text.push_str("\nno scenario ran (check --tags / --name)");
        }
        text
    }
}

fn level_rank(level: &str) -> u8 {
    match level {
        "MUST" => 0,
        "SHOULD" => 1,
        _ => 2,
    }
}

/// The transcript file of a scenario, derived from its feature file and line so that the
/// after-hook (which writes it) and the report (which links it) agree without talking.
pub fn transcript_file_name(feature_path: Option<&Path>, line: usize) -> String {
    let (dir, stem) = match feature_path {
        Some(path) => (
            path.parent()
                .and_then(Path::file_name)
                .map(|d| d.to_string_lossy().into_owned())
                .unwrap_or_default(),
            path.file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default(),
        ),
        None => (String::new(), "scenario".to_owned()),
    };
    let base = if dir.is_empty() {
        stem
    } else {
        format!("{dir}-{stem}")
    };
    format!("{base}-L{line}.log")
}

/// Reads cucumber's JSON report into one result per scenario. Background steps come as a
/// separate element (after the scenario's, with the same name and line); their failure is
/// counted against the scenario they ran for.
pub fn parse_cucumber_json(text: &str) -> anyhow::Result<Vec<ScenarioResult>> {
    let features: Value =
        serde_json::from_str(text).context("cucumber's JSON report is not JSON")?;
    let mut results: Vec<ScenarioResult> = Vec::new();
    for feature in features.as_array().map(Vec::as_slice).unwrap_or_default() {
        let uri = feature
            .get("uri")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned();
        let feature_name = feature
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned();
        let first = results.len();
        let mut background_failures: Vec<(usize, String, String)> = Vec::new();
        for element in feature
            .get("elements")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default()
        {
            let name = element
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned();
            let line = element.get("line").and_then(Value::as_u64).unwrap_or(0) as usize;
            let failure = first_failure(element);
            if element.get("type").and_then(Value::as_str) == Some("background") {
                if let Some(failure) = failure {
                    background_failures.push((line, name, format!("(background) {failure}")));
                }
                continue;
            }
            results.push(ScenarioResult {
                uri: uri.clone(),
                feature: feature_name.clone(),
                name,
                line,
                tags: element
                    .get("tags")
                    .and_then(Value::as_array)
                    .map(|tags| {
                        tags.iter()
                            .filter_map(|t| t.get("name").and_then(Value::as_str))
                            .map(|t| t.trim_start_matches('@').to_owned())
                            .collect()
                    })
                    .unwrap_or_default(),
                passed: failure.is_none(),
                failure,
            });
        }
        for (line, name, failure) in background_failures {
            if let Some(scenario) = results[first..]
                .iter_mut()
                .find(|s| s.line == line && s.name == name)
            {
                scenario.passed = false;
                scenario.failure = Some(match scenario.failure.take() {
                    Some(own) => format!("{failure}\n{own}"),
                    None => failure,
                });
            }
        }
    }
    Ok(results)
}

/// cucumber wraps a step's error in "Matched: <file:line>" and "Step panicked. Captured
/// output:" lines; the report shows only the kit's own message.
fn clean_error(message: &str) -> String {
    message
        .lines()
        .filter(|line| !line.trim_start().starts_with("Matched: "))
        .map(|line| {
            line.trim_start()
                .strip_prefix("Step panicked. Captured output: ")
                .or_else(|| line.trim_start().strip_prefix("Captured output: "))
                .map_or_else(|| line.to_owned(), str::to_owned)
        })
        .collect::<Vec<_>>()
        .join("\n")
        .trim()
        .to_owned()
}

fn first_failure(element: &Value) -> Option<String> {
    let failed = |result: &Value| {
        let status = result
            .get("status")
            .and_then(Value::as_str)
            .unwrap_or("failed");
        (status != "passed").then(|| {
            let message = result
                .get("error_message")
                .and_then(Value::as_str)
                .unwrap_or(status);
            clean_error(message)
        })
    };
    let list = |key: &str| {
        element
            .get(key)
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
    };
    for hook in list("before") {
        if let Some(message) = hook.get("result").and_then(failed) {
            return Some(format!("before hook: {message}"));
        }
    }
    for step in list("steps") {
        if let Some(message) = step.get("result").and_then(failed) {
            let keyword = step
                .get("keyword")
                .and_then(Value::as_str)
                .unwrap_or("")
                .trim();
            let name = step.get("name").and_then(Value::as_str).unwrap_or("");
            return Some(format!("{keyword} {name}: {message}"));
        }
    }
    for hook in list("after") {
        if let Some(message) = hook.get("result").and_then(failed) {
            return Some(format!("end-of-scenario check: {message}"));
        }
    }
    None
}

/// Joins the run's results with the catalogue.
pub fn build_outcome(
    catalogue: &Catalogue,
    scanned: &[ScenarioRef],
    scenarios: &[ScenarioResult],
    context: &ReportContext,
) -> Outcome {
    let mut by_requirement: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    let mut unknown = Vec::new();
    for (index, scenario) in scenarios.iter().enumerate() {
        for id in scenario.requirement_ids() {
            if catalogue.get(id).is_some() {
                by_requirement.entry(id).or_default().push(index);
            } else if !unknown.iter().any(|u: &String| u == id) {
                unknown.push(id.to_owned());
            }
        }
    }
    let requirements = catalogue
        .requirements
        .iter()
        .map(|requirement| {
            let ran = by_requirement
                .get(requirement.id.as_str())
                .cloned()
                .unwrap_or_default();
            let verdict = if ran.iter().any(|&i| !scenarios[i].passed) {
                Verdict::Failed
            } else if !ran.is_empty() {
                Verdict::Passed
            } else if scanned
                .iter()
                .any(|s| s.requirement_tags().any(|t| t == requirement.id))
            {
                Verdict::NotRun
            } else {
                Verdict::Uncovered
            };
            RequirementOutcome {
                id: requirement.id.clone(),
                level: requirement.level.to_string(),
                statement: requirement.statement.clone(),
                spec: requirement.spec.clone(),
                verdict,
                scenarios: ran,
            }
        })
        .collect();
    let stats = context.stats;
    let passed = !scenarios.is_empty()
        && scenarios.iter().all(|s| s.passed)
        && !stats.execution_failed
        && stats.parsing_errors == 0;
    Outcome {
        passed,
        scenarios: scenarios.to_vec(),
        requirements,
        unknown_tags: unknown,
        stats,
    }
}

/// Writes `certification.md` and `outcome.json` into `dir`.
pub fn write_reports(
    dir: &Path,
    catalogue: &Catalogue,
    outcome: &Outcome,
    context: &ReportContext,
) -> anyhow::Result<()> {
    let markdown = render_markdown(catalogue, outcome, context);
    let path = dir.join("certification.md");
    std::fs::write(&path, markdown).with_context(|| format!("cannot write {}", path.display()))?;
    let path = dir.join("outcome.json");
    let json = serde_json::to_string_pretty(outcome)?;
    std::fs::write(&path, json).with_context(|| format!("cannot write {}", path.display()))?;
    Ok(())
}

fn cell(text: &str) -> String {
    text.replace('|', "\\|").replace('\n', "<br>")
}

fn abridge(text: &str, max: usize) -> String {
    crate::driver::excerpt(text).chars().take(max).collect()
}

fn rfc3339(at: time::OffsetDateTime) -> String {
    at.format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_else(|_| at.to_string())
}

/// The Markdown report: verdict, totals, failed requirements first, then the full matrix.
pub fn render_markdown(
    catalogue: &Catalogue,
    outcome: &Outcome,
    context: &ReportContext,
) -> String {
    let mut md = String::new();
    let verdict = if outcome.passed {
        "✅ CERTIFIED"
    } else {
        "❌ NOT CERTIFIED"
    };
    let _ = writeln!(md, "# Conformance certification — {verdict}\n");
    let _ = writeln!(md, "| | |\n|---|---|");
    let _ = writeln!(md, "| Runtime command | `{}` |", cell(&context.runtime));
    let _ = writeln!(md, "| Started | {} |", rfc3339(context.started_at));
    let _ = writeln!(md, "| Finished | {} |", rfc3339(context.finished_at));
    let _ = writeln!(md, "| Features | `{}` |", context.features.display());
    if let Some(tags) = &context.tags {
        let _ = writeln!(md, "| Tag filter | `{}` |", cell(tags));
    }
    if let Some(name) = &context.name {
        let _ = writeln!(md, "| Name filter | `{}` |", cell(name));
    }
    let total = outcome.scenarios.len();
    let _ = writeln!(
        md,
        "| Scenarios | {} passed, {} failed, {} total |",
        total - outcome.failed_scenarios(),
        outcome.failed_scenarios(),
        total
    );
    let s = &outcome.stats;
    let _ = writeln!(
        md,
        "| Steps | {} passed, {} failed, {} skipped |",
        s.passed_steps, s.failed_steps, s.skipped_steps
    );
    let _ = writeln!(
        md,
        "| Requirements | {} passed, {} failed, {} not run, {} without scenario (of {}) |",
        outcome.count(Verdict::Passed),
        outcome.count(Verdict::Failed),
        outcome.count(Verdict::NotRun),
        outcome.count(Verdict::Uncovered),
        outcome.requirements.len()
    );
    if s.parsing_errors > 0 {
        let _ = writeln!(md, "| Feature parsing errors | {} |", s.parsing_errors);
    }
    if total == 0 {
        let _ = writeln!(md, "\n**No scenario ran** — check the tag/name filter.");
    }

    let failed = outcome.failed_requirements();
    if !failed.is_empty() {
        let _ = writeln!(md, "\n## Failed requirements\n");
        for requirement in failed {
            let _ = writeln!(
                md,
                "### {} ({}) — {}\n\n_Spec: {}_\n",
                requirement.id, requirement.level, requirement.statement, requirement.spec
            );
            for &index in &requirement.scenarios {
                let scenario = &outcome.scenarios[index];
                if scenario.passed {
                    continue;
                }
                let _ = writeln!(
                    md,
                    "- **{}** (`{}:{}`)",
                    scenario.name, scenario.uri, scenario.line
                );
                if let Some(failure) = &scenario.failure {
                    let _ = writeln!(
                        md,
                        "\n  ```text\n{}\n  ```",
                        indent(&abridge(failure, 2500), "  ")
                    );
                }
                if let Some(dir) = &context.transcripts_dir {
                    let file = transcript_file_name(Some(Path::new(&scenario.uri)), scenario.line);
                    if dir.join(&file).exists() {
                        let _ = writeln!(md, "  Transcript: `transcripts/{file}`");
                    }
                }
            }
            md.push('\n');
        }
    }

    let _ = writeln!(md, "\n## Requirement matrix\n");
    for area in &catalogue.areas {
        let rows: Vec<_> = outcome
            .requirements
            .iter()
            .filter(|r| crate::catalogue::area_of(&r.id) == area.id)
            .collect();
        if rows.is_empty() {
            continue;
        }
        let _ = writeln!(md, "### {} — {}\n", area.id, area.title);
        let _ = writeln!(
            md,
            "| Requirement | Level | Result | Statement | Scenarios |\n|---|---|---|---|---|"
        );
        for requirement in rows {
            let scenarios = requirement
                .scenarios
                .iter()
                .map(|&i| {
                    let s = &outcome.scenarios[i];
                    format!("{} {}", if s.passed { "✅" } else { "❌" }, s.name)
                })
                .collect::<Vec<_>>()
                .join("<br>");
            let _ = writeln!(
                md,
                "| {} | {} | {} | {} | {} |",
                requirement.id,
                requirement.level,
                requirement.verdict.label(),
                cell(&requirement.statement),
                cell(&scenarios)
            );
        }
        md.push('\n');
    }

    if !outcome.unknown_tags.is_empty() {
        let _ = writeln!(
            md,
            "## Tags naming no catalogue requirement\n\n{}\n",
            outcome
                .unknown_tags
                .iter()
                .map(|t| format!("`@{t}`"))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    let uncovered_musts: Vec<_> = catalogue
        .requirements
        .iter()
        .filter(|r| r.level == Level::Must)
        .filter(|r| {
            outcome
                .requirements
                .iter()
                .any(|o| o.id == r.id && o.verdict == Verdict::Uncovered)
        })
        .map(|r| r.id.as_str())
        .collect();
    if !uncovered_musts.is_empty() {
        let _ = writeln!(
            md,
            "## MUST requirements without a scenario\n\n{}\n",
            uncovered_musts.join(", ")
        );
    }

    let _ = writeln!(md, "## Scenarios\n");
    let mut order: Vec<&ScenarioResult> = outcome.scenarios.iter().collect();
    order.sort_by_key(|s| (s.passed, s.uri.clone(), s.line));
    let _ = writeln!(
        md,
        "| Result | Scenario | Location | Requirements |\n|---|---|---|---|"
    );
    for scenario in order {
        let ids: Vec<&str> = scenario.requirement_ids().collect();
        let _ = writeln!(
            md,
            "| {} | {} | `{}:{}` | {} |",
            if scenario.passed { "✅" } else { "❌" },
            cell(&scenario.name),
            cell(&scenario.uri),
            scenario.line,
            ids.join(" ")
        );
    }
    md
}

fn indent(text: &str, prefix: &str) -> String {
    text.lines()
        .map(|l| format!("{prefix}{l}"))
        .collect::<Vec<_>>()
        .join("\n")
}
