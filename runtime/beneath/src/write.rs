//! Creating files beneath a folder so that a write stays inside it. Missing folders are
//! made one at a time, each opened beneath the folder (a link on the way that leads out is
//! refused, not followed); the content goes to a new temporary file in a handle of its
//! folder and is renamed over the name at the end, so a link planted at the name is
//! replaced, never written through, and readers see the old content or the new.

use std::ffi::OsString;
use std::fs::File;
use std::io::{self, Write};
use std::path::{Component, Path, PathBuf};

use super::{Access, escape, open_beneath};

/// The folder part and the name of a relative path; a climb, a root or an empty path is
/// refused as leaving `root`.
fn split(root: &Path, relative: &Path) -> io::Result<(PathBuf, OsString)> {
    let mut folder = PathBuf::new();
    let mut names = Vec::new();
    for part in relative.components() {
        match part {
            Component::Normal(name) => names.push(name.to_owned()),
            Component::CurDir => {}
            _ => return Err(escape(root)),
        }
    }
    let Some(name) = names.pop() else {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "the path names no file",
        ));
    };
    for part in names {
        folder.push(part);
    }
    Ok((folder, name))
}

/// Creates the folder `relative` and its missing parents beneath `root`.
pub fn create_folders(root: &Path, relative: &Path) -> io::Result<()> {
    let mut reached = PathBuf::new();
    for part in relative.components() {
        let Component::Normal(name) = part else {
            if part == Component::CurDir {
                continue;
            }
            return Err(escape(root));
        };
        let parent = open_beneath(root, &reached, Access::Directory)?;
        reached.push(name);
        match open_beneath(root, &reached, Access::Directory) {
            Ok(_) => {}
            Err(error) if error.kind() == io::ErrorKind::NotFound => {
                imp::make_folder(&parent, root, &reached)?;
            }
            Err(error) => return Err(error),
        }
    }
    Ok(())
}

/// A file being written beneath a folder: the bytes go to a temporary file beside the name,
/// which [`NewFile::commit`] renames over it. Dropped uncommitted, the temporary file goes.
#[derive(Debug)]
pub struct NewFile {
    folder: File,
    folder_path: PathBuf,
    temporary: OsString,
    name: OsString,
    file: Option<File>,
}

/// Starts writing `relative` beneath `root`, creating its missing folders.
pub fn create(root: &Path, relative: &Path) -> io::Result<NewFile> {
    let (folder_rel, name) = split(root, relative)?;
    create_folders(root, &folder_rel)?;
    let folder = open_beneath(root, &folder_rel, Access::Directory)?;
    let folder_path = root.join(&folder_rel);
    let mut attempt = 0;
    loop {
        let temporary = temporary_name(&name, attempt);
        match imp::create_new(&folder, &folder_path, &temporary) {
            Ok(file) => {
                return Ok(NewFile {
                    folder,
                    folder_path,
                    temporary,
                    name,
                    file: Some(file),
                });
            }
            Err(error) if error.kind() == io::ErrorKind::AlreadyExists && attempt < 16 => {
                attempt += 1;
            }
            Err(error) => return Err(error),
        }
    }
}

impl NewFile {
    /// Flushes the content and renames it over the name (a link there is replaced).
    pub fn commit(mut self) -> io::Result<()> {
        if let Some(file) = self.file.take() {
            file.sync_all()?;
        }
        imp::rename(&self.folder, &self.folder_path, &self.temporary, &self.name)?;
        self.temporary.clear();
        Ok(())
    }
}

impl Write for NewFile {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        match self.file.as_mut() {
            Some(file) => file.write(bytes),
            None => Err(io::Error::other("the file is already committed")),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file.as_mut().map_or(Ok(()), Write::flush)
    }
}

impl Drop for NewFile {
    fn drop(&mut self) {
        if !self.temporary.is_empty() {
            self.file.take();
            imp::remove(&self.folder, &self.folder_path, &self.temporary);
        }
    }
}

/// A temporary name beside `name`, unlikely to be taken (creation refuses one that is).
fn temporary_name(name: &std::ffi::OsStr, attempt: u32) -> OsString {
    use std::time::{SystemTime, UNIX_EPOCH};
    let name = name.to_string_lossy();
    let stem: String = name.chars().take(64).collect();
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|elapsed| elapsed.subsec_nanos())
        .unwrap_or_default();
    OsString::from(format!(
        ".{stem}.{:x}{nanos:x}{attempt:x}.part",
        std::process::id()
    ))
}

#[cfg(unix)]
mod imp {
    use nix::errno::Errno;
    use nix::fcntl::{OFlag, openat, renameat};
    use nix::sys::stat::{Mode, mkdirat};
    use nix::unistd::{UnlinkatFlags, unlinkat};
    use std::ffi::OsStr;
    use std::fs::File;
    use std::io;
    use std::path::Path;

    pub(super) fn make_folder(parent: &File, _root: &Path, reached: &Path) -> io::Result<()> {
        let Some(name) = reached.file_name() else {
            return Err(io::Error::other("the folder has no name"));
        };
        match mkdirat(parent, name, Mode::from_bits_truncate(0o777)) {
            Ok(()) | Err(Errno::EEXIST) => Ok(()),
            Err(errno) => Err(errno.into()),
        }
    }

    pub(super) fn create_new(folder: &File, _path: &Path, name: &OsStr) -> io::Result<File> {
        let flags =
            OFlag::O_WRONLY | OFlag::O_CREAT | OFlag::O_EXCL | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
        Ok(File::from(openat(
            folder,
            name,
            flags,
            Mode::from_bits_truncate(0o666),
        )?))
    }

    pub(super) fn rename(folder: &File, _path: &Path, from: &OsStr, to: &OsStr) -> io::Result<()> {
        renameat(folder, from, folder, to)?;
        Ok(())
    }

    pub(super) fn remove(folder: &File, _path: &Path, name: &OsStr) {
        let _ = unlinkat(folder, name, UnlinkatFlags::NoRemoveDir);
    }
}

#[cfg(not(unix))]
mod imp {
    use std::ffi::OsStr;
    use std::fs::{self, File};
    use std::io;
    use std::path::Path;

    pub(super) fn make_folder(_parent: &File, root: &Path, reached: &Path) -> io::Result<()> {
        match fs::create_dir(root.join(reached)) {
            Err(error) if error.kind() != io::ErrorKind::AlreadyExists => Err(error),
            _ => Ok(()),
        }
    }

    pub(super) fn create_new(_folder: &File, path: &Path, name: &OsStr) -> io::Result<File> {
        fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(path.join(name))
    }

    pub(super) fn rename(_folder: &File, path: &Path, from: &OsStr, to: &OsStr) -> io::Result<()> {
        fs::rename(path.join(from), path.join(to))
    }

    pub(super) fn remove(_folder: &File, path: &Path, name: &OsStr) {
        let _ = fs::remove_file(path.join(name));
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn a_link_at_the_name_is_replaced_and_a_linked_folder_refused() {
        let root = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("precious"), "keep").unwrap();
        std::os::unix::fs::symlink(outside.path().join("precious"), root.path().join("a.txt"))
            .unwrap();
        std::os::unix::fs::symlink(outside.path(), root.path().join("out")).unwrap();
        let mut file = create(root.path(), Path::new("a.txt")).unwrap();
        file.write_all(b"new").unwrap();
        file.commit().unwrap();
        assert_eq!(
            std::fs::read_to_string(outside.path().join("precious")).unwrap(),
            "keep"
        );
        assert!(!root.path().join("a.txt").is_symlink());
        assert_eq!(
            std::fs::read_to_string(root.path().join("a.txt")).unwrap(),
            "new"
        );
        let error = create(root.path(), Path::new("out/new.txt")).unwrap_err();
        assert!(crate::escaped(&error).is_some(), "{error}");
        assert!(!outside.path().join("new.txt").exists());
        let error = create(root.path(), Path::new("out/deeper/new.txt")).unwrap_err();
        assert!(crate::escaped(&error).is_some(), "{error}");
        assert!(!outside.path().join("deeper").exists());
        // New folders are made inside; an abandoned file leaves nothing behind.
        let mut file = create(root.path(), Path::new("x/y/z.txt")).unwrap();
        file.write_all(b"z").unwrap();
        drop(file);
        assert_eq!(
            std::fs::read_dir(root.path().join("x/y")).unwrap().count(),
            0
        );
    }
}
