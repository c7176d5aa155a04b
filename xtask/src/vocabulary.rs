//! The kit's step vocabulary, read from outside the kit: every `#[given]`, `#[when]` and
//! `#[then]` attribute in `conformance/src/steps/`, turned into the regex cucumber itself
//! builds from it, and every step line of `features/`, matched against them.
//!
//! The matching copies cucumber-rs 0.23: a plain string matches the whole step text
//! literally, `expr = ".."` is a cucumber expression (the `cucumber-expressions` crate, the
//! one cucumber uses), `regex = ".."` is used as written; `And`/`But` take the type of the
//! step before them, and a step matches only definitions of its own type. Scenario outlines
//! are expanded row by row, as cucumber runs them.

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use cucumber_expressions::Expression;
use gherkin::{GherkinEnv, StepType};
use regex::Regex;

/// One step definition as written in the kit's source.
#[derive(Debug)]
pub(crate) struct StepDef {
    pub kind: StepType,
    /// What the attribute says, e.g. `the client cancels the task {string}`.
    pub text: String,
    pub form: Form,
    /// `conformance/src/steps/<file>.rs:<line>`.
    pub location: String,
    pub regex: Regex,
}

/// How the attribute states its step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Form {
    Literal,
    Expression,
    Regex,
}

/// One step of a scenario as cucumber runs it (outline placeholders filled in).
#[derive(Debug, Clone)]
pub(crate) struct FeatureStep {
    pub kind: StepType,
    /// `Given`, `And`, ... as written.
    pub keyword: String,
    pub text: String,
    /// `<dir>/<file>.feature:<line>`, relative to `features/`.
    pub location: String,
    pub scenario: String,
}

pub(crate) fn kind_name(kind: StepType) -> &'static str {
    match kind {
        StepType::Given => "Given",
        StepType::When => "When",
        StepType::Then => "Then",
    }
}

/// The `.rs` files under `dir`, at any depth.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) -> anyhow::Result<()> {
    for entry in std::fs::read_dir(dir).with_context(|| format!("cannot list {}", dir.display()))? {
        let path = entry?.path();
        if path.is_dir() {
            rust_files(&path, out)?;
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
    Ok(())
}

/// Every step definition in the `.rs` files under `dir` (area modules nest), in path then line
/// order. Fails on an attribute it cannot read, so a definition can never silently drop out of
/// the lint.
pub(crate) fn step_definitions(dir: &Path) -> anyhow::Result<Vec<StepDef>> {
    let mut files = Vec::new();
    rust_files(dir, &mut files)?;
    files.sort();
    let mut defs = Vec::new();
    for path in files {
        let source = std::fs::read_to_string(&path)
            .with_context(|| format!("cannot read {}", path.display()))?;
        let name = path
            .strip_prefix(dir)
            .unwrap_or(&path)
            .to_string_lossy()
            .replace('\\', "/");
        for (kind, offset) in attribute_starts(&source) {
            let line = source[..offset].matches('\n').count() + 1;
            let location = format!("conformance/src/steps/{name}:{line}");
            let (form, text) = parse_attribute_argument(&source[offset..])
                .with_context(|| format!("cannot read the step attribute at {location}"))?;
            let regex = match form {
                Form::Literal => Regex::new(&format!("^{}$", regex::escape(&text)))?,
                Form::Expression => Expression::regex(&text).map_err(|e| {
                    anyhow::anyhow!("{location}: invalid cucumber expression {text:?}: {e}")
                })?,
                Form::Regex => Regex::new(&text)
                    .with_context(|| format!("{location}: invalid regex {text:?}"))?,
            };
            defs.push(StepDef {
                kind,
                text,
                form,
                location,
                regex,
            });
        }
    }
    Ok(defs)
}

/// `(type, offset just after "#[given(")` of every step attribute in `source`.
fn attribute_starts(source: &str) -> Vec<(StepType, usize)> {
    let mut found = Vec::new();
    for (needle, kind) in [
        ("#[given(", StepType::Given),
        ("#[when(", StepType::When),
        ("#[then(", StepType::Then),
    ] {
        found.extend(
            source
                .match_indices(needle)
                .map(|(at, _)| (kind, at + needle.len())),
        );
    }
    found.sort_by_key(|(_, at)| *at);
    found
}

/// Reads `[expr|regex =] <string literal> )` at the start of `rest`.
fn parse_attribute_argument(rest: &str) -> anyhow::Result<(Form, String)> {
    let rest = rest.trim_start();
    let (form, rest) = if let Some(r) = rest.strip_prefix("expr") {
        (Form::Expression, r)
    } else if let Some(r) = rest.strip_prefix("regex") {
        (Form::Regex, r)
    } else {
        (Form::Literal, rest)
    };
    let rest = if form == Form::Literal {
        rest
    } else {
        rest.trim_start()
            .strip_prefix('=')
            .context("expected `=` after `expr`/`regex`")?
            .trim_start()
    };
    let (text, rest) = parse_string_literal(rest)?;
    if !rest.trim_start().starts_with(')') {
        bail!("expected `)` after the step text (a computed step text cannot be linted)");
    }
    Ok((form, text))
}

/// A Rust string literal: `"…"` with escapes, `r"…"` or `r#"…"#`. Returns it and the rest.
fn parse_string_literal(input: &str) -> anyhow::Result<(String, &str)> {
    if let Some(raw) = input.strip_prefix('r') {
        let hashes = raw.chars().take_while(|c| *c == '#').count();
        let body = raw[hashes..]
            .strip_prefix('"')
            .context("expected a string literal")?;
        let close = format!("\"{}", "#".repeat(hashes));
        let end = body.find(&close).context("unterminated raw string")?;
        return Ok((body[..end].to_owned(), &body[end + close.len()..]));
    }
    let body = input
        .strip_prefix('"')
        .context("expected a string literal")?;
    let mut text = String::new();
    let mut chars = body.char_indices();
    while let Some((at, c)) = chars.next() {
        match c {
            '"' => return Ok((text, &body[at + 1..])),
            '\\' => match chars.next().map(|(_, c)| c) {
                Some('n') => text.push('\n'),
                Some('t') => text.push('\t'),
                Some('\\') => text.push('\\'),
                Some('"') => text.push('"'),
                Some('\'') => text.push('\''),
                Some('\n') => {
                    // A line continuation skips the newline and the next line's indentation.
                    let skipped = body[at + 2..].len() - body[at + 2..].trim_start().len();
                    for _ in 0..skipped {
                        chars.next();
                    }
                }
                other => bail!("unsupported escape \\{}", other.unwrap_or(' ')),
            },
            c => text.push(c),
        }
    }
    bail!("unterminated string")
}

/// Every step of every scenario (backgrounds included, outlines expanded) of every
/// `.feature` file under `dir`, in file order.
pub(crate) fn feature_steps(dir: &Path) -> anyhow::Result<Vec<FeatureStep>> {
    let mut files = Vec::new();
    collect(dir, &mut files)?;
    files.sort();
    let mut steps = Vec::new();
    for path in files {
        let relative = path
            .strip_prefix(dir)
            .unwrap_or(&path)
            .to_string_lossy()
            .replace('\\', "/");
        let feature = gherkin::Feature::parse_path(&path, GherkinEnv::default())
            .map_err(|e| anyhow::anyhow!("{relative}: not valid Gherkin: {e}"))?;
        let mut push = |background: Option<&gherkin::Background>, scenario: &gherkin::Scenario| {
            let mut all: Vec<&gherkin::Step> = background
                .map(|b| b.steps.iter().collect())
                .unwrap_or_default();
            all.extend(scenario.steps.iter());
            for row in outline_rows(scenario) {
                for step in &all {
                    let mut text = step.value.clone();
                    for (name, value) in &row {
                        text = text.replace(&format!("<{name}>"), value);
                    }
                    steps.push(FeatureStep {
                        kind: step.ty,
                        keyword: step.keyword.trim().to_owned(),
                        text,
                        location: format!("{relative}:{}", step.position.line),
                        scenario: scenario.name.clone(),
                    });
                }
            }
        };
        for scenario in &feature.scenarios {
            push(feature.background.as_ref(), scenario);
        }
        for rule in &feature.rules {
            for scenario in &rule.scenarios {
                push(
                    rule.background.as_ref().or(feature.background.as_ref()),
                    scenario,
                );
            }
        }
    }
    Ok(steps)
}

/// The placeholder values of each run of a scenario: one empty row for a plain scenario, one
/// row per Examples line for an outline.
fn outline_rows(scenario: &gherkin::Scenario) -> Vec<Vec<(String, String)>> {
    let mut rows = Vec::new();
    for examples in &scenario.examples {
        let Some(table) = &examples.table else {
            continue;
        };
        let Some((header, body)) = table.rows.split_first() else {
            continue;
        };
        for row in body {
            rows.push(header.iter().cloned().zip(row.iter().cloned()).collect());
        }
    }
    if rows.is_empty() {
        rows.push(Vec::new());
    }
    rows
}

fn collect(dir: &Path, out: &mut Vec<PathBuf>) -> anyhow::Result<()> {
    for entry in std::fs::read_dir(dir).with_context(|| format!("cannot list {}", dir.display()))? {
        let path = entry?.path();
        if path.is_dir() {
            collect(&path, out)?;
        } else if path.extension().is_some_and(|e| e == "feature") {
            out.push(path);
        }
    }
    Ok(())
}

/// The definitions (indices into `defs`) a step matches.
pub(crate) fn matches(defs: &[StepDef], step: &FeatureStep) -> Vec<usize> {
    defs.iter()
        .enumerate()
        .filter(|(_, def)| def.kind == step.kind && def.regex.is_match(&step.text))
        .map(|(index, _)| index)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_every_attribute_form() {
        let source = concat!(
            "#[given(\"the runtime is \\\"up\\\"\")]\nfn a() {}\n",
            "#[when(\n    expr = \"the client sends {int} requests\"\n)]\nfn b() {}\n",
            "#[then(regex = r\"^error (-?\\d+)$\")]\nfn c() {}\n",
            "#[then(regex = r#\"^says (\".+\")$\"#)]\nfn d() {}\n",
        );
        let found: Vec<(Form, String)> = attribute_starts(source)
            .into_iter()
            .map(|(_, at)| parse_attribute_argument(&source[at..]).unwrap())
            .collect();
        assert_eq!(
            found,
            vec![
                (Form::Literal, "the runtime is \"up\"".to_owned()),
                (
                    Form::Expression,
                    "the client sends {int} requests".to_owned()
                ),
                (Form::Regex, r"^error (-?\d+)$".to_owned()),
                (Form::Regex, r#"^says (".+")$"#.to_owned()),
            ]
        );
    }

    #[test]
    fn a_computed_step_text_is_refused() {
        assert!(parse_attribute_argument("expr = STEP)]").is_err());
        assert!(parse_attribute_argument("\"a\", \"b\")]").is_err());
    }
}
