//! The Local Policy Enforcer (local-agent-host.md §8): decides, from the policy bundle
//! alone, whether an LLM call or a tool call may proceed.
//!
//! Pure apart from one thing: path resolution asks the file system where symlinks point
//! (`canonicalize` of the deepest existing ancestor), because a policy that compares
//! unresolved paths is bypassed by any symlink.

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
        if capability.starts_with("File.")
            && let Some(reason) = self.check_paths(entry, arguments)
        {
            return Verdict::Denied(reason);
        }
        if entry.requires_approval {
            return Verdict::ApprovalRequired {
                rule_id: entry.approval_rule_id.clone(),
                risk: default_risk(capability),
            };
        }
        Verdict::Allowed
    }

    fn check_paths(
        &self,
        entry: &CapabilityEntry,
        arguments: &Map<String, Value>,
    ) -> Option<String> {
        let Some(raw) = arguments.get("path").and_then(Value::as_str) else {
            return None; // the tool runtime rejects a missing path itself
        };
        if raw.contains('\0') {
            return Some("Path contains a NUL byte".to_owned());
        }
        let path = resolve(&self.absolute(Path::new(raw)));
        if let Some(blocked) = &entry.blocked_paths
            && blocked.iter().any(|prefix| self.matches(&path, prefix))
        {
            return Some(format!("Path is blocked: {}", path.display()));
        }
        if let Some(allowed) = &entry.allowed_paths
            && !allowed.iter().any(|prefix| self.matches(&path, prefix))
        {
            return Some(format!("Path not in allowed paths: {}", path.display()));
        }
        if let Some(limit) = entry.max_file_size_bytes
            && let Ok(metadata) = std::fs::metadata(&path)
            && metadata.len() > limit
        {
            return Some(format!(
                "File exceeds size limit: {} is {} bytes, the limit is {limit} bytes",
                path.display(),
                metadata.len()
            ));
        }
        None
    }

    fn absolute(&self, path: &Path) -> PathBuf {
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
        let prefix = resolve(&self.absolute(Path::new(prefix)));
        path.starts_with(&prefix)
    }
}

/// §8.5 default risk per capability (elevation rules come with the full enforcer).
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
