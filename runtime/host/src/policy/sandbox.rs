//! What a process started for a tool call may reach, read from the
//! bundle and handed to the tool runtime as `ToolRequest.sandbox`, so the tool runtime still
//! never reads the bundle. The OS enforces it (namespaces, Landlock and seccomp; Seatbelt);
//! this is only the description. The model is INTEROP.md §10's:
//!
//! - reads: anywhere, except the hidden paths — the blocked paths of `File.Read` and of the
//!   capability (and the tool runtime adds the credential stores and its own folders);
//!   blocked paths inside a `.git` folder bound the file tools and the paths a command line
//!   names, not git's own reads, so they stay readable (read-only);
//! - writes: the capability's `allowedPaths` (the folders a command or a git call may work
//!   in), else the project folder;
//! - read-only inside those: `File.Write`'s blocked paths, and in every write root's `.git`
//!   the files git would run code from later, outside the sandbox (config, hooks, the
//!   pointer to another repository's config) — objects, refs, the index and logs stay
//!   writable so `git add` and `git commit` work where the policy lets `.git` be written;
//! - network: `Network.Http` granted (for ExecuteCode, `Code.Execute`'s `allowCodeNetwork`)
//!   and not switched off by `taskOptions.allowNetwork`;
//!   for GitPush, a remote allowlist (the Git.Push entry's `allowedDomains`) instead of
//!   `Network.Http`, reached through the egress proxy like any command's network (so over
//!   HTTP(S): the tool runtime refuses an ssh remote while it confines processes). A push to a folder
//!   on this machine reaches it only when it lies in the write paths (the entry's
//!   `allowedPaths`), as the tool runtime checks first.
//!
//! A blocked entry written as a glob (`*.pem`) names no single path the OS could hide; the
//! file tools and the command-line checks still apply it.

use std::path::{Component, Path, PathBuf};

use agent_protocol::methods::TaskOptions;
use agent_protocol::sandbox::SandboxGrant;

use super::PolicyEnforcer;
use super::paths::resolve;

/// Capabilities whose tools start processes.
fn starts_processes(capability: &str) -> bool {
    capability == "Shell.Exec"
        || capability == super::code::CODE_EXECUTE
        || capability.starts_with("Git.")
}

/// Tools of these capabilities write the repository's own files.
fn writes_git_dir(capability: &str) -> bool {
    matches!(capability, "Git.Commit" | "Git.Push")
}

/// The files of a repository's `.git` from which git would run code (or read another
/// repository's config) the next time the user runs it: a command never changes them.
pub(crate) const GIT_CODE_FILES: &[&str] = &[
    "config",
    "config.worktree",
    "hooks",
    "commondir",
    "info/attributes",
];

/// Whether a push may reach servers: the Git.Push entry lists some (its remote allowlist).
fn push_reaches_servers(entry: Option<&agent_protocol::policy::CapabilityEntry>) -> bool {
    entry
        .and_then(|entry| entry.allowed_domains.as_ref())
        .is_some_and(|allowed| !allowed.is_empty())
}

fn is_glob(raw: &str) -> bool {
    raw.contains(['*', '?', '['])
}

fn inside_git_dir(path: &Path) -> bool {
    path.components()
        .any(|component| component == Component::Normal(".git".as_ref()))
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
        let absolute = |raw: &String| {
            (!is_glob(raw))
                .then(|| self.absolute(raw).map(|path| resolve(&path)))
                .flatten()
        };
        let blocked_of = |entry: Option<&agent_protocol::policy::CapabilityEntry>| {
            entry
                .and_then(|entry| entry.blocked_paths.as_ref())
                .into_iter()
                .flatten()
                .filter_map(absolute)
                .collect::<Vec<_>>()
        };
        let write: Vec<PathBuf> = match entry.and_then(|entry| entry.allowed_paths.as_ref()) {
            Some(allowed) => allowed.iter().filter_map(absolute).collect(),
            None => self
                .workspace_root
                .iter()
                .map(|root| resolve(root))
                .collect(),
        };
        let (own_in_git, mut hidden): (Vec<PathBuf>, Vec<PathBuf>) = blocked_of(entry)
            .into_iter()
            .partition(|path| inside_git_dir(path));
        let (read_in_git, read_hidden): (Vec<PathBuf>, Vec<PathBuf>) =
            blocked_of(self.capability("File.Read"))
                .into_iter()
                .partition(|path| inside_git_dir(path));
        hidden.extend(read_hidden);
        let mut read_only = own_in_git;
        // File.Write's blocked paths usually name `.git/` itself, which a commit granted
        // its own Git.* entry writes; a commit judged as File.Write (a bundle without
        // Git.*, INTEROP.md §10) obeys them like any write. File.Read's `.git` entries
        // bound the file tools, not git.
        if !writes_git_dir(capability) || entry.is_none() {
            read_only.extend(blocked_of(self.capability("File.Write")));
        }
        if !writes_git_dir(capability) {
            read_only.extend(read_in_git);
            read_only.extend(write.iter().flat_map(|root| {
                GIT_CODE_FILES
                    .iter()
                    .map(move |file| root.join(".git").join(file))
            }));
        }
        let pushes_to_servers = capability == "Git.Push" && push_reaches_servers(entry);
        let network = if capability == "Git.Push" {
            pushes_to_servers
        } else if capability == super::code::CODE_EXECUTE {
            // ExecuteCode's own switch, whatever Network.Http says (INTEROP.md §11).
            super::code::allows_network(entry)
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
            blocked_paths: text(read_only),
            hidden_paths: text(hidden),
            network,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::enforcer;
    use serde_json::json;

    fn root() -> PathBuf {
        resolve(&std::env::temp_dir()).join("sandbox-grant-proj")
    }

    fn git_code_files(root: &Path) -> Vec<String> {
        GIT_CODE_FILES
            .iter()
            .map(|file| root.join(".git").join(file).display().to_string())
            .collect()
    }

    #[test]
    fn a_command_writes_the_project_but_not_the_git_files_that_run_code() {
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
        let mut expected = git_code_files(&root);
        expected.sort();
        assert_eq!(grant.blocked_paths, expected);
        assert!(grant.hidden_paths.is_empty());
        assert!(!grant.network);
        assert_eq!(
            policy.sandbox_grant("File.Read", &TaskOptions::default()),
            None
        );
    }

    /// ExecuteCode's process reaches the network only under `allowCodeNetwork`, whatever
    /// Network.Http says, and writes where a command would (INTEROP.md §11).
    #[test]
    fn code_gets_the_network_only_when_allow_code_network_is_true() {
        let root = root();
        let grant = |code: serde_json::Value, options: &TaskOptions| {
            enforcer(&root, json!([{"name": "Network.Http"}, code]))
                .sandbox_grant("Code.Execute", options)
                .unwrap()
        };
        let default = TaskOptions::default();
        let closed = grant(
            json!({"name": "Code.Execute", "allowedLanguages": ["python"], "allowCodeNetwork": false}),
            &default,
        );
        assert!(!closed.network);
        assert_eq!(closed.write_paths, [root.display().to_string()]);
        assert!(
            !grant(
                json!({"name": "Code.Execute", "allowCodeNetwork": null}),
                &default
            )
            .network
        );
        assert!(
            grant(
                json!({"name": "Code.Execute", "allowCodeNetwork": true}),
                &default
            )
            .network
        );
        let offline = TaskOptions {
            allow_network: Some(false),
            ..TaskOptions::default()
        };
        assert!(
            !grant(
                json!({"name": "Code.Execute", "allowCodeNetwork": true}),
                &offline
            )
            .network
        );
    }

    /// The real services' default (INTEROP.md §5, §10): `.env` is hidden, `.git/config`
    /// stays readable for git, `.git/` is read-only by File.Write's choice.
    #[test]
    fn the_real_default_hides_read_blocked_paths_but_not_git_s_own_files() {
        let root = root();
        let policy = enforcer(
            &root,
            json!([
                {"name": "File.Read", "allowedPaths": ["."], "blockedPaths": [".env", ".git/config", "*.pem"]},
                {"name": "File.Write", "allowedPaths": ["."], "blockedPaths": [".git/"]},
                {"name": "Shell.Exec", "allowedCommands": ["git"], "blockedPaths": ["secrets/"]}
            ]),
        );
        let grant = policy
            .sandbox_grant("Shell.Exec", &TaskOptions::default())
            .unwrap();
        let under = |name: &str| root.join(name).display().to_string();
        assert_eq!(grant.hidden_paths, [under(".env"), under("secrets")]);
        assert!(grant.blocked_paths.contains(&under(".git/config")));
        assert!(grant.blocked_paths.contains(&under(".git")));
        assert!(
            !grant.hidden_paths.iter().any(|path| path.contains(".git")),
            "{grant:?}"
        );
        // A glob names no single path to hide.
        assert!(!format!("{grant:?}").contains("pem"), "{grant:?}");
    }

    #[test]
    fn git_writers_get_the_git_dir_and_network_follows_the_bundle_and_the_task() {
        let root = root();
        let policy = enforcer(
            &root,
            json!([
                {"name": "Shell.Exec", "allowedPaths": ["sub"], "blockedPaths": ["sub/secret"]},
                {"name": "File.Read", "blockedPaths": [".git/"]},
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
        assert!(shell.blocked_paths.contains(&etc));
        assert!(shell.blocked_paths.contains(&git));
        assert!(shell.blocked_paths.contains(&below_sub(".git/hooks")));
        assert_eq!(shell.hidden_paths, [below_sub("secret")]);
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
        assert!(commit.hidden_paths.is_empty(), "{commit:?}");
        assert!(!commit.network);
    }

    /// INTEROP.md §10: without any Git.* entry GitCommit is judged as File.Write, so the
    /// real default's `.git/` block leaves no commit possible, by the policy's choice.
    #[test]
    fn a_commit_judged_as_file_write_obeys_its_blocked_paths() {
        let root = root();
        let git = root.join(".git").display().to_string();
        let default = enforcer(
            &root,
            json!([{"name": "File.Write", "allowedPaths": ["."], "blockedPaths": [".git/"]}]),
        );
        let commit = default
            .sandbox_grant("Git.Commit", &TaskOptions::default())
            .unwrap();
        assert!(commit.blocked_paths.contains(&git), "{commit:?}");
        let open = enforcer(
            &root,
            json!([{"name": "File.Write", "allowedPaths": ["."]}]),
        );
        let commit = open
            .sandbox_grant("Git.Commit", &TaskOptions::default())
            .unwrap();
        assert!(commit.blocked_paths.is_empty(), "{commit:?}");
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
        assert!(!push.network, "Network.Http is not a remote allowlist");
        let servers = enforcer(
            &root,
            json!([{"name": "Git.Push", "allowedPaths": ["."], "allowedDomains": ["github.com"]}]),
        );
        let push = servers
            .sandbox_grant("Git.Push", &TaskOptions::default())
            .unwrap();
        assert!(push.network);
        let offline = TaskOptions {
            allow_network: Some(false),
            ..TaskOptions::default()
        };
        assert!(!servers.sandbox_grant("Git.Push", &offline).unwrap().network);
    }
}
