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
//!   missing or non-string one, or one the shared path rules cannot resolve (empty, relative
//!   without a project folder, too long: the tool refuses it by the same rules), is left to
//!   the tool's own validation.
//! - `Shell.Exec`: `command` is judged by [`command`] (every program the line can start); a
//!   missing or non-string `command` is denied ("RunCommand needs a command string"), since
//!   nothing proves it harmless. When the entry sets `allowedPaths` or `blockedPaths`, the
//!   working directory (`cwd`, or the workspace root when absent) must pass them too.
//! - `Git.*`: when the entry sets `allowedPaths` or `blockedPaths`, the repository folder
//!   (`path`, or the workspace root) and each of a commit's `files` must pass them.
//! - `Network.Http`: the host of `url` is judged by [`domain`]; a missing or non-string `url`
//!   is denied ("HttpRequest needs a url string").
//! - `Code.Execute`: the language against `allowedLanguages`, the folder the code runs in
//!   against the entry's paths ([`code`]).
//!
//! Risk (§8.5), for the approval request: `Shell.Exec` is high unless `allowedCommands` is
//! set (a command that passed it is known), else medium; `Network.Http` is high unless
//! `allowedDomains` is set, else medium; `File.Write` is high when a path lies outside the
//! workspace root (or no root is known); the rest keep [`default_risk`].

pub(crate) mod code;
pub(crate) mod command;
pub(crate) mod domain;
mod extensions;
mod grant;
pub(crate) mod path_glob;
mod paths;
mod sandbox;
mod scope;
pub(crate) mod task_options;
#[cfg(test)]
mod tests;

use std::collections::HashMap;
use std::path::PathBuf;

use agent_path_rules::Os;
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
    /// Whose path rules apply, and where `~` points: read once from this machine, so the
    /// enforcer and the tool runtime judge by the same `agent-path-rules` inputs.
    os: Os,
    home: Option<PathBuf>,
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
            os: Os::current(),
            home: agent_path_rules::home::home(),
        }
    }

    /// The same enforcer with `~` pointing at `home` (an empty one is unset), for callers
    /// that hand the tool runtime a home of their own.
    pub fn with_home(mut self, home: Option<PathBuf>) -> Self {
        self.home = home;
        self
    }

    pub fn bundle(&self) -> &PolicyBundle {
        &self.bundle
    }

    pub fn grants(&self, capability: &str) -> bool {
        self.capabilities.contains_key(capability)
    }

    /// Whether the bundle names any `Git.*` capability (else the git tools are judged as
    /// file tools: INTEROP.md §10).
    pub fn names_git_capabilities(&self) -> bool {
        self.capabilities
            .keys()
            .any(|name| name.starts_with("Git."))
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
}

/// §8.5 default risk per capability, before the elevations of `check_tool`.
pub(crate) fn default_risk(capability: &str) -> RiskLevel {
    match capability {
        "File.Read" | "Workspace.Upload" | "Git.Status" | "Git.Diff" => RiskLevel::Low,
        "File.Delete" | "Git.Push" => RiskLevel::High,
        _ => RiskLevel::Medium,
    }
}
