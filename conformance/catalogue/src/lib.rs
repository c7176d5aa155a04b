//! The requirement catalogue (`features/requirements.toml`) and a small scan of the
//! `.feature` files for the requirement tags their scenarios carry.
//!
//! Its own crate so that the kit (for the certification report) and `xtask` (for `coverage`
//! and `new-scenario`) share one reading of it: `xtask` stays free of cucumber, and the two can
//! never disagree on what a requirement tag is or which scenarios cover it.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use serde::Deserialize;

/// The prefix every requirement id (and so every requirement tag) starts with.
pub const REQUIREMENT_PREFIX: &str = "REQ-";

/// How binding a requirement is (RFC 2119 words, as the spec uses them).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Deserialize)]
pub enum Level {
    #[serde(rename = "MUST")]
    Must,
    #[serde(rename = "SHOULD")]
    Should,
    #[serde(rename = "MAY")]
    May,
}

impl fmt::Display for Level {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Level::Must => "MUST",
            Level::Should => "SHOULD",
            Level::May => "MAY",
        })
    }
}

/// Which body of text a requirement comes from, and so who must meet it. A runtime under
/// test declares the profiles it supports (its manifest); the others are not applicable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Profile {
    /// The design documents' normative text: every runtime of the design.
    Core,
    /// INTEROP.md's decisions for the real desktop app, services and gateway.
    Interop,
    /// The reference runtime's own extensions and knobs (`AGENT_RUNTIME_*`, extra events…).
    Reference,
    /// Security beyond the spec's text: what a hostile model must not reach.
    Hardening,
    /// Project decisions stricter than the spec's text.
    Policy,
}

impl Profile {
    pub const ALL: [Profile; 5] = [
        Profile::Core,
        Profile::Interop,
        Profile::Reference,
        Profile::Hardening,
        Profile::Policy,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Profile::Core => "core",
            Profile::Interop => "interop",
            Profile::Reference => "reference",
            Profile::Hardening => "hardening",
            Profile::Policy => "policy",
        }
    }

    pub fn parse(text: &str) -> Option<Profile> {
        Profile::ALL.into_iter().find(|p| p.as_str() == text)
    }
}

impl fmt::Display for Profile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One testable sentence of the spec.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Requirement {
    /// `REQ-<AREA>-<NNN>`, e.g. `REQ-RPC-001`.
    pub id: String,
    pub level: Level,
    /// The body of text it comes from.
    pub profile: Profile,
    /// Where the spec says it: file and section, e.g. `INTEROP.md §1`.
    #[serde(default)]
    pub spec: String,
    /// The requirement in one line.
    pub statement: String,
    /// The kind of message this requirement is about, judged on every such message of every
    /// scenario (`methods/<Method>.result`, `events/payloads/<type>`, `events/SessionEvent`,
    /// `jsonrpc/Response`, `jsonrpc/ids`, `stdout-lines`). Such a requirement needs no
    /// scenario of its own: a malformed message anywhere is charged to it.
    #[serde(default)]
    pub judges: Option<String>,
}

impl Requirement {
    /// `RPC` for `REQ-RPC-001`.
    pub fn area(&self) -> &str {
        area_of(&self.id)
    }
}

/// A group of requirements and where its scenarios live.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Area {
    /// `RPC`, `SES`, ...
    pub id: String,
    pub title: String,
    /// The feature file (relative to `features/`) that new scenarios of this area go to.
    pub feature: String,
}

/// The whole catalogue as written in `requirements.toml`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Catalogue {
    #[serde(default, rename = "area")]
    pub areas: Vec<Area>,
    #[serde(default, rename = "requirement")]
    pub requirements: Vec<Requirement>,
}

impl Catalogue {
    /// Reads and checks the catalogue: ids well formed and unique, areas known.
    pub fn load(path: &Path) -> anyhow::Result<Self> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read the catalogue {}", path.display()))?;
        let catalogue: Catalogue = toml::from_str(&text)
            .with_context(|| format!("{} is not a valid catalogue", path.display()))?;
        catalogue.check()?;
        Ok(catalogue)
    }

    fn check(&self) -> anyhow::Result<()> {
        let mut seen = BTreeSet::new();
        for requirement in &self.requirements {
            if !is_requirement_id(&requirement.id) {
                bail!(
                    "requirement id {:?} is not of the form REQ-<AREA>-<NNN>",
                    requirement.id
                );
            }
            if !seen.insert(requirement.id.as_str()) {
                bail!("requirement {} is listed twice", requirement.id);
            }
            if self.area(requirement.area()).is_none() {
                bail!(
                    "requirement {} belongs to area {} which has no [[area]] entry",
                    requirement.id,
                    requirement.area()
                );
            }
        }
        Ok(())
    }

    pub fn get(&self, id: &str) -> Option<&Requirement> {
        self.requirements.iter().find(|r| r.id == id)
    }

    pub fn area(&self, id: &str) -> Option<&Area> {
        self.areas.iter().find(|a| a.id == id)
    }
}

/// A normative statement the kit deliberately does not certify (`features/not-certified.toml`).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NotCertified {
    pub id: String,
    pub level: Level,
    pub spec: String,
    pub statement: String,
    /// Why it is not certified (phase, UI-only, not observable from the process boundary…).
    pub reason: String,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct NotCertifiedFile {
    #[serde(default)]
    not_certified: Vec<NotCertified>,
}

/// Reads `not-certified.toml`; a missing file is an empty list.
pub fn load_not_certified(path: &Path) -> anyhow::Result<Vec<NotCertified>> {
    if !path.exists() {
        return Ok(Vec::new());
    }
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    let file: NotCertifiedFile =
        toml::from_str(&text).with_context(|| format!("{} is not valid", path.display()))?;
    Ok(file.not_certified)
}

/// What is wrong with the not-certified list: a malformed or repeated id, an id the catalogue
/// also lists, an id a scenario tags (stale: it is certified now), an empty reason or spec.
pub fn not_certified_problems(
    list: &[NotCertified],
    catalogue: &Catalogue,
    scenarios: &[ScenarioRef],
) -> Vec<String> {
    let mut problems = Vec::new();
    let mut seen = BTreeSet::new();
    for entry in list {
        let id = entry.id.as_str();
        if !is_requirement_id(id) {
            problems.push(format!(
                "not-certified id {id:?} is not of the form REQ-<AREA>-<NNN>"
            ));
        }
        if !seen.insert(id) {
            problems.push(format!("not-certified {id} is listed twice"));
        }
        if catalogue.get(id).is_some() {
            problems.push(format!(
                "{id} is both in the catalogue and not certified: keep one"
            ));
        }
        for scenario in scenarios
            .iter()
            .filter(|s| s.requirement_tags().any(|t| t == id))
        {
            problems.push(format!(
                "stale not-certified entry {id}: {}:{} \"{}\" tags it (move it to requirements.toml)",
                scenario.file, scenario.line, scenario.name
            ));
        }
        if entry.reason.trim().is_empty() || entry.spec.trim().is_empty() {
            problems.push(format!(
                "not-certified {id} needs a spec reference and a reason"
            ));
        }
    }
    problems
}

/// `RPC` for `REQ-RPC-001`; the empty string when the id has no area part.
pub fn area_of(id: &str) -> &str {
    id.strip_prefix(REQUIREMENT_PREFIX)
        .and_then(|rest| rest.split('-').next())
        .unwrap_or("")
}

/// `REQ-` + upper-case letters + `-` + digits.
pub fn is_requirement_id(id: &str) -> bool {
    let Some(rest) = id.strip_prefix(REQUIREMENT_PREFIX) else {
        return false;
    };
    let mut parts = rest.split('-');
    let (Some(area), Some(number), None) = (parts.next(), parts.next(), parts.next()) else {
        return false;
    };
    !area.is_empty()
        && area.chars().all(|c| c.is_ascii_uppercase())
        && !number.is_empty()
        && number.chars().all(|c| c.is_ascii_digit())
}

/// How a comment naming the requirement(s) the next step judges begins: in a scenario with
/// several requirement tags, `# judges @REQ-AREA-NNN` above a step charges that step's
/// failure to those requirements only (`report::attribution`).
pub const JUDGES_COMMENT: &str = "# judges";

/// A scenario (or one `Examples` block of an outline) as found in a feature file.
#[derive(Debug, Clone)]
pub struct ScenarioRef {
    /// Path relative to the features directory, with `/` separators.
    pub file: String,
    /// 1-based line of the `Scenario:` / `Scenario Outline:` keyword.
    pub line: usize,
    pub name: String,
    /// Every tag that applies (feature, scenario, examples), without the `@`.
    pub tags: Vec<String>,
    /// The requirement ids its `# judges` comments name (see `report::attribution`).
    pub judged_in_comments: Vec<String>,
}

impl ScenarioRef {
    /// The tags that name requirements (well-formed `REQ-...` ids).
    pub fn requirement_tags(&self) -> impl Iterator<Item = &str> {
        self.tags
            .iter()
            .map(String::as_str)
            .filter(|t| t.starts_with(REQUIREMENT_PREFIX))
    }
}

/// Every scenario of every `.feature` file under `dir`, sorted by file then line.
///
/// A line-oriented scan, not a Gherkin parser: tags are the `@words` on the lines before a
/// `Feature:`, `Scenario:`, `Scenario Outline:` or `Examples:` keyword. Good enough for tag
/// bookkeeping; cucumber itself parses the files for real when they run.
pub fn scan_features(dir: &Path) -> anyhow::Result<Vec<ScenarioRef>> {
    let mut files = Vec::new();
    collect_feature_files(dir, &mut files)?;
    files.sort();
    let mut scenarios = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file)
            .with_context(|| format!("cannot read {}", file.display()))?;
        let relative = file
            .strip_prefix(dir)
            .unwrap_or(&file)
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect::<Vec<_>>()
            .join("/");
        scenarios.extend(scan_feature_text(&relative, &text));
    }
    Ok(scenarios)
}

fn collect_feature_files(dir: &Path, out: &mut Vec<PathBuf>) -> anyhow::Result<()> {
    let entries =
        std::fs::read_dir(dir).with_context(|| format!("cannot list {}", dir.display()))?;
    for entry in entries {
        let path = entry?.path();
        if path.is_dir() {
            collect_feature_files(&path, out)?;
        } else if path.extension().is_some_and(|e| e == "feature") {
            out.push(path);
        }
    }
    Ok(())
}

/// Scans one feature file's text (see [`scan_features`]).
pub fn scan_feature_text(file: &str, text: &str) -> Vec<ScenarioRef> {
    let mut pending_tags: Vec<String> = Vec::new();
    let mut feature_tags: Vec<String> = Vec::new();
    let mut current: Option<ScenarioRef> = None;
    let mut out = Vec::new();
    let mut in_docstring = false;

    for (index, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if line.starts_with("\"\"\"") || line.starts_with("```") {
            in_docstring = !in_docstring;
            continue;
        }
        if in_docstring {
            continue;
        }
        if let Some(rest) = line.strip_prefix(JUDGES_COMMENT) {
            if let Some(scenario) = current.as_mut() {
                scenario.judged_in_comments.extend(
                    rest.split_whitespace()
                        .map(|word| word.trim_start_matches('@').to_owned()),
                );
            }
            continue;
        }
        if line.starts_with('#') {
            continue;
        }
        if line.starts_with('@') {
            pending_tags.extend(
                line.split_whitespace()
                    .take_while(|word| !word.starts_with('#'))
                    .filter_map(|word| word.strip_prefix('@'))
                    .map(str::to_owned),
            );
            continue;
        }
        let keyword = line.split(':').next().unwrap_or("").trim();
        match keyword {
            "Feature" => feature_tags = std::mem::take(&mut pending_tags),
            "Scenario" | "Example" | "Scenario Outline" | "Scenario Template" => {
                if let Some(done) = current.take() {
                    out.push(done);
                }
                let mut tags = feature_tags.clone();
                tags.append(&mut pending_tags);
                current = Some(ScenarioRef {
                    file: file.to_owned(),
                    line: index + 1,
                    name: line
                        .split_once(':')
                        .map(|(_, name)| name.trim().to_owned())
                        .unwrap_or_default(),
                    tags,
                    judged_in_comments: Vec::new(),
                });
            }
            "Examples" | "Scenarios" => {
                // Tags on an Examples block apply to the rows of that block only; for
                // coverage it is enough that the outline carries them.
                if let Some(scenario) = current.as_mut() {
                    scenario.tags.append(&mut pending_tags);
                }
                pending_tags.clear();
            }
            "Background" | "Rule" => pending_tags.clear(),
            _ => {}
        }
    }
    if let Some(done) = current.take() {
        out.push(done);
    }
    for scenario in &mut out {
        let mut seen = BTreeSet::new();
        scenario.tags.retain(|t| seen.insert(t.clone()));
    }
    out
}

/// Which scenarios cover which requirement, and what is wrong with the catalogue/tags.
#[derive(Debug, Default)]
pub struct Coverage {
    /// Requirement id → the scenarios tagged with it (in file order).
    pub by_requirement: BTreeMap<String, Vec<ScenarioRef>>,
    /// `(tag, scenario)` where the tag names no catalogue requirement.
    pub unknown_tags: Vec<(String, ScenarioRef)>,
    /// Scenarios that carry no requirement tag at all.
    pub untagged: Vec<ScenarioRef>,
}

impl Coverage {
    pub fn compute(catalogue: &Catalogue, scenarios: &[ScenarioRef]) -> Self {
        let mut coverage = Coverage::default();
        for requirement in &catalogue.requirements {
            coverage
                .by_requirement
                .insert(requirement.id.clone(), Vec::new());
        }
        for scenario in scenarios {
            let mut any = false;
            for tag in scenario.requirement_tags() {
                any = true;
                match coverage.by_requirement.get_mut(tag) {
                    Some(list) => list.push(scenario.clone()),
                    None => coverage
                        .unknown_tags
                        .push((tag.to_owned(), scenario.clone())),
                }
            }
            if !any {
                coverage.untagged.push(scenario.clone());
            }
        }
        coverage
    }

    /// Problems that make the catalogue unfit to certify with: a MUST without a scenario, a
    /// tag naming no requirement, a requirement without a spec reference, an untagged
    /// scenario (it would certify nothing).
    pub fn problems(&self, catalogue: &Catalogue) -> Vec<String> {
        let mut problems = Vec::new();
        for requirement in &catalogue.requirements {
            if requirement.spec.trim().is_empty() {
                problems.push(format!(
                    "{} has no spec reference (spec = \"FILE §section\")",
                    requirement.id
                ));
            }
            let covered = requirement.judges.is_some()
                || self
                    .by_requirement
                    .get(&requirement.id)
                    .is_some_and(|list| !list.is_empty());
            if requirement.level == Level::Must && !covered {
                problems.push(format!(
                    "{} is a MUST but no scenario is tagged @{}",
                    requirement.id, requirement.id
                ));
            }
        }
        for scenario in self.by_requirement.values().flatten() {
            for id in &scenario.judged_in_comments {
                let problem = format!(
                    "{}:{} \"{}\" has a `# judges @{id}` comment, but the scenario is not tagged @{id}",
                    scenario.file, scenario.line, scenario.name
                );
                if !scenario.tags.contains(id) && !problems.contains(&problem) {
                    problems.push(problem);
                }
            }
        }
        for (tag, scenario) in &self.unknown_tags {
            problems.push(format!(
                "{}:{} \"{}\" is tagged @{} which is not in the catalogue",
                scenario.file, scenario.line, scenario.name, tag
            ));
        }
        for scenario in &self.untagged {
            problems.push(format!(
                "{}:{} \"{}\" carries no requirement tag",
                scenario.file, scenario.line, scenario.name
            ));
        }
        problems
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn not_certified_entries_must_stay_uncertified_and_unique() {
        let catalogue: Catalogue = toml::from_str(
            "[[area]]\nid = \"A\"\ntitle = \"a\"\nfeature = \"a.feature\"\n[[requirement]]\nid = \"REQ-A-001\"\nlevel = \"MUST\"\nprofile = \"core\"\nspec = \"s\"\nstatement = \"x\"\n",
        )
        .unwrap();
        let entry = |id: &str| NotCertified {
            id: id.to_owned(),
            level: Level::Must,
            spec: "s".to_owned(),
            statement: "x".to_owned(),
            reason: "r".to_owned(),
        };
        let scenarios = scan_feature_text(
            "a.feature",
            "Feature: f\n  @REQ-A-901\n  Scenario: s\n    Given x\n",
        );
        assert!(not_certified_problems(&[entry("REQ-A-902")], &catalogue, &scenarios).is_empty());
        let stale = not_certified_problems(&[entry("REQ-A-901")], &catalogue, &scenarios);
        assert!(stale.iter().any(|p| p.starts_with("stale")), "{stale:?}");
        let both = not_certified_problems(&[entry("REQ-A-001")], &catalogue, &scenarios);
        assert!(both.iter().any(|p| p.contains("both")), "{both:?}");
        let twice =
            not_certified_problems(&[entry("REQ-A-902"), entry("REQ-A-902")], &catalogue, &[]);
        assert!(twice.iter().any(|p| p.contains("twice")), "{twice:?}");
    }

    #[test]
    fn ids_and_areas() {
        assert!(is_requirement_id("REQ-RPC-001"));
        assert!(!is_requirement_id("REQ-rpc-001"));
        assert!(!is_requirement_id("REQ-RPC"));
        assert!(!is_requirement_id("RPC-001"));
        assert_eq!(area_of("REQ-TASK-012"), "TASK");
    }

    #[test]
    fn scan_collects_feature_scenario_and_examples_tags() {
        let text = "@area\nFeature: f\n\n  @REQ-A-001\n  Scenario: one\n    Given x\n\n  @REQ-A-002 @slow\n  Scenario Outline: two <n>\n    Given <n>\n    @REQ-A-003\n    Examples:\n      | n |\n      | 1 |\n  Scenario: three\n    \"\"\"\n    @REQ-NOT-001\n    \"\"\"\n";
        let found = scan_feature_text("a/f.feature", text);
        assert_eq!(found.len(), 3);
        assert_eq!(found[0].tags, vec!["area", "REQ-A-001"]);
        assert_eq!(found[0].line, 5);
        assert_eq!(
            found[1].tags,
            vec!["area", "REQ-A-002", "slow", "REQ-A-003"]
        );
        assert_eq!(found[2].tags, vec!["area"]);
        assert_eq!(found[1].name, "two <n>");
    }
}
