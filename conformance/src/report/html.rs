//! `certification.html`: one self-contained page (inline CSS and JS, nothing fetched). Its
//! first screen says what to fix first (counts per profile and area as bars, the failed MUSTs
//! by area with their reason and transcript, see [`super::summary`]); then the manifest, the
//! totals, the ten slowest scenarios, the requirement matrix (requirement → scenarios →
//! result, coloured, filterable by area, level and result) and, for each failed scenario, its
//! failure and the runtime's stderr. It fits a 1280 px window without horizontal scrolling.

use std::fmt::Write as _;
use std::path::Path;

use super::manifest::Manifest;
use super::{Outcome, ReportContext, ScenarioResult, Verdict, transcript_file_name};
use crate::catalogue::{Catalogue, area_of};

/// `<`, `>`, `&` and quotes escaped, for text and attribute values alike.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

const STYLE: &str = "body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222;max-width:1400px}\
h1{margin:.2em 0 .4em;font-size:22px}h2{font-size:16px;margin:.8em 0 .3em}td,th,li{overflow-wrap:anywhere}\
#matrix{table-layout:fixed}#matrix col.c-id{width:8.5em}#matrix col.c-level{width:7em}#matrix col.c-spec{width:11%}\
#matrix col.c-result{width:9em}#matrix col.c-scen{width:32%}#matrix ul{margin:0;padding-left:1.1em}\
h1 .ok{color:#1a7f37}h1 .ko{color:#cf222e}table{border-collapse:collapse;width:100%}\
td,th{border:1px solid #ddd;padding:4px 6px;vertical-align:top;text-align:left}\
th{background:#f6f8fa}.manifest td:first-child{width:14em;font-weight:600}\
tr.passed td.v{background:#dafbe1}tr.failed td.v{background:#ffebe9}\
tr.known td.v{background:#fff8c5}tr.notRun td.v,tr.uncovered td.v{background:#eaeef2}\
tr.blocked td.v{background:#fbefff}tr.notApplicable td.v{background:#f6f8fa;color:#57606a}\
li.pass::marker{content:'✔ ';color:#1a7f37}li.fail::marker{content:'✘ ';color:#cf222e}\
li.known::marker{content:'✘ ';color:#9a6700}pre{background:#f6f8fa;padding:6px;\
overflow:auto;max-height:30em;white-space:pre-wrap}.filters{margin:1em 0}\
.filters label{margin-right:1em}code{font-size:90%}";

const SCRIPT: &str = "function applyFilters(){var a=document.getElementById('f-area').value,\
l=document.getElementById('f-level').value,r=document.getElementById('f-result').value,\
q=document.getElementById('f-text').value.toLowerCase(),n=0;\
document.querySelectorAll('#matrix tbody tr').forEach(function(row){\
var show=(!a||row.dataset.area===a)&&(!l||row.dataset.level===l)&&(!r||row.dataset.result===r)\
&&(!q||row.textContent.toLowerCase().indexOf(q)>=0);row.style.display=show?'':'none';if(show)n++;});\
document.getElementById('f-count').textContent=n+' shown';}\
document.querySelectorAll('.filters select,.filters input').forEach(function(e){\
e.addEventListener('input',applyFilters);});applyFilters();";

/// The result class of a requirement row: `passed`, `failed`, `known`, `notRun`, `uncovered`.
fn row_class(verdict: Verdict, baselined: bool) -> &'static str {
    match verdict {
        Verdict::Failed if baselined => "known",
        Verdict::Blocked if baselined => "known",
        Verdict::Failed => "failed",
        Verdict::Blocked => "blocked",
        Verdict::Passed => "passed",
        Verdict::NotApplicable => "notApplicable",
        Verdict::NotRun | Verdict::NotObserved => "notRun",
        Verdict::Uncovered => "uncovered",
    }
}

fn row_label(class: &str) -> &'static str {
    match class {
        "known" => "known failure",
        "failed" => "failed",
        "blocked" => "not judged",
        "passed" => "passed",
        "notApplicable" => "not applicable",
        "notRun" => "not run",
        _ => "no scenario",
    }
}

/// The stderr section of a failed scenario's transcript, when the run kept transcripts.
fn stderr_of(transcripts: Option<&Path>, scenario: &ScenarioResult) -> Option<String> {
    let file = transcripts?.join(transcript_file_name(
        Some(Path::new(&scenario.uri)),
        scenario.line,
    ));
    let text = std::fs::read_to_string(file).ok()?;
    let (_, stderr) = text.split_once("\n## stderr (tail)\n")?;
    Some(stderr.to_owned())
}

pub fn render(
    catalogue: &Catalogue,
    outcome: &Outcome,
    context: &ReportContext,
    manifest: &Manifest,
    slowest: &[super::timing::ScenarioTime],
) -> String {
    let mut h = String::new();
    head(&mut h, catalogue, outcome, context, manifest);
    manifest_table(&mut h, outcome, manifest);
    slowest_scenarios(&mut h, slowest);
    filters(&mut h, catalogue);
    matrix(&mut h, outcome);
    not_certified(&mut h, context);
    failures(&mut h, outcome, context);
    let _ = write!(h, "<script>{SCRIPT}</script>\n</body></html>\n");
    h
}

/// The page's head and title with the verdict, then what to fix first.
fn head(
    h: &mut String,
    catalogue: &Catalogue,
    outcome: &Outcome,
    context: &ReportContext,
    manifest: &Manifest,
) {
    let (class, verdict) = if outcome.passed {
        ("ok", "CERTIFIED")
    } else {
        ("ko", "NOT CERTIFIED")
    };
    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width\">\
         <title>Conformance certification — {verdict}</title><style>{STYLE}{}</style></head><body>\n\
         <h1>Conformance certification — <span class=\"{class}\">{verdict} {}</span> <small>{}</small></h1>\n",
        super::summary::STYLE,
        escape(&outcome.profiles),
        escape(&manifest.runtime.command),
    );
    h.push_str(&super::summary::html(
        catalogue,
        outcome,
        context.transcripts_dir.is_some(),
    ));
}

/// What was certified, by what and when, and the totals.
fn manifest_table(h: &mut String, outcome: &Outcome, manifest: &Manifest) {
    let rows: Vec<(&str, String)> = vec![
        (
            "Runtime command",
            format!("<code>{}</code>", escape(&manifest.runtime.command)),
        ),
        (
            "Runtime version",
            escape(
                manifest
                    .runtime
                    .version
                    .as_deref()
                    .unwrap_or("(not reported by --version)"),
            ),
        ),
        ("Transport", escape(&manifest.runtime.transport)),
        (
            "Kit",
            escape(&format!(
                "{} {} ({})",
                manifest.kit.name, manifest.kit.version, manifest.kit.sensitivity
            )),
        ),
        (
            "Spec (catalogue)",
            escape(&format!(
                "{} requirements, {}, schemaVersion {}",
                manifest.spec.requirements, manifest.spec.fingerprint, manifest.spec.schema_version
            )),
        ),
        ("Started", escape(&manifest.started_at)),
        ("Finished", escape(&manifest.finished_at)),
        (
            "OS",
            escape(&format!(
                "{} {}{}",
                manifest.os.family,
                manifest.os.arch,
                manifest
                    .os
                    .release
                    .as_deref()
                    .map(|r| format!(" ({r})"))
                    .unwrap_or_default()
            )),
        ),
    ];
    h.push_str("<table class=\"manifest\">\n");
    for (key, value) in rows {
        let _ = writeln!(h, "<tr><td>{key}</td><td>{value}</td></tr>");
    }
    for (key, value) in [
        ("Tag filter", &manifest.tags),
        ("Name filter", &manifest.name),
        ("Shard", &manifest.shard),
    ] {
        if let Some(value) = value {
            let _ = writeln!(
                h,
                "<tr><td>{key}</td><td><code>{}</code></td></tr>",
                escape(value)
            );
        }
    }
    let total = outcome.scenarios.len();
    let failed = outcome.failed_scenarios();
    let _ = writeln!(
        h,
        "<tr><td>Scenarios</td><td>{} passed, {failed} failed, {total} total</td></tr>\n\
         <tr><td>Requirements</td><td>{} passed, {} failed, {} not judged, {} not applicable, {} not run, {} without scenario (of {}); {} warning(s) (failed SHOULD/MAY)</td></tr>\n</table>",
        total - failed,
        outcome.count(Verdict::Passed),
        outcome.count(Verdict::Failed),
        outcome.count(Verdict::Blocked),
        outcome.count(Verdict::NotApplicable),
        outcome.count(Verdict::NotRun) + outcome.count(Verdict::NotObserved),
        outcome.count(Verdict::Uncovered),
        outcome.requirements.len(),
        outcome.warnings
    );
}

/// The slowest scenarios, folded.
fn slowest_scenarios(h: &mut String, slowest: &[super::timing::ScenarioTime]) {
    if !slowest.is_empty() {
        let _ = write!(
            h,
            "<details><summary>The {} slowest scenarios</summary><table><thead><tr><th>Time</th><th>Scenario</th><th>Where</th></tr></thead><tbody>",
            slowest.len()
        );
        for slow in slowest {
            let _ = write!(
                h,
                "<tr><td>{}</td><td>{}</td><td>{}:{}</td></tr>",
                super::timing::human(slow.millis),
                escape(&slow.name),
                escape(&slow.uri),
                slow.line
            );
        }
        h.push_str("</tbody></table></details>\n");
    }
}

/// The matrix's filters: area, level, result and text.
fn filters(h: &mut String, catalogue: &Catalogue) {
    h.push_str(
        "<div class=\"filters\"><label>Area <select id=\"f-area\"><option value=\"\">all</option>",
    );
    for area in &catalogue.areas {
        let _ = write!(
            h,
            "<option value=\"{id}\">{id} — {title}</option>",
            id = escape(&area.id),
            title = escape(&area.title)
        );
    }
    h.push_str(
        "</select></label><label>Level <select id=\"f-level\"><option value=\"\">all</option>\
        <option>MUST</option><option>SHOULD</option><option>MAY</option></select></label>\
        <label>Result <select id=\"f-result\"><option value=\"\">all</option>",
    );
    for class in [
        "failed",
        "blocked",
        "known",
        "passed",
        "notApplicable",
        "notRun",
        "uncovered",
    ] {
        let _ = write!(h, "<option value=\"{class}\">{}</option>", row_label(class));
    }
    h.push_str(
        "</select></label><label>Text <input id=\"f-text\" type=\"search\"></label>\
        <span id=\"f-count\"></span></div>\n",
    );
}

/// One row per requirement, its scenarios linked to their failures.
fn matrix(h: &mut String, outcome: &Outcome) {
    h.push_str(
        "<table id=\"matrix\"><colgroup><col class=\"c-id\"><col class=\"c-level\"><col>\
        <col class=\"c-spec\"><col class=\"c-result\"><col class=\"c-scen\"></colgroup><thead><tr><th>Requirement</th><th>Level / profile</th><th>Statement</th>\
        <th>Spec</th><th>Result</th><th>Scenarios</th></tr></thead><tbody>\n",
    );
    for requirement in &outcome.requirements {
        let class = row_class(requirement.verdict, requirement.baselined);
        let _ = write!(
            h,
            "<tr class=\"{class}\" data-area=\"{area}\" data-level=\"{level}\" data-result=\"{class}\">\
             <td id=\"{id}\"><code>{id}</code></td><td>{level} {profile}</td><td>{statement}</td><td>{spec}</td>\
             <td class=\"v\">{label}{reason}</td><td><ul>",
            area = escape(area_of(&requirement.id)),
            id = escape(&requirement.id),
            level = escape(&requirement.level),
            statement = escape(&requirement.statement),
            spec = escape(&requirement.spec),
            label = row_label(class),
            profile = escape(&requirement.profile),
            reason = requirement
                .reason
                .as_deref()
                .map(|r| format!("<br><small>{}</small>", escape(r)))
                .unwrap_or_default(),
        );
        for scenario in requirement
            .scenarios
            .iter()
            .filter_map(|&i| outcome.scenarios.get(i))
        {
            let (li, anchor) = match (scenario.passed, scenario.baselined.is_some()) {
                (true, _) => ("pass", String::new()),
                (false, true) => ("known", failure_anchor(scenario)),
                (false, false) => ("fail", failure_anchor(scenario)),
            };
            let name = escape(&scenario.name);
            let name = if anchor.is_empty() {
                name
            } else {
                format!("<a href=\"#{anchor}\">{name}</a>")
            };
            let _ = write!(
                h,
                "<li class=\"{li}\">{name} <small>{}:{}</small></li>",
                escape(&scenario.uri),
                scenario.line
            );
        }
        h.push_str("</ul></td></tr>\n");
    }
    h.push_str("</tbody></table>\n");
}

/// The catalogue's requirements the kit leaves out on purpose, with why.
fn not_certified(h: &mut String, context: &ReportContext) {
    if !context.not_certified.is_empty() {
        let _ = writeln!(
            h,
            "<h2>Not certified, deliberately ({})</h2><table><thead><tr><th>Id</th><th>Level</th><th>Statement</th><th>Spec</th><th>Why not</th></tr></thead><tbody>",
            context.not_certified.len()
        );
        for entry in &context.not_certified {
            let _ = writeln!(
                h,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                escape(&entry.id),
                entry.level,
                escape(&entry.statement),
                escape(&entry.spec),
                escape(&entry.reason)
            );
        }
        h.push_str("</tbody></table>\n");
    }
}

/// Each failed scenario with its message and the runtime's stderr.
fn failures(h: &mut String, outcome: &Outcome, context: &ReportContext) {
    let failures: Vec<&ScenarioResult> = outcome.scenarios.iter().filter(|s| !s.passed).collect();
    if !failures.is_empty() {
        let _ = writeln!(h, "<h2>Failed scenarios ({})</h2>", failures.len());
    }
    for scenario in failures {
        let tags: Vec<&str> = scenario.requirement_ids().collect();
        let _ = write!(
            h,
            "<h3 id=\"{anchor}\">{name}</h3><p><small>{uri}:{line} — {tags}</small></p>",
            anchor = failure_anchor(scenario),
            name = escape(&scenario.name),
            uri = escape(&scenario.uri),
            line = scenario.line,
            tags = escape(&tags.join(", ")),
        );
        if let Some(reason) = &scenario.baselined {
            let _ = write!(h, "<p>Known failure (baselined): {}</p>", escape(reason));
        }
        let _ = write!(
            h,
            "<pre>{}</pre>",
            escape(scenario.failure.as_deref().unwrap_or("(no message)"))
        );
        match stderr_of(context.transcripts_dir.as_deref(), scenario) {
            Some(stderr) if !stderr.trim().is_empty() => {
                let _ = writeln!(
                    h,
                    "<details><summary>runtime stderr</summary><pre>{}</pre></details>",
                    escape(&stderr)
                );
            }
            Some(_) => h.push_str("<p><small>(the runtime wrote nothing on stderr)</small></p>\n"),
            None => h.push_str("<p><small>(no transcript kept for this scenario)</small></p>\n"),
        }
    }
}

fn failure_anchor(scenario: &ScenarioResult) -> String {
    let stem: String = scenario
        .uri
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    format!("fail-{stem}-{}", scenario.line)
}

#[cfg(test)]
mod tests {
    use super::super::manifest::{KitInfo, Manifest, OsInfo, RuntimeInfo, SpecInfo};
    use super::super::{RunStats, build_outcome, parse_cucumber_json};
    use super::*;

    #[test]
    fn the_page_shows_the_matrix_the_failure_and_its_stderr_escaped() {
        let catalogue: Catalogue = toml::from_str(
            r#"
[[area]]
id = "RPC"
title = "framing"
feature = "rpc/framing.feature"

[[requirement]]
id = "REQ-RPC-001"
level = "MUST"
profile = "core"
spec = "INTEROP.md §1"
statement = "stdout carries <only> JSON-RPC"

[[requirement]]
id = "REQ-RPC-002"
level = "SHOULD"
profile = "core"
spec = "INTEROP.md §1"
statement = "s"
"#,
        )
        .unwrap();
        let json = r#"[{"uri": "features/rpc/framing.feature", "name": "F", "elements": [
            {"type": "scenario", "name": "a <script> name", "line": 7, "tags": [{"name": "@REQ-RPC-001"}],
             "steps": [{"keyword": "Then ", "name": "x", "line": 8,
                        "result": {"status": "failed", "error_message": "it broke"}}]},
            {"type": "scenario", "name": "fine", "line": 12, "tags": [{"name": "@REQ-RPC-002"}],
             "steps": [{"keyword": "Then ", "name": "y", "line": 13, "result": {"status": "passed"}}]}
        ]}]"#;
        let results = parse_cucumber_json(json).unwrap();
        let transcripts = tempfile::tempdir().unwrap();
        std::fs::write(
            transcripts.path().join("rpc-framing-L7.log"),
            "scenario: x\n\n## stderr (tail)\npanic at <the> disco\n",
        )
        .unwrap();
        let now = time::OffsetDateTime::now_utc();
        let context = ReportContext {
            runtime: "rt".to_owned(),
            started_at: now,
            finished_at: now,
            features: "features".into(),
            tags: None,
            name: None,
            stats: RunStats::default(),
            transcripts_dir: Some(transcripts.path().to_path_buf()),
            transport: "stdio".to_owned(),
            manifest: Manifest {
                runtime: RuntimeInfo {
                    command: "rt".to_owned(),
                    version: Some("rt 9.9".to_owned()),
                    transport: "stdio".to_owned(),
                },
                kit: KitInfo::current(),
                spec: SpecInfo::of_catalogue(Path::new("/nonexistent"), 2),
                started_at: "t0".to_owned(),
                finished_at: "t1".to_owned(),
                os: OsInfo::current(),
                tags: None,
                name: None,
                shard: Some("1/2".to_owned()),
            },
            not_certified: vec![crate::catalogue::NotCertified {
                id: "REQ-RPC-901".to_owned(),
                level: crate::catalogue::Level::May,
                spec: "x §1".to_owned(),
                statement: "a <phase 3> thing".to_owned(),
                reason: "not observable".to_owned(),
            }],
        };
        let outcome = build_outcome(
            &catalogue,
            &[],
            &results,
            &Default::default(),
            &crate::runtime_manifest::RuntimeManifest::default(),
            &context,
        );
        let slow = [super::super::timing::ScenarioTime {
            name: "a <slow> one".to_owned(),
            uri: "rpc/framing.feature".to_owned(),
            line: 7,
            millis: 4200,
        }];
        let page = render(&catalogue, &outcome, &context, &context.manifest, &slow);
        assert!(
            page.contains("<td>4.2 s</td><td>a &lt;slow&gt; one</td>"),
            "{page}"
        );
        assert!(page.contains("Fix first: 1 failed MUST(s) by area"));
        assert!(page.contains("href=\"transcripts/rpc-framing-L7.log\""));
        assert!(page.contains("NOT CERTIFIED"));
        assert!(page.contains("Not certified, deliberately (1)"));
        assert!(page.contains("<td>REQ-RPC-901</td><td>MAY</td><td>a &lt;phase 3&gt; thing</td>"));
        assert!(page.contains("data-area=\"RPC\" data-level=\"MUST\" data-result=\"failed\""));
        assert!(page.contains("data-level=\"SHOULD\" data-result=\"passed\""));
        assert!(page.contains("stdout carries &lt;only&gt; JSON-RPC"));
        assert!(page.contains("a &lt;script&gt; name"));
        assert!(!page.contains("<script> name"));
        assert!(page.contains("panic at &lt;the&gt; disco"), "{page}");
        assert!(page.contains("rt 9.9") && page.contains("1/2"));
        assert!(!page.contains("http://") && !page.contains("https://"));
    }
}
