//! One certification run: cucumber over `features/`, with the terminal, JUnit and cucumber
//! JSON writers side by side, then the Markdown certification report built from the JSON and
//! the requirement catalogue. Both the `conformance` binary and the `agent-runtime` test
//! target call [`run`], so they can never disagree on what "certified" means.

use std::fs::File;
use std::io;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use anyhow::{Context, bail};
use cucumber::writer::{self, Stats as _};
use cucumber::{World as _, WriterExt as _, cli, event};
use futures::FutureExt as _;

use crate::baseline::{self, Baseline};
use crate::catalogue::{self, Catalogue};
use crate::config::{DEFAULT_TIMEOUT, KitConfig};
use crate::driver::{RuntimeCommand, Transport};
use crate::ledger::Ledger;
use crate::report::{self, Outcome};
use crate::runtime_manifest::RuntimeManifest;
use crate::selection::{Selection, Shard};
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
    /// A regex on scenario names (combined with `tags`: both must match).
    pub name: Option<String>,
    /// Run only the i-th of n deterministic, disjoint parts of the selection.
    pub shard: Option<Shard>,
    /// `progress` (one line per scenario, failures with their message) or `pretty`
    /// (cucumber's step-by-step output).
    pub output: OutputStyle,
    pub concurrency: usize,
    /// Stop starting scenarios after the first one that fails a decisive requirement (not
    /// at a not-applicable one, nor at a failure the baseline knows); the run is then
    /// `INCOMPLETE` at best.
    pub fail_fast: bool,
    /// Bound for each wait inside a step.
    pub timeout: Duration,
    /// Where to write JUnit, cucumber JSON, `certification.md`, `outcome.json` and
    /// transcripts of failed scenarios; `None` writes nothing that outlives the run.
    pub report_dir: Option<PathBuf>,
    /// What the runtime declares (profiles, transports, knobs); the built-in default
    /// (core + interop over stdio, no knob) when no `--manifest` is given.
    pub manifest: RuntimeManifest,
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
            shard: None,
            output: OutputStyle::Progress,
            concurrency: DEFAULT_CONCURRENCY,
            fail_fast: false,
            timeout: DEFAULT_TIMEOUT,
            report_dir: None,
            manifest: RuntimeManifest::default(),
        }
    }
}

/// What the terminal shows while the run goes on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum OutputStyle {
    /// One line per finished scenario (`[12/215] ✔ name`), a failure's message under it.
    #[default]
    Progress,
    /// cucumber's own output: every feature, scenario and step.
    Pretty,
}

/// cucumber's terminal writer, switched off in `progress` style.
#[derive(Debug, Clone, Copy)]
struct Terminal {
    show: bool,
}

impl io::Write for Terminal {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.show {
            io::stdout().write(buf)
        } else {
            Ok(buf.len())
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        if self.show {
            io::stdout().flush()
        } else {
            Ok(())
        }
    }
}

/// Runs the certification and writes the reports. `Ok` whether or not the runtime passed
/// (see [`Outcome::passed`]); `Err` only when the run itself could not happen.
pub async fn run(options: RunOptions) -> anyhow::Result<Outcome> {
    let inputs = Inputs::load(&options)?;
    let selection = Arc::new(
        Selection::new(
            &inputs.features,
            options.tags.as_deref(),
            options.name.as_deref(),
            options.shard,
        )?
        .applicable_to(
            inputs
                .catalogue
                .requirements
                .iter()
                .filter(|r| options.manifest.declares(r.profile))
                .map(|r| r.id.clone())
                .collect(),
        ),
    );
    let selected = selection.count()?;
    let version_probe = report::manifest::probe_version(&options.runtime, options.timeout);
    let files = RunFiles::create(options.report_dir.as_deref())?;
    let ledger = Arc::new(Ledger::default());
    let config = Arc::new(KitConfig {
        runtime: options.runtime.clone(),
        transport: options.transport,
        timeout: options.timeout,
        transcripts_dir: files.transcripts.clone(),
        manifest: Arc::new(options.manifest.clone()),
        ledger: Arc::clone(&ledger),
    });
    let started_at = time::OffsetDateTime::now_utc();
    let runtime_version = version_probe.await;
    let stop = Arc::new(FailFast::new(
        options.fail_fast,
        &inputs.catalogue,
        &options.manifest,
        inputs.baseline.as_ref().map(|(baseline, _)| baseline),
    ));
    let stats = run_scenarios(
        &options,
        &inputs.features,
        selection,
        selected,
        &files,
        config,
        Arc::clone(&stop),
    )
    .await?;
    let ran = Ran {
        stats,
        started_at,
        runtime_version,
    };
    judge_run(&options, &inputs, &files, &ledger, &stop, ran)
}

/// What the run is judged by: the features, the catalogue and what it scanned, the
/// baseline; checked against the options before anything starts.
struct Inputs {
    features: PathBuf,
    catalogue_path: PathBuf,
    catalogue: Catalogue,
    scanned: Vec<catalogue::ScenarioRef>,
    baseline: Option<(Baseline, String)>,
}

impl Inputs {
    fn load(options: &RunOptions) -> anyhow::Result<Self> {
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
        if !options.manifest.transports.contains(&options.transport) {
            bail!(
                "the runtime's manifest ({}) does not declare the {} transport",
                options.manifest.source,
                options.transport.label()
            );
        }
        Ok(Self {
            features,
            catalogue_path,
            catalogue,
            scanned,
            baseline,
        })
    }
}

/// Where the run writes: cucumber's JSON (the record the report is built from, so always
/// written: into the report dir, or a temp dir that goes away with the run), JUnit and the
/// transcripts.
struct RunFiles {
    _scratch: tempfile::TempDir,
    json: PathBuf,
    junit: PathBuf,
    transcripts: Option<PathBuf>,
}

impl RunFiles {
    fn create(report_dir: Option<&std::path::Path>) -> anyhow::Result<Self> {
        let scratch = tempfile::tempdir().context("cannot create a temp dir for the run")?;
        let out_dir = match report_dir {
            Some(dir) => {
                std::fs::create_dir_all(dir)
                    .with_context(|| format!("cannot create {}", dir.display()))?;
                dir.to_path_buf()
            }
            None => scratch.path().to_path_buf(),
        };
        let transcripts = report_dir.map(|d| d.join("transcripts"));
        if let Some(dir) = &transcripts {
            // Old transcripts would be linked from a new report as if they were fresh.
            let _ = std::fs::remove_dir_all(dir);
        }
        Ok(Self {
            _scratch: scratch,
            json: out_dir.join("cucumber.json"),
            junit: out_dir.join("junit.xml"),
            transcripts,
        })
    }
}

/// What the scenarios' run left besides its files.
struct Ran {
    stats: report::RunStats,
    started_at: time::OffsetDateTime,
    runtime_version: Option<String>,
}

/// Runs the selected scenarios with cucumber, writing JUnit and JSON as they finish and,
/// in `progress` style, a line per scenario.
// The progress lines are the kit's user interface.
#[allow(clippy::print_stdout)]
async fn run_scenarios(
    options: &RunOptions,
    features: &std::path::Path,
    selection: Arc<Selection>,
    selected: usize,
    files: &RunFiles,
    config: Arc<KitConfig>,
    stop: Arc<FailFast>,
) -> anyhow::Result<report::RunStats> {
    let progress = options.output == OutputStyle::Progress;
    let concurrency = options.concurrency.clamp(1, 64);
    if progress {
        println!(
            "conformance: {selected} scenario(s) selected, {concurrency} at a time, runtime `{}` over {}, profiles {} ({})",
            options.runtime.display,
            options.transport.label(),
            options.manifest.profiles_label(),
            options.manifest.source
        );
    }
    let done = Arc::new(AtomicUsize::new(0));
    let terminal = Terminal { show: !progress };
    let writer = writer::Basic::raw(terminal, writer::Coloring::Auto, 0)
        .summarized()
        .tee::<ConformanceWorld, _>(writer::JUnit::for_tee(
            File::create(&files.junit)
                .with_context(|| format!("cannot create {}", files.junit.display()))?,
            0,
        ))
        .tee::<ConformanceWorld, _>(writer::Json::for_tee(
            File::create(&files.json)
                .with_context(|| format!("cannot create {}", files.json.display()))?,
        ))
        .normalized();
    let before_stop = Arc::clone(&stop);
    let after_ledger = Arc::clone(&config.ledger);
    let stats = ConformanceWorld::cucumber()
        .with_writer(writer)
        // Undefined steps are skipped by default and the run still passes: a certification
        // must never pass while checking nothing.
        .fail_on_skipped()
        .before(move |feature, rule, scenario, world| {
            if let Some(after) = before_stop.stopped_by() {
                // A panic is how a hook fails a scenario in cucumber: the scenario is not
                // started, and the report drops it as not run.
                panic!("{FAIL_FAST_STOPPED} after the failure of {after}");
            }
            let config = Arc::clone(&config);
            let id = scenario_id(feature, rule, scenario);
            async move { world.prepare(config, id) }.boxed_local()
        })
        .after(move |feature, rule, scenario, finished, world| {
            let failed = !matches!(finished, event::ScenarioFinished::StepPassed);
            if matches!(finished, event::ScenarioFinished::BeforeHookFailed(_))
                && stop.stopped_by().is_some()
            {
                // Not started because --fail-fast stopped the run: nothing to show or judge.
                return async {}.boxed_local();
            }
            stop.judge(feature, rule, scenario, finished);
            let line = progress.then(|| progress_line(feature, scenario, finished));
            let place = scenario_place(feature, scenario);
            let done = Arc::clone(&done);
            let ledger = Arc::clone(&after_ledger);
            async move {
                let notes = match world {
                    Some(world) => finish_scenario(world, failed, &place, &ledger).await,
                    None => Vec::new(),
                };
                if let Some(line) = line {
                    // Numbered when printed, so the count goes up on screen.
                    let n = done.fetch_add(1, Ordering::Relaxed) + 1;
                    let width = selected.to_string().len();
                    let mut line = format!("[{n:>width$}/{selected}] {line}");
                    for note in &notes {
                        line.push_str("\n      note: ");
                        line.push_str(&note.replace('\n', "\n        "));
                    }
                    println!("{line}");
                }
            }
            .boxed_local()
        })
        .with_cli(cucumber_options(concurrency))
        .filter_run(features.to_path_buf(), move |feature, rule, scenario| {
            selection.selects(feature, rule, scenario)
        })
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
    Ok(summary)
}

/// cucumber's own options: the kit filters and stops by itself.
fn cucumber_options<Parser, Writer>(
    concurrency: usize,
) -> cli::Opts<Parser, cucumber::runner::basic::Cli, Writer>
where
    Parser: clap::Args + Default,
    Writer: clap::Args + Default,
{
    cli::Opts {
        re_filter: None,
        tags_filter: None,
        parser: Default::default(),
        runner: cucumber::runner::basic::Cli {
            concurrency: Some(concurrency),
            // cucumber's fail-fast stops at any failed step, a "not applicable" one included;
            // the kit's own (`FailFast`) stops only at a decisive failure.
            fail_fast: false,
            ..Default::default()
        },
        writer: Default::default(),
        custom: cli::Empty,
    }
}

/// A scenario's place and its tags, the feature's and the rule's included.
fn scenario_id(
    feature: &cucumber::gherkin::Feature,
    rule: Option<&cucumber::gherkin::Rule>,
    scenario: &cucumber::gherkin::Scenario,
) -> ScenarioId {
    ScenarioId {
        feature_path: feature.path.clone(),
        name: scenario.name.clone(),
        line: scenario.position.line,
        tags: feature
            .tags
            .iter()
            .chain(rule.map(|rule| &rule.tags).into_iter().flatten())
            .chain(&scenario.tags)
            .cloned()
            .collect(),
    }
}

/// Ends a scenario's world and records what it judged; the notes for its progress line.
async fn finish_scenario(
    world: &mut ConformanceWorld,
    failed: bool,
    place: &str,
    ledger: &Ledger,
) -> Vec<String> {
    let mut notes = Vec::new();
    let judged = world.finish(failed).await;
    ledger.record(place, &judged);
    let kinds: std::collections::BTreeSet<&str> = judged
        .violations
        .iter()
        .map(|v| v.judged.as_str())
        .collect();
    if !kinds.is_empty() {
        notes.push(format!(
            "malformed messages (charged to the requirements about {}, not to this scenario)",
            kinds.into_iter().collect::<Vec<_>>().join(", ")
        ));
    }
    notes.extend(judged.transcript_error);
    notes
}

/// Reads the run's record back, judges every requirement and writes the reports.
fn judge_run(
    options: &RunOptions,
    inputs: &Inputs,
    files: &RunFiles,
    ledger: &Ledger,
    stop: &FailFast,
    ran: Ran,
) -> anyhow::Result<Outcome> {
    let json = std::fs::read_to_string(&files.json)
        .with_context(|| format!("cannot read back {}", files.json.display()))?;
    let mut results = report::parse_cucumber_json(&json)?;
    let before_stop = results.len();
    results.retain(|s| {
        !s.failure
            .as_deref()
            .is_some_and(|f| f.contains(FAIL_FAST_STOPPED))
    });
    let not_started = before_stop - results.len();
    report::attribution::attribute_missing_events(&mut results, |judged| ledger.observed(judged));
    report::attribution::attribute_failures(&mut results, &inputs.features);
    let finished_at = time::OffsetDateTime::now_utc();
    let context = report::ReportContext {
        runtime: options.runtime.display.clone(),
        started_at: ran.started_at,
        finished_at,
        features: inputs.features.clone(),
        tags: options.tags.clone(),
        name: options.name.clone(),
        stats: ran.stats,
        transcripts_dir: files.transcripts.clone(),
        transport: options.transport.label().to_owned(),
        not_certified: crate::catalogue::load_not_certified(
            &inputs.features.join("not-certified.toml"),
        )?,
        manifest: report::manifest::Manifest {
            runtime: report::manifest::RuntimeInfo {
                command: options.runtime.display.clone(),
                version: ran.runtime_version,
                transport: options.transport.label().to_owned(),
            },
            kit: report::manifest::KitInfo::current(),
            spec: report::manifest::SpecInfo::of_catalogue(
                &inputs.catalogue_path,
                inputs.catalogue.requirements.len(),
            ),
            started_at: report::rfc3339(ran.started_at),
            finished_at: report::rfc3339(finished_at),
            os: report::manifest::OsInfo::current(),
            tags: options.tags.clone(),
            name: options.name.clone(),
            shard: options.shard.map(|s| s.to_string()),
        },
    };
    let charged = ledger.by_requirement(&inputs.catalogue);
    let mut outcome = report::build_outcome(
        &inputs.catalogue,
        &inputs.scanned,
        &results,
        &charged,
        &options.manifest,
        &context,
    );
    if let Some((baseline, file)) = &inputs.baseline {
        baseline::apply(&mut outcome, baseline, file);
    }
    if let Some(after) = stop.stopped_by().filter(|_| not_started > 0) {
        outcome.mark_incomplete(format!(
            "--fail-fast stopped the run after the failure of {after}; {not_started} selected scenario(s) were not started"
        ));
    }
    if let Some(dir) = &options.report_dir {
        report::write_reports(dir, &inputs.catalogue, &outcome, &context)?;
    }
    Ok(outcome)
}

/// The panic message of a scenario `--fail-fast` kept from starting (the report drops it).
const FAIL_FAST_STOPPED: &str = "NOT RUN, --fail-fast stopped the run";

/// The kit's `--fail-fast`: the first scenario that fails a decisive requirement (a MUST of
/// a declared profile) that the baseline does not know stops the run. A scenario that is
/// not applicable, or fails only warnings or known failures, does not.
struct FailFast {
    enabled: bool,
    decisive: std::collections::BTreeSet<String>,
    baseline: Option<Baseline>,
    /// The scenario that stopped the run (`name (dir/file.feature:34)`).
    stopped: std::sync::Mutex<Option<String>>,
}

impl FailFast {
    fn new(
        enabled: bool,
        catalogue: &Catalogue,
        manifest: &RuntimeManifest,
        baseline: Option<&Baseline>,
    ) -> Self {
        Self {
            enabled,
            decisive: catalogue
                .requirements
                .iter()
                .filter(|r| r.level == catalogue::Level::Must && manifest.declares(r.profile))
                .map(|r| r.id.clone())
                .collect(),
            baseline: baseline.cloned(),
            stopped: std::sync::Mutex::new(None),
        }
    }

    fn stopped_by(&self) -> Option<String> {
        self.stopped
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// Stops the run when this finished scenario failed a decisive requirement.
    fn judge(
        &self,
        feature: &cucumber::gherkin::Feature,
        rule: Option<&cucumber::gherkin::Rule>,
        scenario: &cucumber::gherkin::Scenario,
        finished: &event::ScenarioFinished,
    ) {
        if !self.enabled {
            return;
        }
        let failed = match finished {
            event::ScenarioFinished::StepPassed => false,
            event::ScenarioFinished::StepFailed(_, _, error) => {
                report::not_applicable_reason(&report::clean_error(&error.to_string())).is_none()
            }
            event::ScenarioFinished::StepSkipped | event::ScenarioFinished::BeforeHookFailed(_) => {
                true
            }
        };
        if !failed {
            return;
        }
        let requirements: Vec<&str> = feature
            .tags
            .iter()
            .chain(rule.map(|r| &r.tags).into_iter().flatten())
            .chain(&scenario.tags)
            .map(|t| t.trim_start_matches('@'))
            .filter(|t| self.decisive.contains(*t))
            .collect();
        let known = self.baseline.as_ref().is_some_and(|baseline| {
            baseline.known_failure.iter().any(|entry| {
                entry.scenario.as_deref() == Some(scenario.name.as_str())
                    || entry
                        .id
                        .as_deref()
                        .is_some_and(|id| requirements.contains(&id))
            })
        });
        if requirements.is_empty() || known {
            return;
        }
        let mut stopped = self
            .stopped
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if stopped.is_none() {
            *stopped = Some(scenario_place(feature, scenario));
        }
    }
}

/// `dir/file.feature:34`: where a scenario is, relative to the features directory.
fn feature_place(
    feature: &cucumber::gherkin::Feature,
    scenario: &cucumber::gherkin::Scenario,
) -> String {
    let path = feature.path.as_deref();
    let dir = path
        .and_then(|p| p.parent())
        .and_then(|p| p.file_name())
        .map(|d| d.to_string_lossy().into_owned())
        .unwrap_or_default();
    let file = path
        .and_then(|p| p.file_name())
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_default();
    format!("{dir}/{file}:{}", scenario.position.line)
}

/// `name (dir/file.feature:34)`, naming a scenario in the ledger.
fn scenario_place(
    feature: &cucumber::gherkin::Feature,
    scenario: &cucumber::gherkin::Scenario,
) -> String {
    format!("{} ({})", scenario.name, feature_place(feature, scenario))
}

/// `✔ name (dir/file.feature:34)`, and for a failure the step's message under it (the
/// caller puts the `[12/215]` counter in front). A scenario that needs what the runtime
/// does not declare shows as `○ … not applicable`.
fn progress_line(
    feature: &cucumber::gherkin::Feature,
    scenario: &cucumber::gherkin::Scenario,
    finished: &event::ScenarioFinished,
) -> String {
    let place = feature_place(feature, scenario);
    let (mark, detail) = match finished {
        event::ScenarioFinished::StepPassed => ("✔", None),
        event::ScenarioFinished::StepSkipped => ("✘", Some("a step was skipped".to_owned())),
        event::ScenarioFinished::StepFailed(_, _, error) => {
            let message = report::clean_error(&error.to_string());
            match report::not_applicable_reason(&message) {
                Some(reason) => ("○", Some(format!("not applicable: {reason}"))),
                None => ("✘", Some(message)),
            }
        }
        event::ScenarioFinished::BeforeHookFailed(_) => {
            ("✘", Some("the before-scenario hook failed".to_owned()))
        }
    };
    let mut line = format!("{mark} {} ({place})", scenario.name);
    if let Some(detail) = detail {
        for text in detail.lines() {
            line.push_str("\n      ");
            line.push_str(text);
        }
    }
    line
}
