//! `cargo xtask steps`: the step vocabulary a scenario can use — every step definition of
//! the kit, grouped by type, with one real use from `features/` each (or a note that none
//! uses it yet), so authors reuse sentences instead of inventing synonyms.

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use gherkin::StepType;

use crate::vocabulary::{self, Form, kind_name};

#[derive(clap::Args)]
pub(crate) struct Args {
    /// Only definitions whose text contains this (case-insensitive), e.g. `--grep approval`.
    #[arg(long, value_name = "WORDS")]
    grep: Option<String>,
    /// Features directory (default: the repository's features/).
    #[arg(long, value_name = "DIR")]
    features: Option<PathBuf>,
}

pub(crate) fn run(args: Args) -> anyhow::Result<ExitCode> {
    let features = args.features.unwrap_or_else(crate::features_dir);
    let defs = vocabulary::step_definitions(&crate::steps_dir())?;
    let steps = vocabulary::feature_steps(&features)?;
    let grep = args.grep.as_deref().map(str::to_lowercase);

    // The first use of each definition, in file order.
    let mut example: Vec<Option<&vocabulary::FeatureStep>> = vec![None; defs.len()];
    for step in &steps {
        for index in vocabulary::matches(&defs, step) {
            if example[index].is_none() {
                example[index] = Some(step);
            }
        }
    }

    // Written at once, ignoring a closed pipe (`cargo xtask steps | head`).
    let mut out = String::new();
    let mut shown = 0;
    let mut unused = 0;
    for kind in [StepType::Given, StepType::When, StepType::Then] {
        let mut header = false;
        for (def, use_) in defs.iter().zip(&example).filter(|(d, _)| d.kind == kind) {
            if grep
                .as_deref()
                .is_some_and(|g| !def.text.to_lowercase().contains(g))
            {
                continue;
            }
            if !header {
                let _ = writeln!(out, "== {}", kind_name(kind));
                header = true;
            }
            let form = match def.form {
                Form::Literal => "",
                Form::Expression => " (expression)",
                Form::Regex => " (regex)",
            };
            let _ = writeln!(out, "{}{form}\n    defined at {}", def.text, def.location);
            let _ = match use_ {
                Some(step) => writeln!(
                    out,
                    "    e.g.       {} {}   ({})",
                    step.keyword, step.text, step.location
                ),
                None => {
                    unused += 1;
                    writeln!(out, "    (not used by any scenario yet)")
                }
            };
            shown += 1;
        }
        if header {
            out.push('\n');
        }
    }
    let _ = writeln!(
        out,
        "{shown} step definition(s) shown of {}, {unused} of them unused. Expressions: \
         {{string}} = \"double-quoted\", {{int}}, {{float}}, {{word}}; `cargo xtask lint` \
         checks that every feature line matches exactly one.",
        defs.len()
    );
    let _ = std::io::stdout().lock().write_all(out.as_bytes());
    Ok(ExitCode::SUCCESS)
}
