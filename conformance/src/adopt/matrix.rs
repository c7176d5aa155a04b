//! `conformance matrix REPORT…`: one self-contained HTML page, requirement × runtime, in the
//! manner of Bowtie's comparison table — a row per requirement (grouped by area), a column
//! per report, each cell the verdict; a header row per runtime with its verdict and counts,
//! and a switch to show only the rows where the runtimes differ.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use super::record::RunRecord;
use crate::report::html::escape;

const STYLE: &str = "body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222;max-width:1240px}\
table{border-collapse:collapse;width:100%;table-layout:fixed}td,th{border:1px solid #ddd;padding:3px 5px;\
vertical-align:top;text-align:left;overflow-wrap:anywhere}th{background:#f6f8fa}\
td.v{text-align:center;white-space:nowrap}.passed{background:#dafbe1}.failed{background:#ffebe9}\
.blocked{background:#fbefff}.known{background:#fff8c5}.notApplicable{background:#f6f8fa;color:#57606a}\
.notRun,.notObserved,.uncovered,.absent{background:#eaeef2;color:#57606a}tr.area td{background:#f6f8fa;font-weight:600}\
col.id{width:8em}col.st{width:auto}";

const SCRIPT: &str = "document.getElementById('differ').addEventListener('change',function(e){\
document.querySelectorAll('tr.req').forEach(function(r){r.style.display=(e.target.checked&&r.dataset.same==='1')?'none':'';});});";

fn mark(verdict: &str, baselined: bool) -> (&'static str, &'static str) {
    match verdict {
        "failed" if baselined => ("known", "✘ known"),
        "blocked" if baselined => ("known", "⛔ known"),
        "failed" => ("failed", "✘"),
        "blocked" => ("blocked", "⛔"),
        "passed" => ("passed", "✔"),
        "notApplicable" => ("notApplicable", "○"),
        "notRun" => ("notRun", "–"),
        "notObserved" => ("notObserved", "–"),
        "uncovered" => ("uncovered", "?"),
        _ => ("absent", ""),
    }
}

/// The page for `runs`, in the order given.
pub fn render(runs: &[RunRecord]) -> String {
    let mut h = String::new();
    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>Conformance matrix</title>\
         <style>{STYLE}</style></head><body>\n<h1>Conformance matrix: {} runtime(s)</h1>\n\
         <p>✔ passed · ✘ failed · ⛔ not judged (a precondition failed) · ○ not applicable · – not run · \
         <i>known</i>: in the runtime's baseline. <label><input type=\"checkbox\" id=\"differ\"> only rows where the runtimes differ</label></p>\n\
         <table><colgroup><col class=\"id\"><col class=\"st\">",
        runs.len()
    );
    for _ in runs {
        h.push_str("<col style=\"width:8em\">");
    }
    h.push_str("</colgroup><thead><tr><th>Requirement</th><th>Statement</th>");
    for run in runs {
        let _ = write!(
            h,
            "<th title=\"{}\">{}</th>",
            escape(&run.path.display().to_string()),
            escape(&run.label)
        );
    }
    h.push_str("</tr><tr><th></th><th>Verdict · passed / failed / not judged</th>");
    for run in runs {
        let count = |v: &str| run.requirements.iter().filter(|r| r.verdict == v).count();
        let (class, text) = if run.passed {
            ("passed", "CERTIFIED")
        } else {
            ("failed", "NOT CERTIFIED")
        };
        let _ = write!(
            h,
            "<th class=\"{class}\">{text} {}<br>{} / {} / {}</th>",
            escape(&run.profiles),
            count("passed"),
            count("failed"),
            count("blocked")
        );
    }
    h.push_str("</tr></thead><tbody>\n");
    // Every requirement any run knows, in the first-seen order (the catalogue's).
    let mut seen = BTreeSet::new();
    let mut rows = Vec::new();
    for run in runs {
        for requirement in &run.requirements {
            if seen.insert(requirement.id.clone()) {
                rows.push(requirement);
            }
        }
    }
    let mut area = "";
    for requirement in rows {
        if requirement.area() != area {
            area = requirement.area();
            let _ = writeln!(
                h,
                "<tr class=\"area\"><td colspan=\"{}\">{}</td></tr>",
                runs.len() + 2,
                escape(area)
            );
        }
        let cells: Vec<(String, String, String)> = runs
            .iter()
            .map(|run| match run.requirement(&requirement.id) {
                Some(r) => {
                    let (class, text) = mark(&r.verdict, r.baselined);
                    let title = if r.is_failure() {
                        run.reason(r)
                    } else {
                        r.verdict.clone()
                    };
                    (class.to_owned(), text.to_owned(), title)
                }
                None => (
                    "absent".to_owned(),
                    String::new(),
                    "not in this report".to_owned(),
                ),
            })
            .collect();
        let same = cells.windows(2).all(|w| w[0].0 == w[1].0);
        let _ = write!(
            h,
            "<tr class=\"req\" data-same=\"{}\"><td>{}</td><td>{} <small>[{} {}]</small></td>",
            u8::from(same),
            escape(&requirement.id),
            escape(&requirement.statement),
            escape(&requirement.level),
            escape(&requirement.profile)
        );
        for (class, text, title) in cells {
            let _ = write!(
                h,
                "<td class=\"v {class}\" title=\"{}\">{text}</td>",
                escape(&title)
            );
        }
        h.push_str("</tr>\n");
    }
    let _ = write!(
        h,
        "</tbody></table>\n<script>{SCRIPT}</script>\n</body></html>\n"
    );
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_row_per_requirement_and_a_column_per_runtime() {
        let run = |label: &str, verdict: &str| {
            let mut run: RunRecord = serde_json::from_value(serde_json::json!({
                "passed": verdict == "passed", "profiles": "core",
                "requirements": [{"id": "REQ-RPC-001", "level": "MUST", "profile": "core",
                    "statement": "a <line>", "verdict": verdict, "scenarios": []},
                    {"id": "REQ-SES-001", "level": "MUST", "profile": "core",
                    "statement": "s", "verdict": "passed", "scenarios": []}]}))
            .unwrap();
            run.label = label.to_owned();
            run
        };
        let page = render(&[run("rust 1.0", "passed"), run("python 0.9", "failed")]);
        assert!(
            page.contains("<th title=\"\">rust 1.0</th><th title=\"\">python 0.9</th>"),
            "{page}"
        );
        assert!(page.contains("data-same=\"0\"><td>REQ-RPC-001</td><td>a &lt;line&gt;"));
        assert!(page.contains("data-same=\"1\"><td>REQ-SES-001</td>"));
        assert!(page.contains("class=\"v failed\""));
        assert_eq!(page.matches("<tr class=\"area\">").count(), 2);
    }
}
