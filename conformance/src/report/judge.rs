//! Judging: the run's results joined with the catalogue, the ledger's charges and the
//! runtime's manifest, into one verdict per requirement and one for the run.

use std::collections::BTreeMap;

use crate::catalogue::{Catalogue, Level, ScenarioRef};
use crate::ledger::Charged;
use crate::runtime_manifest::RuntimeManifest;

use super::model::{
    Outcome, ReportContext, RequirementOutcome, ScenarioResult, ScenarioStatus, Verdict,
    not_applicable_reason,
};

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
