//! The spec walk records: `features/walk/<doc without .md>.toml`, one per spec document,
//! listing every heading in document order with the catalogue ids that certify — or
//! deliberately do not certify (not-certified.toml) — its normative statements:
//!
//! ```toml
//! doc = "local-agent-host.md"
//! [[section]]
//! heading = "5.3 Token Counting"   # the heading text exactly, without the leading #'s
//! ids = ["REQ-THR-003"]
//! note = ""                        # required when ids is empty: why there is nothing to certify
//! ```
//!
//! `cargo xtask coverage` checks them, so a walk that was done stays done when the spec or the
//! catalogue changes.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use anyhow::Context;
use serde::Deserialize;

/// The spec documents that must be walked. A missing walk file for one of them fails.
pub(crate) const WALKED_DOCUMENTS: [&str; 5] = [
    "local-agent-host.md",
    "local-tool-runtime.md",
    "architecture.md",
    "system-design.md",
    "INTEROP.md",
];

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct WalkFile {
    pub doc: String,
    #[serde(default, rename = "section")]
    pub sections: Vec<WalkSection>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct WalkSection {
    pub heading: String,
    #[serde(default)]
    pub ids: Vec<String>,
    #[serde(default)]
    pub note: String,
}

/// What the check found for one document.
#[derive(Debug, Default)]
pub(crate) struct DocReport {
    pub doc: String,
    /// Headings the document has.
    pub headings: usize,
    /// Of those, how many the record lists (each heading text counted at most as often as the
    /// document has it).
    pub walked: usize,
    /// Distinct catalogue / not-certified ids the record names.
    pub ids: usize,
    pub problems: Vec<String>,
}

/// The result over all walk files.
#[derive(Debug, Default)]
pub(crate) struct WalkReport {
    pub docs: Vec<DocReport>,
    /// Documents of `WALKED_DOCUMENTS` without a walk file.
    pub not_walked: Vec<String>,
    /// The spec directory does not exist (a checkout without the spec beside it): only the
    /// records' ids were checked, not their headings.
    pub spec_missing: bool,
}

impl WalkReport {
    pub(crate) fn problems(&self) -> impl Iterator<Item = &String> {
        self.docs.iter().flat_map(|d| d.problems.iter())
    }
}

/// The heading texts of a Markdown document, in order: lines starting with `#` outside
/// fenced code blocks (a `#` there is a shell comment or a code line), without the `#`s.
pub(crate) fn doc_headings(text: &str) -> Vec<String> {
    let mut in_fence = false;
    let mut headings = Vec::new();
    for line in text.lines() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            in_fence = !in_fence;
            continue;
        }
        if in_fence || !line.starts_with('#') {
            continue;
        }
        headings.push(line.trim_start_matches('#').trim().to_owned());
    }
    headings
}

/// Checks every `*.toml` in `walk_dir` against its document in `spec_dir`; `known` holds the
/// ids of requirements.toml and not-certified.toml.
pub(crate) fn check(
    walk_dir: &Path,
    spec_dir: &Path,
    known: &BTreeSet<String>,
) -> anyhow::Result<WalkReport> {
    let mut report = WalkReport {
        spec_missing: !spec_dir.is_dir(),
        ..WalkReport::default()
    };
    let mut files: Vec<PathBuf> = match std::fs::read_dir(walk_dir) {
        Ok(entries) => entries
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|e| e == "toml"))
            .collect(),
        Err(_) => Vec::new(),
    };
    files.sort();
    let mut walked_docs = BTreeSet::new();
    for file in &files {
        let text = std::fs::read_to_string(file)
            .with_context(|| format!("cannot read {}", file.display()))?;
        let name = file
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let walk: WalkFile = match toml::from_str(&text) {
            Ok(walk) => walk,
            Err(error) => {
                report.docs.push(DocReport {
                    doc: name.clone(),
                    problems: vec![format!("walk/{name} is not a valid walk record: {error}")],
                    ..DocReport::default()
                });
                continue;
            }
        };
        let mut doc_report = DocReport {
            doc: walk.doc.clone(),
            ..DocReport::default()
        };
        let expected_stem = walk.doc.strip_suffix(".md").unwrap_or(&walk.doc);
        if name != format!("{expected_stem}.toml") {
            doc_report.problems.push(format!(
                "walk/{name} walks {} but should then be named walk/{expected_stem}.toml",
                walk.doc
            ));
        }
        walked_docs.insert(walk.doc.clone());
        let doc_path = spec_dir.join(&walk.doc);
        if report.spec_missing {
            check_ids(&walk, known, &mut doc_report);
            report.docs.push(doc_report);
            continue;
        }
        match std::fs::read_to_string(&doc_path) {
            Ok(doc_text) => check_walk(&walk, &doc_headings(&doc_text), known, &mut doc_report),
            Err(error) => doc_report.problems.push(format!(
                "walk/{name}: cannot read the spec document {} ({error}); pass --spec DIR",
                doc_path.display()
            )),
        }
        report.docs.push(doc_report);
    }
    report.not_walked = WALKED_DOCUMENTS
        .iter()
        .filter(|d| !walked_docs.contains(**d))
        .map(|d| (*d).to_owned())
        .collect();
    Ok(report)
}

/// Compares one record with its document's headings; problems go to `report`.
pub(crate) fn check_walk(
    walk: &WalkFile,
    headings: &[String],
    known: &BTreeSet<String>,
    report: &mut DocReport,
) {
    let doc = &walk.doc;
    report.headings = headings.len();
    let recorded: Vec<&str> = walk.sections.iter().map(|s| s.heading.trim()).collect();

    let mut in_doc: BTreeMap<&str, usize> = BTreeMap::new();
    for heading in headings {
        *in_doc.entry(heading.as_str()).or_default() += 1;
    }
    let mut in_record: BTreeMap<&str, usize> = BTreeMap::new();
    for heading in &recorded {
        *in_record.entry(heading).or_default() += 1;
    }
    for heading in headings {
        let have = in_record.get(heading.as_str()).copied().unwrap_or(0);
        let want = in_doc.get(heading.as_str()).copied().unwrap_or(0);
        if have < want {
            report.problems.push(format!(
                "{doc}: heading {heading:?} is not walked (missing from walk record)"
            ));
            // Report each missing text once.
            in_record.insert(heading.as_str(), want);
        }
    }
    let mut stale_reported = BTreeSet::new();
    for heading in &recorded {
        let have = in_record_count(&recorded, heading);
        let want = in_doc.get(heading).copied().unwrap_or(0);
        if have > want && stale_reported.insert(*heading) {
            report.problems.push(if want == 0 {
                format!("{doc}: stale heading {heading:?} in the walk record (not in the document)")
            } else {
                format!(
                    "{doc}: heading {heading:?} is listed {have} times, the document has it {want}"
                )
            });
        }
    }
    report.walked = in_doc
        .iter()
        .map(|(h, want)| (*want).min(in_record_count(&recorded, h)))
        .sum();

    // Order: the headings both have, compared position by position; the first difference
    // is enough to find the mistake.
    let common_doc: Vec<&str> = headings
        .iter()
        .map(String::as_str)
        .filter(|h| recorded.contains(h))
        .collect();
    let common_record: Vec<&str> = recorded
        .iter()
        .copied()
        .filter(|h| in_doc.contains_key(h))
        .collect();
    if let Some((position, (doc_heading, record_heading))) = common_doc
        .iter()
        .zip(&common_record)
        .enumerate()
        .find(|(_, (a, b))| a != b)
    {
        report.problems.push(format!(
            "{doc}: walk record out of order at its shared heading #{}: the document has {doc_heading:?} there, the record {record_heading:?}",
            position + 1
        ));
    }

    check_ids(walk, known, report);
}

/// Every id a record names exists, and every section without ids says why.
fn check_ids(walk: &WalkFile, known: &BTreeSet<String>, report: &mut DocReport) {
    let doc = &walk.doc;
    let mut ids = BTreeSet::new();
    for section in &walk.sections {
        for id in &section.ids {
            if !known.contains(id) {
                report.problems.push(format!(
                    "{doc}: section {:?} names {id}, which is neither in requirements.toml nor in not-certified.toml",
                    section.heading
                ));
            }
            ids.insert(id.as_str());
        }
        if section.ids.is_empty() && section.note.trim().is_empty() {
            report.problems.push(format!(
                "{doc}: section {:?} has no ids and no note saying why",
                section.heading
            ));
        }
    }
    report.ids = ids.len();
}

fn in_record_count(recorded: &[&str], heading: &str) -> usize {
    recorded.iter().filter(|h| **h == heading).count()
}

#[cfg(test)]
mod tests {
    use super::*;

    const DOC: &str = "# Title\n\nintro\n\n## 1. One\n\ntext\n\n```sh\n# not a heading\n```\n\n### 1.1 Sub\n\n## 2. Two\n";

    fn known() -> BTreeSet<String> {
        ["REQ-RPC-001", "REQ-THR-901"]
            .iter()
            .map(|s| (*s).to_owned())
            .collect()
    }

    fn walk(sections: &[(&str, &[&str], &str)]) -> WalkFile {
        WalkFile {
            doc: "doc.md".to_owned(),
            sections: sections
                .iter()
                .map(|(h, ids, note)| WalkSection {
                    heading: (*h).to_owned(),
                    ids: ids.iter().map(|s| (*s).to_owned()).collect(),
                    note: (*note).to_owned(),
                })
                .collect(),
        }
    }

    fn run(walk: &WalkFile) -> DocReport {
        let mut report = DocReport::default();
        check_walk(walk, &doc_headings(DOC), &known(), &mut report);
        report
    }

    const FULL: [(&str, &[&str], &str); 4] = [
        ("Title", &[], "title"),
        ("1. One", &["REQ-RPC-001"], ""),
        ("1.1 Sub", &["REQ-THR-901"], ""),
        ("2. Two", &[], "rationale"),
    ];

    #[test]
    fn fenced_hash_lines_are_not_headings() {
        assert_eq!(doc_headings(DOC), ["Title", "1. One", "1.1 Sub", "2. Two"]);
    }

    #[test]
    fn a_complete_walk_passes_and_counts() {
        let report = run(&walk(&FULL));
        assert!(report.problems.is_empty(), "{:#?}", report.problems);
        assert_eq!((report.headings, report.walked, report.ids), (4, 4, 2));
    }

    #[test]
    fn a_missing_heading_fails() {
        let report = run(&walk(&[FULL[0], FULL[1], FULL[3]]));
        assert_eq!(report.problems.len(), 1, "{:#?}", report.problems);
        assert!(report.problems[0].contains("\"1.1 Sub\" is not walked"));
        assert_eq!(report.walked, 3);
    }

    #[test]
    fn a_stale_heading_fails() {
        let mut sections = FULL.to_vec();
        sections.push(("3. Gone", &["REQ-RPC-001"], ""));
        let report = run(&walk(&sections));
        assert_eq!(report.problems.len(), 1, "{:#?}", report.problems);
        assert!(report.problems[0].contains("stale heading \"3. Gone\""));
    }

    #[test]
    fn out_of_order_headings_fail() {
        let report = run(&walk(&[FULL[0], FULL[2], FULL[1], FULL[3]]));
        assert_eq!(report.problems.len(), 1, "{:#?}", report.problems);
        assert!(report.problems[0].contains("out of order"));
    }

    #[test]
    fn an_unknown_id_fails() {
        let report = run(&walk(&[
            FULL[0],
            ("1. One", &["REQ-RPC-999"], ""),
            FULL[2],
            FULL[3],
        ]));
        assert_eq!(report.problems.len(), 1, "{:#?}", report.problems);
        assert!(report.problems[0].contains("REQ-RPC-999"));
    }

    #[test]
    fn empty_ids_need_a_note() {
        let report = run(&walk(&[FULL[0], ("1. One", &[], " "), FULL[2], FULL[3]]));
        assert_eq!(report.problems.len(), 1, "{:#?}", report.problems);
        assert!(report.problems[0].contains("no ids and no note"));
    }

    #[test]
    fn files_are_matched_to_documents_and_unwalked_documents_listed() {
        let dir = tempfile::tempdir().unwrap();
        let spec = dir.path().join("spec");
        let walk_dir = dir.path().join("walk");
        std::fs::create_dir_all(&spec).unwrap();
        std::fs::create_dir_all(&walk_dir).unwrap();
        std::fs::write(spec.join("INTEROP.md"), "# A\n## B\n").unwrap();
        std::fs::write(
            walk_dir.join("INTEROP.toml"),
            "doc = \"INTEROP.md\"\n[[section]]\nheading = \"A\"\nnote = \"title\"\n[[section]]\nheading = \"B\"\nids = [\"REQ-RPC-001\"]\n",
        )
        .unwrap();
        std::fs::write(walk_dir.join("other.toml"), "doc = \"missing.md\"\n").unwrap();
        let report = check(&walk_dir, &spec, &known()).unwrap();
        let problems: Vec<&String> = report.problems().collect();
        assert_eq!(problems.len(), 2, "{problems:#?}");
        assert!(
            problems
                .iter()
                .any(|p| p.contains("should then be named walk/missing.toml"))
        );
        assert!(
            problems
                .iter()
                .any(|p| p.contains("cannot read the spec document"))
        );
        assert_eq!(report.docs[0].walked, 2);
        assert_eq!(report.not_walked.len(), 4);
        assert!(!report.not_walked.contains(&"INTEROP.md".to_owned()));
    }
}
