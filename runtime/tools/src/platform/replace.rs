//! Replacing a file by name inside a handle of its folder, so a write judged inside the
//! project folder stays there. The policy checks the path, the user may take minutes to
//! approve and a parallel command may run meanwhile: a folder swapped for a symlink would
//! send a path-based write outside. So the folder is opened once, beneath the project folder
//! ([`super::beneath`]: the kernel refuses a resolution that leaves it), and everything after
//! happens relative to that handle: the look at what is there (never following a link in the
//! last step), the read for the diff, the temporary file's creation and the rename over the
//! name. Missing folders are created one at a time, each beneath the project folder.

use std::ffi::{OsStr, OsString};
#[cfg(unix)]
use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};

use super::beneath::Escaped;
#[cfg(unix)]
use super::beneath::{self, Access};

/// What a name in the folder holds, seen without following a link.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Found {
    Absent,
    File {
        len: u64,
        readonly: bool,
        /// Unix permission bits, kept by the replacement.
        mode: Mode,
    },
    Directory,
    /// A symbolic link where a resolved path found none: swapped in since the check.
    Link,
    /// A pipe, socket or device.
    Special,
}

/// Permission bits as the platform spells them.
#[cfg(unix)]
pub(crate) type Mode = nix::sys::stat::mode_t;
#[cfg(not(unix))]
pub(crate) type Mode = u32;

/// A folder opened for replacing files in it.
#[derive(Debug)]
pub(crate) struct Folder {
    #[cfg(unix)]
    dir: File,
    path: PathBuf,
}

/// The refusal of a path inside `root` whose real location lies outside it.
fn escape(root: &Path) -> io::Error {
    io::Error::new(
        io::ErrorKind::PermissionDenied,
        Escaped {
            root: root.to_path_buf(),
        },
    )
}

/// `path` relative to `root` when `path` lies lexically inside it, with `root` resolved.
fn inside(root: Option<&Path>, path: &Path) -> io::Result<Option<(PathBuf, PathBuf)>> {
    let Some(root) = root else { return Ok(None) };
    let Ok(relative) = path.strip_prefix(root) else {
        return Ok(None);
    };
    Ok(Some((std::fs::canonicalize(root)?, relative.to_path_buf())))
}

/// Creates `folder` and its missing parents (no folder handles on this platform).
#[cfg(not(unix))]
pub(crate) fn create_folders(_root: Option<&Path>, folder: &Path) -> io::Result<()> {
    std::fs::create_dir_all(folder)
}

/// Creates `folder` and its missing parents. Inside `root`, each step is opened beneath it,
/// so a link on the way that leads out is refused instead of followed.
#[cfg(unix)]
pub(crate) fn create_folders(root: Option<&Path>, folder: &Path) -> io::Result<()> {
    let Some((real_root, relative)) = inside(root, folder)? else {
        return std::fs::create_dir_all(folder);
    };
    let mut reached = real_root.clone();
    for part in relative.components() {
        let parent = beneath::open(Some(&real_root), &reached, Access::Directory)?;
        reached.push(part.as_os_str());
        match beneath::open(Some(&real_root), &reached, Access::Directory) {
            Ok(_) => {}
            Err(error) if error.kind() == io::ErrorKind::NotFound => {
                imp::make_folder(&parent, part.as_os_str())?;
            }
            Err(error) => return Err(error),
        }
    }
    Ok(())
}

impl Folder {
    /// Opens the folder of `target`, the resolved form of `path` (no link in it), and
    /// returns it with the file's name. When `path` lies inside `root`, `target` must too,
    /// and the folder is opened beneath `root`.
    pub(crate) fn of(
        root: Option<&Path>,
        path: &Path,
        target: &Path,
    ) -> io::Result<(Folder, OsString)> {
        let (Some(parent), Some(name)) = (target.parent(), target.file_name()) else {
            return Err(io::Error::other(
                "the path does not name a file in a folder",
            ));
        };
        let opened = match inside(root, path)? {
            Some((real_root, _)) => {
                if !parent.starts_with(&real_root) {
                    return Err(escape(root.unwrap_or(&real_root)));
                }
                Folder::open(Some(&real_root), parent)?
            }
            None => Folder::open(None, parent)?,
        };
        Ok((opened, name.to_owned()))
    }

    #[cfg(unix)]
    fn open(root: Option<&Path>, folder: &Path) -> io::Result<Folder> {
        Ok(Folder {
            dir: beneath::open(root, folder, Access::Directory)?,
            path: folder.to_path_buf(),
        })
    }

    #[cfg(not(unix))]
    fn open(_root: Option<&Path>, folder: &Path) -> io::Result<Folder> {
        Ok(Folder {
            path: folder.to_path_buf(),
        })
    }

    /// What `name` holds now, not following a link.
    pub(crate) fn find(&self, name: &OsStr) -> io::Result<Found> {
        imp::find(self, name)
    }

    /// Up to `limit` bytes of the regular file `name` (a link there is refused).
    pub(crate) fn read(&self, name: &OsStr, limit: u64) -> io::Result<Vec<u8>> {
        let file = imp::open_regular(self, name)?;
        let mut bytes = Vec::new();
        io::Read::read_to_end(&mut io::Read::take(file, limit), &mut bytes)?;
        Ok(bytes)
    }

    /// Writes `bytes` to a new temporary file in the folder, flushes it and renames it over
    /// `name`: readers, and the file after a crash, see the old content or the new. `mode`
    /// keeps an existing file's permissions; a new file gets `0666 & !umask`.
    pub(crate) fn replace(&self, name: &OsStr, bytes: &[u8], mode: Option<Mode>) -> io::Result<()> {
        imp::replace(self, name, bytes, mode)
    }

    /// Renames `name` in this folder to `to_name` in `to` (MoveFile), the link itself if it is
    /// one. Without `overwrite` an existing destination fails with `AlreadyExists`, atomically
    /// where the kernel can (Linux `RENAME_NOREPLACE`).
    pub(crate) fn rename(
        &self,
        name: &OsStr,
        to: &Folder,
        to_name: &OsStr,
        overwrite: bool,
    ) -> io::Result<()> {
        imp::rename(self, name, to, to_name, overwrite)
    }
}

/// A temporary name beside `name`, unlikely to be taken (creation refuses one that is).
fn temporary_name(name: &OsStr, attempt: u32) -> OsString {
    use std::time::{SystemTime, UNIX_EPOCH};
    /// The name must stay within the 255-byte limit of common file systems.
    const STEM_BYTES: usize = 100;
    let name = name.to_string_lossy();
    let stem = &name[..crate::output::floor_char_boundary(&name, STEM_BYTES)];
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|elapsed| elapsed.subsec_nanos())
        .unwrap_or_default();
    OsString::from(format!(
        ".{stem}.{:x}{nanos:x}{attempt:x}.tmp",
        std::process::id()
    ))
}

#[cfg(unix)]
mod imp {
    use super::{Folder, Found, Mode, temporary_name};
    use nix::errno::Errno;
    use nix::fcntl::{AtFlags, OFlag, openat, renameat};
    use nix::sys::stat::{FileStat, Mode as Bits, SFlag, fchmod, fstatat, mkdirat};
    use nix::unistd::{UnlinkatFlags, unlinkat};
    use std::ffi::OsStr;
    use std::fs::File;
    use std::io::{self, Write as _};

    pub(super) fn make_folder(parent: &File, name: &OsStr) -> io::Result<()> {
        match mkdirat(parent, name, Bits::from_bits_truncate(0o777)) {
            Ok(()) | Err(Errno::EEXIST) => Ok(()),
            Err(errno) => Err(errno.into()),
        }
    }

    fn found(stat: &FileStat) -> Found {
        let kind = SFlag::from_bits_truncate(stat.st_mode & SFlag::S_IFMT.bits());
        match kind {
            SFlag::S_IFREG => Found::File {
                len: u64::try_from(stat.st_size).unwrap_or_default(),
                readonly: stat.st_mode & 0o222 == 0,
                mode: stat.st_mode & 0o7777,
            },
            SFlag::S_IFDIR => Found::Directory,
            SFlag::S_IFLNK => Found::Link,
            _ => Found::Special,
        }
    }

    pub(super) fn find(folder: &Folder, name: &OsStr) -> io::Result<Found> {
        match fstatat(&folder.dir, name, AtFlags::AT_SYMLINK_NOFOLLOW) {
            Ok(stat) => Ok(found(&stat)),
            Err(Errno::ENOENT) => Ok(Found::Absent),
            Err(errno) => Err(errno.into()),
        }
    }

    /// Opens `name` for reading if it is a regular file. No link is followed, and opening
    /// is non-blocking, so a pipe swapped in never hangs (it is refused after the open).
    pub(super) fn open_regular(folder: &Folder, name: &OsStr) -> io::Result<File> {
        let flags = OFlag::O_RDONLY | OFlag::O_NOFOLLOW | OFlag::O_NONBLOCK | OFlag::O_CLOEXEC;
        let file = File::from(openat(&folder.dir, name, flags, Bits::empty())?);
        if !file.metadata()?.is_file() {
            return Err(io::Error::other("not a regular file"));
        }
        let flags = nix::fcntl::fcntl(&file, nix::fcntl::FcntlArg::F_GETFL)?;
        let flags = OFlag::from_bits_truncate(flags) & !OFlag::O_NONBLOCK;
        nix::fcntl::fcntl(&file, nix::fcntl::FcntlArg::F_SETFL(flags))?;
        Ok(file)
    }

    pub(super) fn rename(
        from: &Folder,
        name: &OsStr,
        to: &Folder,
        to_name: &OsStr,
        overwrite: bool,
    ) -> io::Result<()> {
        #[cfg(target_os = "linux")]
        if !overwrite {
            use nix::fcntl::{RenameFlags, renameat2};
            return match renameat2(
                &from.dir,
                name,
                &to.dir,
                to_name,
                RenameFlags::RENAME_NOREPLACE,
            ) {
                Ok(()) => Ok(()),
                Err(Errno::EEXIST) => Err(io::ErrorKind::AlreadyExists.into()),
                // A file system without the flag: check, then rename.
                Err(Errno::EINVAL) => checked_rename(from, name, to, to_name),
                Err(errno) => Err(errno.into()),
            };
        }
        if overwrite {
            renameat(&from.dir, name, &to.dir, to_name)?;
            return Ok(());
        }
        checked_rename(from, name, to, to_name)
    }

    fn checked_rename(from: &Folder, name: &OsStr, to: &Folder, to_name: &OsStr) -> io::Result<()> {
        if find(to, to_name)? != Found::Absent {
            return Err(io::ErrorKind::AlreadyExists.into());
        }
        renameat(&from.dir, name, &to.dir, to_name)?;
        Ok(())
    }

    pub(super) fn replace(
        folder: &Folder,
        name: &OsStr,
        bytes: &[u8],
        mode: Option<Mode>,
    ) -> io::Result<()> {
        let flags =
            OFlag::O_WRONLY | OFlag::O_CREAT | OFlag::O_EXCL | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
        let create_mode = Bits::from_bits_truncate(mode.unwrap_or(0o666));
        let mut attempt = 0;
        let (temporary, file) = loop {
            let temporary = temporary_name(name, attempt);
            match openat(&folder.dir, temporary.as_os_str(), flags, create_mode) {
                Ok(fd) => break (temporary, File::from(fd)),
                Err(Errno::EEXIST) if attempt < 16 => attempt += 1,
                Err(errno) => return Err(errno.into()),
            }
        };
        let written = (|| -> io::Result<()> {
            let mut file = file;
            // The creation mode went through the umask; an existing file's bits are kept
            // exactly.
            if let Some(mode) = mode {
                fchmod(&file, Bits::from_bits_truncate(mode))?;
            }
            file.write_all(bytes)?;
            file.sync_all()?;
            renameat(&folder.dir, temporary.as_os_str(), &folder.dir, name)?;
            Ok(())
        })();
        if let Err(error) = written {
            let _ = unlinkat(
                &folder.dir,
                temporary.as_os_str(),
                UnlinkatFlags::NoRemoveDir,
            );
            return Err(error);
        }
        // The rename itself is durable only once the folder is flushed (best effort).
        if let Err(error) = folder.dir.sync_all() {
            tracing::debug!(%error, dir = %folder.path.display(), "could not flush the folder");
        }
        Ok(())
    }
}

#[cfg(not(unix))]
mod imp {
    use super::{Folder, Found, temporary_name};
    use std::ffi::OsStr;
    use std::fs::{self, File};
    use std::io::{self, ErrorKind, Write as _};

    pub(super) fn find(folder: &Folder, name: &OsStr) -> io::Result<Found> {
        match fs::symlink_metadata(folder.path.join(name)) {
            Ok(metadata) if metadata.is_file() => Ok(Found::File {
                len: metadata.len(),
                readonly: metadata.permissions().readonly(),
                mode: 0,
            }),
            Ok(metadata) if metadata.is_dir() => Ok(Found::Directory),
            Ok(metadata) if metadata.is_symlink() => Ok(Found::Link),
            Ok(_) => Ok(Found::Special),
            Err(error) if error.kind() == ErrorKind::NotFound => Ok(Found::Absent),
            Err(error) => Err(error),
        }
    }

    pub(super) fn open_regular(folder: &Folder, name: &OsStr) -> io::Result<File> {
        File::open(folder.path.join(name))
    }

    pub(super) fn rename(
        from: &Folder,
        name: &OsStr,
        to: &Folder,
        to_name: &OsStr,
        overwrite: bool,
    ) -> io::Result<()> {
        let destination = to.path.join(to_name);
        if !overwrite && fs::symlink_metadata(&destination).is_ok() {
            return Err(ErrorKind::AlreadyExists.into());
        }
        fs::rename(from.path.join(name), destination)
    }

    pub(super) fn replace(
        folder: &Folder,
        name: &OsStr,
        bytes: &[u8],
        _mode: Option<super::Mode>,
    ) -> io::Result<()> {
        let temporary = folder.path.join(temporary_name(name, 0));
        let mut file = fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&temporary)?;
        let written = file
            .write_all(bytes)
            .and_then(|()| file.sync_all())
            .and_then(|()| fs::rename(&temporary, folder.path.join(name)));
        if written.is_err() {
            let _ = fs::remove_file(&temporary);
        }
        written
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn a_folder_swapped_for_a_link_out_receives_nothing() {
        let root = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::create_dir(root.path().join("sub")).unwrap();
        let path = root.path().join("sub/a.txt");
        let target = std::fs::canonicalize(root.path().join("sub"))
            .unwrap()
            .join("a.txt");
        // Checked as above, then the folder becomes a link out before the write.
        std::fs::remove_dir(root.path().join("sub")).unwrap();
        std::os::unix::fs::symlink(outside.path(), root.path().join("sub")).unwrap();
        let error = Folder::of(Some(root.path()), &path, &target).unwrap_err();
        assert!(beneath::escaped(&error).is_some(), "{error}");
        assert!(!outside.path().join("a.txt").exists());
    }

    #[test]
    fn a_file_swapped_for_a_link_is_replaced_not_followed() {
        let root = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("precious"), "keep").unwrap();
        let path = root.path().join("a.txt");
        std::fs::write(&path, "old").unwrap();
        let target = std::fs::canonicalize(&path).unwrap();
        let (folder, name) = Folder::of(Some(root.path()), &path, &target).unwrap();
        std::fs::remove_file(&path).unwrap();
        std::os::unix::fs::symlink(outside.path().join("precious"), &path).unwrap();
        assert_eq!(folder.find(&name).unwrap(), Found::Link);
        assert!(folder.read(&name, 100).is_err());
        folder.replace(&name, b"new", None).unwrap();
        assert_eq!(
            std::fs::read_to_string(outside.path().join("precious")).unwrap(),
            "keep"
        );
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "new");
        let names: Vec<_> = std::fs::read_dir(root.path()).unwrap().collect();
        assert_eq!(names.len(), 1, "no temporary file is left");
    }

    #[test]
    fn folders_are_created_beneath_the_root_only() {
        let root = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        create_folders(Some(root.path()), &root.path().join("a/b/c")).unwrap();
        assert!(root.path().join("a/b/c").is_dir());
        std::os::unix::fs::symlink(outside.path(), root.path().join("out")).unwrap();
        let error =
            create_folders(Some(root.path()), &root.path().join("out/new/deeper")).unwrap_err();
        assert!(beneath::escaped(&error).is_some(), "{error}");
        assert!(!outside.path().join("new").exists());
        // A link that stays inside is followed.
        std::os::unix::fs::symlink("a", root.path().join("inner")).unwrap();
        create_folders(Some(root.path()), &root.path().join("inner/d")).unwrap();
        assert!(root.path().join("a/d").is_dir());
    }

    #[test]
    fn a_resolved_target_outside_the_root_is_refused() {
        let root = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let path = root.path().join("link.txt");
        let target = std::fs::canonicalize(outside.path()).unwrap().join("x.txt");
        let error = Folder::of(Some(root.path()), &path, &target).unwrap_err();
        assert!(beneath::escaped(&error).is_some(), "{error}");
        // A path outside the root by its own name is the policy's call.
        let own = outside.path().join("x.txt");
        let (folder, name) = Folder::of(Some(root.path()), &own, &target).unwrap();
        folder.replace(&name, b"x", None).unwrap();
        assert_eq!(std::fs::read_to_string(&own).unwrap(), "x");
    }
}
