//! Reading cucumber's JSON output into one result per scenario, and naming each
//! scenario's transcript file.

use std::path::Path;

use anyhow::Context;
use serde_json::Value;

use super::model::{ScenarioResult, ScenarioStatus, is_not_judged, not_applicable_reason};

/// The transcript file of a scenario, derived from its feature file and line so that the
/// after-hook (which writes it) and the report (which links it) agree without talking.
pub fn transcript_file_name(feature_path: Option<&Path>, line: usize) -> String {
    let (dir, stem) = match feature_path {
        Some(path) => (
            path.parent()
                .and_then(Path::file_name)
                .map(|d| d.to_string_lossy().into_owned())
                .unwrap_or_default(),
            path.file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default(),
        ),
        None => (String::new(), "scenario".to_owned()),
    };
    let base = if dir.is_empty() {
        stem
    } else {
        format!("{dir}-{stem}")
    };
    format!("{base}-L{line}.log")
}

/// Reads cucumber's JSON report into one result per scenario. Background steps come as a
/// separate element (after the scenario's, with the same name and line); their failure is
/// counted against the scenario they ran for.
pub fn parse_cucumber_json(text: &str) -> anyhow::Result<Vec<ScenarioResult>> {
    let features: Value =
        serde_json::from_str(text).context("cucumber's JSON report is not JSON")?;
    let mut results: Vec<ScenarioResult> = Vec::new();
    for feature in features.as_array().map(Vec::as_slice).unwrap_or_default() {
        let uri = feature
            .get("uri")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned();
        let feature_name = feature
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned();
        let first = results.len();
        let mut background_failures: Vec<(usize, String, String)> = Vec::new();
        for element in feature
            .get("elements")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default()
        {
            let name = element
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned();
            let line = element.get("line").and_then(Value::as_u64).unwrap_or(0) as usize;
            let failure = first_failure(element);
            if element.get("type").and_then(Value::as_str) == Some("background") {
                if let Some((failure, _, _)) = failure {
                    background_failures.push((line, name, format!("(background) {failure}")));
                }
                continue;
            }
            let failed_step_line = failure.as_ref().and_then(|(_, _, line)| *line);
            let failure = failure.map(|(message, given, _)| (message, given));
            let status = match &failure {
                None => ScenarioStatus::Passed,
                Some((message, _)) if not_applicable_reason(message).is_some() => {
                    ScenarioStatus::NotApplicable
                }
                Some((message, given)) if *given || is_not_judged(message) => {
                    ScenarioStatus::Blocked
                }
                Some(_) => ScenarioStatus::Failed,
            };
            let failure = failure.map(|(message, _)| message);
            results.push(ScenarioResult {
                uri: uri.clone(),
                feature: feature_name.clone(),
                name,
                line,
                tags: element
                    .get("tags")
                    .and_then(Value::as_array)
                    .map(|tags| {
                        tags.iter()
                            .filter_map(|t| t.get("name").and_then(Value::as_str))
                            .map(|t| t.trim_start_matches('@').to_owned())
                            .collect()
                    })
                    .unwrap_or_default(),
                passed: status == ScenarioStatus::Passed,
                status,
                failure,
                failed_step_line,
                charged_to: None,
                baselined: None,
            });
        }
        for (line, name, failure) in background_failures {
            if let Some(scenario) = results[first..]
                .iter_mut()
                .find(|s| s.line == line && s.name == name)
            {
                // Background steps set the scene: their failure blocks the scenario.
                scenario.passed = false;
                scenario.status = if not_applicable_reason(&failure).is_some() {
                    ScenarioStatus::NotApplicable
                } else {
                    ScenarioStatus::Blocked
                };
                scenario.failure = Some(match scenario.failure.take() {
                    Some(own) => format!("{failure}\n{own}"),
                    None => failure,
                });
            }
        }
    }
    Ok(results)
}

/// cucumber wraps a step's error in "Matched: <file:line>" and "Step panicked. Captured
/// output:" lines; the report shows only the kit's own message.
pub(crate) fn clean_error(message: &str) -> String {
    message
        .lines()
        .filter(|line| !line.trim_start().starts_with("Matched: "))
        .map(|line| {
            line.trim_start()
                .strip_prefix("Step panicked. Captured output: ")
                .or_else(|| line.trim_start().strip_prefix("Captured output: "))
                .map_or_else(|| line.to_owned(), str::to_owned)
        })
        .collect::<Vec<_>>()
        .join("\n")
        .trim()
        .to_owned()
}

/// The first failure of a scenario element and whether it is a precondition's (a `Given`
/// step, an `And`/`But` continuing one, or the before hook).
fn first_failure(element: &Value) -> Option<(String, bool, Option<usize>)> {
    let failed = |result: &Value| {
        let status = result
            .get("status")
            .and_then(Value::as_str)
            .unwrap_or("failed");
        (status != "passed").then(|| {
            let message = result
                .get("error_message")
                .and_then(Value::as_str)
                .unwrap_or(status);
            clean_error(message)
        })
    };
    let list = |key: &str| {
        element
            .get(key)
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
    };
    for hook in list("before") {
        if let Some(message) = hook.get("result").and_then(failed) {
            return Some((format!("before hook: {message}"), true, None));
        }
    }
    let mut in_given = false;
    for step in list("steps") {
        let keyword = step
            .get("keyword")
            .and_then(Value::as_str)
            .unwrap_or("")
            .trim();
        match keyword {
            "And" | "But" | "*" => {}
            other => in_given = other == "Given",
        }
        if let Some(message) = step.get("result").and_then(failed) {
            let name = step.get("name").and_then(Value::as_str).unwrap_or("");
            let line = step.get("line").and_then(Value::as_u64).map(|l| l as usize);
            return Some((format!("{keyword} {name}: {message}"), in_given, line));
        }
    }
    for hook in list("after") {
        if let Some(message) = hook.get("result").and_then(failed) {
            return Some((format!("end-of-scenario check: {message}"), false, None));
        }
    }
    None
}
