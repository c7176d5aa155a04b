//! The environment a runtime-under-test is started with: the contract table of
//! ARCHITECTURE.md ("Runtime-under-test contract"), pointed at this scenario's fakes and dirs.
//!
//! Every contract variable the kit does not set is removed from the inherited environment,
//! so a developer's shell (`LLM_MAX_RETRIES=0`, a real gateway URL) cannot change a
//! certification's outcome.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::Context as _;

use agent_mocks::Fakes;

use crate::runtime_manifest::RuntimeManifest;

/// The per-scenario directories, all under one temp root removed when the scenario ends.
#[derive(Debug)]
pub(crate) struct ScenarioDirs {
    root: tempfile::TempDir,
    pub workspace: PathBuf,
    pub checkpoints: PathBuf,
    pub logs: PathBuf,
    pub home: PathBuf,
}

impl ScenarioDirs {
    pub(crate) fn create() -> anyhow::Result<Self> {
        let root = tempfile::Builder::new()
            .prefix("conformance-")
            .tempdir()
            .context("cannot create the scenario's temp dir")?;
        let make = |name: &str| -> anyhow::Result<PathBuf> {
            let dir = root.path().join(name);
            std::fs::create_dir_all(&dir)
                .with_context(|| format!("cannot create {}", dir.display()))?;
            // The runtime may canonicalize paths (macOS /var → /private/var): hand it the
            // canonical form so paths it reports compare equal to ours.
            Ok(dir.canonicalize().unwrap_or(dir))
        };
        Ok(Self {
            workspace: make("workspace")?,
            checkpoints: make("checkpoints")?,
            logs: make("logs")?,
            home: make("home")?,
            root,
        })
    }

    pub(crate) fn root(&self) -> &Path {
        self.root.path()
    }
}

/// The bearer token the kit hands the runtime; scenarios assert the gateway received it.
pub(crate) const GATEWAY_TOKEN: &str = "conformance-gateway-token";

/// The wiring every runtime of the design reads: the services, the gateway, the dirs. With
/// the knobs (`runtime_manifest::KNOBS`) it is every variable the kit removes unless it sets it.
pub(crate) const WIRING_VARIABLES: &[&str] = &[
    "LLM_GATEWAY_ENDPOINT",
    "LLM_GATEWAY_AUTH_TOKEN",
    "SESSION_SERVICE_URL",
    "WORKSPACE_SERVICE_URL",
    "APPROVAL_SERVICE_URL",
    "AUDIT_SERVICE_URL",
    "TELEMETRY_SERVICE_URL",
    "CHECKPOINT_DIR",
    "LOG_DIR",
    "LOG_LEVEL",
];

/// `(variables to set, variables to remove)`: the wiring every runtime of the design reads,
/// then what the runtime's manifest sets for every scenario (its own speed knobs, as it
/// parses them), then `overrides` (from `Given` steps, already resolved to the runtime's
/// names through the manifest).
pub(crate) fn contract_env(
    fakes: &Fakes,
    dirs: &ScenarioDirs,
    manifest: &RuntimeManifest,
    overrides: &BTreeMap<String, String>,
) -> (Vec<(String, String)>, Vec<String>) {
    let path = |p: &std::path::Path| p.display().to_string();
    let mut env: BTreeMap<String, String> = [
        // The streaming gateway's URL, including `/v1`.
        ("LLM_GATEWAY_ENDPOINT", fakes.streaming_gateway.url()),
        ("LLM_GATEWAY_AUTH_TOKEN", GATEWAY_TOKEN.to_owned()),
        ("SESSION_SERVICE_URL", fakes.session.url()),
        ("WORKSPACE_SERVICE_URL", fakes.workspace.url()),
        ("APPROVAL_SERVICE_URL", fakes.approvals.url()),
        ("AUDIT_SERVICE_URL", fakes.audit.url()),
        ("TELEMETRY_SERVICE_URL", fakes.telemetry.url()),
        ("CHECKPOINT_DIR", path(&dirs.checkpoints)),
        ("LOG_DIR", path(&dirs.logs)),
        ("LOG_LEVEL", "debug".to_owned()),
        ("HOME", path(&dirs.home)),
        // Windows spelling of HOME, harmless elsewhere.
        ("USERPROFILE", path(&dirs.home)),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v))
    .collect();
    for (name, value) in manifest.env.iter().chain(overrides) {
        env.insert(name.clone(), value.clone());
    }
    // A knob the runtime reads under its own name must not leak in from the kit's shell
    // either.
    let own_names = manifest
        .knobs
        .values()
        .filter_map(|knob| knob.env.as_deref());
    let remove = WIRING_VARIABLES
        .iter()
        .chain(crate::runtime_manifest::KNOBS)
        .copied()
        .chain(own_names)
        .filter(|name| !env.contains_key(*name))
        .map(str::to_owned)
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    (env.into_iter().collect(), remove)
}
