//! What a runtime under test declares about itself (`--manifest FILE`, TOML): the profiles it
//! claims, the transports it serves, and the knobs it honours under its own environment
//! names. The kit runs what applies and reports the rest as "not applicable, because …",
//! never as failed: a runtime that follows the documents but has none of the reference
//! runtime's `AGENT_RUNTIME_*` knobs must still certify.
//!
//! ```toml
//! profiles = ["core", "interop"]        # default: core and interop
//! transports = ["stdio"]                # default: stdio
//! os = "windows"                        # the runtime's OS: "unix" (default) or "windows"
//! git = false                           # whether `git` runs on the runtime's machine (default: true)
//! home = false                          # whether the kit's HOME/USERPROFILE reaches it (default: true)
//! python = false                        # whether a Python interpreter runs on its machine (default: true)
//!
//! [knobs.APPROVAL_TIMEOUT_SECONDS]      # the kit's knob name (the reference runtime's variable)
//! env = "APPROVAL_TIMEOUT"              # the variable this runtime reads (default: the same)
//! fractional = false                    # whole seconds only: "0.2" is not applicable
//!
//! [env]                                 # set for every scenario, as this runtime parses them
//! LLM_RETRY_BASE_DELAY = "0.01"
//! ```

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use anyhow::{Context, bail};
use serde::Deserialize;

use crate::catalogue::Profile;
use crate::driver::Transport;

/// The start of every "not applicable" step error; the report files such a scenario as not
/// applicable instead of failed.
pub const NOT_APPLICABLE: &str = "NOT APPLICABLE to this runtime:";

/// The environment variables the kit treats as knobs: a scenario may set them only when the
/// manifest declares them. Everything else the kit sets is wiring every runtime of the
/// design reads (service URLs, the gateway, CHECKPOINT_DIR, LOG_DIR), or plain environment
/// content (a planted credential).
pub const KNOBS: &[&str] = &[
    "LLM_GATEWAY_HEADERS",
    "APPROVAL_TIMEOUT_SECONDS",
    "DEFAULT_MAX_STEPS",
    "LLM_MAX_RETRIES",
    "LLM_RETRY_BASE_DELAY",
    "LLM_RETRY_MAX_DELAY",
    "BACKEND_TOOL_SERVICE_URL",
    "AGENT_RUNTIME_WEB_SEARCH_URL",
    "AGENT_RUNTIME_LLM_IMAGE_PARTS",
    "AGENT_RUNTIME_AUDIT_FLUSH_INTERVAL_SECONDS",
    "AGENT_RUNTIME_AUDIT_RETRY_DELAY_SECONDS",
    "AGENT_RUNTIME_AUDIT_SHUTDOWN_FLUSH_SECONDS",
    "AGENT_RUNTIME_AUDIT_QUEUE_BOUND",
    "AGENT_RUNTIME_AUDIT_BATCH_SIZE",
    "AGENT_RUNTIME_RUN_STORE_MAX_FILE_BYTES",
    "AGENT_RUNTIME_RUN_STORE_MAX_TOTAL_BYTES",
    "AGENT_RUNTIME_SERVICE_TIMEOUT_SECONDS",
    "AGENT_RUNTIME_SERVICE_RETRIES",
    "AGENT_RUNTIME_SERVICE_RETRY_DELAY_SECONDS",
    "AGENT_RUNTIME_LLM_CONNECT_TIMEOUT_SECONDS",
    "AGENT_RUNTIME_LLM_IDLE_TIMEOUT_SECONDS",
    "AGENT_RUNTIME_MAX_LINE_BYTES",
    "AGENT_RUNTIME_MAX_REQUEST_MESSAGES",
    "AGENT_RUNTIME_RECENCY_WINDOW",
    "AGENT_RUNTIME_EVENT_RING_SIZE",
    "AGENT_RUNTIME_FORCE_CANCEL_GRACE_SECONDS",
    "AGENT_RUNTIME_REMOTE_TOOL_TIMEOUT_SECONDS",
    "AGENT_RUNTIME_KILL_GRACE_SECONDS",
    "AGENT_RUNTIME_ALLOW_LOOPBACK_HTTP",
    "AGENT_RUNTIME_REDACTION_RULES_FILE",
    "AGENT_RUNTIME_CHILD_ENV_ALLOW",
    "AGENT_RUNTIME_EVENT_RING_BYTES",
    "AGENT_RUNTIME_FILE_TOOL_TIMEOUT_SECONDS",
    "AGENT_RUNTIME_MAX_READ_BYTES",
    "AGENT_RUNTIME_MAX_STEPS_LIMIT",
    "AGENT_RUNTIME_MCP_STARTUP_TIMEOUT_SECONDS",
    "AGENT_RUNTIME_NETWORK_TOOL_TIMEOUT_SECONDS",
    "AGENT_RUNTIME_SANDBOX",
    "AGENT_RUNTIME_SHELL_TOOL_TIMEOUT_SECONDS",
];

/// How a runtime takes one knob.
#[derive(Debug, Clone, Default, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Knob {
    /// The variable it reads; the knob's own name when absent.
    #[serde(default)]
    pub env: Option<String>,
    /// For durations: whether it parses fractional seconds (`"0.2"`). A runtime that reads
    /// whole seconds gets only whole values; a scenario that needs less is not applicable.
    #[serde(default = "yes")]
    pub fractional: bool,
}

fn yes() -> bool {
    true
}

/// The manifest as written.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    profiles: Option<Vec<String>>,
    #[serde(default)]
    transports: Option<Vec<String>>,
    #[serde(default)]
    knobs: BTreeMap<String, Knob>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    #[serde(default)]
    os: Option<String>,
    #[serde(default)]
    git: Option<bool>,
    #[serde(default)]
    home: Option<bool>,
    #[serde(default)]
    python: Option<bool>,
}

/// The OS family the runtime runs on: scenario commands, path comparisons and the graceful
/// end follow it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum RuntimeOs {
    #[default]
    Unix,
    Windows,
}

impl RuntimeOs {
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "unix" => Some(Self::Unix),
            "windows" => Some(Self::Windows),
            _ => None,
        }
    }

    /// The OS family a desktop app on the runtime's machine reports (`clientInfo.osFamily`):
    /// `windows`, or for Unix the kit's own (it runs beside the runtime).
    pub fn family(self) -> &'static str {
        match self {
            Self::Unix => std::env::consts::OS,
            Self::Windows => "windows",
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Unix => "unix",
            Self::Windows => "windows",
        }
    }
}

/// What the runtime under test declares (see the module docs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuntimeManifest {
    /// Where it came from, for reports (`built-in default` without `--manifest`).
    pub source: String,
    pub name: Option<String>,
    pub profiles: BTreeSet<Profile>,
    pub transports: BTreeSet<Transport>,
    pub knobs: BTreeMap<String, Knob>,
    pub env: BTreeMap<String, String>,
    pub os: RuntimeOs,
    /// Whether `git` runs on the runtime's machine; git scenarios are not applicable without.
    pub git: bool,
    /// Whether the home folder the kit gives the runtime (`HOME`, `USERPROFILE`) is the one it
    /// uses; Wine sets `USERPROFILE` itself. The home-folder scenarios need it.
    pub home: bool,
    /// Whether a Python interpreter runs on the runtime's machine; the ExecuteCode
    /// scenarios that run code (Python, the language the real Policy Service grants) need it.
    pub python: bool,
}

impl Default for RuntimeManifest {
    /// A runtime that declares nothing: the design documents and INTEROP.md, over stdio,
    /// with no knob.
    fn default() -> Self {
        Self {
            source: "built-in default (no --manifest)".to_owned(),
            name: None,
            profiles: [Profile::Core, Profile::Interop].into_iter().collect(),
            transports: [Transport::Stdio].into_iter().collect(),
            knobs: BTreeMap::new(),
            env: BTreeMap::new(),
            os: RuntimeOs::Unix,
            git: true,
            home: true,
            python: true,
        }
    }
}

impl RuntimeManifest {
    pub fn load(path: &Path) -> anyhow::Result<Self> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read the runtime manifest {}", path.display()))?;
        Self::parse(&text, &path.display().to_string())
            .with_context(|| format!("{} is not a valid runtime manifest", path.display()))
    }

    pub fn parse(text: &str, source: &str) -> anyhow::Result<Self> {
        let file: File = toml::from_str(text)?;
        let defaults = Self::default();
        let profiles = match file.profiles {
            None => defaults.profiles,
            Some(list) => list
                .iter()
                .map(|p| {
                    Profile::parse(p).with_context(|| {
                        format!(
                            "unknown profile {p:?} (known: {})",
                            Profile::ALL.map(Profile::as_str).join(", ")
                        )
                    })
                })
                .collect::<anyhow::Result<_>>()?,
        };
        let transports = match file.transports {
            None => defaults.transports,
            Some(list) => list
                .iter()
                .map(|t| {
                    Transport::parse(t).with_context(|| {
                        format!("unknown transport {t:?} (known: stdio, socket, http, sandbox)")
                    })
                })
                .collect::<anyhow::Result<_>>()?,
        };
        for name in file.knobs.keys().chain(file.env.keys()) {
            if file.knobs.contains_key(name) && !KNOBS.contains(&name.as_str()) {
                bail!("unknown knob {name:?}: the kit knows {}", KNOBS.join(", "));
            }
        }
        let os = match file.os {
            None => defaults.os,
            Some(os) => RuntimeOs::parse(&os)
                .with_context(|| format!("unknown os {os:?} (known: unix, windows)"))?,
        };
        Ok(Self {
            source: source.to_owned(),
            name: file.name,
            profiles,
            transports,
            knobs: file.knobs,
            env: file.env,
            os,
            git: file.git.unwrap_or(defaults.git),
            home: file.home.unwrap_or(defaults.home),
            python: file.python.unwrap_or(defaults.python),
        })
    }

    /// `core+interop`, for verdicts.
    pub fn profiles_label(&self) -> String {
        self.profiles
            .iter()
            .map(|p| p.as_str())
            .collect::<Vec<_>>()
            .join("+")
    }

    pub fn declares(&self, profile: Profile) -> bool {
        self.profiles.contains(&profile)
    }

    /// Whether the runtime runs with its own value of the knob `name`: declared, and set by
    /// the manifest's `[env]` under the runtime's name for it. Otherwise it runs on the
    /// spec's default, and the kit's waits allow for that default's timing.
    pub fn sets_knob(&self, name: &str) -> bool {
        self.knobs
            .get(name)
            .is_some_and(|knob| self.env.contains_key(knob.env.as_deref().unwrap_or(name)))
    }

    /// How a scenario's `name = value` reaches this runtime: under the runtime's own name,
    /// or not at all (`Err`: the scenario is not applicable, the message says why).
    pub fn resolve(&self, name: &str, value: &str) -> Result<(String, String), String> {
        if !KNOBS.contains(&name) {
            return Ok((name.to_owned(), value.to_owned()));
        }
        let Some(knob) = self.knobs.get(name) else {
            return Err(format!(
                "{NOT_APPLICABLE} the scenario sets the knob {name}, which the runtime's manifest ({}) does not declare",
                self.source
            ));
        };
        let env = knob.env.clone().unwrap_or_else(|| name.to_owned());
        if !knob.fractional && value.contains('.') {
            return Err(format!(
                "{NOT_APPLICABLE} the scenario sets {name} to {value:?}, and the runtime reads {env} as whole seconds only"
            ));
        }
        Ok((env, value.to_owned()))
    }
}

/// The reference runtime's manifest, as shipped in `conformance/manifests/reference.toml`.
pub fn reference_manifest_path() -> std::path::PathBuf {
    std::path::PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/manifests/reference.toml"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reference_manifest_declares_every_profile_transport_and_knob() {
        let manifest = RuntimeManifest::load(&reference_manifest_path()).unwrap();
        assert_eq!(manifest.profiles.len(), Profile::ALL.len());
        assert_eq!(manifest.transports.len(), 4);
        let missing: Vec<_> = KNOBS
            .iter()
            .filter(|k| !manifest.knobs.contains_key(**k))
            .collect();
        assert!(missing.is_empty(), "knobs not declared: {missing:?}");
    }

    #[test]
    fn the_os_and_git_default_to_unix_with_git_and_unknown_oses_are_refused() {
        let manifest = RuntimeManifest::parse("", "t").unwrap();
        assert_eq!((manifest.os, manifest.git), (RuntimeOs::Unix, true));
        assert!(manifest.home && manifest.python);
        let windows = RuntimeManifest::parse(
            "os = \"windows\"\ngit = false\nhome = false\npython = false\n",
            "t",
        )
        .unwrap();
        assert_eq!(
            (windows.os, windows.git, windows.home, windows.python),
            (RuntimeOs::Windows, false, false, false)
        );
        assert!(RuntimeManifest::parse("os = \"plan9\"\n", "t").is_err());
    }

    #[test]
    fn a_scripted_command_takes_its_cmd_exe_form_only_on_windows() {
        use crate::steps::tools::shell::{CommandForm, command_for_os};
        let scripted = || serde_json::json!({"command": "echo a; exit 3", "command@windows": "echo a & exit /b 3"});
        let mut unix = scripted();
        assert_eq!(
            command_for_os(&mut unix, RuntimeOs::Unix),
            CommandForm::Chosen
        );
        assert_eq!(unix, serde_json::json!({"command": "echo a; exit 3"}));
        let mut windows = scripted();
        assert_eq!(
            command_for_os(&mut windows, RuntimeOs::Windows),
            CommandForm::Chosen
        );
        assert_eq!(
            windows,
            serde_json::json!({"command": "echo a & exit /b 3"})
        );
        let mut posix = serde_json::json!({"command": "seq 3"});
        assert_eq!(
            command_for_os(&mut posix, RuntimeOs::Windows),
            CommandForm::PosixOnly
        );
        assert_eq!(
            command_for_os(&mut posix, RuntimeOs::Unix),
            CommandForm::Unchanged
        );
    }

    #[test]
    fn defaults_claim_core_and_interop_over_stdio_with_no_knob() {
        let manifest = RuntimeManifest::parse("", "t").unwrap();
        assert_eq!(manifest.profiles_label(), "core+interop");
        assert!(manifest.transports.contains(&Transport::Stdio));
        assert!(
            manifest
                .resolve("AGENT_RUNTIME_MAX_REQUEST_MESSAGES", "5")
                .unwrap_err()
                .starts_with(NOT_APPLICABLE)
        );
        // Not a knob: planted environment content reaches every runtime.
        assert_eq!(
            manifest.resolve("DEPLOY_API_TOKEN", "x").unwrap(),
            ("DEPLOY_API_TOKEN".to_owned(), "x".to_owned())
        );
    }

    #[test]
    fn knobs_are_renamed_and_whole_second_runtimes_get_no_fractions() {
        let manifest = RuntimeManifest::parse(
            "profiles = [\"core\"]\n[knobs.APPROVAL_TIMEOUT_SECONDS]\nenv = \"APPROVAL_TIMEOUT\"\nfractional = false\n",
            "t",
        )
        .unwrap();
        assert_eq!(
            manifest.resolve("APPROVAL_TIMEOUT_SECONDS", "2").unwrap(),
            ("APPROVAL_TIMEOUT".to_owned(), "2".to_owned())
        );
        assert!(
            manifest
                .resolve("APPROVAL_TIMEOUT_SECONDS", "0.2")
                .unwrap_err()
                .contains("whole seconds")
        );
    }

    #[test]
    fn unknown_profiles_transports_and_knobs_are_refused() {
        assert!(RuntimeManifest::parse("profiles = [\"gold\"]", "t").is_err());
        assert!(RuntimeManifest::parse("transports = [\"pigeon\"]", "t").is_err());
        assert!(RuntimeManifest::parse("[knobs.NO_SUCH_KNOB]\n", "t").is_err());
        assert!(RuntimeManifest::parse("colour = 1", "t").is_err());
    }
}
