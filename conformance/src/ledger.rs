//! The run's record of message shapes: every malformed message any scenario saw, charged to
//! the requirement about that message (the catalogue's `judges` field: one per method result,
//! per event type, for the envelopes, the ids and the framing), and how many messages of each
//! kind were judged.
//!
//! One defect, one verdict: a runtime whose `task_completed` payload lacks a member fails the
//! requirement about `task_completed` payloads once — with the first scenario that showed it
//! and a count — instead of failing every scenario that happened to complete a task.

use std::collections::BTreeMap;
use std::sync::{Mutex, MutexGuard};

use serde::Serialize;

use crate::catalogue::Catalogue;
use crate::validation::judged;

/// What the kit judged of the messages one scenario's runtime wrote.
#[derive(Debug, Default)]
pub(crate) struct Judged {
    pub violations: Vec<crate::driver::Violation>,
    pub observed: BTreeMap<String, u64>,
    pub transcript_error: Option<String>,
}

/// One distinct problem of one kind of message.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LedgerFinding {
    pub problem: String,
    /// An excerpt of the first line that showed it.
    pub line: String,
    /// The first scenario that saw it (`name (file:line)`).
    pub first_scenario: String,
    /// How many messages showed it, over the whole run.
    pub count: usize,
}

#[derive(Debug, Default)]
struct Entries {
    /// Judged name → problems (distinct by text, in the order first seen).
    findings: BTreeMap<String, Vec<LedgerFinding>>,
    /// Judged name → messages judged.
    observed: BTreeMap<String, u64>,
}

/// Shared by every scenario of a run (scenarios run concurrently).
#[derive(Debug, Default)]
pub(crate) struct Ledger {
    entries: Mutex<Entries>,
}

impl Ledger {
    fn lock(&self) -> MutexGuard<'_, Entries> {
        self.entries
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Adds what one scenario's runtime wrote.
    pub(crate) fn record(&self, scenario: &str, judged: &Judged) {
        let mut entries = self.lock();
        for (name, count) in &judged.observed {
            *entries.observed.entry(name.clone()).or_default() += count;
        }
        for violation in &judged.violations {
            let list = entries
                .findings
                .entry(violation.judged.clone())
                .or_default();
            match list.iter_mut().find(|f| f.problem == violation.problem) {
                Some(existing) => existing.count += 1,
                None => list.push(LedgerFinding {
                    problem: violation.problem.clone(),
                    line: violation.excerpt.clone(),
                    first_scenario: scenario.to_owned(),
                    count: 1,
                }),
            }
        }
    }

    /// How many messages of one kind (a judged name, e.g. `events/payloads/task_completed`)
    /// the whole run saw.
    pub(crate) fn observed(&self, judged: &str) -> u64 {
        self.lock().observed.get(judged).copied().unwrap_or(0)
    }

    /// Per requirement id: the findings charged to it and the messages it judged.
    pub(crate) fn by_requirement(&self, catalogue: &Catalogue) -> BTreeMap<String, Charged> {
        let entries = self.lock();
        let mut out: BTreeMap<String, Charged> = BTreeMap::new();
        let names = entries
            .findings
            .keys()
            .chain(entries.observed.keys())
            .cloned()
            .collect::<std::collections::BTreeSet<_>>();
        for name in names {
            let Some(id) = requirement_for(catalogue, &name) else {
                continue;
            };
            let charged = out.entry(id).or_default();
            charged.observed += entries.observed.get(&name).copied().unwrap_or(0);
            if let Some(findings) = entries.findings.get(&name) {
                charged.findings.extend(findings.iter().cloned());
            }
        }
        out
    }
}

/// What the ledger charges one requirement with.
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Charged {
    pub observed: u64,
    pub findings: Vec<LedgerFinding>,
}

/// The requirement that judges `name`: the one whose `judges` names it, else the one about
/// the enclosing message (a payload without its own requirement belongs to the event
/// envelope's, a method result to the response envelope's).
pub(crate) fn requirement_for(catalogue: &Catalogue, name: &str) -> Option<String> {
    let find = |wanted: &str| {
        catalogue
            .requirements
            .iter()
            .find(|r| r.judges.as_deref() == Some(wanted))
            .map(|r| r.id.clone())
    };
    find(name).or_else(|| {
        if name.starts_with("events/payloads/") {
            find(judged::EVENT)
        } else if name.starts_with("methods/") {
            find(judged::RESPONSE)
        } else {
            None
        }
    })
}
