//! The `conformance` command line, shared with anything else that wants the same options.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;
use clap::Parser;

use crate::driver::{RuntimeCommand, Transport};
use crate::runner::{DEFAULT_CONCURRENCY, OutputStyle, RunOptions};
use crate::selection::Shard;

/// Certifies an agent runtime: spawns it per scenario with fake services, speaks JSON-RPC
/// over its stdio (or a Unix socket) and checks every behaviour in features/ against the spec.
#[derive(Debug, Parser)]
#[command(
    name = "conformance",
    version = crate::builtin::VERSION,
    after_help = "Other commands (each with --help):\n  \
      conformance init                      a starter runtime manifest (conformance.toml)\n  \
      conformance baseline --write FILE     a run's failures as a baseline\n  \
      conformance diff OLD NEW              two runs compared; exit 1 on a regression\n  \
      conformance matrix REPORT...          requirement x runtime on one HTML page\n  \
      conformance crash --runtime CMD       the crash campaign\n  \
      conformance variance-runtime PROGRAM  the permissible-variance wrapper"
)]
pub struct Cli {
    /// The runtime command line, split like a shell would (no shell is run), e.g.
    /// `--runtime "python3 -m my_runtime"`.
    #[arg(long, env = "CONFORMANCE_RUNTIME", value_name = "COMMAND")]
    pub runtime: Option<String>,

    /// How to speak to the runtime: `stdio`, `socket` (Unix only: the kit appends
    /// `--listen <path>` to the command and connects to that Unix domain socket; stdout must
    /// then stay empty) or `http` (the kit appends `--listen http://127.0.0.1:PORT`, sets
    /// AGENT_RUNTIME_HTTP_TOKEN, POSTs requests to /rpc and reads events from GET /events) or
    /// `sandbox` (INTEROP.md §9: the kit plays the Session Service — launches the runtime with
    /// SESSION_ID/REGISTRATION_TOKEN and `--transport http --port P --workspace-dir D`, answers
    /// its registration and proxies /rpc and /events without credentials).
    #[arg(long, value_enum, default_value_t = Transport::Stdio, value_name = "TRANSPORT")]
    pub transport: Transport,

    /// Known failures (TOML `[[known_failure]]` entries with `id = "REQ-…"` or
    /// `scenario = "<name>"`, and a `reason`): they do not fail the run, new failures do, and
    /// an entry that now passes fails the run as stale.
    #[arg(long, value_name = "FILE")]
    pub baseline: Option<PathBuf>,

    /// Cucumber tag expression selecting scenarios, e.g. `@REQ-RPC-003 or @REQ-SES-004`.
    #[arg(long, value_name = "EXPR")]
    pub tags: Option<String>,

    /// Regex on scenario names (with --tags, a scenario must match both).
    #[arg(long, value_name = "REGEX")]
    pub name: Option<String>,

    /// Run the i-th of n deterministic, disjoint parts of the selection, e.g. `--shard 2/4`
    /// on the second of four CI machines (a scenario always lands in the same part).
    #[arg(long, value_name = "I/N")]
    pub shard: Option<Shard>,

    /// Terminal output: `progress` (a line per scenario, failures with their message) or
    /// `pretty` (cucumber's step-by-step output).
    #[arg(long, value_enum, default_value_t = OutputStyle::Progress, value_name = "STYLE")]
    pub output: OutputStyle,

    /// Scenarios run at once (each has its own runtime process and fakes).
    #[arg(long, default_value_t = DEFAULT_CONCURRENCY as u16, value_parser = clap::value_parser!(u16).range(1..=64))]
    pub concurrency: u16,

    /// Stop at the first scenario that fails a decisive requirement (never at a not
    /// applicable one); a run stopped early is never CERTIFIED.
    #[arg(long)]
    pub fail_fast: bool,

    /// Directory of .feature files (default: the features/ built into this binary).
    #[arg(long, value_name = "DIR")]
    pub features: Option<PathBuf>,

    /// Requirement catalogue (default: <features>/requirements.toml).
    #[arg(long, value_name = "FILE")]
    pub catalogue: Option<PathBuf>,

    /// What the runtime declares (TOML): the profiles it claims (`core`, `interop`,
    /// `reference`, `hardening`, `policy`), its transports, and the knobs it honours under
    /// which environment names (see conformance/README.md). Default: core and interop over
    /// stdio, no knob. A name without such a file is a built-in manifest: `reference` (the
    /// reference runtime's), `variance`, `windows`.
    #[arg(long, value_name = "FILE")]
    pub manifest: Option<PathBuf>,

    /// Bound in milliseconds for each wait (a response, an event, an exit).
    #[arg(long, default_value_t = 5000, value_name = "MS")]
    pub timeout_ms: u64,

    /// Write junit.xml, cucumber.json, certification.md, outcome.json and transcripts of
    /// failed scenarios here.
    #[arg(long, value_name = "DIR")]
    pub report_dir: Option<PathBuf>,
}

impl Cli {
    pub fn into_options(self) -> anyhow::Result<RunOptions> {
        let command = self.runtime.context(
            "no runtime to certify: pass --runtime \"<command>\" or set CONFORMANCE_RUNTIME",
        )?;
        let mut options = RunOptions::new(RuntimeCommand::parse(&command)?);
        if self.transport == Transport::Socket && !cfg!(unix) {
            anyhow::bail!(
                "--transport socket needs Unix domain sockets; Windows named pipes are not supported by the kit"
            );
        }
        options.transport = self.transport;
        options.baseline = self.baseline;
        options.features = match self.features {
            Some(dir) => dir,
            None => crate::builtin::features_dir()?,
        };
        options.catalogue = self.catalogue;
        options.tags = self.tags;
        options.name = self.name;
        options.shard = self.shard;
        options.output = self.output;
        options.concurrency = usize::from(self.concurrency);
        options.fail_fast = self.fail_fast;
        options.timeout = Duration::from_millis(self.timeout_ms.max(1));
        options.report_dir = self.report_dir;
        if let Some(path) = &self.manifest {
            options.manifest = crate::builtin::load_manifest(path)?;
        }
        Ok(options)
    }
}
