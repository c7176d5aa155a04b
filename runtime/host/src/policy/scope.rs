//! Scope checks of one capability entry (§8.2) and the risk they imply (§8.5); see the
//! module documentation of [`super`] for what each capability's scope means.

use std::path::Path;

use agent_path_rules::Os;
use agent_protocol::approval::RiskLevel;
use agent_protocol::policy::CapabilityEntry;
use serde_json::{Map, Value};

use super::command::WriteTarget;
use super::{PolicyEnforcer, command, default_risk, domain};

impl PolicyEnforcer {
    /// The scope constraints of `entry`; on success, the risk of the call (§8.5).
    pub(super) fn check_scope(
        &self,
        capability: &str,
        entry: &CapabilityEntry,
        arguments: &Map<String, Value>,
    ) -> Result<RiskLevel, String> {
        let text = |key: &str| arguments.get(key).and_then(Value::as_str);
        match capability {
            "Shell.Exec" => {
                let line = text("command").ok_or("RunCommand needs a command string")?;
                let analysis = command::analyse(
                    line,
                    entry.allowed_commands.as_deref(),
                    entry.blocked_commands.as_deref(),
                    self.os,
                )
                .map_err(|denial| denial.to_string())?;
                self.check_writes(&analysis.writes, text("cwd"))?;
                if entry.allowed_paths.is_some() || entry.blocked_paths.is_some() {
                    // Where the tool runtime runs a command without `cwd`: the project
                    // folder, else the home folder.
                    let here = if self.workspace_root.is_some() {
                        "."
                    } else {
                        "~"
                    };
                    self.check_tool_path(entry, text("cwd").unwrap_or(here), false)?;
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
            super::code::CODE_EXECUTE => self.check_code(entry, arguments),
            git if git.starts_with("Git.") => {
                // The repository folder (`path`, else the workspace root) and every file a
                // commit stages (`files`, relative to that folder) obey the entry's paths.
                if entry.allowed_paths.is_some() || entry.blocked_paths.is_some() {
                    let repo = text("path").unwrap_or(".");
                    self.check_tool_path(entry, repo, false)?;
                    let files = arguments.get("files").and_then(Value::as_array);
                    for file in files.into_iter().flatten().filter_map(Value::as_str) {
                        let joined = Path::new(repo).join(file);
                        self.check_tool_path(entry, &joined.to_string_lossy(), false)?;
                    }
                }
                Ok(default_risk(git))
            }
            file if file.starts_with("File.") => {
                let mut outside = false;
                for raw in PATH_ARGUMENTS.iter().filter_map(|key| text(key)) {
                    if let Some(path) = self.check_tool_path(entry, raw, true)? {
                        outside |= !self.inside_workspace(&path);
                    }
                }
                Ok(match file {
                    "File.Write" if outside => RiskLevel::High,
                    _ => default_risk(file),
                })
            }
            _ => Ok(default_risk(capability)),
        }
    }
}

impl PolicyEnforcer {
    /// A command's redirection targets are files it writes: each must pass the File.Write
    /// grant, as if WriteFile wrote it (relative targets from the command's `cwd`).
    fn check_writes(&self, writes: &[WriteTarget], cwd: Option<&str>) -> Result<(), String> {
        for target in writes {
            if let WriteTarget::Path(path) = target
                && harmless(self.os, path)
            {
                continue;
            }
            let shown = match target {
                WriteTarget::Path(path) | WriteTarget::Unknown(path) => path,
            };
            let Some(entry) = self.capability("File.Write") else {
                return Err(format!(
                    "The command writes {shown} by redirection, but File.Write is not granted"
                ));
            };
            match target {
                WriteTarget::Path(path) => {
                    let joined = match cwd {
                        Some(cwd) if Path::new(path).is_relative() && !path.starts_with('~') => {
                            Path::new(cwd).join(path).to_string_lossy().into_owned()
                        }
                        _ => path.clone(),
                    };
                    self.check_path(entry, &joined, false)
                        .map_err(|why| format!("Redirection target refused: {why}"))?;
                }
                WriteTarget::Unknown(raw)
                    if entry.allowed_paths.is_some() || entry.blocked_paths.is_some() =>
                {
                    return Err(format!(
                        "Cannot tell which file the redirection to {raw} writes"
                    ));
                }
                WriteTarget::Unknown(_) => {}
            }
        }
        Ok(())
    }
}

/// Redirection targets that are no files of the user's.
const HARMLESS_TARGETS: &[&str] = &["/dev/null", "/dev/stdout", "/dev/stderr"];

/// Whether a redirection target is a device rather than a file: the POSIX ones, and on
/// Windows `NUL` and `CON` in any case, folder or extension (`nul`, `.\NUL.txt`, `\\.\nul`),
/// which Windows opens as the device whatever surrounds the name.
fn harmless(os: Os, target: &str) -> bool {
    if HARMLESS_TARGETS.contains(&target) {
        return true;
    }
    if os != Os::Windows {
        return false;
    }
    let name = target.rsplit(['\\', '/']).next().unwrap_or(target);
    let stem = name.split('.').next().unwrap_or(name).trim_end();
    stem.eq_ignore_ascii_case("nul") || stem.eq_ignore_ascii_case("con")
}

/// The arguments of file tools that name a path (the tools define `path`; the rest are
/// judged whenever a tool sends them).
const PATH_ARGUMENTS: &[&str] = &["path", "source", "destination", "cwd", "directory"];

fn elevated(high: bool) -> RiskLevel {
    if high {
        RiskLevel::High
    } else {
        RiskLevel::Medium
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn device_targets_are_harmless_and_files_are_not() {
        for (os, target, want) in [
            (Os::OtherUnix, "/dev/null", true),
            (Os::OtherUnix, "nul", false),
            (Os::Windows, "nul", true),
            (Os::Windows, "NUL", true),
            (Os::Windows, r".\Nul.txt", true),
            (Os::Windows, r"\\.\nul", true),
            (Os::Windows, "con", true),
            (Os::Windows, "null.txt", false),
            (Os::Windows, r"C:\work\notes.txt", false),
            (Os::Windows, "/dev/null", true),
        ] {
            assert_eq!(harmless(os, target), want, "{os:?} {target}");
        }
    }
}
