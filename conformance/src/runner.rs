//! One certification run: cucumber over `features/`, with the terminal, JUnit and cucumber
//! JSON writers side by side, then the Markdown certification report built from the JSON and
//! the requirement catalogue. Both the `conformance` binary and the `agent-runtime` test
//! target call [`run`], so they can never disagree on what "certified" means.

use std::fs::File;
use std::io;
use std::path::PathBuf;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, bail};
use cucumber::gherkin::tagexpr::TagOperation;
use cucumber::writer::{self, Stats as _};
use cucumber::{World as _, WriterExt as _, cli, event};
use futures::FutureExt as _;
use regex::Regex;

use crate::baseline::{self, Baseline};
use crate::catalogue::{self, Catalogue};
use crate::config::{DEFAULT_TIMEOUT, KitConfig};
use crate::driver::{RuntimeCommand, Transport};
use crate::report::{self, Outcome};
use crate::world::{ConformanceWorld, ScenarioId};

/// The default number of scenarios run at once: each has its own runtime process and fakes,
/// so this bounds processes and ports, not just CPU.
pub const DEFAULT_CONCURRENCY: usize = 4;

/// The repository's `features/` directory (where the catalogue lives too).
pub fn default_features_dir() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../features"))
}

/// Everything one run needs.
#[derive(Debug, Clone)]
pub struct RunOptions {
    pub runtime: RuntimeCommand,
    /// stdio (default), or a Unix socket the runtime listens on (`--listen PATH` appended).
    pub transport: Transport,
    /// A baseline of known failures (see [`crate::baseline`]).
    pub baseline: Option<PathBuf>,
    /// Directory of `.feature` files (searched recursively).
    pub features: PathBuf,
    /// The requirement catalogue; default `<features>/requirements.toml`.
    pub catalogue: Option<PathBuf>,
    /// A cucumber tag expression, e.g. `@REQ-RPC-003 or @REQ-RPC-004`, `not @slow`.
    pub tags: Option<String>,
    /// A regex on scenario names.
    pub name: Option<String>,
    pub concurrency: usize,
    pub fail_fast: bool,
    /// Bound for each wait inside a step.
    pub timeout: Duration,
    /// Where to write JUnit, cucumber JSON, `certification.md`, `outcome.json` and
    /// transcripts of failed scenarios; `None` writes nothing that outlives the run.
    pub report_dir: Option<PathBuf>,
}

impl RunOptions {
    /// Defaults for certifying `runtime` against the repository's features.
    pub fn new(runtime: RuntimeCommand) -> Self {
        Self {
            runtime,
            transport: Transport::Stdio,
            baseline: None,
            features: default_features_dir(),
            catalogue: None,
            tags: None,
            name: None,
            concurrency: DEFAULT_CONCURRENCY,
            fail_fast: false,
            timeout: DEFAULT_TIMEOUT,
            report_dir: None,
        }
    }
}

/// Runs the certification and writes the reports. `Ok` whether or not the runtime passed
/// (see [`Outcome::passed`]); `Err` only when the run itself could not happen.
pub async fn run(options: RunOptions) -> anyhow::Result<Outcome> {
    let features = options.features.canonicalize().with_context(|| {
        format!(
            "the features directory {} does not exist",
            options.features.display()
        )
    })?;
    let catalogue_path = options
        .catalogue
        .clone()
        .unwrap_or_else(|| features.join("requirements.toml"));
    let catalogue = Catalogue::load(&catalogue_path)?;
    let scanned = catalogue::scan_features(&features)?;
    let baseline = options
        .baseline
        .as_deref()
        .map(|path| -> anyhow::Result<(Baseline, String)> {
            let baseline = Baseline::load(path)?;
            baseline
                .check_against(&catalogue, &scanned)
                .with_context(|| format!("invalid baseline {}", path.display()))?;
            Ok((baseline, path.display().to_string()))
        })
        .transpose()?;
    if options.transport == Transport::Socket && !cfg!(unix) {
        bail!(
            "--transport socket needs Unix domain sockets; Windows named pipes are not supported by the kit"
        );
    }

    if options.tags.is_some() && options.name.is_some() {
        bail!("--tags and --name cannot be combined (cucumber applies only one filter)");
    }
    let tags_filter = options
        .tags
        .as_deref()
        .map(|expr| {
            TagOperation::from_str(expr)
                .map_err(|e| anyhow::anyhow!("invalid tag expression {expr:?}: {e}"))
        })
        .transpose()?;
    let re_filter = options
        .name
        .as_deref()
        .map(|re| Regex::new(re).with_context(|| format!("invalid --name regex {re:?}")))
        .transpose()?;

    // The JSON is the record the report is built from, so it is always written: into the
    // report dir, or a temp dir that goes away with the run.
    let scratch = tempfile::tempdir().context("cannot create a temp dir for the run")?;
    let out_dir = match &options.report_dir {
        Some(dir) => {
            std::fs::create_dir_all(dir)
                .with_context(|| format!("cannot create {}", dir.display()))?;
            dir.clone()
        }
        None => scratch.path().to_path_buf(),
    };
    let json_path = out_dir.join("cucumber.json");
    let junit_path = out_dir.join("junit.xml");
    let transcripts_dir = options.report_dir.as_ref().map(|d| d.join("transcripts"));
    if let Some(dir) = &transcripts_dir {
        // Old transcripts would be linked from a new report as if they were fresh.
        let _ = std::fs::remove_dir_all(dir);
    }

    let config = Arc::new(KitConfig {
        runtime: options.runtime.clone(),
        transport: options.transport,
        timeout: options.timeout,
        transcripts_dir: transcripts_dir.clone(),
    });
    let started_at = time::OffsetDateTime::now_utc();

    let writer = writer::Basic::raw(io::stdout(), writer::Coloring::Auto, 0)
        .summarized()
        .tee::<ConformanceWorld, _>(writer::JUnit::for_tee(
            File::create(&junit_path)
                .with_context(|| format!("cannot create {}", junit_path.display()))?,
            0,
        ))
        .tee::<ConformanceWorld, _>(writer::Json::for_tee(
            File::create(&json_path)
                .with_context(|| format!("cannot create {}", json_path.display()))?,
        ))
        .normalized();

    let before_config = Arc::clone(&config);
    let opts = cli::Opts {
        re_filter,
        tags_filter,
        parser: Default::default(),
        runner: cucumber::runner::basic::Cli {
            concurrency: Some(options.concurrency.clamp(1, 64)),
            fail_fast: options.fail_fast,
            ..Default::default()
        },
        writer: Default::default(),
        custom: cli::Empty,
    };
    let stats = ConformanceWorld::cucumber()
        .with_writer(writer)
        // Undefined steps are skipped by default and the run still passes: a certification
        // must never pass while checking nothing (CRATES.md).
        .fail_on_skipped()
        .before(move |feature, _rule, scenario, world| {
            let config = Arc::clone(&before_config);
            let id = ScenarioId {
                feature_path: feature.path.clone(),
                name: scenario.name.clone(),
                line: scenario.position.line,
            };
            async move { world.prepare(config, id) }.boxed_local()
        })
        .after(|_feature, _rule, _scenario, finished, world| {
            let failed = !matches!(finished, event::ScenarioFinished::StepPassed);
            async move {
                if let Some(world) = world {
                    let problems = world.finish(failed).await;
                    if !problems.is_empty() {
                        // cucumber offers no fallible hook: a panic here is caught by the
                        // runner and reported as this scenario's failed after-hook.
                        panic!("{}", problems.join("\n"));
                    }
                }
            }
            .boxed_local()
        })
        .with_cli(opts)
        .run(features.clone())
        .await;

    let summary = report::RunStats {
        passed_steps: stats.passed_steps(),
        failed_steps: stats.failed_steps(),
        skipped_steps: stats.skipped_steps(),
        parsing_errors: stats.parsing_errors(),
        hook_errors: stats.hook_errors(),
        execution_failed: stats.execution_has_failed(),
    };
    // Dropping the writers flushes and closes the JUnit and JSON files.
    drop(stats);

    let json = std::fs::read_to_string(&json_path)
        .with_context(|| format!("cannot read back {}", json_path.display()))?;
    let results = report::parse_cucumber_json(&json)?;
    let context = report::ReportContext {
        runtime: options.runtime.display.clone(),
        started_at,
        finished_at: time::OffsetDateTime::now_utc(),
        features: features.clone(),
        tags: options.tags.clone(),
        name: options.name.clone(),
        stats: summary,
        transcripts_dir,
        transport: options.transport.label().to_owned(),
    };
    let mut outcome = report::build_outcome(&catalogue, &scanned, &results, &context);
    if let Some((baseline, file)) = &baseline {
        baseline::apply(&mut outcome, baseline, file);
    }
    if let Some(dir) = &options.report_dir {
        report::write_reports(dir, &catalogue, &outcome, &context)?;
    }
    Ok(outcome)
}
