//! The Local Policy Enforcer (local-agent-host.md §8): decides, from the policy bundle
//! alone, whether an LLM call or a tool call may proceed.
//!
//! Pure apart from one thing: path resolution asks the file system where symlinks point
//! (`canonicalize` of the deepest existing ancestor), because a policy that compares
//! unresolved paths is bypassed by any symlink.
//!
//! Scope checks (§8.2), decided here:
//! - `File.*`: every path-like argument present as a string — `path`, `source`,
//!   `destination`, `cwd` — must pass `allowedPaths`/`blockedPaths` (and the size limit); a
//!   missing or non-string one is left to the tool's own validation.
//! - `Shell.Exec`: `command` is judged by [`command`] (every program the line can start); a
//!   missing or non-string `command` is denied ("RunCommand needs a command string"), since
//!   nothing proves it harmless. When the entry sets `allowedPaths` or `blockedPaths`, the
//!   working directory (`cwd`, or the workspace root when absent) must pass them too.
//! - `Git.*`: when the entry sets `allowedPaths` or `blockedPaths`, the repository folder
//!   (`path`, or the workspace root) and each of a commit's `files` must pass them.
//! - `Network.Http`: the host of `url` is judged by [`domain`]; a missing or non-string `url`
//!   is denied ("HttpRequest needs a url string").
//!
//! Risk (§8.5), for the approval request: `Shell.Exec` is high unless `allowedCommands` is
//! set (a command that passed it is known), else medium; `Network.Http` is high unless
//! `allowedDomains` is set, else medium; `File.Write` is high when a path lies outside the
//! workspace root (or no root is known); the rest keep [`default_risk`].

pub mod command;
pub mod domain;
mod extensions;
pub mod path_match;
pub mod task_options;

use std::collections::HashMap;
use std::path::{Component, Path, PathBuf};

use agent_protocol::approval::RiskLevel;
use agent_protocol::policy::{ApprovalRule, CapabilityEntry, PolicyBundle};
use serde_json::{Map, Value};
use time::OffsetDateTime;

use crate::time::parse_rfc3339;

#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    Allowed,
    Denied(String),
    ApprovalRequired {
        rule_id: Option<String>,
        risk: RiskLevel,
    },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LlmDenial {
    NotGranted,
    Expired,
}

pub struct PolicyEnforcer {
    bundle: PolicyBundle,
    capabilities: HashMap<String, CapabilityEntry>,
    rules: HashMap<String, ApprovalRule>,
    expires_at: Option<OffsetDateTime>,
    workspace_root: Option<PathBuf>,
}

impl PolicyEnforcer {
    pub fn new(bundle: PolicyBundle, workspace_root: Option<PathBuf>) -> Self {
        let capabilities = bundle
            .capabilities
            .iter()
            .map(|entry| (entry.name.clone(), entry.clone()))
            .collect();
        let rules = bundle
            .approval_rules
            .iter()
            .map(|rule| (rule.approval_rule_id.clone(), rule.clone()))
            .collect();
        let expires_at = parse_rfc3339(&bundle.expires_at);
        Self {
            bundle,
            capabilities,
            rules,
            expires_at,
            workspace_root,
        }
    }

    pub fn bundle(&self) -> &PolicyBundle {
        &self.bundle
    }

    pub fn grants(&self, capability: &str) -> bool {
        self.capabilities.contains_key(capability)
    }

    pub fn capability(&self, capability: &str) -> Option<&CapabilityEntry> {
        self.capabilities.get(capability)
    }

    pub fn approval_rule(&self, rule_id: &str) -> Option<&ApprovalRule> {
        self.rules.get(rule_id)
    }

    pub fn is_expired(&self) -> bool {
        self.expires_at
            .is_none_or(|expires_at| expires_at <= OffsetDateTime::now_utc())
    }

    /// §8.7: before every LLM request.
    pub fn check_llm_call(&self) -> Result<(), LlmDenial> {
        if self.is_expired() {
            return Err(LlmDenial::Expired);
        }
        if !self.grants("LLM.Call") {
            return Err(LlmDenial::NotGranted);
        }
        Ok(())
    }

    /// §8.2: before every tool execution.
    pub fn check_tool(&self, capability: &str, arguments: &Map<String, Value>) -> Verdict {
        let Some(entry) = self.capabilities.get(capability) else {
            return Verdict::Denied(format!("Capability not granted: {capability}"));
        };
        match self.check_scope(capability, entry, arguments) {
            Err(reason) => Verdict::Denied(reason),
            Ok(risk) if entry.requires_approval => Verdict::ApprovalRequired {
                rule_id: entry.approval_rule_id.clone(),
                risk,
            },
            Ok(_) => Verdict::Allowed,
        }
    }

    /// The scope constraints of `entry`; on success, the risk of the call (§8.5).
    fn check_scope(
        &self,
        capability: &str,
        entry: &CapabilityEntry,
        arguments: &Map<String, Value>,
    ) -> Result<RiskLevel, String> {
        let text = |key: &str| arguments.get(key).and_then(Value::as_str);
        match capability {
            "Shell.Exec" => {
                let line = text("command").ok_or("RunCommand needs a command string")?;
                command::check(
                    line,
                    entry.allowed_commands.as_deref(),
                    entry.blocked_commands.as_deref(),
                )
                .map_err(|denial| denial.to_string())?;
                if entry.allowed_paths.is_some() || entry.blocked_paths.is_some() {
                    self.check_path(entry, text("cwd").unwrap_or("."), false)?;
                }
                Ok(elevated(entry.allowed_commands.is_none()))
            }
            "Network.Http" => {
                let url = text("url").ok_or("HttpRequest needs a url string")?;
                domain::check(
                    url,
                    entry.allowed_domains.as_deref(),
                    entry.blocked_domains.as_deref(),
                )
                .map_err(|denial| denial.to_string())?;
                Ok(elevated(entry.allowed_domains.is_none()))
            }
            git if git.starts_with("Git.") => {
                // The repository folder (`path`, else the workspace root) and every file a
                // commit stages (`files`, relative to that folder) obey the entry's paths.
                if entry.allowed_paths.is_some() || entry.blocked_paths.is_some() {
                    let repo = text("path").unwrap_or(".");
                    self.check_path(entry, repo, false)?;
                    let files = arguments.get("files").and_then(Value::as_array);
                    for file in files.into_iter().flatten().filter_map(Value::as_str) {
                        let joined = Path::new(repo).join(file);
                        self.check_path(entry, &joined.to_string_lossy(), false)?;
                    }
                }
                Ok(default_risk(git))
            }
            file if file.starts_with("File.") => {
                let mut outside = false;
                for raw in PATH_ARGUMENTS.iter().filter_map(|key| text(key)) {
                    let path = self.check_path(entry, raw, true)?;
                    outside |= !self.inside_workspace(&path);
                }
                Ok(match file {
                    "File.Write" if outside => RiskLevel::High,
                    _ => default_risk(file),
                })
            }
            _ => Ok(default_risk(capability)),
        }
    }

    /// One path against the entry's prefixes (and size limit); the resolved path on success.
    fn check_path(
        &self,
        entry: &CapabilityEntry,
        raw: &str,
        size_limit: bool,
    ) -> Result<PathBuf, String> {
        if raw.contains('\0') {
            return Err("Path contains a NUL byte".to_owned());
        }
        let path = resolve(&self.absolute(Path::new(raw)));
        if let Some(blocked) = &entry.blocked_paths
            && blocked.iter().any(|prefix| self.matches(&path, prefix))
        {
            return Err(format!("Path is blocked: {}", path.display()));
        }
        if let Some(allowed) = &entry.allowed_paths
            && !allowed.iter().any(|prefix| self.matches(&path, prefix))
        {
            return Err(format!("Path not in allowed paths: {}", path.display()));
        }
        if size_limit
            && let Some(limit) = entry.max_file_size_bytes
            && let Ok(metadata) = std::fs::metadata(&path)
            && metadata.len() > limit
        {
            return Err(format!(
                "File exceeds size limit: {} is {} bytes, the limit is {limit} bytes",
                path.display(),
                metadata.len()
            ));
        }
        Ok(path)
    }

    fn inside_workspace(&self, path: &Path) -> bool {
        self.workspace_root.as_deref().is_some_and(|root| {
            path_match::starts_with(path, &resolve(root), path_match::FOLDS_CASE)
        })
    }

    fn absolute(&self, path: &Path) -> PathBuf {
        // The tool runtime expands `~` before it touches a file (local-tool-runtime.md §6.1),
        // so the enforcer must judge the same file: `~/.ssh/id_rsa` is in the home folder,
        // not a folder named `~` in the workspace.
        if let Some(expanded) = expand_home(path, home_dir().as_deref()) {
            return expanded;
        }
        if path.is_absolute() {
            return path.to_path_buf();
        }
        match &self.workspace_root {
            Some(root) => root.join(path),
            None => path.to_path_buf(),
        }
    }

    /// Prefix match on whole path components: `/proj` admits `/proj/a`, never `/proj2`.
    fn matches(&self, path: &Path, prefix: &str) -> bool {
        // A relative entry names a place in the project folder (INTEROP.md §5); a session
        // without one (a general chat) has no such place. Resolved anyway, "." would become
        // the empty path, a prefix of every path.
        if Path::new(prefix).is_relative() && self.workspace_root.is_none() {
            return false;
        }
        let prefix = resolve(&self.absolute(Path::new(prefix)));
        path_match::starts_with(path, &prefix, path_match::FOLDS_CASE)
    }
}

/// The user's home folder, where `~` points (`HOME`; `USERPROFILE` on Windows).
fn home_dir() -> Option<PathBuf> {
    std::env::var_os(if cfg!(windows) { "USERPROFILE" } else { "HOME" })
        .filter(|home| !home.is_empty())
        .map(PathBuf::from)
}

/// `~` or `~/…` (also `~\…` on Windows) with `~` replaced by `home`; `None` for any other
/// path (`~user/…` is an ordinary relative name, as in the tool runtime).
fn expand_home(path: &Path, home: Option<&Path>) -> Option<PathBuf> {
    let text = path.to_str()?;
    let rest = text.strip_prefix('~')?;
    let is_separator = |c: char| c == '/' || (cfg!(windows) && c == '\\');
    if !(rest.is_empty() || rest.starts_with(is_separator)) {
        return None;
    }
    let mut expanded = home?.to_path_buf();
    for part in rest.split(is_separator).filter(|part| !part.is_empty()) {
        expanded.push(part);
    }
    Some(expanded)
}

/// The arguments of file tools that name a path (the tools define `path`; the rest are
/// judged whenever a tool sends them).
const PATH_ARGUMENTS: &[&str] = &["path", "source", "destination", "cwd"];

fn elevated(high: bool) -> RiskLevel {
    if high {
        RiskLevel::High
    } else {
        RiskLevel::Medium
    }
}

/// §8.5 default risk per capability, before the elevations of `check_tool`.
pub fn default_risk(capability: &str) -> RiskLevel {
    match capability {
        "File.Read" | "Workspace.Upload" | "Git.Status" | "Git.Diff" => RiskLevel::Low,
        "File.Delete" | "Git.Push" => RiskLevel::High,
        _ => RiskLevel::Medium,
    }
}

/// Normalises `.` and `..` lexically, then resolves symlinks of the deepest ancestor that
/// exists, so a file that does not exist yet is judged by where it would really land.
pub fn resolve(path: &Path) -> PathBuf {
    let mut normal = PathBuf::new();
    for component in path.components() {
        match component {
            Component::ParentDir => {
                normal.pop();
            }
            Component::CurDir => {}
            other => normal.push(other.as_os_str()),
        }
    }
    let mut existing = normal.as_path();
    let mut rest = Vec::new();
    loop {
        if let Ok(real) = existing.canonicalize() {
            let mut out = real;
            for part in rest.iter().rev() {
                out.push(part);
            }
            return out;
        }
        match (existing.parent(), existing.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name.to_owned());
                existing = parent;
            }
            _ => return normal,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_leading_tilde_is_the_home_folder_and_nothing_else_is() {
        let home = Path::new("/home/ada");
        let expand = |raw: &str| expand_home(Path::new(raw), Some(home));
        assert_eq!(expand("~"), Some(PathBuf::from("/home/ada")));
        assert_eq!(
            expand("~/.ssh/id_rsa"),
            Some(PathBuf::from("/home/ada/.ssh/id_rsa"))
        );
        assert_eq!(expand("~other/x"), None);
        assert_eq!(expand("a/~/x"), None);
        assert_eq!(expand("/abs"), None);
        assert_eq!(expand_home(Path::new("~/x"), None), None);
    }
    use serde_json::json;

    fn enforcer(root: &Path, capabilities: Value) -> PolicyEnforcer {
        let bundle: PolicyBundle = serde_json::from_value(json!({
            "policyBundleVersion": "v", "schemaVersion": "1.0", "sessionId": "s",
            "expiresAt": "2999-01-01T00:00:00Z", "capabilities": capabilities,
            "llmPolicy": {"allowedModels": ["m"]}
        }))
        .unwrap();
        PolicyEnforcer::new(bundle, Some(root.to_path_buf()))
    }

    fn args(path: &str) -> Map<String, Value> {
        json!({ "path": path }).as_object().unwrap().clone()
    }

    #[test]
    fn relative_entries_resolve_against_the_workspace_and_blocked_wins() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "x").unwrap();
        std::fs::write(dir.path().join(".env"), "x").unwrap();
        let policy = enforcer(
            dir.path(),
            json!([{"name": "File.Read", "allowedPaths": ["."], "blockedPaths": [".env"]}]),
        );
        assert_eq!(
            policy.check_tool("File.Read", &args("a.txt")),
            Verdict::Allowed
        );
        assert!(
            matches!(policy.check_tool("File.Read", &args(".env")), Verdict::Denied(r) if r.contains("blocked"))
        );
        assert!(
            matches!(policy.check_tool("File.Read", &args("../outside")), Verdict::Denied(r) if r.contains("not in allowed"))
        );
        assert!(
            matches!(policy.check_tool("File.Write", &args("a.txt")), Verdict::Denied(r) if r.contains("not granted"))
        );
    }

    #[test]
    fn without_a_workspace_relative_entries_admit_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a.txt");
        std::fs::write(&file, "x").unwrap();
        let bundle: PolicyBundle = serde_json::from_value(json!({
            "policyBundleVersion": "v", "schemaVersion": "1.0", "sessionId": "s",
            "expiresAt": "2999-01-01T00:00:00Z",
            "capabilities": [{"name": "File.Read", "allowedPaths": ["."]}],
            "llmPolicy": {"allowedModels": ["m"]}
        }))
        .unwrap();
        let policy = PolicyEnforcer::new(bundle, None);
        let absolute = file.display().to_string();
        assert!(matches!(
            policy.check_tool("File.Read", &args(&absolute)),
            Verdict::Denied(_)
        ));
        assert!(matches!(
            policy.check_tool("File.Read", &args("/etc/hostname")),
            Verdict::Denied(_)
        ));
    }

    #[test]
    fn prefixes_match_whole_components_only() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("proj")).unwrap();
        std::fs::create_dir(dir.path().join("proj2")).unwrap();
        let policy = enforcer(
            dir.path(),
            json!([{"name": "File.Read", "allowedPaths": ["proj"]}]),
        );
        assert_eq!(
            policy.check_tool("File.Read", &args("proj/x")),
            Verdict::Allowed
        );
        assert!(matches!(
            policy.check_tool("File.Read", &args("proj2/x")),
            Verdict::Denied(_)
        ));
    }

    fn object(value: Value) -> Map<String, Value> {
        value.as_object().unwrap().clone()
    }

    fn denied(verdict: Verdict) -> String {
        match verdict {
            Verdict::Denied(reason) => reason,
            other => panic!("expected a denial, got {other:?}"),
        }
    }

    fn risk(verdict: Verdict) -> RiskLevel {
        match verdict {
            Verdict::ApprovalRequired { risk, .. } => risk,
            other => panic!("expected an approval, got {other:?}"),
        }
    }

    #[test]
    fn shell_commands_are_judged_whole() {
        let dir = tempfile::tempdir().unwrap();
        let policy = enforcer(
            dir.path(),
            json!([{"name": "Shell.Exec", "allowedCommands": ["ls", "cargo"],
                    "blockedCommands": ["rm -rf /", "sudo"]}]),
        );
        let run =
            |command: Value| policy.check_tool("Shell.Exec", &object(json!({"command": command})));
        assert_eq!(run(json!("ls -la | cargo fmt")), Verdict::Allowed);
        assert_eq!(
            denied(run(json!("ls; rm -rf /"))),
            "Command is blocked: rm -rf /"
        );
        assert_eq!(
            denied(run(json!("ls && curl x"))),
            "Command not in allowed commands: curl"
        );
        assert_eq!(
            denied(run(json!("$CMD"))),
            "Cannot tell which command runs: $CMD"
        );
        assert_eq!(
            denied(run(json!(["ls"]))),
            "RunCommand needs a command string"
        );
        assert_eq!(
            denied(policy.check_tool("Shell.Exec", &Map::new())),
            "RunCommand needs a command string"
        );
    }

    #[test]
    fn shell_risk_is_high_unless_commands_are_allowlisted() {
        let dir = tempfile::tempdir().unwrap();
        let args = object(json!({"command": "cargo test"}));
        let listed = enforcer(
            dir.path(),
            json!([{"name": "Shell.Exec", "allowedCommands": ["cargo"], "requiresApproval": true,
                    "approvalRuleId": "r"}]),
        );
        assert_eq!(
            risk(listed.check_tool("Shell.Exec", &args)),
            RiskLevel::Medium
        );
        let open = enforcer(
            dir.path(),
            json!([{"name": "Shell.Exec", "blockedCommands": ["sudo"], "requiresApproval": true}]),
        );
        assert_eq!(risk(open.check_tool("Shell.Exec", &args)), RiskLevel::High);
    }

    #[test]
    fn git_repository_folders_and_staged_files_obey_the_paths_when_set() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("repo")).unwrap();
        let scoped = enforcer(
            dir.path(),
            json!([{"name": "Git.Commit", "allowedPaths": ["repo"], "blockedPaths": ["repo/.env"]},
                   {"name": "Git.Status", "allowedPaths": ["."]}]),
        );
        let commit = |args: Value| scoped.check_tool("Git.Commit", &object(args));
        assert_eq!(
            commit(json!({"message": "m", "path": "repo", "files": ["a.txt"]})),
            Verdict::Allowed
        );
        assert!(denied(commit(json!({"message": "m"}))).contains("not in allowed paths"));
        assert!(
            denied(commit(
                json!({"message": "m", "path": "repo", "files": [".env"]})
            ))
            .contains("blocked")
        );
        assert!(
            denied(commit(
                json!({"message": "m", "path": "repo", "files": ["../x"]})
            ))
            .contains("not in allowed paths")
        );
        let status = |args: Value| scoped.check_tool("Git.Status", &object(args));
        assert_eq!(status(json!({})), Verdict::Allowed);
        assert!(denied(status(json!({"path": ".."}))).contains("not in allowed paths"));
    }

    #[test]
    fn the_working_directory_obeys_shell_paths_when_set() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("src")).unwrap();
        let scoped = enforcer(
            dir.path(),
            json!([{"name": "Shell.Exec", "allowedPaths": ["src"]}]),
        );
        let run = |args: Value| scoped.check_tool("Shell.Exec", &object(args));
        assert_eq!(
            run(json!({"command": "ls", "cwd": "src"})),
            Verdict::Allowed
        );
        assert!(
            denied(run(json!({"command": "ls", "cwd": ".."}))).contains("not in allowed paths")
        );
        assert!(denied(run(json!({"command": "ls"}))).contains("not in allowed paths"));
        let unscoped = enforcer(dir.path(), json!([{"name": "Shell.Exec"}]));
        assert_eq!(
            unscoped.check_tool("Shell.Exec", &object(json!({"command": "ls", "cwd": "/"}))),
            Verdict::Allowed
        );
    }

    #[test]
    fn http_hosts_are_judged_and_rated() {
        let dir = tempfile::tempdir().unwrap();
        let policy = enforcer(
            dir.path(),
            json!([{"name": "Network.Http", "allowedDomains": ["example.com"],
                    "blockedDomains": ["10.*"], "requiresApproval": true}]),
        );
        let get = |url: Value| policy.check_tool("Network.Http", &object(json!({"url": url})));
        assert_eq!(
            risk(get(json!("https://api.example.com/x"))),
            RiskLevel::Medium
        );
        assert_eq!(
            denied(get(json!("https://example.com.evil.net/"))),
            "Domain not allowed: example.com.evil.net"
        );
        assert_eq!(
            denied(get(json!("http://10.0.0.5/"))),
            "Domain is blocked: 10.0.0.5"
        );
        assert!(denied(get(json!("ftp://example.com/"))).contains("Only http and https"));
        assert_eq!(denied(get(json!(5))), "HttpRequest needs a url string");
        let open = enforcer(
            dir.path(),
            json!([{"name": "Network.Http", "requiresApproval": true}]),
        );
        let url = object(json!({"url": "https://example.com/"}));
        assert_eq!(risk(open.check_tool("Network.Http", &url)), RiskLevel::High);
    }

    #[test]
    fn every_path_argument_counts_and_writes_outside_are_high_risk() {
        let dir = tempfile::tempdir().unwrap();
        let policy = enforcer(
            dir.path(),
            json!([{"name": "File.Write", "blockedPaths": [".git/"], "requiresApproval": true},
                   {"name": "File.Read", "allowedPaths": ["."]}]),
        );
        let write = |args: Value| policy.check_tool("File.Write", &object(args));
        assert_eq!(risk(write(json!({"path": "a.txt"}))), RiskLevel::Medium);
        assert_eq!(risk(write(json!({"path": "../a.txt"}))), RiskLevel::High);
        assert!(
            denied(write(
                json!({"path": "a.txt", "destination": ".git/config"})
            ))
            .contains("blocked")
        );
        assert!(denied(write(json!({"source": ".git/HEAD"}))).contains("blocked"));
        assert!(denied(write(json!({"path": "a", "cwd": ".git/"}))).contains("blocked"));
        let read = |args: Value| policy.check_tool("File.Read", &object(args));
        assert!(
            denied(read(json!({"path": "a", "source": "/etc/passwd"}))).contains("not in allowed")
        );
        let rootless = PolicyEnforcer::new(policy.bundle().clone(), None);
        let inside = dir.path().join("a.txt");
        assert_eq!(
            risk(rootless.check_tool("File.Write", &object(json!({"path": inside})))),
            RiskLevel::High
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_symlink_into_a_blocked_directory_is_denied() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("secrets")).unwrap();
        std::fs::write(dir.path().join("secrets/key"), "k").unwrap();
        std::os::unix::fs::symlink(dir.path().join("secrets"), dir.path().join("link")).unwrap();
        let policy = enforcer(
            dir.path(),
            json!([{"name": "File.Read", "allowedPaths": ["."], "blockedPaths": ["secrets/"]}]),
        );
        assert!(matches!(
            policy.check_tool("File.Read", &args("link/key")),
            Verdict::Denied(_)
        ));
    }
}
