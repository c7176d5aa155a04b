//! What one certification run is configured with, shared (read-only) by every scenario.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use crate::driver::{RuntimeCommand, Transport};
use crate::ledger::Ledger;
use crate::runtime_manifest::RuntimeManifest;

/// The default bound for every wait. A conforming runtime answers in milliseconds; a few
/// seconds leave room for a slow CI machine while keeping a broken runtime's run short.
pub(crate) const DEFAULT_TIMEOUT: Duration = Duration::from_secs(5);

#[derive(Debug, Clone)]
pub(crate) struct KitConfig {
    /// The runtime-under-test.
    pub runtime: RuntimeCommand,
    /// How the kit talks to it (stdio, or a Unix socket given with `--listen PATH`).
    pub transport: Transport,
    /// Bound for each wait (a response, an event, an exit).
    pub timeout: Duration,
    /// Where failed scenarios' transcripts go; `None` keeps none.
    pub transcripts_dir: Option<PathBuf>,
    /// What the runtime declares: profiles, transports, knobs.
    pub manifest: Arc<RuntimeManifest>,
    /// Malformed messages of every scenario, charged to the requirements about them.
    pub ledger: Arc<Ledger>,
}
