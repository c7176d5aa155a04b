//! The certification report: which requirements the runtime meets, built from the
//! requirement catalogue and cucumber's JSON output (each scenario's tags name the
//! requirements it certifies). Written as `certification.md` for people and `outcome.json`
//! for tools (`cargo xtask certify` reads it), `certification.html` (self-contained, with a
//! filterable requirement matrix) and `manifest.json` (what was certified, by what, when).

pub mod html;
pub mod manifest;
mod markdown;

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::Context;
use serde::Serialize;
use serde_json::Value;

use crate::catalogue::{Catalogue, REQUIREMENT_PREFIX, ScenarioRef};

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
    /// `stdio` or `socket`.
    pub transport: String,
    /// Runtime, kit, catalogue, dates, OS.
    pub manifest: manifest::Manifest,
    /// What the kit deliberately does not certify (`features/not-certified.toml`).
    pub not_certified: Vec<crate::catalogue::NotCertified>,
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
    /// A failed scenario the baseline names: its reason (the failure does not fail the run).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub baselined: Option<String>,
}

impl ScenarioResult {
    pub(crate) fn requirement_ids(&self) -> impl Iterator<Item = &str> {
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
    /// Failed, and every failed scenario of it is a known failure of the baseline.
    pub baselined: bool,
}

/// The result of a run.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Outcome {
    /// Every scenario that ran passed (or, with a baseline, every failure is a known one
    /// and no baseline entry is stale), at least one ran, and cucumber saw no error.
    pub passed: bool,
    pub scenarios: Vec<ScenarioResult>,
    pub requirements: Vec<RequirementOutcome>,
    /// Requirement tags in the run that the catalogue does not know.
    pub unknown_tags: Vec<String>,
    pub stats: RunStats,
    /// `stdio` or `socket`.
    pub transport: String,
    /// What `--baseline` did, when one was given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub baseline: Option<crate::baseline::BaselineOutcome>,
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
                if requirement.baselined {
                    text.push_str(" (known failure, baselined)");
                }
            }
        }
        if let Some(baseline) = &self.baseline {
            let _ = write!(
                text,
                "\nbaseline {}: {} known failure(s) baselined, {} new failure(s), {} stale entr(y/ies)",
                baseline.file,
                baseline.known_failures.len(),
                baseline.new_failures.len(),
                baseline.stale.len()
            );
            for stale in &baseline.stale {
                let _ = write!(
                    text,
                    "\n  STALE {}: now passes, remove it from the baseline (reason was: {})",
                    stale.entry.label(),
                    stale.entry.reason
                );
            }
            for &index in &baseline.new_failures {
                let scenario = &self.scenarios[index];
                let _ = write!(
                    text,
                    "\n  NEW FAILURE {} ({}:{})",
                    scenario.name, scenario.uri, scenario.line
                );
            }
        }
        if total == 0 {
            text.push_str("\nno scenario ran (check --tags / --name)");
        }
        text
    }
}

/// RFC 3339, or the default formatting if that fails.
pub(crate) fn rfc3339(at: time::OffsetDateTime) -> String {
    at.format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_else(|_| at.to_string())
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
                baselined: None,
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
pub(crate) fn clean_error(message: &str) -> String {
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
                baselined: false,
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
        transport: context.transport.clone(),
        baseline: None,
    }
}

/// Writes `certification.md`, `certification.html`, `outcome.json` and `manifest.json`
/// into `dir`.
pub fn write_reports(
    dir: &Path,
    catalogue: &Catalogue,
    outcome: &Outcome,
    context: &ReportContext,
) -> anyhow::Result<()> {
    let markdown = markdown::render(catalogue, outcome, context);
    let path = dir.join("certification.md");
    std::fs::write(&path, markdown).with_context(|| format!("cannot write {}", path.display()))?;
    let path = dir.join("outcome.json");
    let json = serde_json::to_string_pretty(outcome)?;
    std::fs::write(&path, json).with_context(|| format!("cannot write {}", path.display()))?;
    let path = dir.join("certification.html");
    let page = html::render(catalogue, outcome, context, &context.manifest);
    std::fs::write(&path, page).with_context(|| format!("cannot write {}", path.display()))?;
    let path = dir.join("manifest.json");
    let json = serde_json::to_string_pretty(&context.manifest)?;
    std::fs::write(&path, json).with_context(|| format!("cannot write {}", path.display()))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_background_fails_its_scenario_and_cucumber_noise_is_dropped() {
        let json = r#"[{"uri": "features/task/events.feature", "name": "F", "elements": [
            {"type": "scenario", "name": "s", "line": 14, "tags": [{"name": "REQ-EVT-001", "line": 13}],
             "steps": [], "after": [{"result": {"status": "passed", "duration": 1}}]},
            {"type": "background", "name": "s", "line": 14, "tags": [],
             "steps": [{"keyword": "Given ", "name": "a running session", "line": 7,
                        "result": {"status": "failed", "duration": 1,
                                   "error_message": "Matched: x.rs:1:1\nStep panicked. Captured output: it broke"}}]},
            {"type": "scenario", "name": "t", "line": 20, "tags": [], "steps": [
                {"keyword": "Then ", "name": "ok", "line": 21, "result": {"status": "passed", "duration": 1}}]}
        ]}]"#;
        let results = parse_cucumber_json(json).unwrap();
        assert_eq!(results.len(), 2);
        assert!(!results[0].passed);
        assert_eq!(
            results[0].failure.as_deref(),
            Some("(background) Given a running session: it broke")
        );
        assert_eq!(results[0].tags, vec!["REQ-EVT-001"]);
        assert!(results[1].passed);
        assert_eq!(
            transcript_file_name(Some(Path::new(&results[0].uri)), 14),
            "task-events-L14.log"
        );
    }
}
