//! Paths as the enforcer judges them: `~` expanded like the tool runtime does, relative
//! paths joined to the workspace root, `.`/`..` folded and symlinks resolved, then matched on
//! whole components against the entry's prefixes.

use std::path::{Component, Path, PathBuf};

use agent_protocol::policy::CapabilityEntry;

use super::{PolicyEnforcer, path_glob, path_match};

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
        let path = resolve(&self.absolute(Path::new(raw)));
        if let Some(blocked) = &entry.blocked_paths {
            // A blocked pattern that cannot be read fails closed: it blocks every path.
            if let Some(unusable) = blocked
                .iter()
                .find(|entry| path_glob::invalid(entry).is_some())
            {
                return Err(format!(
                    "Path is blocked: {} (the blockedPaths entry {unusable:?} is not a usable pattern, so it blocks every path until the policy is corrected)",
                    path.display()
                ));
            }
            if blocked.iter().any(|prefix| self.matches(&path, prefix)) {
                return Err(format!("Path is blocked: {}", path.display()));
            }
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

    /// The entry's `allowedPaths` as the tool runtime is told them (`ToolRequest.grantedPaths`):
    /// absolute and resolved like every judged path; `None` when the entry names none.
    pub fn granted_paths(&self, entry: &CapabilityEntry) -> Option<Vec<String>> {
        let allowed = entry.allowed_paths.as_ref()?;
        Some(
            allowed
                .iter()
                // As in `matches`: a relative entry means nothing without a project folder.
                .filter(|prefix| Path::new(prefix).is_absolute() || self.workspace_root.is_some())
                .map(|prefix| {
                    resolve(&self.absolute(Path::new(prefix)))
                        .display()
                        .to_string()
                })
                .collect(),
        )
    }

    pub(super) fn inside_workspace(&self, path: &Path) -> bool {
        self.workspace_root.as_deref().is_some_and(|root| {
            path_match::starts_with(path, &resolve(root), path_match::FOLDS_CASE)
        })
    }

    pub(super) fn absolute(&self, path: &Path) -> PathBuf {
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
    /// An entry with glob characters (`*.pem`, `secrets/**`) is a pattern instead.
    fn matches(&self, path: &Path, prefix: &str) -> bool {
        if path_glob::is_glob(prefix) {
            let base = self.workspace_root.as_deref().map(resolve);
            return path_glob::matches(path, prefix, base.as_deref());
        }
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
pub(super) fn expand_home(path: &Path, home: Option<&Path>) -> Option<PathBuf> {
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
