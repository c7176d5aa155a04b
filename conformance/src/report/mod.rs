//! The certification report: which requirements the runtime meets, built from the
//! requirement catalogue and cucumber's JSON output (each scenario's tags name the
//! requirements it certifies). Written as `certification.md` for people and `outcome.json`
//! for tools (`cargo xtask certify` reads it), `certification.html` (self-contained, with a
//! filterable requirement matrix) and `manifest.json` (what was certified, by what, when).

pub mod attribution;
mod cucumber_json;
pub mod html;
mod judge;
pub mod manifest;
mod markdown;
mod model;
pub mod summary;
pub mod timing;

use std::path::Path;

use anyhow::Context;

use crate::catalogue::Catalogue;

pub(crate) use cucumber_json::clean_error;
pub use cucumber_json::{parse_cucumber_json, transcript_file_name};
pub use judge::build_outcome;
pub(crate) use model::rfc3339;
pub use model::{
    Outcome, ReportContext, RequirementOutcome, RunStats, ScenarioResult, ScenarioStatus, Verdict,
    is_not_judged, not_applicable_reason,
};

/// Writes `certification.md`, `certification.html`, `outcome.json` and `manifest.json`
/// into `dir`.
pub fn write_reports(
    dir: &Path,
    catalogue: &Catalogue,
    outcome: &Outcome,
    context: &ReportContext,
) -> anyhow::Result<()> {
    // cucumber's JSON is written into the report dir; its durations give the slowest scenarios.
    let slowest = std::fs::read_to_string(dir.join("cucumber.json"))
        .map(|json| timing::slowest(&json, timing::SLOWEST))
        .unwrap_or_default();
    let markdown = markdown::render(catalogue, outcome, context, &slowest);
    let path = dir.join("certification.md");
    std::fs::write(&path, markdown).with_context(|| format!("cannot write {}", path.display()))?;
    let path = dir.join("outcome.json");
    let mut json = serde_json::to_value(outcome)?;
    if let Some(members) = json.as_object_mut() {
        members.insert("slowest".to_owned(), serde_json::to_value(&slowest)?);
    }
    let json = serde_json::to_string_pretty(&json)?;
    std::fs::write(&path, json).with_context(|| format!("cannot write {}", path.display()))?;
    let path = dir.join("certification.html");
    let page = html::render(catalogue, outcome, context, &context.manifest, &slowest);
    std::fs::write(&path, page).with_context(|| format!("cannot write {}", path.display()))?;
    let path = dir.join("manifest.json");
    let json = serde_json::to_string_pretty(&context.manifest)?;
    std::fs::write(&path, json).with_context(|| format!("cannot write {}", path.display()))?;
    Ok(())
}

#[cfg(test)]
mod snapshot_tests;
#[cfg(test)]
mod tests;
