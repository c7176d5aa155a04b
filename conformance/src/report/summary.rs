//! The first screen of a report: what to fix first. Requirement counts per profile and per
//! area (drawn as bars in `certification.html`, as a table in `certification.md`), then the
//! failed MUSTs grouped by area, each with its one-line reason and a link to its transcript.
//! The full matrix follows in both reports.

use std::fmt::Write as _;
use std::path::Path;

use super::html::escape;
use super::{Outcome, RequirementOutcome, ScenarioResult, Verdict, transcript_file_name};
use crate::catalogue::{Catalogue, area_of};

/// The bar's segments, in drawing order: (class, label).
pub const SEGMENTS: [(&str, &str); 6] = [
    ("passed", "passed"),
    ("failed", "failed"),
    ("known", "known failure"),
    ("blocked", "not judged"),
    ("notApplicable", "not applicable"),
    ("notRun", "not run"),
];

/// Requirement counts of one group (a profile or an area), by segment.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Counts {
    pub label: String,
    pub title: String,
    pub by_segment: [usize; 6],
}

impl Counts {
    pub fn total(&self) -> usize {
        self.by_segment.iter().sum()
    }

    fn add(&mut self, requirement: &RequirementOutcome) {
        let segment = match requirement.verdict {
            Verdict::Passed => 0,
            Verdict::Failed | Verdict::Blocked if requirement.baselined => 2,
            Verdict::Failed => 1,
            Verdict::Blocked => 3,
            Verdict::NotApplicable => 4,
            Verdict::NotRun | Verdict::NotObserved | Verdict::Uncovered => 5,
        };
        self.by_segment[segment] += 1;
    }
}

/// Counts per profile (in the order the catalogue first names them).
pub fn by_profile(outcome: &Outcome) -> Vec<Counts> {
    group(outcome, |r| (r.profile.clone(), String::new()))
}

/// Counts per area, titled from the catalogue.
pub fn by_area(catalogue: &Catalogue, outcome: &Outcome) -> Vec<Counts> {
    group(outcome, |r| {
        let id = area_of(&r.id).to_owned();
        let title = catalogue
            .areas
            .iter()
            .find(|a| a.id == id)
            .map(|a| a.title.clone())
            .unwrap_or_default();
        (id, title)
    })
}

fn group(outcome: &Outcome, key: impl Fn(&RequirementOutcome) -> (String, String)) -> Vec<Counts> {
    let mut groups: Vec<Counts> = Vec::new();
    for requirement in &outcome.requirements {
        let (label, title) = key(requirement);
        let at = match groups.iter().position(|g| g.label == label) {
            Some(at) => at,
            None => {
                groups.push(Counts {
                    label,
                    title,
                    ..Default::default()
                });
                groups.len() - 1
            }
        };
        groups[at].add(requirement);
    }
    groups
}

/// A decisive requirement that failed or went unjudged, with what to show for it.
pub struct FailedMust<'a> {
    pub requirement: &'a RequirementOutcome,
    pub scenario: Option<&'a ScenarioResult>,
    pub reason: String,
}

/// The failed (or not judged) MUSTs of the declared profiles, grouped by area in catalogue
/// order; baselined ones last in their area.
pub fn failed_musts(outcome: &Outcome) -> Vec<(String, Vec<FailedMust<'_>>)> {
    let mut areas: Vec<(String, Vec<FailedMust<'_>>)> = Vec::new();
    for requirement in outcome
        .requirements
        .iter()
        .filter(|r| r.decisive && matches!(r.verdict, Verdict::Failed | Verdict::Blocked))
    {
        let scenario = requirement
            .scenarios
            .iter()
            .filter_map(|&i| outcome.scenarios.get(i))
            .find(|s| s.counts_as_failure());
        let text = match (requirement.verdict, scenario, &requirement.reason) {
            (Verdict::Blocked, _, Some(reason)) => reason.clone(),
            (_, Some(scenario), _) => scenario.failure.clone().unwrap_or_default(),
            (_, None, Some(reason)) => reason.clone(),
            (_, None, None) => "a malformed message of the kind it judges".to_owned(),
        };
        let entry = FailedMust {
            requirement,
            scenario,
            reason: first_line(&text, 200),
        };
        let area = area_of(&requirement.id).to_owned();
        match areas.iter_mut().find(|(a, _)| *a == area) {
            Some((_, list)) => list.push(entry),
            None => areas.push((area, vec![entry])),
        }
    }
    for (_, list) in &mut areas {
        list.sort_by_key(|f| f.requirement.baselined);
    }
    areas
}

fn first_line(text: &str, max: usize) -> String {
    let line = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("");
    if line.chars().count() > max {
        let mut cut: String = line.chars().take(max).collect();
        cut.push('…');
        cut
    } else {
        line.to_owned()
    }
}

/// The transcript of a failed scenario, relative to the report directory.
pub fn transcript_link(scenario: &ScenarioResult) -> String {
    format!(
        "transcripts/{}",
        transcript_file_name(Some(Path::new(&scenario.uri)), scenario.line)
    )
}

/// CSS of the first screen (bars and the failed-MUST list).
pub const STYLE: &str = ".first{display:grid;grid-template-columns:minmax(0,5fr) minmax(0,7fr);gap:0 2em}\
.bars{width:100%;border:0;table-layout:fixed}.bars td{border:0;padding:1px 4px;font-size:13px;white-space:nowrap;\
overflow:hidden;text-overflow:ellipsis}.bars td:first-child{width:34%}.bars td.bar{width:38%}.bar div{display:flex;height:12px;background:#eaeef2}\
.bar span{display:block;height:100%}.bar .passed{background:#2da44e}.bar .failed{background:#cf222e}\
.bar .known{background:#d4a72c}.bar .blocked{background:#8250df}.bar .notApplicable{background:#afb8c1}\
.bar .notRun{background:#d0d7de}.legend span{display:inline-block;width:10px;height:10px;margin:0 3px 0 10px}\
.fix h3{margin:.6em 0 .2em;font-size:14px}.fix ul{margin:0;padding-left:1.2em}.fix li{margin:.15em 0}\
.fix .why{color:#57606a;display:block;white-space:nowrap;overflow:hidden;text-overflow:ellipsis}.fix .knownfix{color:#9a6700}";

/// The first screen as HTML: verdict counts as bars, then the failed MUSTs by area.
pub fn html(catalogue: &Catalogue, outcome: &Outcome, transcripts: bool) -> String {
    let mut h = String::from("<section class=\"first\"><div><h2>Requirements by profile</h2>");
    bars(&mut h, &by_profile(outcome));
    h.push_str("<h2>By area</h2>");
    bars(&mut h, &by_area(catalogue, outcome));
    h.push_str("<p class=\"legend bar\"><small>");
    for (class, label) in SEGMENTS {
        let _ = write!(h, "<span class=\"{class}\"></span>{label}");
    }
    h.push_str("</small></p></div><div class=\"fix\">");
    let failed = failed_musts(outcome);
    let count: usize = failed.iter().map(|(_, list)| list.len()).sum();
    if count == 0 {
        h.push_str("<h2>Fix first</h2><p>No MUST of the declared profiles failed.</p>");
    } else {
        let _ = write!(h, "<h2>Fix first: {count} failed MUST(s) by area</h2>");
    }
    for (area, list) in &failed {
        let title = catalogue
            .areas
            .iter()
            .find(|a| &a.id == area)
            .map(|a| a.title.as_str())
            .unwrap_or("");
        let _ = write!(
            h,
            "<h3>{} — {} ({})</h3><ul>",
            escape(area),
            escape(title),
            list.len()
        );
        for item in list {
            let r = item.requirement;
            let known = if r.baselined {
                " <span class=\"knownfix\">(known failure)</span>"
            } else {
                ""
            };
            let blocked = if r.verdict == Verdict::Blocked {
                " <i>not judged</i>"
            } else {
                ""
            };
            let link = match item.scenario {
                Some(scenario) if transcripts => format!(
                    " · <a href=\"{}\">transcript</a>",
                    escape(&transcript_link(scenario))
                ),
                _ => String::new(),
            };
            let _ = write!(
                h,
                "<li><a href=\"#{id}\"><code>{id}</code></a>{blocked}{known} {statement}{link}\
                 <span class=\"why\" title=\"{reason}\">{reason}</span></li>",
                id = escape(&r.id),
                statement = escape(&first_line(&r.statement, 140)),
                reason = escape(&item.reason),
            );
        }
        h.push_str("</ul>");
    }
    h.push_str("</div></section>\n");
    h
}

fn bars(h: &mut String, groups: &[Counts]) {
    h.push_str("<table class=\"bars\">");
    for group in groups {
        let total = group.total().max(1);
        let title = if group.title.is_empty() {
            escape(&group.label)
        } else {
            format!(
                "{} <small>{}</small>",
                escape(&group.label),
                escape(&group.title)
            )
        };
        let _ = write!(
            h,
            "<tr><td title=\"{}\">{title}</td><td class=\"bar\"><div>",
            escape(&group.title)
        );
        for (i, (class, label)) in SEGMENTS.iter().enumerate() {
            let n = group.by_segment[i];
            if n > 0 {
                let width = n as f64 * 100.0 / total as f64;
                let _ = write!(
                    h,
                    "<span class=\"{class}\" style=\"width:{width:.2}%\" title=\"{n} {label}\"></span>"
                );
            }
        }
        let _ = write!(
            h,
            "</div></td><td title=\"passed of all\">{} / {} ✔{}</td></tr>",
            group.by_segment[0],
            group.total(),
            match group.by_segment[1] + group.by_segment[3] {
                0 => String::new(),
                n => format!(" · <b>{n} ✘</b>"),
            }
        );
    }
    h.push_str("</table>");
}

/// The first screen as Markdown: counts per profile and area with a text bar, then the failed
/// MUSTs by area.
pub fn markdown(catalogue: &Catalogue, outcome: &Outcome, transcripts: bool) -> String {
    let mut md = String::from(
        "\n## At a glance\n\n| Profile / area | Passed | Failed | Known | Not judged | N/A | Not run | |\n|---|---|---|---|---|---|---|---|\n",
    );
    for group in by_profile(outcome)
        .iter()
        .chain(&by_area(catalogue, outcome))
    {
        let c = &group.by_segment;
        let label = if group.title.is_empty() {
            format!("**{}**", group.label)
        } else {
            format!("{} {}", group.label, group.title)
        };
        let _ = writeln!(
            md,
            "| {label} | {} | {} | {} | {} | {} | {} | `{}` |",
            c[0],
            c[1],
            c[2],
            c[3],
            c[4],
            c[5],
            text_bar(group, 20)
        );
    }
    let failed = failed_musts(outcome);
    if !failed.is_empty() {
        let count: usize = failed.iter().map(|(_, list)| list.len()).sum();
        let _ = writeln!(md, "\n## Fix first: {count} failed MUST(s) by area\n");
        for (area, list) in &failed {
            let _ = writeln!(md, "**{area}**\n");
            for item in list {
                let r = item.requirement;
                let mut line = format!(
                    "- `{}`{} {} — _{}_",
                    r.id,
                    if r.baselined { " (known failure)" } else { "" },
                    first_line(&r.statement, 140),
                    item.reason.replace('_', "\\_")
                );
                if let (Some(scenario), true) = (item.scenario, transcripts) {
                    let _ = write!(line, " ([transcript]({}))", transcript_link(scenario));
                }
                let _ = writeln!(md, "{line}");
            }
            md.push('\n');
        }
    }
    md
}

/// `█` for passed, `▒` for failing, `·` for the rest, `width` characters.
fn text_bar(group: &Counts, width: usize) -> String {
    let total = group.total().max(1);
    let c = &group.by_segment;
    let passed = c[0] * width / total;
    let failing = ((c[1] + c[2] + c[3]) * width)
        .div_ceil(total)
        .min(width - passed);
    format!(
        "{}{}{}",
        "█".repeat(passed),
        "▒".repeat(failing),
        "·".repeat(width - passed - failing)
    )
}
