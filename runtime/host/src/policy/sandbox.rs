//! What a process started for a tool call may reach, read from the
//! bundle and handed to the tool runtime as `ToolRequest.sandbox`, so the tool runtime still
//! never reads the bundle. The OS enforces it (Landlock + seccomp, Seatbelt); this is only
//! the description.
//!
//! - writes: the capability's `allowedPaths` (the folders a command or a git call may work
//!   in), else the project folder;
//! - read-only inside those: the blocked paths of the capability and of `File.Write`, and
//!   every write root's `.git` except for the git tools that write it (GitCommit, GitPush);
//! - reads: unconfined when `File.Read` is granted without `allowedPaths`; else its
//!   `allowedPaths` (none when not granted) plus the write roots;
//! - network: `Network.Http` granted and not switched off by `taskOptions.allowNetwork`;
//!   for GitPush, a remote allowlist (the Git.Push entry's `allowedDomains`) instead of
//!   `Network.Http`, reached through the egress proxy like any command's network (so over
//!   HTTP(S): the tool runtime refuses an ssh remote while it confines processes). A push to a folder
//!   on this machine reaches it only when it lies in the write paths (the entry's
//!   `allowedPaths`), as the tool runtime checks first.

use std::path::PathBuf;

use agent_protocol::methods::TaskOptions;
use agent_protocol::sandbox::SandboxGrant;

use super::PolicyEnforcer;
use super::paths::resolve;

/// Capabilities whose tools start processes.
fn starts_processes(capability: &str) -> bool {
    capability == "Shell.Exec" || capability.starts_with("Git.")
}

/// Tools of these capabilities write the repository's own files.
fn writes_git_dir(capability: &str) -> bool {
    matches!(capability, "Git.Commit" | "Git.Push")
}

/// Whether a push may reach servers: the Git.Push entry lists some (its remote allowlist).
fn push_reaches_servers(entry: Option<&agent_protocol::policy::CapabilityEntry>) -> bool {
    entry
        .and_then(|entry| entry.allowed_domains.as_ref())
        .is_some_and(|allowed| !allowed.is_empty())
}

impl PolicyEnforcer {
    /// The grant for one call of a tool of `capability`; `None` for tools that start no
    /// process.
    pub fn sandbox_grant(&self, capability: &str, options: &TaskOptions) -> Option<SandboxGrant> {
        if !starts_processes(capability) {
            return None;
        }
        let entry = self.capability(capability);
        // A relative entry names a place in the project folder; without one it names
        // nothing (as in `paths::matches`).
        let absolute = |raw: &String| self.absolute(raw).map(|path| resolve(&path));
        let write: Vec<PathBuf> = match entry.and_then(|entry| entry.allowed_paths.as_ref()) {
            Some(allowed) => allowed.iter().filter_map(absolute).collect(),
            None => self
                .workspace_root
                .iter()
                .map(|root| resolve(root))
                .collect(),
        };
        // File.Write's blocked paths usually name `.git/` itself, which a commit writes.
        let file_write = if writes_git_dir(capability) {
            None
        } else {
            self.capability("File.Write")
        };
        let mut blocked: Vec<PathBuf> = [entry, file_write]
            .into_iter()
            .flatten()
            .filter_map(|entry| entry.blocked_paths.as_ref())
            .flatten()
            .filter_map(absolute)
            .collect();
        if !writes_git_dir(capability) {
            blocked.extend(write.iter().map(|root| root.join(".git")));
        }
        let pushes_to_servers = capability == "Git.Push" && push_reaches_servers(entry);
        let read = match self.capability("File.Read") {
            Some(entry) => entry.allowed_paths.as_ref().map(|allowed| {
                allowed
                    .iter()
                    .filter_map(absolute)
                    .chain(write.iter().cloned())
                    .collect::<Vec<_>>()
            }),
            None => Some(write.clone()),
        };
        let network = if capability == "Git.Push" {
            pushes_to_servers
        } else {
            self.grants("Network.Http")
        } && options.allow_network != Some(false);
        let text = |paths: Vec<PathBuf>| -> Vec<String> {
            let mut paths: Vec<String> = paths
                .into_iter()
                .map(|path| path.display().to_string())
                .collect();
            paths.sort();
            paths.dedup();
            paths
        };
        Some(SandboxGrant {
            write_paths: text(write),
            read_paths: read.map(text),
            blocked_paths: text(blocked),
            network,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_protocol::policy::PolicyBundle;
    use serde_json::{Value, json};
    use std::path::Path;

    fn enforcer(root: &Path, capabilities: Value) -> PolicyEnforcer {
        let bundle: PolicyBundle = serde_json::from_value(json!({
            "policyBundleVersion": "1",
            "schemaVersion": "1.0",
            "sessionId": "s",
            "expiresAt": "2999-01-01T00:00:00Z",
            "capabilities": capabilities,
            "llmPolicy": {"allowedModels": ["m"]},
            "approvalRules": []
        }))
        .unwrap();
        PolicyEnforcer::new(bundle, Some(root.to_path_buf()))
    }

    fn root() -> PathBuf {
        resolve(&std::env::temp_dir()).join("sandbox-grant-proj")
    }

    #[test]
    fn a_command_writes_the_project_but_not_its_git_dir_and_has_no_network_unless_granted() {
        let root = root();
        let policy = enforcer(
            &root,
            json!([{"name": "Shell.Exec", "allowedCommands": ["echo"]}]),
        );
        let grant = policy
            .sandbox_grant("Shell.Exec", &TaskOptions::default())
            .unwrap();
        let here = root.display().to_string();
        assert_eq!(grant.write_paths, std::slice::from_ref(&here));
        let git = root.join(".git").display().to_string();
        assert_eq!(grant.blocked_paths, [git]);
        assert_eq!(grant.read_paths, Some(vec![here]));
        assert!(!grant.network);
        assert_eq!(
            policy.sandbox_grant("File.Read", &TaskOptions::default()),
            None
        );
    }

    #[test]
    fn git_writers_get_the_git_dir_and_network_follows_the_bundle_and_the_task() {
        let root = root();
        let policy = enforcer(
            &root,
            json!([
                {"name": "Shell.Exec", "allowedPaths": ["sub"], "blockedPaths": ["sub/secret"]},
                {"name": "File.Read"},
                {"name": "File.Write", "blockedPaths": ["/etc", ".git/"]},
                {"name": "Network.Http", "allowedDomains": ["example.com"]},
                {"name": "Git.Commit"}
            ]),
        );
        let open = TaskOptions::default();
        let shell = policy.sandbox_grant("Shell.Exec", &open).unwrap();
        let sub = root.join("sub").display().to_string();
        assert_eq!(shell.write_paths, std::slice::from_ref(&sub));
        let git = root.join(".git").display().to_string();
        // An absolute entry as the enforcer judges it (on Windows `/etc` is on the project's
        // drive).
        let etc = policy.judged_path("/etc").unwrap().display().to_string();
        let below_sub = |name: &str| root.join("sub").join(name).display().to_string();
        assert_eq!(
            shell.blocked_paths,
            [etc, git, below_sub(".git"), below_sub("secret")]
        );
        assert_eq!(
            shell.read_paths, None,
            "File.Read without paths reads anywhere"
        );
        assert!(shell.network);
        let offline = TaskOptions {
            allow_network: Some(false),
            ..TaskOptions::default()
        };
        assert!(
            !policy
                .sandbox_grant("Shell.Exec", &offline)
                .unwrap()
                .network
        );
        let commit = policy.sandbox_grant("Git.Commit", &offline).unwrap();
        assert!(commit.blocked_paths.is_empty(), "{commit:?}");
        assert!(!commit.network);
    }

    #[test]
    fn a_push_is_confined_and_reaches_servers_only_through_its_remote_allowlist() {
        let root = root();
        let here = root.display().to_string();
        let local = enforcer(
            &root,
            json!([{"name": "Git.Push"}, {"name": "Network.Http"}]),
        );
        let push = local
            .sandbox_grant("Git.Push", &TaskOptions::default())
            .unwrap();
        assert_eq!(push.write_paths, std::slice::from_ref(&here));
        assert!(push.blocked_paths.is_empty(), "a push writes .git");
        assert_eq!(push.read_paths, Some(vec![here.clone()]));
        assert!(!push.network, "Network.Http is not a remote allowlist");
        let servers = enforcer(
            &root,
            json!([{"name": "Git.Push", "allowedPaths": ["."], "allowedDomains": ["github.com"]}]),
        );
        let push = servers
            .sandbox_grant("Git.Push", &TaskOptions::default())
            .unwrap();
        assert!(push.network);
        let reads = push.read_paths.unwrap();
        assert!(
            !reads.iter().any(|path| path.ends_with("/.ssh")),
            "no ssh key is needed through the egress proxy: {reads:?}"
        );
        let offline = TaskOptions {
            allow_network: Some(false),
            ..TaskOptions::default()
        };
        assert!(!servers.sandbox_grant("Git.Push", &offline).unwrap().network);
    }
}
