//! What the launcher (or the Seatbelt profile) enforces for one process: the host's grant
//! (`ToolRequest.sandbox`) completed with what programs need to run.

use std::path::{Path, PathBuf};

use agent_protocol::ToolRequest;
use agent_protocol::sandbox::SandboxGrant;
use serde::{Deserialize, Serialize};

/// Folders every program may read (and run from) when reads are confined.
pub const SYSTEM_READ: &[&str] = &[
    "/usr",
    "/bin",
    "/sbin",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/etc",
    "/opt",
    "/dev",
    "/proc",
    "/sys",
    "/run",
    "/nix/store",
    "/System",
    "/Library",
    "/private/etc",
    "/private/var/db",
    "/Applications",
];

/// Device files every program may write.
pub const DEVICES: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/tty",
    "/dev/random",
    "/dev/urandom",
    "/dev/ptmx",
    "/dev/pts",
    "/dev/dtracehelper",
];

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Plan {
    /// Writable (and readable) trees.
    pub write: Vec<PathBuf>,
    /// Readable trees; `None`: reads are not confined.
    pub read: Option<Vec<PathBuf>>,
    /// Trees inside `write` kept read-only.
    pub read_only: Vec<PathBuf>,
    pub network: bool,
    /// With `network`: the loopback port of the egress proxy, the only TCP destination
    /// ([`super::egress`]); `None`: the network is not confined further.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proxy_port: Option<u16>,
    /// AGENT_RUNTIME_SANDBOX=required: a part that cannot be applied stops the launch.
    pub required: bool,
}

impl Plan {
    /// The request's grant, or — a process-starting call the host sent none for — the
    /// workspace root writable but its `.git`, reads unconfined, no network.
    pub fn for_request(request: &ToolRequest, tmp: Option<&Path>, required: bool) -> Self {
        let fallback = || SandboxGrant {
            write_paths: request.workspace_root.iter().cloned().collect(),
            read_paths: None,
            blocked_paths: request
                .workspace_root
                .iter()
                .map(|root| Path::new(root).join(".git").display().to_string())
                .collect(),
            network: false,
        };
        let grant = request.sandbox.clone().unwrap_or_else(fallback);
        Self::from_grant(&grant, tmp, &path_dirs(), required)
    }

    pub fn from_grant(
        grant: &SandboxGrant,
        tmp: Option<&Path>,
        path_dirs: &[PathBuf],
        required: bool,
    ) -> Self {
        let absolute = |paths: &[String]| -> Vec<PathBuf> {
            paths
                .iter()
                .map(PathBuf::from)
                .filter(|path| path.is_absolute())
                .collect()
        };
        let mut write = absolute(&grant.write_paths);
        write.extend(tmp.map(Path::to_path_buf));
        write.extend(DEVICES.iter().map(PathBuf::from));
        let read = grant.read_paths.as_ref().map(|paths| {
            let mut read = absolute(paths);
            read.extend(SYSTEM_READ.iter().map(PathBuf::from));
            // Programs are found on PATH and read their own installation (a toolchain
            // under the home folder, say).
            read.extend(path_dirs.iter().cloned());
            read.sort();
            read.dedup();
            read
        });
        let read_only = absolute(&grant.blocked_paths)
            .into_iter()
            .filter(|blocked| write.iter().any(|root| blocked.starts_with(root)))
            .collect();
        Self {
            write,
            read,
            read_only,
            network: grant.network,
            proxy_port: None,
            required,
        }
    }

    /// The plan travels to the launcher as an argument; there is no launcher on Windows.
    #[cfg_attr(not(unix), allow(dead_code))]
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    #[cfg_attr(not(unix), allow(dead_code))]
    pub fn from_json(text: &str) -> Result<Self, String> {
        serde_json::from_str(text)
            .map_err(|error| format!("the sandbox plan is malformed: {error}"))
    }
}

/// The absolute folders on `PATH`.
fn path_dirs() -> Vec<PathBuf> {
    std::env::var_os("PATH")
        .map(|path| {
            std::env::split_paths(&path)
                .filter(|dir| dir.is_absolute())
                .collect()
        })
        .unwrap_or_default()
}

// The plan is the Unix launcher's; its paths are POSIX ones.
#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn blocked_paths_outside_the_writable_trees_need_no_protection() {
        let grant = SandboxGrant {
            write_paths: vec!["/w".into(), "relative".into()],
            read_paths: Some(vec!["/r".into()]),
            blocked_paths: vec!["/w/.git".into(), "/elsewhere".into()],
            network: false,
        };
        let plan = Plan::from_grant(&grant, Some(Path::new("/t")), &[PathBuf::from("/p")], true);
        assert_eq!(plan.write[..2], [PathBuf::from("/w"), PathBuf::from("/t")]);
        assert!(plan.write.contains(&PathBuf::from("/dev/null")));
        assert_eq!(plan.read_only, [PathBuf::from("/w/.git")]);
        let read = plan.read.clone().unwrap();
        for dir in ["/r", "/usr", "/p"] {
            assert!(read.contains(&PathBuf::from(dir)), "{dir}");
        }
        assert!(!read.contains(&PathBuf::from("relative")));
        assert_eq!(Plan::from_json(&plan.to_json()).unwrap(), plan);
        assert!(Plan::from_json("{").unwrap_err().contains("malformed"));
    }

    #[test]
    fn a_call_without_a_grant_writes_the_workspace_but_its_git_dir() {
        let mut request =
            crate::testing::request("RunCommand", Path::new("/w"), serde_json::json!({}));
        request.workspace_root = Some("/w".into());
        let plan = Plan::for_request(&request, None, false);
        assert_eq!(plan.write[0], PathBuf::from("/w"));
        assert_eq!(plan.read_only, [PathBuf::from("/w/.git")]);
        assert_eq!(plan.read, None);
        assert!(!plan.network);
    }
}
