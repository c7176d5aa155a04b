//! `manifest.json`: what was certified, by what, against what, where and when — so a report
//! found later says which runtime build, kit and catalogue it speaks for.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use serde::Serialize;

use crate::driver::RuntimeCommand;

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Manifest {
    pub runtime: RuntimeInfo,
    pub kit: KitInfo,
    pub spec: SpecInfo,
    /// RFC 3339, when the run started and ended.
    pub started_at: String,
    pub finished_at: String,
    pub os: OsInfo,
    /// The selection: tag expression, name regex, shard (`i/n`), when given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tags: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shard: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RuntimeInfo {
    /// The command line as given.
    pub command: String,
    /// The first line `<command> --version` printed, or `None` when it printed nothing,
    /// failed or did not finish in time (reporting a version is optional for a runtime).
    pub version: Option<String>,
    pub transport: String,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct KitInfo {
    pub name: &'static str,
    pub version: &'static str,
    /// What the kit is proven to catch (see [`crate::mutant::sensitivity`]).
    pub sensitivity: String,
}

/// The spec has no version number of its own; the kit certifies against its catalogue, so
/// the catalogue's size and a fingerprint of its text identify "the spec as certified".
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SpecInfo {
    pub catalogue: String,
    pub requirements: usize,
    /// `fnv1a64:<hex>` of `requirements.toml`: equal fingerprints, equal requirements.
    pub fingerprint: String,
    /// `schemaVersion` of the policy bundle and protocol messages the kit speaks.
    pub schema_version: &'static str,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OsInfo {
    pub family: &'static str,
    pub arch: &'static str,
    /// The kernel release (Linux) when it can be read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub release: Option<String>,
}

impl OsInfo {
    pub fn current() -> Self {
        Self {
            family: std::env::consts::OS,
            arch: std::env::consts::ARCH,
            release: std::fs::read_to_string("/proc/sys/kernel/osrelease")
                .ok()
                .map(|r| r.trim().to_owned())
                .filter(|r| !r.is_empty()),
        }
    }
}

impl SpecInfo {
    pub fn of_catalogue(path: &Path, requirements: usize) -> Self {
        let text = std::fs::read(path).unwrap_or_default();
        Self {
            catalogue: if crate::builtin::is_builtin(path) {
                "built-in requirements.toml".to_owned()
            } else {
                path.display().to_string()
            },
            requirements,
            fingerprint: format!("fnv1a64:{:016x}", fnv1a64(&text)),
            schema_version: "1.0",
        }
    }
}

impl KitInfo {
    pub fn current() -> Self {
        Self {
            name: env!("CARGO_PKG_NAME"),
            version: env!("CARGO_PKG_VERSION"),
            sensitivity: crate::mutant::sensitivity(),
        }
    }
}

/// FNV-1a, 64 bit: a stable fingerprint without a hashing dependency (not for security).
fn fnv1a64(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, byte| {
        (hash ^ u64::from(*byte)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// Runs `<command> --version` once with stdin closed, bounded by `timeout`, and returns the
/// first non-empty line of its stdout. A runtime that does not know `--version` and starts
/// serving instead sees the end of stdin and shuts down, or is killed at the timeout.
pub async fn probe_version(runtime: &RuntimeCommand, timeout: Duration) -> Option<String> {
    let child = tokio::process::Command::new(&runtime.program)
        .args(&runtime.args)
        .arg("--version")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .ok()?;
    let output = tokio::time::timeout(timeout, child.wait_with_output())
        .await
        .ok()?
        .ok()?;
    if !output.status.success() {
        return None;
    }
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(str::trim)
        .find(|line| !line.is_empty())
        .map(|line| line.chars().take(200).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fingerprint_changes_with_the_text() {
        assert_eq!(fnv1a64(b""), 0xcbf2_9ce4_8422_2325);
        assert_ne!(fnv1a64(b"REQ-RPC-001"), fnv1a64(b"REQ-RPC-002"));
    }

    #[tokio::test]
    async fn the_version_is_the_first_line_printed() {
        let echo = RuntimeCommand::parse("echo agent-runtime 1.2.3").unwrap();
        assert_eq!(
            probe_version(&echo, Duration::from_secs(5))
                .await
                .as_deref(),
            Some("agent-runtime 1.2.3 --version")
        );
        let failing = RuntimeCommand::parse("false").unwrap();
        assert_eq!(probe_version(&failing, Duration::from_secs(5)).await, None);
    }
}
