//! Paths as the enforcer judges them: made absolute by the rules the tool runtime uses too
//! (`agent-path-rules`: `~`, the project folder, `.`/`..`), symlinks resolved, then matched
//! on whole components against the entry's prefixes, or by its glob patterns.

use std::path::{Path, PathBuf};

use agent_path_rules::{PathError, glob, is_within, normalize, resolve_for};
use agent_protocol::policy::CapabilityEntry;

use super::PolicyEnforcer;

impl PolicyEnforcer {
    /// One path against the entry's prefixes (and size limit); the resolved path on success.
    pub(super) fn check_path(
        &self,
        entry: &CapabilityEntry,
        raw: &str,
        size_limit: bool,
    ) -> Result<PathBuf, String> {
        if raw.contains('\0') {
            return Err("Path contains a NUL byte".to_owned());
        }
        let path = self.judged_path(raw)?;
        // Only a refusal shows the path: no string is made for a path that passes.
        let shown = || agent_path_rules::shown(self.os, &path.to_string_lossy()).into_owned();
        if let Some(blocked) = &entry.blocked_paths {
            // A blocked entry that cannot be read fails closed: it blocks every path.
            if let Some((unusable, why)) = blocked
                .iter()
                .find_map(|entry| self.unusable(entry).map(|why| (entry, why)))
            {
                return Err(format!(
                    "Path is blocked: {} (the blockedPaths entry {unusable:?} is not a usable pattern ({why}), so it blocks every path until the policy is corrected)",
                    shown()
                ));
            }
            if blocked.iter().any(|prefix| self.matches(&path, prefix)) {
                return Err(format!("Path is blocked: {}", shown()));
            }
        }
        if let Some(allowed) = &entry.allowed_paths
            && !allowed.iter().any(|prefix| self.matches(&path, prefix))
        {
            return Err(format!("Path not in allowed paths: {}", shown()));
        }
        if size_limit
            && let Some(limit) = entry.max_file_size_bytes
            && let Ok(metadata) = std::fs::metadata(&path)
            && metadata.len() > limit
        {
            return Err(format!(
                "File exceeds size limit: {} is {} bytes, the limit is {limit} bytes",
                shown(),
                metadata.len()
            ));
        }
        Ok(path)
    }

    /// [`Self::check_path`] for a path the tool itself resolves by the same rules (a file
    /// tool's `path`, a command's `cwd`, a git call's folder and files): one those rules
    /// cannot resolve (empty, relative without a project folder, too long) is left to the
    /// tool, which refuses it as an invalid request (local-tool-runtime.md §6.1) and touches
    /// nothing — `None` then.
    pub(super) fn check_tool_path(
        &self,
        entry: &CapabilityEntry,
        raw: &str,
        size_limit: bool,
    ) -> Result<Option<PathBuf>, String> {
        if !raw.contains('\0') && self.lexical(raw).is_err() {
            return Ok(None);
        }
        self.check_path(entry, raw, size_limit).map(Some)
    }

    /// The file a tool given `raw` would act on, as the enforcer judges it: the tool
    /// runtime's lexical rules, then symlinks resolved. A path the tool runtime cannot
    /// resolve (empty, relative without a project folder, too long) is refused here too.
    pub fn judged_path(&self, raw: &str) -> Result<PathBuf, String> {
        self.lexical(raw)
            .map(|path| resolve(&path))
            .map_err(|error| format!("Path refused: {error}"))
    }

    /// The entry's `allowedPaths` as the tool runtime is told them (`ToolRequest.grantedPaths`):
    /// absolute and resolved like every judged path; `None` when the entry names none.
    pub fn granted_paths(&self, entry: &CapabilityEntry) -> Option<Vec<String>> {
        let allowed = entry.allowed_paths.as_ref()?;
        Some(
            allowed
                .iter()
                // A relative entry means nothing without a project folder.
                .filter_map(|prefix| self.absolute(prefix))
                .map(|path| resolve(&path).display().to_string())
                .collect(),
        )
    }

    /// The entry's `blockedPaths` as the tool runtime is told them (`ToolRequest.blockedPaths`):
    /// prefixes absolute and resolved like every judged path, glob patterns as written (the
    /// tool matches them as [`Self::check_path`] does); `None` when the entry names none.
    pub fn blocked_paths(&self, entry: &CapabilityEntry) -> Option<Vec<String>> {
        let blocked = entry.blocked_paths.as_ref()?;
        Some(
            blocked
                .iter()
                .filter_map(|prefix| {
                    if glob::is_glob(prefix) {
                        return Some(prefix.clone());
                    }
                    self.absolute(prefix)
                        .map(|path| resolve(&path).display().to_string())
                })
                .collect(),
        )
    }

    pub(super) fn inside_workspace(&self, path: &Path) -> bool {
        self.workspace_root.as_deref().is_some_and(|root| {
            is_within(
                self.os,
                &path.to_string_lossy(),
                &resolve(root).to_string_lossy(),
            )
        })
    }

    /// `raw` made absolute by the shared rules, symlinks not yet resolved.
    fn lexical(&self, raw: &str) -> Result<PathBuf, PathError> {
        let root = self.workspace_root.as_deref().map(Path::to_string_lossy);
        let home = self.home.as_deref().map(Path::to_string_lossy);
        resolve_for(self.os, raw, root.as_deref(), home.as_deref()).map(PathBuf::from)
    }

    /// A policy entry made absolute; `None` when it names no place (a relative entry
    /// without a project folder: resolved anyway, "." would be a prefix of every path).
    pub(super) fn absolute(&self, entry: &str) -> Option<PathBuf> {
        self.lexical(entry).ok()
    }

    /// Why a `blockedPaths` entry cannot be applied: a glob that does not compile, or a
    /// prefix no path can be made of (empty, too long). A relative prefix without a project
    /// folder names nothing and is no error.
    fn unusable(&self, entry: &str) -> Option<String> {
        if glob::is_glob(entry) {
            return glob::invalid(self.os, entry);
        }
        match self.lexical(entry) {
            Err(PathError::RelativeWithoutRoot(_)) | Ok(_) => None,
            Err(error) => Some(error.to_string()),
        }
    }

    /// Prefix match on whole path components: `/proj` admits `/proj/a`, never `/proj2`.
    /// An entry with glob characters (`*.pem`, `secrets/**`) is a pattern instead.
    fn matches(&self, path: &Path, prefix: &str) -> bool {
        let path = path.to_string_lossy();
        if glob::is_glob(prefix) {
            let base = self.workspace_root.as_deref().map(resolve);
            let base = base.as_deref().map(Path::to_string_lossy);
            return glob::matches(self.os, &path, prefix, base.as_deref());
        }
        self.absolute(prefix)
            .is_some_and(|prefix| is_within(self.os, &path, &resolve(&prefix).to_string_lossy()))
    }
}

/// Normalises `.` and `..` lexically, then resolves symlinks of the deepest ancestor that
/// exists, so a file that does not exist yet is judged by where it would really land.
///
/// A network or device path (`\\server\share\…`, `\\.\…` on Windows) is judged as written:
/// resolving it would contact the server the model named — on Windows with the user's
/// credentials — before the policy has said yes.
pub(super) fn resolve(path: &Path) -> PathBuf {
    let normal = normalize(path);
    if is_remote(&normal) {
        return normal;
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

/// Whether `path` starts with a UNC share or a device namespace (only Windows paths do).
pub(super) fn is_remote(path: &Path) -> bool {
    use std::path::{Component, Prefix};
    matches!(
        path.components().next(),
        Some(Component::Prefix(prefix)) if matches!(
            prefix.kind(),
            Prefix::UNC(..) | Prefix::VerbatimUNC(..) | Prefix::DeviceNS(_)
        )
    )
}
