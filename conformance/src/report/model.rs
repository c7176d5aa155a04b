//! The report's model: what each scenario and each requirement came to, and the run's
//! verdict with its one-line summary.

use std::fmt::Write as _;
use std::path::PathBuf;

use serde::Serialize;

use crate::catalogue::REQUIREMENT_PREFIX;
use crate::ledger::Charged;
use crate::runtime_manifest::NOT_APPLICABLE;

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
    pub manifest: super::manifest::Manifest,
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
    pub(super) fn label(self) -> &'static str {
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

use crate::contract::NOT_JUDGED;

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
    pub(super) fn decisive_ok(&self) -> bool {
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
