//! The Local State Store (local-agent-host.md §9): one checkpoint file per session,
//! written atomically (temp file in the same directory, fsync, rename, fsync the
//! directory) so a crash at any instant leaves either the old or the new checkpoint.

use std::io::Write;
use std::path::{Path, PathBuf};

use agent_protocol::checkpoint::Checkpoint;

#[derive(Debug, thiserror::Error)]
pub enum StateError {
    #[error("could not write the checkpoint {path}: {source}")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("could not serialize the checkpoint: {0}")]
    Serialize(#[from] serde_json::Error),
}

#[derive(Debug, Clone)]
pub struct CheckpointStore {
    dir: PathBuf,
}

impl CheckpointStore {
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Self { dir: dir.into() }
    }

    pub fn path(&self, session_id: &str) -> PathBuf {
        self.dir.join(format!("{}.json", sanitize(session_id)))
    }

    pub fn write(&self, checkpoint: &Checkpoint) -> Result<PathBuf, StateError> {
        let path = self.path(&checkpoint.session_id);
        let bytes = serde_json::to_vec(checkpoint)?;
        write_atomically(&self.dir, &path, &bytes).map_err(|source| StateError::Write {
            path: path.clone(),
            source,
        })?;
        Ok(path)
    }

    pub fn delete(&self, session_id: &str) {
        let path = self.path(session_id);
        if let Err(error) = std::fs::remove_file(&path)
            && error.kind() != std::io::ErrorKind::NotFound
        {
            tracing::warn!(path = %path.display(), %error, "could not delete the checkpoint");
        }
    }
}

/// Session ids come from a service; keep them from naming a path outside the directory.
fn sanitize(session_id: &str) -> String {
    session_id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

fn write_atomically(dir: &Path, path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let mut temp = tempfile::NamedTempFile::new_in(dir)?;
    temp.write_all(bytes)?;
    temp.as_file().sync_all()?;
    temp.persist(path).map_err(|error| error.error)?;
    #[cfg(unix)]
    std::fs::File::open(dir)?.sync_all()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_protocol::state::SessionStatus;

    #[test]
    fn writes_replace_the_file_and_delete_removes_it() {
        let dir = tempfile::tempdir().unwrap();
        let store = CheckpointStore::new(dir.path().join("cp"));
        let mut checkpoint = Checkpoint {
            checkpoint_version: "1.0".into(),
            session_id: "sess/../x".into(),
            workspace_id: "w".into(),
            tenant_id: "t".into(),
            user_id: "u".into(),
            session_status: SessionStatus::SessionRunning,
            task: None,
            step_cursor: None,
            thread: vec![],
            session_tokens_used: 1,
            policy_bundle_version: "v".into(),
            checkpointed_at: "2026-01-01T00:00:00Z".into(),
            pending_approvals: vec![],
            workspace_root: None,
        };
        let path = store.write(&checkpoint).unwrap();
        assert!(path.starts_with(dir.path().join("cp")));
        checkpoint.session_tokens_used = 2;
        store.write(&checkpoint).unwrap();
        let back: Checkpoint = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        assert_eq!(back.session_tokens_used, 2);
        assert_eq!(
            std::fs::read_dir(dir.path().join("cp")).unwrap().count(),
            1,
            "no temp files left"
        );
        store.delete(&checkpoint.session_id);
        assert!(!path.exists());
    }
}
