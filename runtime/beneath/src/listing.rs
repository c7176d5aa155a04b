//! Every regular file beneath a folder, walked by folder handles opened beneath it: a
//! folder swapped for a link during the walk is refused, not entered, and links themselves
//! are not listed (they are not the folder's files).

use std::io;
use std::path::{Path, PathBuf};

/// One regular file: its `/`-separated path relative to the folder, and its size.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub path: String,
    pub size: u64,
}

/// Every regular file beneath `root`, sorted by path.
pub fn files(root: &Path) -> io::Result<Vec<Entry>> {
    let mut found = Vec::new();
    let mut pending = vec![PathBuf::new()];
    while let Some(folder) = pending.pop() {
        for (name, kind) in imp::entries(root, &folder)? {
            let relative = folder.join(&name);
            match kind {
                Kind::Folder => pending.push(relative),
                Kind::File(size) => found.push(Entry {
                    path: relative
                        .components()
                        .map(|part| part.as_os_str().to_string_lossy().into_owned())
                        .collect::<Vec<_>>()
                        .join("/"),
                    size,
                }),
                Kind::Other => {}
            }
        }
    }
    found.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(found)
}

enum Kind {
    Folder,
    File(u64),
    Other,
}

#[cfg(unix)]
mod imp {
    use super::Kind;
    use crate::{Access, open_beneath};
    use nix::dir::Dir;
    use nix::fcntl::AtFlags;
    use nix::sys::stat::{SFlag, fstatat};
    use std::ffi::{OsStr, OsString};
    use std::io;
    use std::os::unix::ffi::OsStrExt;
    use std::path::Path;

    pub(super) fn entries(root: &Path, folder: &Path) -> io::Result<Vec<(OsString, Kind)>> {
        let handle = open_beneath(root, folder, Access::Directory)?;
        let mut dir = Dir::from_fd(handle.into())?;
        let mut names = Vec::new();
        for entry in dir.iter() {
            let name = OsStr::from_bytes(entry?.file_name().to_bytes()).to_owned();
            if name != "." && name != ".." {
                names.push(name);
            }
        }
        let mut out = Vec::with_capacity(names.len());
        for name in names {
            let Ok(stat) = fstatat(&dir, name.as_os_str(), AtFlags::AT_SYMLINK_NOFOLLOW) else {
                continue;
            };
            let kind = match SFlag::from_bits_truncate(stat.st_mode & SFlag::S_IFMT.bits()) {
                SFlag::S_IFDIR => Kind::Folder,
                SFlag::S_IFREG => Kind::File(u64::try_from(stat.st_size).unwrap_or_default()),
                _ => Kind::Other,
            };
            out.push((name, kind));
        }
        Ok(out)
    }
}

#[cfg(not(unix))]
mod imp {
    use super::Kind;
    use std::ffi::OsString;
    use std::io;
    use std::path::Path;

    pub(super) fn entries(root: &Path, folder: &Path) -> io::Result<Vec<(OsString, Kind)>> {
        // Resolved beneath the root and held while it is read: the folder cannot be swapped
        // for a link under the listing.
        let _held = crate::open_beneath(root, folder, crate::Access::Directory)?;
        let mut out = Vec::new();
        for entry in std::fs::read_dir(root.join(folder))? {
            let entry = entry?;
            // A link or junction is neither a folder nor a file here (`FileType` says so
            // from the entry's reparse tag), so it is neither entered nor listed.
            let kind = entry.file_type()?;
            let kind = if kind.is_dir() {
                Kind::Folder
            } else if kind.is_file() {
                Kind::File(entry.metadata()?.len())
            } else {
                Kind::Other
            };
            out.push((entry.file_name(), kind));
        }
        Ok(out)
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn links_are_neither_listed_nor_entered() {
        let root = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret"), "s").unwrap();
        std::fs::create_dir(root.path().join("sub")).unwrap();
        std::fs::write(root.path().join("sub/b.txt"), "bb").unwrap();
        std::fs::write(root.path().join("a.txt"), "a").unwrap();
        std::os::unix::fs::symlink(outside.path(), root.path().join("out")).unwrap();
        std::os::unix::fs::symlink(outside.path().join("secret"), root.path().join("s")).unwrap();
        let listed = files(root.path()).unwrap();
        let paths: Vec<&str> = listed.iter().map(|entry| entry.path.as_str()).collect();
        assert_eq!(paths, ["a.txt", "sub/b.txt"]);
        assert_eq!(listed[1].size, 2);
    }
}
