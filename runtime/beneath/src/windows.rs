//! The resolution beneath a folder on Windows, where no kernel call resolves a name
//! relative to a handle without leaving it: one name at a time, each step opened as itself
//! (`FILE_FLAG_OPEN_REPARSE_POINT`) and refused when it is a link or a junction (a
//! name-surrogate reparse point). Every folder on the way is held open without
//! `FILE_SHARE_DELETE` until the last step is open, so none of them can be renamed, removed
//! or swapped for a link in between; once the walk is over, the folder handle a caller keeps
//! pins its own folder, and NTFS refuses to rename a folder while anything beneath it is
//! open. Like the Unix walk this is stricter than `RESOLVE_BENEATH`: a link that stays inside
//! is refused too. Reparse points that name no other path (cloud placeholders, deduplicated
//! files) are ordinary files here.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::windows::fs::OpenOptionsExt;
use std::path::{Component, Path, PathBuf};

use super::{Access, escape};

/// Without it Windows opens no folder (the open is refused as access denied).
const FILE_FLAG_BACKUP_SEMANTICS: u32 = 0x0200_0000;
/// Opens a link or junction as itself instead of what it names.
const FILE_FLAG_OPEN_REPARSE_POINT: u32 = 0x0020_0000;
const FILE_SHARE_READ: u32 = 0x1;
const FILE_SHARE_WRITE: u32 = 0x2;
const FILE_SHARE_DELETE: u32 = 0x4;

/// Opens `path` as itself. A folder on the way is shared for reading and writing but not
/// for deletion, which is what a rename or a removal of it needs.
fn open_step(path: &Path, pinned: bool) -> io::Result<File> {
    let share = if pinned {
        FILE_SHARE_READ | FILE_SHARE_WRITE
    } else {
        FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE
    };
    OpenOptions::new()
        .read(true)
        .share_mode(share)
        .custom_flags(FILE_FLAG_BACKUP_SEMANTICS | FILE_FLAG_OPEN_REPARSE_POINT)
        .open(path)
}

fn is_link(file: &File) -> io::Result<bool> {
    Ok(file.metadata()?.file_type().is_symlink())
}

pub(super) fn open_beneath(root: &Path, relative: &Path, access: Access) -> io::Result<File> {
    let mut names = Vec::new();
    for part in relative.components() {
        match part {
            Component::Normal(name) => names.push(name),
            Component::CurDir => {}
            _ => return Err(escape(root)),
        }
    }
    // The folder itself was judged by its resolved name: it is opened as it resolves.
    let top = OpenOptions::new()
        .read(true)
        .share_mode(FILE_SHARE_READ | FILE_SHARE_WRITE)
        .custom_flags(FILE_FLAG_BACKUP_SEMANTICS)
        .open(root)?;
    if !top.metadata()?.is_dir() {
        return Err(io::ErrorKind::NotADirectory.into());
    }
    let Some((last, folders)) = names.split_last() else {
        return match access {
            Access::Directory => Ok(top),
            Access::Read => File::open(root),
        };
    };
    let mut held = vec![top];
    let mut path = PathBuf::from(root);
    for name in folders {
        path.push(name);
        let folder = open_step(&path, true)?;
        let metadata = folder.metadata()?;
        if metadata.file_type().is_symlink() {
            return Err(escape(root));
        }
        if !metadata.is_dir() {
            return Err(io::ErrorKind::NotADirectory.into());
        }
        held.push(folder);
    }
    path.push(last);
    let file = open_step(&path, access == Access::Directory)?;
    let metadata = file.metadata()?;
    if metadata.file_type().is_symlink() {
        return Err(escape(root));
    }
    if access == Access::Directory && !metadata.is_dir() {
        return Err(io::ErrorKind::NotADirectory.into());
    }
    // A held folder cannot be renamed, but an empty one can be made a junction in place;
    // one that became a link while the next step was opened is refused now.
    for folder in &held[1..] {
        if is_link(folder)? {
            return Err(escape(root));
        }
    }
    Ok(file)
}

pub(super) fn remove_beneath(root: &Path, folder: &Path, name: &Path) -> io::Result<()> {
    let _pinned = open_beneath(root, folder, Access::Directory)?;
    std::fs::remove_file(root.join(folder).join(name))
}

pub(super) fn open_plain(path: &Path, access: Access) -> io::Result<File> {
    match access {
        Access::Read => File::open(path),
        Access::Directory => {
            let file = OpenOptions::new()
                .read(true)
                .custom_flags(FILE_FLAG_BACKUP_SEMANTICS)
                .open(path)?;
            if !file.metadata()?.is_dir() {
                return Err(io::ErrorKind::NotADirectory.into());
            }
            Ok(file)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    fn read(root: &Path, relative: &str) -> io::Result<String> {
        let mut text = String::new();
        open_beneath(root, Path::new(relative), Access::Read)?.read_to_string(&mut text)?;
        Ok(text)
    }

    #[test]
    fn names_beneath_open_and_climbs_are_refused() {
        let root = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(root.path().join("a").join("b")).unwrap();
        std::fs::write(root.path().join("a").join("b").join("c.txt"), "c").unwrap();
        assert_eq!(read(root.path(), "a/b/c.txt").unwrap(), "c");
        assert!(open_beneath(root.path(), Path::new("a/b"), Access::Directory).is_ok());
        assert!(open_beneath(root.path(), Path::new(""), Access::Directory).is_ok());
        for path in ["../x", "a/../../x"] {
            let error = read(root.path(), path).unwrap_err();
            assert!(crate::escaped(&error).is_some(), "{path}: {error}");
        }
        let missing = read(root.path(), "a/nope").unwrap_err();
        assert_eq!(missing.kind(), io::ErrorKind::NotFound);
        let file_as_folder =
            open_beneath(root.path(), Path::new("a/b/c.txt"), Access::Directory).unwrap_err();
        assert_eq!(file_as_folder.kind(), io::ErrorKind::NotADirectory);
    }

    #[test]
    fn a_held_folder_cannot_be_moved_away() {
        let root = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(root.path().join("a").join("b")).unwrap();
        let held = open_beneath(root.path(), Path::new("a/b"), Access::Directory).unwrap();
        assert!(std::fs::rename(root.path().join("a/b"), root.path().join("moved")).is_err());
        drop(held);
        std::fs::rename(root.path().join("a/b"), root.path().join("moved")).unwrap();
    }

    #[test]
    fn links_and_junctions_are_refused() {
        let root = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret"), "s").unwrap();
        std::fs::create_dir(root.path().join("sub")).unwrap();
        let made = std::os::windows::fs::symlink_dir(outside.path(), root.path().join("out"))
            .and_then(|()| {
                std::os::windows::fs::symlink_file(
                    outside.path().join("secret"),
                    root.path().join("file"),
                )
            })
            .and_then(|()| std::fs::symlink_metadata(root.path().join("out")));
        if !made.is_ok_and(|metadata| metadata.file_type().is_symlink()) {
            // Making links takes a privilege (or developer mode), and Wine 8 makes none.
            eprintln!("skipped: this system made no symbolic link");
            return;
        }
        for path in ["out/secret", "file", "out"] {
            let error = read(root.path(), path).unwrap_err();
            assert!(crate::escaped(&error).is_some(), "{path}: {error}");
        }
        let error = open_beneath(root.path(), Path::new("out"), Access::Directory).unwrap_err();
        assert!(crate::escaped(&error).is_some(), "{error}");
    }
}
