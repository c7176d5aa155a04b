//! Hidden paths without a mount view: where user namespaces are refused, Landlock is the
//! whole sandbox, and Landlock only grants — it cannot deny a path beneath a granted one.
//! So reads are granted around the hidden paths instead of over them: on every entry of
//! each folder that holds a hidden path, except the hidden one, descending only along the
//! way to it. The folders on that way (`/`, the home folder) cannot be listed then, but
//! every path in them can be opened by name.
//!
//! A hidden path inside a writable tree cannot be kept this way (the tree's grant covers
//! it, and a command must read back what it writes there): [`Complement::uncovered`] names
//! those.

use std::path::{Path, PathBuf};

/// The read grants that leave the hidden paths out.
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct Complement {
    /// Paths a command may read beneath; `None` when no hidden path needs leaving out
    /// (reads then stay unconfined).
    pub readable: Option<Vec<PathBuf>>,
    /// Hidden paths that stay readable: they lie inside a writable tree.
    pub uncovered: Vec<PathBuf>,
}

/// The read grants beneath `root` (`/` outside tests) that leave out every existing
/// `hidden` path not inside a `writable` tree.
pub(super) fn around(root: &Path, hidden: &[PathBuf], writable: &[PathBuf]) -> Complement {
    let writable: Vec<PathBuf> = writable.iter().filter_map(real).collect();
    let (mut kept, mut uncovered) = (Vec::new(), Vec::new());
    for path in hidden {
        let Some(path) = real(path) else {
            continue;
        };
        if writable.iter().any(|tree| path.starts_with(tree)) {
            uncovered.push(path);
        } else {
            kept.push(path);
        }
    }
    let readable = (!kept.is_empty()).then(|| {
        let mut readable = Vec::new();
        if let Some(root) = real(&root.to_path_buf())
            && !kept.contains(&root)
        {
            beneath(&root, &kept, &mut readable);
        }
        readable
    });
    Complement {
        readable,
        uncovered,
    }
}

/// Grants on the entries of `folder`, which holds a hidden path somewhere beneath it.
fn beneath(folder: &Path, hidden: &[PathBuf], readable: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(folder) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let is_dir = entry.file_type().is_ok_and(|kind| kind.is_dir());
        if hidden.iter().any(|hidden| path.starts_with(hidden)) {
            continue;
        }
        if is_dir && hidden.iter().any(|hidden| hidden.starts_with(&path)) {
            beneath(&path, hidden, readable);
            continue;
        }
        // A grant follows a link: none for one that leads into a hidden path, or to a
        // folder holding one.
        let Some(target) = real(&path) else {
            continue;
        };
        if hidden
            .iter()
            .any(|hidden| target.starts_with(hidden) || hidden.starts_with(&target))
        {
            continue;
        }
        readable.push(path);
    }
}

fn real(path: &PathBuf) -> Option<PathBuf> {
    std::fs::canonicalize(path).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_are_granted_around_hidden_paths_and_links_into_them() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        let home = root.join("home");
        for folder in [
            "home/.ssh",
            "home/.config/gh",
            "home/.config/git",
            "usr/bin",
            "ws",
        ] {
            std::fs::create_dir_all(root.join(folder)).unwrap();
        }
        std::fs::write(home.join(".gitconfig"), "").unwrap();
        std::fs::write(root.join("ws/.env"), "").unwrap();
        std::os::unix::fs::symlink(home.join(".ssh"), home.join("keys")).unwrap();
        std::os::unix::fs::symlink(&home, root.join("alias")).unwrap();
        let hidden = [
            home.join(".ssh"),
            home.join(".config/gh"),
            home.join(".aws"),
            root.join("ws/.env"),
        ];
        let complement = around(&root, &hidden, &[root.join("ws")]);
        let mut readable = complement.readable.unwrap();
        readable.sort();
        assert_eq!(
            readable,
            vec![
                home.join(".config/git"),
                home.join(".gitconfig"),
                root.join("usr"),
                root.join("ws"),
            ]
        );
        assert_eq!(complement.uncovered, vec![root.join("ws/.env")]);
    }

    #[test]
    fn nothing_to_hide_leaves_reads_unconfined() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().join("ws");
        std::fs::create_dir_all(&ws).unwrap();
        std::fs::write(ws.join(".env"), "").unwrap();
        let hidden = [dir.path().join("absent"), ws.join(".env")];
        let complement = around(dir.path(), &hidden, std::slice::from_ref(&ws));
        assert_eq!(complement.readable, None);
        assert_eq!(
            complement.uncovered,
            vec![std::fs::canonicalize(ws.join(".env")).unwrap()]
        );
    }
}
