//! `certification.md`: the verdict and the totals, then what to fix first (counts per
//! profile and area, the failed MUSTs by area, see [`super::summary`]) and the ten slowest
//! scenarios, the failed requirements (with the failing step and a link to the transcript),
//! then the requirement matrix per area and the scenario list.

use std::fmt::Write as _;
use std::path::Path;

use super::{Outcome, ReportContext, ScenarioResult, Verdict, transcript_file_name};
use crate::baseline::BaselineOutcome;
use crate::catalogue::{Catalogue, Level};

fn status_mark(status: super::ScenarioStatus) -> &'static str {
    match status {
        super::ScenarioStatus::Passed => "✅",
        super::ScenarioStatus::Failed => "❌",
        super::ScenarioStatus::Blocked => "⛔",
        super::ScenarioStatus::NotApplicable => "○",
    }
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
pub(super) fn render(
    catalogue: &Catalogue,
    outcome: &Outcome,
    context: &ReportContext,
    slowest: &[super::timing::ScenarioTime],
) -> String {
    let mut md = String::new();
    header(&mut md, outcome, context);
    md.push_str(&super::summary::markdown(
        catalogue,
        outcome,
        context.transcripts_dir.is_some(),
    ));
    slowest_scenarios(&mut md, slowest);
    if let Some(baseline) = &outcome.baseline {
        render_baseline(&mut md, outcome, baseline);
    }
    failed_requirements(&mut md, outcome, context);
    not_judged(&mut md, outcome);
    matrix(&mut md, catalogue, outcome);
    gaps(&mut md, catalogue, outcome);
    not_certified(&mut md, context);
    scenarios(&mut md, outcome, context);
    md
}

/// The title with the verdict, and the table of what ran and how it came out.
fn header(md: &mut String, outcome: &Outcome, context: &ReportContext) {
    let verdict = if outcome.passed {
        format!("✅ {}", outcome.verdict_line())
    } else {
        format!("❌ {}", outcome.verdict_line())
    };
    let _ = writeln!(md, "# Conformance certification — {verdict}\n");
    let _ = writeln!(md, "| | |\n|---|---|");
    let _ = writeln!(md, "| Runtime command | `{}` |", cell(&context.runtime));
    let _ = writeln!(md, "| Transport | {} |", cell(&context.transport));
    let _ = writeln!(
        md,
        "| Profiles declared | {} (only their MUSTs decide; SHOULD/MAY failures are warnings) |",
        cell(&outcome.profiles)
    );
    let _ = writeln!(md, "| Started | {} |", rfc3339(context.started_at));
    let _ = writeln!(md, "| Finished | {} |", rfc3339(context.finished_at));
    if crate::builtin::is_builtin(&context.features) {
        let _ = writeln!(
            md,
            "| Features | built into the kit (catalogue {}) |",
            crate::builtin::CATALOGUE_FINGERPRINT
        );
    } else {
        let _ = writeln!(md, "| Features | `{}` |", context.features.display());
    }
    if let Some(reason) = &outcome.incomplete {
        let _ = writeln!(md, "| Incomplete | {} |", cell(reason));
    }
    if let Some(tags) = &context.tags {
        let _ = writeln!(md, "| Tag filter | `{}` |", cell(tags));
    }
    if let Some(name) = &context.name {
        let _ = writeln!(md, "| Name filter | `{}` |", cell(name));
    }
    let total = outcome.scenarios.len();
    let status_count = |status: super::ScenarioStatus| {
        outcome
            .scenarios
            .iter()
            .filter(|s| s.status == status)
            .count()
    };
    let _ = writeln!(
        md,
        "| Scenarios | {} passed, {} failed, {} not judged (a precondition failed), {} not applicable, {} total |",
        status_count(super::ScenarioStatus::Passed),
        status_count(super::ScenarioStatus::Failed),
        status_count(super::ScenarioStatus::Blocked),
        status_count(super::ScenarioStatus::NotApplicable),
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
        "| Requirements | {} passed, {} failed, {} not judged, {} not applicable, {} not run, {} without scenario (of {}); {} warning(s) |",
        outcome.count(Verdict::Passed),
        outcome.count(Verdict::Failed),
        outcome.count(Verdict::Blocked),
        outcome.count(Verdict::NotApplicable),
        outcome.count(Verdict::NotRun) + outcome.count(Verdict::NotObserved),
        outcome.count(Verdict::Uncovered),
        outcome.requirements.len(),
        outcome.warnings
    );
    if s.parsing_errors > 0 {
        let _ = writeln!(md, "| Feature parsing errors | {} |", s.parsing_errors);
    }
    if let Some(baseline) = &outcome.baseline {
        let _ = writeln!(
            md,
            "| Baseline | `{}`: {} known failure(s), {} new failure(s), {} stale entr(y/ies), {} not run |",
            cell(&baseline.file),
            baseline.known_failures.len(),
            baseline.new_failures.len(),
            baseline.stale.len(),
            baseline.not_run.len()
        );
    }
    if total == 0 {
        let _ = writeln!(md, "\n**No scenario ran** — check the tag/name filter.");
    }
}

/// The slowest scenarios, so a slow runtime or scenario is seen.
fn slowest_scenarios(md: &mut String, slowest: &[super::timing::ScenarioTime]) {
    if !slowest.is_empty() {
        let _ = writeln!(
            md,
            "\n## The {} slowest scenarios\n\n| Time | Scenario | Where |\n|---|---|---|",
            slowest.len()
        );
        for slow in slowest {
            let _ = writeln!(
                md,
                "| {} | {} | {}:{} |",
                super::timing::human(slow.millis),
                cell(&slow.name),
                cell(&slow.uri),
                slow.line
            );
        }
    }
}

/// Each failed requirement with its failing scenarios, their messages and transcripts.
fn failed_requirements(md: &mut String, outcome: &Outcome, context: &ReportContext) {
    let failed = outcome.failed_requirements();
    if !failed.is_empty() {
        let _ = writeln!(md, "\n## Failed requirements\n");
        for requirement in failed {
            let _ = writeln!(
                md,
                "### {} ({} {}) — {}{}{}\n\n_Spec: {}_\n",
                requirement.id,
                requirement.level,
                requirement.profile,
                requirement.statement,
                if requirement.baselined {
                    " (known failure, baselined)"
                } else {
                    ""
                },
                if requirement.decisive {
                    ""
                } else {
                    " (warning: does not decide)"
                },
                requirement.spec
            );
            if let Some(charged) = &requirement.charged {
                for finding in &charged.findings {
                    let _ = writeln!(
                        md,
                        "- malformed message ×{}, first in **{}**:\n\n  ```text\n{}\n  line: {}\n  ```",
                        finding.count,
                        cell(&finding.first_scenario),
                        indent(&abridge(&finding.problem, 2500), "  "),
                        abridge(&finding.line, 600)
                    );
                }
            }
            for &index in &requirement.scenarios {
                let scenario = &outcome.scenarios[index];
                if scenario.status_for(&requirement.id) != super::ScenarioStatus::Failed {
                    continue;
                }
                let _ = writeln!(
                    md,
                    "- **{}** (`{}:{}`){}",
                    scenario.name,
                    scenario.uri,
                    scenario.line,
                    scenario
                        .baselined
                        .as_deref()
                        .map(|reason| format!(" — baselined: {}", cell(reason)))
                        .unwrap_or_default()
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
}

/// The requirements whose scenarios stopped at a failed precondition.
fn not_judged(md: &mut String, outcome: &Outcome) {
    let blocked: Vec<_> = outcome
        .requirements
        .iter()
        .filter(|r| r.verdict == Verdict::Blocked)
        .collect();
    if !blocked.is_empty() {
        let _ = writeln!(
            md,
            "\n## Not judged: a precondition failed\n\nThe defect belongs to the requirement of the precondition (listed above when it failed); these behaviours were never reached.\n"
        );
        for requirement in blocked {
            let _ = writeln!(
                md,
                "- {} ({} {}){} — {}",
                requirement.id,
                requirement.level,
                requirement.profile,
                if requirement.decisive {
                    ""
                } else {
                    " (does not decide)"
                },
                cell(&abridge(requirement.reason.as_deref().unwrap_or(""), 400))
            );
        }
    }
}

/// Every requirement of each area with its result and scenarios.
fn matrix(md: &mut String, catalogue: &Catalogue, outcome: &Outcome) {
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
            "| Requirement | Level | Profile | Result | Statement | Scenarios |\n|---|---|---|---|---|---|"
        );
        for requirement in rows {
            let scenarios = requirement
                .scenarios
                .iter()
                .map(|&i| {
                    let s = &outcome.scenarios[i];
                    format!("{} {}", status_mark(s.status), s.name)
                })
                .collect::<Vec<_>>()
                .join("<br>");
            let result = match &requirement.reason {
                Some(reason) if requirement.verdict == Verdict::NotApplicable => {
                    format!("{} ({})", requirement.verdict.label(), reason)
                }
                _ => requirement.verdict.label().to_owned(),
            };
            let _ = writeln!(
                md,
                "| {} | {} | {} | {} | {} | {} |",
                requirement.id,
                requirement.level,
                requirement.profile,
                cell(&result),
                cell(&requirement.statement),
                cell(&scenarios)
            );
        }
        md.push('\n');
    }
}

/// Tags naming no requirement, and MUST requirements no scenario certifies.
fn gaps(md: &mut String, catalogue: &Catalogue, outcome: &Outcome) {
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
}

/// The catalogue's requirements the kit leaves out on purpose, with why.
fn not_certified(md: &mut String, context: &ReportContext) {
    if !context.not_certified.is_empty() {
        let _ = writeln!(
            md,
            "## Not certified, deliberately ({})\n\n| Id | Level | Statement | Spec | Why not |\n|---|---|---|---|---|",
            context.not_certified.len()
        );
        for entry in &context.not_certified {
            let _ = writeln!(
                md,
                "| {} | {} | {} | {} | {} |",
                entry.id,
                entry.level,
                entry.statement.replace('|', "\\|"),
                entry.spec.replace('|', "\\|"),
                entry.reason.replace('|', "\\|")
            );
        }
        md.push('\n');
    }
}

/// Every scenario, failures first, and the kit's footer.
fn scenarios(md: &mut String, outcome: &Outcome, context: &ReportContext) {
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
            match &scenario.baselined {
                Some(_) => format!("{} (baselined)", status_mark(scenario.status)),
                None => status_mark(scenario.status).to_owned(),
            },
            cell(&scenario.name),
            cell(&scenario.uri),
            scenario.line,
            ids.join(" ")
        );
    }
    let _ = writeln!(
        md,
        "\n---\nKit {} {}: {}",
        context.manifest.kit.name, context.manifest.kit.version, context.manifest.kit.sensitivity
    );
}

/// The baseline section: stale entries (they fail the run), new failures, known failures
/// with their reasons, entries not run.
fn render_baseline(md: &mut String, outcome: &Outcome, baseline: &BaselineOutcome) {
    let _ = writeln!(md, "\n## Baseline `{}`\n", cell(&baseline.file));
    let scenario_list = |indexes: &[usize]| {
        indexes
            .iter()
            .map(|&i| {
                let s = &outcome.scenarios[i];
                format!("{} (`{}:{}`)", s.name, s.uri, s.line)
            })
            .collect::<Vec<_>>()
            .join("<br>")
    };
    let entry_table =
        |md: &mut String, heading: &str, entries: &[crate::baseline::EntryOutcome]| {
            if entries.is_empty() {
                return;
            }
            let _ = writeln!(md, "{heading}\n|---|---|---|");
            for entry in entries {
                let _ = writeln!(
                    md,
                    "| {} | {} | {} |",
                    cell(&entry.entry.label()),
                    cell(&entry.entry.reason),
                    cell(&scenario_list(&entry.scenarios))
                );
            }
            md.push('\n');
        };
    entry_table(
        md,
        "### ❌ Stale entries — they now pass; remove them from the baseline\n\n| Entry | Reason given | Passing scenarios |",
        &baseline.stale,
    );
    if !baseline.new_failures.is_empty() {
        let _ = writeln!(
            md,
            "### ❌ New failures (not in the baseline)\n\n{}\n",
            baseline
                .new_failures
                .iter()
                .map(|&i| {
                    let s = &outcome.scenarios[i];
                    format!("- {} (`{}:{}`)", s.name, s.uri, s.line)
                })
                .collect::<Vec<_>>()
                .join("\n")
        );
    }
    entry_table(
        md,
        "### Known failures (baselined, they do not fail the run)\n\n| Entry | Reason | Failed scenarios |",
        &baseline.known_failures,
    );
    if !baseline.not_run.is_empty() {
        let _ = writeln!(
            md,
            "### Entries whose scenarios did not run (filtered out)\n\n{}\n",
            baseline
                .not_run
                .iter()
                .map(|e| format!("- {} — {}", e.label(), e.reason))
                .collect::<Vec<_>>()
                .join("\n")
        );
    }
}

fn indent(text: &str, prefix: &str) -> String {
    text.lines()
        .map(|l| format!("{prefix}{l}"))
        .collect::<Vec<_>>()
        .join("\n")
}
