//! Paths a command may not create. An existing read-only or hidden path is masked by the
//! OS sandbox; one that does not exist yet has nothing to mask, and a mount point made for
//! it would change the user's project while the command runs (and an empty
//! `.git/commondir` breaks git). So its absence is noted before the command starts, and
//! whatever appeared there is removed once the command has ended (killed or not), and the
//! removal reported in the tool result (INTEROP.md §10: "refused or reverted").
//!
//! Only paths whose parent folder exists inside a writable tree are watched; a repository
//! the command makes at a tree's root is settled by [`super::new_repo`].

use std::path::{Path, PathBuf};

use super::Plan;

#[derive(Debug, Default)]
pub(crate) struct Revert {
    absent: Vec<(PathBuf, &'static str)>,
    /// Writable roots without a repository before the command.
    bare_roots: Vec<PathBuf>,
}

impl Revert {
    /// Notes which of the plan's read-only and hidden paths do not exist now.
    pub(super) fn before(plan: &Plan) -> Self {
        let watched = |path: &Path| {
            path.symlink_metadata().is_err()
                && path.parent().is_some_and(Path::is_dir)
                && plan.write.iter().any(|root| path.starts_with(root))
        };
        let mut absent = Vec::new();
        for path in plan.read_only.iter().filter(|path| watched(path)) {
            let why = if path.components().any(|part| part.as_os_str() == ".git") {
                "git would run code from it outside the sandbox"
            } else {
                "the policy keeps it read-only"
            };
            absent.push((path.clone(), why));
        }
        for path in plan.hidden.iter().filter(|path| watched(path)) {
            absent.push((path.clone(), "the policy blocks it"));
        }
        Revert {
            absent,
            bare_roots: super::new_repo::watched(&plan.write),
        }
    }

    /// Removes what appeared at the watched paths, and what would run code from a new
    /// repository; one sentence per removal.
    pub(super) fn settle(&self) -> Vec<String> {
        let mut notes = Vec::new();
        for root in &self.bare_roots {
            notes.extend(super::new_repo::settle(root));
        }
        for (path, why) in &self.absent {
            let Ok(meta) = path.symlink_metadata() else {
                continue;
            };
            let removed = if meta.is_dir() {
                std::fs::remove_dir_all(path)
            } else {
                std::fs::remove_file(path)
            };
            notes.push(match removed {
                Ok(()) => format!(
                    "The sandbox removed {}, which commands may not create: {why}.",
                    path.display()
                ),
                Err(error) => format!(
                    "A command created {}, which commands may not create ({why}), and it could not be removed: {error}.",
                    path.display()
                ),
            });
        }
        notes
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn what_a_command_created_at_a_blocked_path_is_removed_and_reported() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().to_path_buf();
        std::fs::create_dir(root.join(".git")).unwrap();
        std::fs::write(root.join(".git/config"), "[core]").unwrap();
        let plan = Plan {
            write: vec![root.clone()],
            read_only: vec![
                root.join(".git/config"),
                root.join(".git/commondir"),
                root.join("new/.git/config"),
            ],
            hidden: vec![root.join(".env")],
            ..Plan::default()
        };
        let revert = Revert::before(&plan);
        std::fs::write(root.join(".git/commondir"), "../evil").unwrap();
        std::fs::write(root.join(".env"), "planted").unwrap();
        std::fs::create_dir_all(root.join("new/.git")).unwrap();
        std::fs::write(root.join("new/.git/config"), "[core]").unwrap();
        let notes = revert.settle();
        assert_eq!(notes.len(), 2, "{notes:?}");
        assert!(notes[0].contains("commondir") && notes[0].contains("git would run code"));
        assert!(notes[1].contains(".env") && notes[1].contains("policy blocks"));
        assert!(!root.join(".git/commondir").exists());
        assert!(!root.join(".env").exists());
        assert!(
            root.join(".git/config").exists(),
            "an existing file is masked, never removed"
        );
        assert!(
            root.join("new/.git/config").exists(),
            "a new repository is the command's own"
        );
    }
}
