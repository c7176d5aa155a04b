//! What the launcher (or the Seatbelt profile) enforces for one process: the host's grant
//! (`ToolRequest.sandbox`) completed with what the tool runtime knows of the machine — the
//! private temporary folder, the tool caches kept private, the credential stores no command
//! may read, the runtime's own folders.
//!
//! The read model is INTEROP.md §10's: a command reads anywhere except the hidden paths;
//! it writes only in the granted trees (never in a read-only or hidden path inside them),
//! its private temporary folder and private copies of the tool caches.

use std::path::{Path, PathBuf};

use agent_protocol::ToolRequest;
use agent_protocol::sandbox::SandboxGrant;
use serde::{Deserialize, Serialize};

/// Device files every program may write (the Landlock-only wall; in a namespace `/dev` is a
/// private minimal one).
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
pub(super) const DEVICES: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/tty",
    "/dev/random",
    "/dev/urandom",
    "/dev/ptmx",
    "/dev/pts",
    "/dev/shm",
    "/dev/dtracehelper",
];

/// Credential stores under the home folder no command may read (INTEROP.md §10 (b)),
/// relative to `$HOME`.
pub(super) const CREDENTIAL_STORES: &[&str] = &[
    ".ssh",
    ".aws",
    ".gnupg",
    ".config/gcloud",
    ".azure",
    ".kube",
    ".docker/config.json",
    ".netrc",
    ".git-credentials",
    ".pypirc",
    ".config/gh",
    ".config/hub",
    ".cargo/credentials",
    ".cargo/credentials.toml",
    ".local/share/keyrings",
    ".password-store",
    ".mozilla",
    ".config/google-chrome",
    ".config/chromium",
    ".config/BraveSoftware",
    "Library/Keychains",
    "Library/Application Support/Google/Chrome",
    "Library/Application Support/Firefox",
    "Library/Cookies",
];

/// Tool folders under the home folder that commands write as a cache or a toolchain's own
/// state (cargo's registry and lock, rustup's downloads, npm's and pip's caches, pyenv's
/// shims): each is seen writable through a private copy-on-write layer, so the real one
/// never changes (a poisoned cache would run code outside the sandbox later).
pub(super) const TOOL_CACHES: &[&str] =
    &[".cargo", ".rustup", ".npm", ".cache", "go/pkg", ".pyenv"];

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Plan {
    /// Writable (and readable) trees.
    #[serde(default)]
    pub write: Vec<PathBuf>,
    /// Trees inside `write` kept read-only (still readable).
    #[serde(default)]
    pub read_only: Vec<PathBuf>,
    /// Paths nobody started here may read or write, wherever they are (existing or not).
    #[serde(default)]
    pub hidden: Vec<PathBuf>,
    /// Folders seen writable through a private layer ([`TOOL_CACHES`]).
    #[serde(default)]
    pub caches: Vec<PathBuf>,
    /// The private temporary folder (`TMPDIR`; `/tmp` itself inside a namespace).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tmp: Option<PathBuf>,
    #[serde(default)]
    pub network: bool,
    /// With `network`: the loopback port of the egress proxy, the only TCP destination
    /// ([`super::egress`]); `None`: the network is not confined further.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proxy_port: Option<u16>,
    /// With `proxy_port`: the proxy's Unix socket, which a command in a network namespace of
    /// its own reaches through a loopback port of that namespace bridged to it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proxy_socket: Option<PathBuf>,
    /// AGENT_RUNTIME_SANDBOX=required: a part that cannot be applied stops the launch.
    #[serde(default)]
    pub required: bool,
    /// Whether to confine in namespaces of its own (user, mount, PID, IPC, network); `false`
    /// keeps Landlock and seccomp alone (a kernel without user namespaces).
    #[serde(default)]
    pub namespaces: bool,
}

/// What the tool runtime adds to every grant.
#[derive(Debug, Clone, Default)]
pub(crate) struct Machine {
    pub home: Option<PathBuf>,
    pub tmp: Option<PathBuf>,
    /// The runtime's own state folders (checkpoints, logs, run store).
    pub private_dirs: Vec<PathBuf>,
    pub namespaces: bool,
}

impl Plan {
    /// The request's grant, or — a process-starting call the host sent none for — the
    /// workspace root writable but its `.git`, no network.
    pub(crate) fn for_request(request: &ToolRequest, machine: &Machine, required: bool) -> Self {
        Self::from_grant(&grant_for(request), machine, required)
    }

    pub(crate) fn from_grant(grant: &SandboxGrant, machine: &Machine, required: bool) -> Self {
        let absolute = |paths: &[String]| -> Vec<PathBuf> {
            paths
                .iter()
                .map(PathBuf::from)
                .filter(|path| path.is_absolute())
                .collect()
        };
        let mut write = absolute(&grant.write_paths);
        write.extend(machine.tmp.clone());
        let read_only = absolute(&grant.blocked_paths)
            .into_iter()
            .filter(|blocked| write.iter().any(|root| blocked.starts_with(root)))
            .collect();
        let mut hidden = absolute(&grant.hidden_paths);
        hidden.extend(machine.private_dirs.iter().cloned());
        let caches = match &machine.home {
            Some(home) => {
                hidden.extend(CREDENTIAL_STORES.iter().map(|store| home.join(store)));
                TOOL_CACHES
                    .iter()
                    .map(|cache| home.join(cache))
                    // A granted tree is written for real, not through a private layer.
                    .filter(|cache| !write.iter().any(|root| overlaps(root, cache)))
                    .collect()
            }
            None => Vec::new(),
        };
        // The private temporary folder and the grants are the command's own: a credential
        // store inside them (a workspace holding `.ssh`, say) is hidden all the same.
        hidden.sort();
        hidden.dedup();
        Self {
            write,
            read_only,
            hidden,
            caches,
            tmp: machine.tmp.clone(),
            network: grant.network,
            proxy_port: None,
            proxy_socket: None,
            required,
            namespaces: machine.namespaces,
        }
    }

    /// A network granted without the egress proxy is not confined further (the launcher
    /// used directly; the runtime always starts a proxy for a granted network).
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    pub(crate) fn unconfined_network(&self) -> bool {
        self.network && self.proxy_port.is_none()
    }

    /// Every tree a command may write: the grants and devices (the Landlock wall), and the
    /// private cache layers.
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    pub(crate) fn writable(&self) -> Vec<PathBuf> {
        let mut all = self.write.clone();
        all.extend(self.caches.iter().filter(|cache| cache.exists()).cloned());
        all
    }

    /// The plan travels to the launcher as an argument; there is no launcher on Windows.
    #[cfg_attr(not(unix), allow(dead_code))]
    pub(crate) fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    #[cfg_attr(not(unix), allow(dead_code))]
    pub(crate) fn from_json(text: &str) -> Result<Self, String> {
        serde_json::from_str(text)
            .map_err(|error| format!("the sandbox plan is malformed: {error}"))
    }
}

/// The request's grant, or — a process-starting call the host sent none for — the
/// workspace root writable but its `.git`, no network.
pub(crate) fn grant_for(request: &ToolRequest) -> SandboxGrant {
    request.sandbox.clone().unwrap_or_else(|| SandboxGrant {
        write_paths: request.workspace_root.iter().cloned().collect(),
        blocked_paths: request
            .workspace_root
            .iter()
            .map(|root| Path::new(root).join(".git").display().to_string())
            .collect(),
        ..SandboxGrant::default()
    })
}

/// Whether one of the two trees holds the other.
fn overlaps(a: &Path, b: &Path) -> bool {
    a.starts_with(b) || b.starts_with(a)
}

// The plan is the Unix launcher's; its paths are POSIX ones.
#[cfg(all(test, unix))]
mod tests {
    use super::*;

    fn machine() -> Machine {
        Machine {
            home: Some(PathBuf::from("/home/u")),
            tmp: Some(PathBuf::from("/t")),
            private_dirs: vec![PathBuf::from("/home/u/.local/share/agent-runtime")],
            namespaces: true,
        }
    }

    #[test]
    fn blocked_paths_outside_the_writable_trees_need_no_protection() {
        let grant = SandboxGrant {
            write_paths: vec!["/w".into(), "relative".into()],
            blocked_paths: vec!["/w/.git/config".into(), "/elsewhere".into()],
            hidden_paths: vec!["/w/.env".into()],
            network: false,
        };
        let plan = Plan::from_grant(&grant, &machine(), true);
        assert_eq!(plan.write, [PathBuf::from("/w"), PathBuf::from("/t")]);
        assert_eq!(plan.read_only, [PathBuf::from("/w/.git/config")]);
        for hidden in [
            "/w/.env",
            "/home/u/.ssh",
            "/home/u/.local/share/agent-runtime",
        ] {
            assert!(plan.hidden.contains(&PathBuf::from(hidden)), "{hidden}");
        }
        assert!(plan.caches.contains(&PathBuf::from("/home/u/.cargo")));
        assert_eq!(plan.tmp, Some(PathBuf::from("/t")));
        assert!(plan.namespaces);
        assert_eq!(Plan::from_json(&plan.to_json()).unwrap(), plan);
        assert!(Plan::from_json("{").unwrap_err().contains("malformed"));
    }

    #[test]
    fn a_granted_tree_is_never_a_private_cache_layer() {
        let grant = SandboxGrant {
            write_paths: vec!["/home/u/.cargo/registry/src/x".into(), "/home/u".into()],
            ..SandboxGrant::default()
        };
        let plan = Plan::from_grant(&grant, &machine(), false);
        assert!(plan.caches.is_empty(), "{:?}", plan.caches);
    }

    #[test]
    fn a_call_without_a_grant_writes_the_workspace_but_its_git_dir() {
        let mut request =
            crate::testing::request("RunCommand", Path::new("/w"), serde_json::json!({}));
        request.workspace_root = Some("/w".into());
        let plan = Plan::for_request(&request, &Machine::default(), false);
        assert_eq!(plan.write[0], PathBuf::from("/w"));
        assert_eq!(plan.read_only, [PathBuf::from("/w/.git")]);
        assert!(!plan.network);
    }
}
