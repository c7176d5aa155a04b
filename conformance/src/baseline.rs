//! Baselines: the failures a runtime's team already knows about, each with a reason, so a
//! certification run fails only on what is new.
//!
//! ```toml
//! [[known_failure]]
//! id = "REQ-THR-002"            # every scenario tagged with this requirement
//! reason = "no AGENT_RUNTIME_MAX_REQUEST_MESSAGES knob yet"
//!
//! [[known_failure]]
//! scenario = "a 10 MB request line is read and answered"   # one scenario, by exact name
//! reason = "reads lines with a 1 MB buffer"
//! ```
//!
//! A known failure does not fail the run; a failure no entry names does; an entry whose
//! scenarios all ran and passed is **stale** and fails the run too (remove it), so a baseline
//! can only shrink. An entry whose scenarios the filter left out is reported as not run.
//! [`evaluate`] is the whole rule, a pure function over the run's scenario results.

use std::path::Path;

use anyhow::{Context, bail};
use serde::{Deserialize, Serialize};

use crate::catalogue::{Catalogue, ScenarioRef};
use crate::report::{Outcome, ScenarioResult};

/// A baseline file.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Baseline {
    #[serde(default)]
    pub known_failure: Vec<KnownFailure>,
}

/// One `[[known_failure]]` entry: a requirement id or a scenario name, and why.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct KnownFailure {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scenario: Option<String>,
    pub reason: String,
}

impl KnownFailure {
    /// `REQ-…` or `scenario "…"`, for messages.
    pub fn label(&self) -> String {
        match (&self.id, &self.scenario) {
            (Some(id), _) => id.clone(),
            (None, Some(name)) => format!("scenario {name:?}"),
            (None, None) => "(empty entry)".to_owned(),
        }
    }

    fn matches(&self, scenario: &ScenarioResult) -> bool {
        match (&self.id, &self.scenario) {
            (Some(id), _) => scenario.requirement_ids().any(|r| r == id),
            (None, Some(name)) => &scenario.name == name,
            (None, None) => false,
        }
    }
}

impl Baseline {
    /// Reads and parses a baseline file (not yet checked against the features).
    pub(crate) fn load(path: &Path) -> anyhow::Result<Self> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read the baseline {}", path.display()))?;
        Self::parse(&text).with_context(|| format!("invalid baseline {}", path.display()))
    }

    pub(crate) fn parse(text: &str) -> anyhow::Result<Self> {
        let baseline: Self = toml::from_str(text)?;
        for (index, entry) in baseline.known_failure.iter().enumerate() {
            let n = index + 1;
            match (&entry.id, &entry.scenario) {
                (Some(_), Some(_)) => {
                    bail!("known_failure #{n} names both an id and a scenario; use one entry each")
                }
                (None, None) => bail!("known_failure #{n} names neither an id nor a scenario"),
                _ => {}
            }
            if entry.reason.trim().is_empty() {
                bail!(
                    "known_failure #{n} ({}) has an empty reason; say why it is known to fail",
                    entry.label()
                );
            }
        }
        Ok(baseline)
    }

    /// Every entry must name something that exists, so a typo cannot hide a failure nor
    /// sit in the baseline forever.
    pub(crate) fn check_against(
        &self,
        catalogue: &Catalogue,
        scanned: &[ScenarioRef],
    ) -> anyhow::Result<()> {
        for entry in &self.known_failure {
            if let Some(id) = &entry.id
                && catalogue.get(id).is_none()
            {
                bail!("the baseline names {id}, which the requirement catalogue does not know");
            }
            if let Some(name) = &entry.scenario
                && !scanned.iter().any(|s| &s.name == name)
            {
                bail!("the baseline names the scenario {name:?}, which no feature file has");
            }
        }
        Ok(())
    }
}

/// One baseline entry and the scenarios of this run it concerns.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EntryOutcome {
    #[serde(flatten)]
    pub entry: KnownFailure,
    /// Indexes into [`Outcome::scenarios`]: the failed ones for a known failure, the passed
    /// ones for a stale entry.
    pub scenarios: Vec<usize>,
}

/// What the baseline did to a run.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BaselineOutcome {
    /// The baseline file, as given.
    pub file: String,
    /// Entries whose scenarios failed: those failures do not fail the run.
    pub known_failures: Vec<EntryOutcome>,
    /// Entries whose scenarios all ran and passed: each fails the run until it is removed.
    pub stale: Vec<EntryOutcome>,
    /// Entries whose scenarios the filter left out.
    pub not_run: Vec<KnownFailure>,
    /// Failed scenarios no entry names (indexes into [`Outcome::scenarios`]): they fail the run.
    pub new_failures: Vec<usize>,
}

impl BaselineOutcome {
    /// The reason a failed scenario is baselined with, if it is.
    pub fn reason_for(&self, scenario: usize) -> Option<&str> {
        self.known_failures
            .iter()
            .find(|e| e.scenarios.contains(&scenario))
            .map(|e| e.entry.reason.as_str())
    }
}

/// The baseline rule over a run's scenario results.
pub(crate) fn evaluate(
    baseline: &Baseline,
    file: &str,
    scenarios: &[ScenarioResult],
) -> BaselineOutcome {
    let mut outcome = BaselineOutcome {
        file: file.to_owned(),
        ..Default::default()
    };
    for entry in &baseline.known_failure {
        let ran: Vec<usize> = scenarios
            .iter()
            .enumerate()
            .filter(|(_, s)| entry.matches(s))
            .map(|(i, _)| i)
            .collect();
        let failed: Vec<usize> = ran
            .iter()
            .copied()
            .filter(|&i| scenarios[i].counts_as_failure())
            .collect();
        if ran.is_empty() || !ran.iter().any(|&i| scenarios[i].passed) && failed.is_empty() {
            // Not run, or not applicable to this runtime: nothing to say about the entry.
            outcome.not_run.push(entry.clone());
        } else if failed.is_empty() {
            outcome.stale.push(EntryOutcome {
                entry: entry.clone(),
                scenarios: ran,
            });
        } else {
            outcome.known_failures.push(EntryOutcome {
                entry: entry.clone(),
                scenarios: failed,
            });
        }
    }
    outcome.new_failures = scenarios
        .iter()
        .enumerate()
        .filter(|(i, s)| {
            s.status == crate::report::ScenarioStatus::Failed && outcome.reason_for(*i).is_none()
        })
        .map(|(i, _)| i)
        .collect();
    outcome
}

/// Applies a baseline to a run's outcome: marks the known failures and recomputes the
/// verdict (no new failure, no stale entry, at least one scenario, no other error).
pub(crate) fn apply(outcome: &mut Outcome, baseline: &Baseline, file: &str) {
    let evaluated = evaluate(baseline, file, &outcome.scenarios);
    for (index, scenario) in outcome.scenarios.iter_mut().enumerate() {
        scenario.baselined = evaluated.reason_for(index).map(str::to_owned);
    }
    for requirement in &mut outcome.requirements {
        let named = baseline
            .known_failure
            .iter()
            .any(|entry| entry.id.as_deref() == Some(requirement.id.as_str()));
        let mut failed = requirement
            .scenarios
            .iter()
            .map(|&i| &outcome.scenarios[i])
            .filter(|s| s.counts_as_failure())
            .peekable();
        let scenarios_known = failed.peek().is_none() || failed.all(|s| s.baselined.is_some());
        let messages_known = requirement.charged.is_none() || named;
        requirement.baselined = matches!(
            requirement.verdict,
            crate::report::Verdict::Failed | crate::report::Verdict::Blocked
        ) && scenarios_known
            && messages_known;
    }
    let no_stale = evaluated.stale.is_empty();
    outcome.baseline = Some(evaluated);
    outcome.decide(no_stale);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{RequirementOutcome, RunStats, ScenarioStatus, Verdict};

    fn scenario(name: &str, tags: &[&str], passed: bool) -> ScenarioResult {
        ScenarioResult {
            uri: "features/x.feature".to_owned(),
            feature: "X".to_owned(),
            name: name.to_owned(),
            line: 1,
            tags: tags.iter().map(|t| (*t).to_owned()).collect(),
            passed,
            status: if passed {
                ScenarioStatus::Passed
            } else {
                ScenarioStatus::Failed
            },
            failure: (!passed).then(|| "Then it broke".to_owned()),
            failed_step_line: None,
            charged_to: None,
            baselined: None,
        }
    }

    fn outcome(scenarios: Vec<ScenarioResult>) -> Outcome {
        let any_failed = scenarios.iter().any(|s| !s.passed);
        let requirements = ["REQ-A-001", "REQ-A-002", "REQ-A-003"]
            .iter()
            .map(|id| {
                let ran: Vec<usize> = scenarios
                    .iter()
                    .enumerate()
                    .filter(|(_, s)| s.tags.iter().any(|t| t == id))
                    .map(|(i, _)| i)
                    .collect();
                let verdict = if ran.iter().any(|&i| !scenarios[i].passed) {
                    Verdict::Failed
                } else {
                    Verdict::Passed
                };
                RequirementOutcome {
                    id: (*id).to_owned(),
                    level: "MUST".to_owned(),
                    profile: "core".to_owned(),
                    statement: "s".to_owned(),
                    spec: "§1".to_owned(),
                    verdict,
                    decisive: true,
                    reason: None,
                    charged: None,
                    scenarios: ran,
                    baselined: false,
                }
            })
            .collect();
        Outcome {
            passed: !any_failed,
            profiles: "core".to_owned(),
            warnings: 0,
            scenarios,
            requirements,
            unknown_tags: Vec::new(),
            stats: RunStats {
                execution_failed: any_failed,
                ..Default::default()
            },
            transport: "stdio".to_owned(),
            baseline: None,
            incomplete: None,
        }
    }

    fn baseline(text: &str) -> Baseline {
        Baseline::parse(text).unwrap()
    }

    #[test]
    fn known_failures_do_not_fail_the_run_and_carry_their_reason() {
        let mut run = outcome(vec![
            scenario("one", &["REQ-A-001"], false),
            scenario("two", &["REQ-A-002"], false),
            scenario("three", &["REQ-A-003"], true),
        ]);
        assert!(!run.passed);
        let b = baseline(
            "[[known_failure]]\nid = \"REQ-A-001\"\nreason = \"no knob\"\n\n\
             [[known_failure]]\nscenario = \"two\"\nreason = \"later\"\n",
        );
        apply(&mut run, &b, "b.toml");
        assert!(run.passed, "{:?}", run.baseline);
        assert_eq!(run.scenarios[0].baselined.as_deref(), Some("no knob"));
        assert_eq!(run.scenarios[1].baselined.as_deref(), Some("later"));
        assert!(run.requirements[0].baselined && run.requirements[1].baselined);
        let evaluated = run.baseline.as_ref().unwrap();
        assert_eq!(evaluated.known_failures.len(), 2);
        assert!(evaluated.new_failures.is_empty() && evaluated.stale.is_empty());
        assert!(run.summary().contains("baselined"), "{}", run.summary());
    }

    #[test]
    fn a_new_failure_fails_the_run() {
        let mut run = outcome(vec![
            scenario("one", &["REQ-A-001"], false),
            scenario("two", &["REQ-A-002"], false),
        ]);
        let b = baseline("[[known_failure]]\nid = \"REQ-A-001\"\nreason = \"no knob\"\n");
        apply(&mut run, &b, "b.toml");
        assert!(!run.passed);
        let evaluated = run.baseline.as_ref().unwrap();
        assert_eq!(evaluated.new_failures, vec![1]);
        assert!(!run.requirements[1].baselined);
    }

    #[test]
    fn an_entry_that_now_passes_is_stale_and_fails_the_run() {
        let mut run = outcome(vec![
            scenario("one", &["REQ-A-001"], true),
            scenario("two", &["REQ-A-002"], true),
        ]);
        let b = baseline("[[known_failure]]\nid = \"REQ-A-001\"\nreason = \"no knob\"\n");
        apply(&mut run, &b, "b.toml");
        assert!(!run.passed);
        let evaluated = run.baseline.as_ref().unwrap();
        assert_eq!(evaluated.stale.len(), 1);
        assert_eq!(evaluated.stale[0].scenarios, vec![0]);
        assert!(run.summary().contains("REQ-A-001"), "{}", run.summary());
    }

    #[test]
    fn a_requirement_with_one_failing_scenario_of_two_is_a_known_failure_not_stale() {
        let mut run = outcome(vec![
            scenario("one", &["REQ-A-001"], true),
            scenario("one bis", &["REQ-A-001"], false),
        ]);
        let b = baseline("[[known_failure]]\nid = \"REQ-A-001\"\nreason = \"half done\"\n");
        apply(&mut run, &b, "b.toml");
        assert!(run.passed);
        assert_eq!(
            run.baseline.as_ref().unwrap().known_failures[0].scenarios,
            vec![1]
        );
    }

    #[test]
    fn an_entry_whose_scenarios_did_not_run_is_neither_stale_nor_a_failure() {
        let mut run = outcome(vec![scenario("three", &["REQ-A-003"], true)]);
        let b = baseline("[[known_failure]]\nid = \"REQ-A-001\"\nreason = \"no knob\"\n");
        apply(&mut run, &b, "b.toml");
        assert!(run.passed);
        assert_eq!(run.baseline.as_ref().unwrap().not_run.len(), 1);
    }

    #[test]
    fn malformed_entries_are_refused() {
        for text in [
            "[[known_failure]]\nid = \"REQ-A-001\"\n",
            "[[known_failure]]\nid = \"REQ-A-001\"\nreason = \"  \"\n",
            "[[known_failure]]\nreason = \"why\"\n",
            "[[known_failure]]\nid = \"REQ-A-001\"\nscenario = \"one\"\nreason = \"why\"\n",
            "[[known_failure]]\nid = \"REQ-A-001\"\nreason = \"why\"\ntypo = 1\n",
        ] {
            assert!(Baseline::parse(text).is_err(), "{text}");
        }
        assert!(Baseline::parse("").unwrap().known_failure.is_empty());
    }
}
