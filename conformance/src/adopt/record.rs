//! A run's `outcome.json` (and the `manifest.json` beside it), read back for the commands
//! that compare or baseline runs. Only the members those commands need; unknown members are
//! ignored, so reports of a newer kit still read.

use std::path::{Path, PathBuf};

use anyhow::Context;
use serde::Deserialize;

/// One run, as its reports record it.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunRecord {
    pub passed: bool,
    #[serde(default)]
    pub profiles: String,
    #[serde(default)]
    pub scenarios: Vec<ScenarioRecord>,
    #[serde(default)]
    pub requirements: Vec<RequirementRecord>,
    /// Who was certified: `manifest.json`'s runtime version or command, else the directory.
    #[serde(skip)]
    pub label: String,
    /// The `outcome.json` read.
    #[serde(skip)]
    pub path: PathBuf,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ScenarioRecord {
    pub name: String,
    #[serde(default)]
    pub uri: String,
    #[serde(default)]
    pub line: usize,
    #[serde(default)]
    pub tags: Vec<String>,
    /// `passed`, `failed`, `blocked` (not judged) or `notApplicable`.
    pub status: String,
    #[serde(default)]
    pub failure: Option<String>,
    #[serde(default)]
    pub charged_to: Option<Vec<String>>,
}

impl ScenarioRecord {
    /// Failed, or not judged: what a baseline has to name.
    pub fn counts_as_failure(&self) -> bool {
        matches!(self.status.as_str(), "failed" | "blocked")
    }

    /// The first line of the failure (the failing step and its message), abridged.
    pub fn one_line_failure(&self) -> String {
        one_line(self.failure.as_deref().unwrap_or(&self.status), 240)
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RequirementRecord {
    pub id: String,
    #[serde(default)]
    pub level: String,
    #[serde(default)]
    pub profile: String,
    #[serde(default)]
    pub statement: String,
    /// `failed`, `blocked`, `passed`, `notApplicable`, `notRun`, `notObserved`, `uncovered`.
    pub verdict: String,
    #[serde(default)]
    pub decisive: bool,
    #[serde(default)]
    pub reason: Option<String>,
    #[serde(default)]
    pub scenarios: Vec<usize>,
    #[serde(default)]
    pub baselined: bool,
    #[serde(default)]
    pub charged: Option<serde_json::Value>,
}

impl RequirementRecord {
    /// The requirement's area: `RPC` of `REQ-RPC-001`.
    pub fn area(&self) -> &str {
        crate::catalogue::area_of(&self.id)
    }

    pub fn is_failure(&self) -> bool {
        matches!(self.verdict.as_str(), "failed" | "blocked")
    }
}

impl RunRecord {
    /// Reads `outcome.json`, or `DIR/outcome.json` when given a report directory, and the
    /// `manifest.json` beside it for the runtime's name.
    pub fn load(path: &Path) -> anyhow::Result<Self> {
        let file = if path.is_dir() {
            path.join("outcome.json")
        } else {
            path.to_path_buf()
        };
        let text = std::fs::read_to_string(&file)
            .with_context(|| format!("cannot read the report {}", file.display()))?;
        let mut record: RunRecord = serde_json::from_str(&text).with_context(|| {
            format!(
                "{} is not a conformance outcome.json (written with --report-dir)",
                file.display()
            )
        })?;
        record.label = runtime_label(&file);
        record.path = file;
        Ok(record)
    }

    /// The first failed (or not judged) scenario of a requirement.
    pub fn first_failure(&self, requirement: &RequirementRecord) -> Option<&ScenarioRecord> {
        requirement
            .scenarios
            .iter()
            .filter_map(|&i| self.scenarios.get(i))
            .find(|s| s.counts_as_failure())
    }

    /// One line saying why a requirement failed: its first failing scenario's message, or
    /// the verdict's reason.
    pub fn reason(&self, requirement: &RequirementRecord) -> String {
        if let Some(scenario) = self.first_failure(requirement) {
            return scenario.one_line_failure();
        }
        if let Some(reason) = &requirement.reason {
            return one_line(reason, 240);
        }
        if requirement.charged.is_some() {
            return "a malformed message of the kind it judges".to_owned();
        }
        requirement.verdict.clone()
    }

    pub fn requirement(&self, id: &str) -> Option<&RequirementRecord> {
        self.requirements.iter().find(|r| r.id == id)
    }
}

/// The runtime's version (else its command) from `manifest.json` next to `outcome`, else
/// the report directory's name.
fn runtime_label(outcome: &Path) -> String {
    let dir = outcome.parent().unwrap_or(Path::new("."));
    let manifest = std::fs::read_to_string(dir.join("manifest.json"))
        .ok()
        .and_then(|text| serde_json::from_str::<serde_json::Value>(&text).ok());
    let runtime = manifest.as_ref().and_then(|m| m.get("runtime"));
    let field = |name: &str| {
        runtime
            .and_then(|r| r.get(name))
            .and_then(serde_json::Value::as_str)
            .map(str::to_owned)
    };
    field("version")
        .or_else(|| field("command"))
        .or_else(|| {
            dir.canonicalize()
                .ok()
                .and_then(|d| d.file_name().map(|n| n.to_string_lossy().into_owned()))
        })
        .unwrap_or_else(|| outcome.display().to_string())
}

/// The first non-empty line of `text`, at most `max` characters.
pub fn one_line(text: &str, max: usize) -> String {
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
