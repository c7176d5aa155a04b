//! What the tool runtime is granted for one call: the limits, paths, URL rules and sandbox a
//! `ToolRequest` carries (local-tool-runtime.md §3, §7), read from the bundle alone. The
//! tools never see the bundle; this is the whole of what they are told.

use std::time::Duration;

use agent_protocol::methods::TaskOptions;
use agent_protocol::sandbox::SandboxGrant;
use agent_protocol::tool::ToolLimits;

use super::PolicyEnforcer;
use super::code::{CODE_EXECUTE, max_execution_time};
use super::domain::{remote_check, url_check};

/// The policy's part of a `ToolRequest`; the caller adds the call's identity and its timeout.
#[derive(Default)]
pub struct Grant {
    /// The entry's size and output limits, and the URL rules any further URL the call
    /// reaches is held to. `timeout_ms` is left unset.
    pub limits: ToolLimits,
    pub granted_paths: Option<Vec<String>>,
    pub blocked_paths: Option<Vec<String>>,
    /// What a process the tool starts may reach, when it starts one.
    pub sandbox: Option<SandboxGrant>,
    /// The longest the call may run by the policy (Code.Execute's `maxExecutionTimeSeconds`,
    /// INTEROP.md §11), whatever the call asks.
    pub max_time: Option<Duration>,
}

impl PolicyEnforcer {
    /// The grant of a call judged under `capability` (none: an unknown tool, granted
    /// nothing). `process` is the capability of the program the tool starts, which differs
    /// from `capability` for a git tool judged as a file tool (it still runs git).
    pub fn grant(
        &self,
        capability: Option<&str>,
        process: Option<&str>,
        options: &TaskOptions,
    ) -> Grant {
        let Some(capability) = capability else {
            return Grant::default();
        };
        let entry = self.capability(capability);
        // HttpRequest's redirect hops, the push's remote allowlist, and what a started
        // process asks the egress proxy for: the domain rules of Network.Http.
        let url_check = match capability {
            "Git.Push" => entry.map(remote_check),
            _ => self.capability("Network.Http").map(url_check),
        };
        Grant {
            limits: ToolLimits {
                max_file_size_bytes: entry.and_then(|entry| entry.max_file_size_bytes),
                max_output_bytes: entry.and_then(|entry| entry.max_output_bytes),
                timeout_ms: None,
                url_check,
            },
            granted_paths: entry.and_then(|entry| self.granted_paths(entry)),
            blocked_paths: entry.and_then(|entry| self.blocked_paths(entry)),
            sandbox: process.and_then(|process| self.sandbox_grant(process, options)),
            max_time: match capability {
                CODE_EXECUTE => max_execution_time(entry),
                _ => None,
            },
        }
    }
}

#[cfg(test)]
#[path = "grant_tests.rs"]
mod tests;
