//! The certification report: which requirements the runtime meets, built from the
//! requirement catalogue and cucumber's JSON output (each scenario's tags name the
//! requirements it certifies). Written as `certification.md` for people and `outcome.json`
//! for tools (`cargo xtask certify` reads it), `certification.html` (self-contained, with a
//! filterable requirement matrix) and `manifest.json` (what was certified, by what, when).

pub mod attribution;
pub mod html;
pub mod manifest;
mod markdown;
pub mod summary;
pub mod timing;

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::Context;
use serde::Serialize;
use serde_json::Value;

use crate::catalogue::{Catalogue, Level, REQUIREMENT_PREFIX, ScenarioRef};
use crate::ledger::Charged;
use crate::runtime_manifest::{NOT_APPLICABLE, RuntimeManifest};

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
    /// `status == Passed`.
    pub passed: bool,
    pub status: ScenarioStatus,
    /// The first failing step (or hook) and its error.
    pub failure: Option<String>,
    /// The feature-file line of the failing step, when a step failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failed_step_line: Option<usize>,
    /// A failure charged to these requirements only (a `# judges` comment above the failing
    /// step names them, see [`attribution`]); `None`: to every requirement of the scenario.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub charged_to: Option<Vec<String>>,
    /// A failed scenario the baseline names: its reason (the failure does not fail the run).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub baselined: Option<String>,
}

/// How a scenario ended, as the verdict sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum ScenarioStatus {
    Passed,
    /// A `When`/`Then` step (or the end-of-scenario check) failed: charged to the scenario's
    /// requirements.
    Failed,
    /// A `Given` step (a precondition) failed, so the behaviour was never reached: the
    /// scenario judges nothing; the defect belongs to the requirement of that precondition.
    Blocked,
    /// A step needs what the runtime does not declare (a knob, a sub-second value).
    NotApplicable,
}

impl ScenarioResult {
    /// How this scenario ended for one of its requirements: a failure charged to other
    /// requirements (see [`attribution`]) judges this one not at all.
    pub fn status_for(&self, requirement: &str) -> ScenarioStatus {
        match &self.charged_to {
            Some(judged)
                if self.status == ScenarioStatus::Failed
                    && !judged.iter().any(|id| id == requirement) =>
            {
                ScenarioStatus::Blocked
            }
            _ => self.status,
        }
    }

    /// A scenario that failed or could not judge its behaviour.
    pub fn counts_as_failure(&self) -> bool {
        matches!(
            self.status,
            ScenarioStatus::Failed | ScenarioStatus::Blocked
        )
    }

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
    /// At least one of its scenarios failed, or a message it judges was malformed.
    Failed,
    /// None of its scenarios reached the behaviour: a precondition failed (its own
    /// requirement carries the defect).
    Blocked,
    /// All of its scenarios that ran passed (or every message it judges was well formed).
    Passed,
    /// Its profile is not declared, or its scenarios need what the runtime does not declare.
    NotApplicable,
    /// It has scenarios, but the filter left them out.
    NotRun,
    /// It judges a kind of message no scenario of this run saw.
    NotObserved,
    /// No scenario carries its tag (a gap in the kit, see `cargo xtask coverage`).
    Uncovered,
}

impl Verdict {
    fn label(self) -> &'static str {
        match self {
            Verdict::Failed => "❌ failed",
            Verdict::Blocked => "⛔ not judged (precondition failed)",
            Verdict::Passed => "✅ passed",
            Verdict::NotApplicable => "○ not applicable",
            Verdict::NotRun => "⏭ not run",
            Verdict::NotObserved => "⏭ not observed",
            Verdict::Uncovered => "⚠ no scenario",
        }
    }
}

/// Marks a step error whose cause is a precondition the scenario could not set up (the
/// runtime's defect belongs to another requirement, named in the reason): the scenario is
/// "not judged", whatever the step's keyword.
pub const NOT_JUDGED: &str = "NOT JUDGED, a precondition failed:";

/// Whether a step error carries [`NOT_JUDGED`].
pub fn is_not_judged(message: &str) -> bool {
    message.contains(NOT_JUDGED)
}

/// The reason in a step error that starts with [`NOT_APPLICABLE`], if it does.
pub fn not_applicable_reason(message: &str) -> Option<&str> {
    let at = message.find(NOT_APPLICABLE)?;
    let rest = &message[at + NOT_APPLICABLE.len()..];
    Some(rest.lines().next().unwrap_or("").trim())
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RequirementOutcome {
    pub id: String,
    pub level: String,
    pub profile: String,
    pub statement: String,
    pub spec: String,
    pub verdict: Verdict,
    /// A MUST of a profile the runtime declares: only these decide certification; the
    /// others' failures are warnings.
    pub decisive: bool,
    /// Why it is not applicable or not judged.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Malformed messages charged to it (requirements that judge a kind of message).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub charged: Option<Charged>,
    /// Indexes into [`Outcome::scenarios`].
    pub scenarios: Vec<usize>,
    /// Failed, and every failed scenario of it is a known failure of the baseline.
    pub baselined: bool,
}

/// The result of a run.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Outcome {
    /// Certified: no MUST of a declared profile failed or went unjudged (with a baseline:
    /// unless a known failure; and no baseline entry is stale), at least one scenario ran,
    /// and cucumber saw no error.
    pub passed: bool,
    /// The profiles the runtime declared, e.g. `core+interop`.
    pub profiles: String,
    /// Failed SHOULD/MAY requirements (and failures of requirements outside the declared
    /// profiles): reported, never deciding.
    pub warnings: usize,
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
    /// Why the run cannot certify although nothing decisive failed: it stopped early
    /// (`--fail-fast`) or left decisive requirements not run without a filter asking for it.
    /// Such a run is `INCOMPLETE`, never `CERTIFIED`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub incomplete: Option<String>,
}

impl Outcome {
    pub fn count(&self, verdict: Verdict) -> usize {
        self.requirements
            .iter()
            .filter(|r| r.verdict == verdict)
            .count()
    }

    pub fn failed_scenarios(&self) -> usize {
        self.scenarios
            .iter()
            .filter(|s| s.counts_as_failure())
            .count()
    }

    /// `CERTIFIED core+interop`, `NOT CERTIFIED (core+interop)`, or `INCOMPLETE
    /// (core+interop)` when nothing decisive failed but the run did not judge everything.
    pub fn verdict_line(&self) -> String {
        if self.passed {
            format!("CERTIFIED {}", self.profiles)
        } else if self.incomplete.is_some() && self.decisive_ok() {
            format!("INCOMPLETE ({})", self.profiles)
        } else {
            format!("NOT CERTIFIED ({})", self.profiles)
        }
    }

    /// No decisive requirement failed or went unjudged (a baselined one excepted).
    fn decisive_ok(&self) -> bool {
        self.requirements.iter().all(|r| {
            !r.decisive || r.baselined || !matches!(r.verdict, Verdict::Failed | Verdict::Blocked)
        })
    }

    /// Marks the run incomplete (see [`Outcome::incomplete`]) and recomputes the verdict.
    pub fn mark_incomplete(&mut self, reason: String) {
        self.incomplete = Some(match self.incomplete.take() {
            Some(earlier) => format!("{reason}; {earlier}"),
            None => reason,
        });
        let no_stale = self.baseline.as_ref().is_none_or(|b| b.stale.is_empty());
        self.decide(no_stale);
    }

    /// The failed requirements that decide (MUSTs of declared profiles), then the rest.
    pub fn failed_requirements(&self) -> Vec<&RequirementOutcome> {
        let mut failed: Vec<_> = self
            .requirements
            .iter()
            .filter(|r| r.verdict == Verdict::Failed)
            .collect();
        failed.sort_by_key(|r| (!r.decisive, level_rank(&r.level), r.id.clone()));
        failed
    }

    /// A few lines for a terminal.
    pub fn summary(&self) -> String {
        let total = self.scenarios.len();
        let count =
            |status: ScenarioStatus| self.scenarios.iter().filter(|s| s.status == status).count();
        let mut text = format!(
            "{}: {} of {} scenarios passed ({} failed, {} not judged, {} not applicable); requirements: {} passed, {} failed, {} not judged, {} not applicable, {} not run, {} without scenario; {} warning(s)",
            self.verdict_line(),
            count(ScenarioStatus::Passed),
            total,
            count(ScenarioStatus::Failed),
            count(ScenarioStatus::Blocked),
            count(ScenarioStatus::NotApplicable),
            self.count(Verdict::Passed),
            self.count(Verdict::Failed),
            self.count(Verdict::Blocked),
            self.count(Verdict::NotApplicable),
            self.count(Verdict::NotRun) + self.count(Verdict::NotObserved),
            self.count(Verdict::Uncovered),
            self.warnings,
        );
        let failed = self.failed_requirements();
        if !failed.is_empty() {
            text.push_str("\nfailed requirements:");
            for requirement in failed {
                let _ = write!(
                    text,
                    "\n  {} [{} {}] {}",
                    requirement.id, requirement.level, requirement.profile, requirement.statement
                );
                if !requirement.decisive {
                    text.push_str(" (warning: does not decide)");
                }
                if requirement.baselined {
                    text.push_str(" (known failure, baselined)");
                }
            }
        }
        let blocked = self
            .requirements
            .iter()
            .filter(|r| r.verdict == Verdict::Blocked && r.decisive)
            .count();
        if blocked > 0 {
            let _ = write!(
                text,
                "\n{blocked} decisive requirement(s) could not be judged because a precondition failed (see the report)"
            );
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
        if let Some(reason) = &self.incomplete {
            let _ = write!(text, "\nINCOMPLETE: {reason}");
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
                if let Some((failure, _, _)) = failure {
                    background_failures.push((line, name, format!("(background) {failure}")));
                }
                continue;
            }
            let failed_step_line = failure.as_ref().and_then(|(_, _, line)| *line);
            let failure = failure.map(|(message, given, _)| (message, given));
            let status = match &failure {
                None => ScenarioStatus::Passed,
                Some((message, _)) if not_applicable_reason(message).is_some() => {
                    ScenarioStatus::NotApplicable
                }
                Some((message, given)) if *given || is_not_judged(message) => {
                    ScenarioStatus::Blocked
                }
                Some(_) => ScenarioStatus::Failed,
            };
            let failure = failure.map(|(message, _)| message);
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
                passed: status == ScenarioStatus::Passed,
                status,
                failure,
                failed_step_line,
                charged_to: None,
                baselined: None,
            });
        }
        for (line, name, failure) in background_failures {
            if let Some(scenario) = results[first..]
                .iter_mut()
                .find(|s| s.line == line && s.name == name)
            {
                // Background steps set the scene: their failure blocks the scenario.
                scenario.passed = false;
                scenario.status = if not_applicable_reason(&failure).is_some() {
                    ScenarioStatus::NotApplicable
                } else {
                    ScenarioStatus::Blocked
                };
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

/// The first failure of a scenario element and whether it is a precondition's (a `Given`
/// step, an `And`/`But` continuing one, or the before hook).
fn first_failure(element: &Value) -> Option<(String, bool, Option<usize>)> {
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
            return Some((format!("before hook: {message}"), true, None));
        }
    }
    let mut in_given = false;
    for step in list("steps") {
        let keyword = step
            .get("keyword")
            .and_then(Value::as_str)
            .unwrap_or("")
            .trim();
        match keyword {
            "And" | "But" | "*" => {}
            other => in_given = other == "Given",
        }
        if let Some(message) = step.get("result").and_then(failed) {
            let name = step.get("name").and_then(Value::as_str).unwrap_or("");
            let line = step.get("line").and_then(Value::as_u64).map(|l| l as usize);
            return Some((format!("{keyword} {name}: {message}"), in_given, line));
        }
    }
    for hook in list("after") {
        if let Some(message) = hook.get("result").and_then(failed) {
            return Some((format!("end-of-scenario check: {message}"), false, None));
        }
    }
    None
}

/// Joins the run's results with the catalogue, the messages the ledger charged and what the
/// runtime declared.
pub fn build_outcome(
    catalogue: &Catalogue,
    scanned: &[ScenarioRef],
    scenarios: &[ScenarioResult],
    charged: &BTreeMap<String, Charged>,
    manifest: &RuntimeManifest,
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
    let requirements: Vec<RequirementOutcome> = catalogue
        .requirements
        .iter()
        .map(|requirement| {
            let ran = by_requirement
                .get(requirement.id.as_str())
                .cloned()
                .unwrap_or_default();
            let charged = charged.get(&requirement.id).cloned();
            let (verdict, reason) = judge_requirement(
                requirement,
                &ran,
                scenarios,
                charged.as_ref(),
                manifest,
                scanned,
            );
            RequirementOutcome {
                id: requirement.id.clone(),
                level: requirement.level.to_string(),
                profile: requirement.profile.to_string(),
                statement: requirement.statement.clone(),
                spec: requirement.spec.clone(),
                verdict,
                decisive: requirement.level == Level::Must
                    && manifest.declares(requirement.profile),
                reason,
                charged: charged.filter(|c| !c.findings.is_empty()),
                scenarios: ran,
                baselined: false,
            }
        })
        .collect();
    let stats = context.stats;
    let mut outcome = Outcome {
        passed: false,
        profiles: manifest.profiles_label(),
        warnings: 0,
        scenarios: scenarios.to_vec(),
        requirements,
        unknown_tags: unknown,
        stats,
        transport: context.transport.clone(),
        baseline: None,
        incomplete: None,
    };
    let filtered =
        context.tags.is_some() || context.name.is_some() || context.manifest.shard.is_some();
    if !filtered {
        let not_run: Vec<&str> = outcome
            .requirements
            .iter()
            .filter(|r| r.decisive && r.verdict == Verdict::NotRun)
            .map(|r| r.id.as_str())
            .collect();
        if !not_run.is_empty() {
            outcome.incomplete = Some(format!(
                "{} decisive requirement(s) not run although no filter was given: {}",
                not_run.len(),
                not_run.join(", ")
            ));
        }
    }
    outcome.decide(true);
    outcome
}

/// One requirement's verdict and, when it is not applicable or not judged, why.
fn judge_requirement(
    requirement: &crate::catalogue::Requirement,
    ran: &[usize],
    scenarios: &[ScenarioResult],
    charged: Option<&Charged>,
    manifest: &RuntimeManifest,
    scanned: &[ScenarioRef],
) -> (Verdict, Option<String>) {
    if !manifest.declares(requirement.profile) {
        return (
            Verdict::NotApplicable,
            Some(format!(
                "profile {} is not declared by the runtime's manifest",
                requirement.profile
            )),
        );
    }
    let with = |status: ScenarioStatus| {
        ran.iter()
            .map(|&i| &scenarios[i])
            .find(|s| s.status_for(&requirement.id) == status)
    };
    let malformed = charged.is_some_and(|c| !c.findings.is_empty());
    if with(ScenarioStatus::Failed).is_some() || malformed {
        return (Verdict::Failed, None);
    }
    if with(ScenarioStatus::Passed).is_some() {
        return (Verdict::Passed, None);
    }
    if let Some(blocked) = with(ScenarioStatus::Blocked) {
        let why = match &blocked.charged_to {
            Some(judged) => format!(
                "\"{}\" failed at a step that judges {}",
                blocked.name,
                judged.join(", ")
            ),
            None => format!("a precondition failed in \"{}\"", blocked.name),
        };
        return (
            Verdict::Blocked,
            Some(format!(
                "{why}: {}",
                blocked.failure.as_deref().unwrap_or("")
            )),
        );
    }
    if let Some(scenario) = with(ScenarioStatus::NotApplicable) {
        let reason = scenario
            .failure
            .as_deref()
            .and_then(not_applicable_reason)
            .unwrap_or("")
            .to_owned();
        return (Verdict::NotApplicable, Some(reason));
    }
    if requirement.judges.is_some() {
        return match charged.map_or(0, |c| c.observed) {
            0 => (Verdict::NotObserved, None),
            _ => (Verdict::Passed, None),
        };
    }
    if scanned
        .iter()
        .any(|s| s.requirement_tags().any(|t| t == requirement.id))
    {
        (Verdict::NotRun, None)
    } else {
        (Verdict::Uncovered, None)
    }
}

impl Outcome {
    /// Recomputes the verdict: certified when no decisive requirement failed or went
    /// unjudged (a baselined one excepted), at least one scenario ran and cucumber saw no
    /// error of its own; failures that do not decide are counted as warnings.
    pub(crate) fn decide(&mut self, no_stale_entry: bool) {
        let stats = self.stats;
        // cucumber counts a failed scenario as a failed execution; only an error that no
        // scenario accounts for (e.g. a hook outside any scenario) still fails the run.
        let unexplained = stats.execution_failed
            && !self
                .scenarios
                .iter()
                .any(|s| s.status != ScenarioStatus::Passed);
        let decisive_ok = self.decisive_ok();
        self.warnings = self
            .requirements
            .iter()
            .filter(|r| !r.decisive && r.verdict == Verdict::Failed)
            .count();
        self.passed = !self.scenarios.is_empty()
            && decisive_ok
            && no_stale_entry
            && stats.parsing_errors == 0
            && !unexplained
            && self.incomplete.is_none();
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
    // cucumber's JSON is written into the report dir; its durations give the slowest scenarios.
    let slowest = std::fs::read_to_string(dir.join("cucumber.json"))
        .map(|json| timing::slowest(&json, timing::SLOWEST))
        .unwrap_or_default();
    let markdown = markdown::render(catalogue, outcome, context, &slowest);
    let path = dir.join("certification.md");
    std::fs::write(&path, markdown).with_context(|| format!("cannot write {}", path.display()))?;
    let path = dir.join("outcome.json");
    let mut json = serde_json::to_value(outcome)?;
    if let Some(members) = json.as_object_mut() {
        members.insert("slowest".to_owned(), serde_json::to_value(&slowest)?);
    }
    let json = serde_json::to_string_pretty(&json)?;
    std::fs::write(&path, json).with_context(|| format!("cannot write {}", path.display()))?;
    let path = dir.join("certification.html");
    let page = html::render(catalogue, outcome, context, &context.manifest, &slowest);
    std::fs::write(&path, page).with_context(|| format!("cannot write {}", path.display()))?;
    let path = dir.join("manifest.json");
    let json = serde_json::to_string_pretty(&context.manifest)?;
    std::fs::write(&path, json).with_context(|| format!("cannot write {}", path.display()))?;
    Ok(())
}

#[cfg(test)]
mod tests;
