//! What a session was opened with, kept beside the checkpoints and not in them: the app
//! sends the project folder, `clientInfo` and the capabilities only at CreateSession
//! (INTEROP.md §1), yet "Continue Conversation" after a clean quit — when the checkpoint is
//! gone — needs them again (INTEROP.md §8). The tools need the folder, and the new session
//! that continues an ended one must present the same client to the Session Service (the
//! real one judges a missing `desktopAppVersion` as 0.0.0: incompatible).

use std::path::{Path, PathBuf};

use agent_protocol::methods::ClientInfo;
use serde::{Deserialize, Serialize};

use super::{CheckpointStore, sanitize};

/// How many session origins are kept. Each is a few hundred bytes; the oldest beyond this
/// are removed when one is written, so the folder never grows without bound.
pub(super) const KEPT_ORIGINS: usize = 1000;

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionOrigin {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project_folder: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_info: Option<ClientInfo>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub supported_capabilities: Vec<String>,
}

impl SessionOrigin {
    pub fn project_root(&self) -> Option<PathBuf> {
        self.project_folder
            .as_deref()
            .filter(|folder| !folder.is_empty())
            .map(PathBuf::from)
    }
}

impl CheckpointStore {
    fn origins_dir(&self) -> PathBuf {
        self.dir.join("origins")
    }

    fn origin_path(&self, session_id: &str) -> PathBuf {
        self.origins_dir()
            .join(format!("{}.json", sanitize(session_id)))
    }

    /// Remembers what `session_id` was opened with; a failure is logged (the session runs
    /// on, only a later "Continue Conversation" would miss it).
    pub fn remember_origin(&self, session_id: &str, origin: &SessionOrigin) {
        let path = self.origin_path(session_id);
        let written = serde_json::to_vec(origin)
            .map_err(std::io::Error::other)
            .and_then(|bytes| {
                std::fs::create_dir_all(self.origins_dir())?;
                std::fs::write(&path, bytes)
            });
        if let Err(error) = written {
            tracing::warn!(%error, path = %path.display(), "could not remember what the session was opened with");
        }
        prune(&self.origins_dir(), KEPT_ORIGINS);
    }

    /// What `session_id` was opened with, if this machine opened it.
    pub fn origin_of(&self, session_id: &str) -> Option<SessionOrigin> {
        let bytes = std::fs::read(self.origin_path(session_id)).ok()?;
        serde_json::from_slice(&bytes)
            .inspect_err(
                |error| tracing::warn!(%error, session_id, "ignoring an unreadable session origin"),
            )
            .ok()
    }

    /// Forgets `session_id`'s origin: the Session Service no longer knows the session, so
    /// it can never be continued.
    pub fn forget_origin(&self, session_id: &str) {
        let path = self.origin_path(session_id);
        if let Err(error) = std::fs::remove_file(&path)
            && error.kind() != std::io::ErrorKind::NotFound
        {
            tracing::warn!(%error, path = %path.display(), "could not forget the session's origin");
        }
    }
}

/// Removes the oldest files of `dir` beyond the newest `keep` (by modification time).
fn prune(dir: &Path, keep: usize) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut files: Vec<(std::time::SystemTime, PathBuf)> = entries
        .filter_map(Result::ok)
        .filter_map(|entry| {
            let modified = entry.metadata().ok()?.modified().ok()?;
            Some((modified, entry.path()))
        })
        .collect();
    if files.len() <= keep {
        return;
    }
    files.sort();
    for (_, path) in &files[..files.len() - keep] {
        if let Err(error) = std::fs::remove_file(path) {
            tracing::warn!(%error, path = %path.display(), "could not remove an old session origin");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn origin(folder: &str) -> SessionOrigin {
        SessionOrigin {
            project_folder: Some(folder.to_owned()),
            client_info: Some(ClientInfo {
                desktop_app_version: Some("1.4.0".to_owned()),
                ..ClientInfo::default()
            }),
            supported_capabilities: vec!["File.Read".to_owned()],
        }
    }

    #[test]
    fn an_origin_is_read_back_and_forgotten() {
        let dir = tempfile::tempdir().unwrap();
        let store = CheckpointStore::new(dir.path());
        assert_eq!(store.origin_of("sess-1"), None);
        store.remember_origin("sess-1", &origin("/p/one"));
        assert_eq!(store.origin_of("sess-1"), Some(origin("/p/one")));
        assert_eq!(
            store.origin_of("sess-1").unwrap().project_root(),
            Some(PathBuf::from("/p/one"))
        );
        store.forget_origin("sess-1");
        assert_eq!(store.origin_of("sess-1"), None);
    }

    #[test]
    fn the_oldest_origins_beyond_the_limit_are_removed() {
        let dir = tempfile::tempdir().unwrap();
        let origins = dir.path().join("origins");
        std::fs::create_dir_all(&origins).unwrap();
        let base = std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_000_000);
        for (age, name) in [(3, "old"), (2, "middle"), (1, "new")] {
            let path = origins.join(format!("{name}.json"));
            std::fs::write(&path, b"{}").unwrap();
            let file = std::fs::File::options().write(true).open(&path).unwrap();
            file.set_modified(base - std::time::Duration::from_secs(age))
                .unwrap();
        }
        prune(&origins, 2);
        let mut left: Vec<String> = std::fs::read_dir(&origins)
            .unwrap()
            .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        assert_eq!(left, ["middle.json", "new.json"]);
    }
}
