//! A fresh folder one call's process may write besides its grant (ExecuteCode's output
//! folder): made empty and private (mode 0700) in the system's temporary folder, added to
//! the request's write grant for this call only, and removed with everything in it when the
//! call ends, however it ends (the value is dropped on cancellation too).
//!
//! It widens nothing else: the process gets write access to an empty folder no other call
//! shares. In namespaces of its own the launcher binds it at the same path inside the
//! command's view (a granted tree under `/tmp` is kept where it is over the private `/tmp`,
//! `linux::view`), so the path the process is told is the path it writes. The mount point
//! made for it in the private temporary folder goes with it. One left by a runtime killed
//! outright goes at a later runtime's start, like the private temporary folder (its name
//! carries the process id).

use std::path::{Path, PathBuf};

use agent_protocol::ToolRequest;

use super::plan;

/// The name every call folder starts with, followed by the process id.
pub(super) const PREFIX: &str = "agent-runtime-call-";

#[derive(Debug)]
pub(crate) struct CallFolder {
    path: PathBuf,
}

impl CallFolder {
    /// A new empty folder, private to this user.
    pub(crate) fn create() -> std::io::Result<Self> {
        let prefix = format!("{PREFIX}{}-", std::process::id());
        let mut builder = tempfile::Builder::new();
        builder.prefix(&prefix);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            builder.permissions(std::fs::Permissions::from_mode(0o700));
        }
        let made = builder.tempdir()?.keep();
        // The sandbox compares grants with resolved paths (macOS's /var is a link).
        let path = made.canonicalize().unwrap_or(made);
        Ok(Self { path })
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// `request` with this folder writable besides what its grant (or the grant a call
    /// without one gets) allows.
    pub(crate) fn granted(&self, request: &ToolRequest) -> ToolRequest {
        let mut grant = plan::grant_for(request);
        grant.write_paths.push(self.path.display().to_string());
        let mut request = request.clone();
        request.sandbox = Some(grant);
        request
    }
}

impl Drop for CallFolder {
    fn drop(&mut self) {
        remove_tree(&self.path);
        if let Some(point) = super::private_tmp_mount_point(&self.path)
            && let Err(error) = std::fs::remove_dir(&point)
            && error.kind() != std::io::ErrorKind::NotFound
        {
            tracing::debug!(%error, folder = %point.display(), "a call folder's mount point could not be removed");
        }
    }
}

/// Removes `path` and everything in it, also where the process took away its own write
/// permission on a folder inside (which would stop a plain removal).
fn remove_tree(path: &Path) {
    if std::fs::remove_dir_all(path).is_ok() || path.symlink_metadata().is_err() {
        return;
    }
    #[cfg(unix)]
    make_writable(path);
    if let Err(error) = std::fs::remove_dir_all(path) {
        tracing::debug!(%error, folder = %path.display(), "a call folder could not be removed");
    }
}

/// Gives the owner full access to every folder of the tree (links are not followed).
#[cfg(unix)]
fn make_writable(folder: &Path) {
    use std::os::unix::fs::PermissionsExt as _;
    let Ok(meta) = folder.symlink_metadata() else {
        return;
    };
    if !meta.is_dir() {
        return;
    }
    let _ = std::fs::set_permissions(folder, std::fs::Permissions::from_mode(0o700));
    if let Ok(entries) = std::fs::read_dir(folder) {
        for entry in entries.flatten() {
            make_writable(&entry.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_folder_is_empty_private_granted_and_gone_with_what_it_holds() {
        let dir = tempfile::tempdir().unwrap();
        let request = crate::testing::request("ExecuteCode", dir.path(), serde_json::json!({}));
        let folder = CallFolder::create().unwrap();
        let path = folder.path().to_path_buf();
        assert!(path.is_dir() && std::fs::read_dir(&path).unwrap().next().is_none());
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            let mode = path.metadata().unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o700, "{mode:o}");
        }
        // A call without a grant keeps the grant it would have had, plus the folder.
        let granted = folder.granted(&request);
        let grant = granted.sandbox.unwrap();
        assert_eq!(grant.write_paths.last(), Some(&path.display().to_string()));
        assert_eq!(
            grant.write_paths.first().map(String::as_str),
            request.workspace_root.as_deref()
        );
        assert!(grant.blocked_paths[0].ends_with(".git"), "{grant:?}");
        std::fs::create_dir(path.join("locked")).unwrap();
        std::fs::write(path.join("locked/figure.png"), "x").unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            let locked = std::fs::Permissions::from_mode(0o500);
            std::fs::set_permissions(path.join("locked"), locked).unwrap();
        }
        drop(folder);
        assert!(!path.exists(), "{} is left", path.display());
    }
}
