//! The capability's blocked paths, as the tool runtime applies them to what a tool finds by
//! itself (a folder's entries, a search's results): the enforcer judges the paths a call
//! names, but never sees the files a search walks into, so those are matched here by the
//! same rules (`agent-path-rules`: whole-component prefixes, glob patterns anchored at the
//! project folder) against the list the host sends (`ToolRequest.blocked_paths`).

use std::path::{Path, PathBuf};

use agent_path_rules::{glob, is_within};
use agent_protocol::ToolRequest;

use crate::platform::Os;

/// The blocked paths of one call.
#[derive(Debug, Clone)]
pub(crate) struct Blocked {
    os: Os,
    entries: Vec<String>,
    /// The project folder, resolved: the base of relative glob patterns.
    root: Option<String>,
}

impl Blocked {
    pub(crate) fn of(request: &ToolRequest) -> Self {
        let root = request.workspace_root.as_deref().map(|root| {
            std::fs::canonicalize(root)
                .unwrap_or_else(|_| agent_path_rules::normalize(Path::new(root)))
                .display()
                .to_string()
        });
        Self {
            os: Os::current(),
            entries: request.blocked_paths.clone().unwrap_or_default(),
            root,
        }
    }

    /// Whether `path` (absolute, resolved) is blocked, or lies inside a blocked folder.
    pub(crate) fn hides(&self, path: &Path) -> bool {
        if self.entries.is_empty() {
            return false;
        }
        let path = path.to_string_lossy();
        self.entries.iter().any(|entry| {
            if glob::is_glob(entry) {
                glob::matches(self.os, &path, entry, self.root.as_deref())
            } else {
                is_within(self.os, &path, entry)
            }
        })
    }

    /// Whether `path` or, for a link, the file it leads to is blocked: a link to a blocked
    /// file is as good as the file.
    pub(crate) fn hides_entry(&self, path: &Path, is_link: bool) -> bool {
        self.hides(path) || (is_link && std::fs::canonicalize(path).is_ok_and(|t| self.hides(&t)))
    }

    /// The resolved project folder, if the session has one.
    pub(crate) fn root(&self) -> Option<PathBuf> {
        self.root.as_deref().map(PathBuf::from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn prefixes_and_globs_hide_what_the_enforcer_blocks() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        let mut request = crate::testing::request("FindFiles", &root, json!({}));
        request.blocked_paths = Some(vec![
            root.join("secrets").display().to_string(),
            "*.pem".into(),
            "config/*.key".into(),
        ]);
        let blocked = Blocked::of(&request);
        for (path, hidden) in [
            ("secrets", true),
            ("secrets/a.txt", true),
            ("secrets2/a.txt", false),
            ("certs/server.pem", true),
            ("config/a.key", true),
            ("config/deep/a.key", false),
            ("src/main.rs", false),
        ] {
            assert_eq!(blocked.hides(&root.join(path)), hidden, "{path}");
        }
        request.blocked_paths = None;
        assert!(!Blocked::of(&request).hides(&root.join("secrets")));
    }
}
