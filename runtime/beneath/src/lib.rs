//! Opening files so that a path inside a folder stays inside it, whatever links the folder
//! holds. The tool runtime judges a path, then the user may take minutes to approve, or a
//! parallel command may run: a folder or file swapped for a symlink in between would send
//! the tool outside. The sandbox host serves and writes the workspace folder's files for
//! clients while the model's commands may plant links in it. So a path inside the folder is
//! opened relative to a handle of that folder, and the kernel refuses any step of the
//! resolution that leaves it (Linux: `openat2` with `RESOLVE_BENEATH |
//! RESOLVE_NO_MAGICLINKS`; other Unixes, and kernels without `openat2`, a walk one name at
//! a time that follows no link at all; Windows, a walk that opens each name as itself and
//! refuses links and junctions, holding the folders on the way so none can be swapped).
//! Symlinks that stay inside still work under `openat2`.
//! A path outside the folder (granted by the policy by its absolute name) keeps the plain
//! open. [`write`] creates and replaces files beneath a folder, never following a link in
//! the last step (a link there is replaced); [`listing`] walks a folder by handles.

pub mod listing;
pub mod write;

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};

/// The error of a resolution that left the project folder: a symlink (or `..` through one)
/// led out of it.
#[derive(Debug)]
pub struct Escaped {
    pub root: PathBuf,
}

impl std::fmt::Display for Escaped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "a symbolic link on the way leads out of the project folder {}",
            self.root.display()
        )
    }
}

impl std::error::Error for Escaped {}

/// The refusal of a resolution that would leave `root`.
pub(crate) fn escape(root: &Path) -> io::Error {
    io::Error::new(
        io::ErrorKind::PermissionDenied,
        Escaped {
            root: root.to_path_buf(),
        },
    )
}

/// Whether `error` is an [`Escaped`] refusal; its message says where.
pub fn escaped(error: &io::Error) -> Option<&Escaped> {
    error.get_ref().and_then(|inner| inner.downcast_ref())
}

/// How to open: read, or a folder handle for the `*at` calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    Read,
    /// A folder handle (the Unix `*at` calls work relative to it).
    Directory,
}

/// `path` relative to `root` when it lies inside it (lexically: both are resolved already).
fn inside<'a>(root: Option<&'a Path>, path: &'a Path) -> Option<(&'a Path, &'a Path)> {
    let root = root?;
    let relative = path.strip_prefix(root).ok()?;
    Some((root, relative))
}

/// Opens `path` for `access`, beneath `root` when it lies inside it.
pub fn open(root: Option<&Path>, path: &Path, access: Access) -> io::Result<File> {
    match inside(root, path) {
        Some((root, relative)) => imp::open_beneath(root, relative, access),
        None => imp::open_plain(path, access),
    }
}

/// Opens `relative` (no `..`, not absolute) beneath `root`, refusing a resolution that
/// leaves it: the form for callers that hold a folder and a client's relative name.
pub fn open_beneath(root: &Path, relative: &Path, access: Access) -> io::Result<File> {
    imp::open_beneath(root, relative, access)
}

/// Removes the file `target` (a resolved path: no link in it) found by resolving `path`.
/// When `path` lies inside `root`, so must `target`, and the removal happens in a handle of
/// its folder opened beneath `root`: a folder swapped for a link in between cannot send it
/// elsewhere.
pub fn remove_file(root: Option<&Path>, path: &Path, target: &Path) -> io::Result<()> {
    let Some((root, _)) = inside(root, path) else {
        return std::fs::remove_file(target);
    };
    let real_root = std::fs::canonicalize(root)?;
    let (Some(parent), Some(name)) = (target.parent(), target.file_name()) else {
        return Err(io::Error::other("the file has no parent folder"));
    };
    let Ok(relative) = parent.strip_prefix(&real_root) else {
        return Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            Escaped {
                root: root.to_path_buf(),
            },
        ));
    };
    imp::remove_beneath(&real_root, relative, Path::new(name))
}

#[cfg(target_os = "linux")]
mod imp {
    use super::{Access, Escaped};
    use nix::errno::Errno;
    use nix::fcntl::{OFlag, OpenHow, ResolveFlag, openat2};
    use nix::sys::stat::Mode;
    use std::fs::File;
    use std::io;
    use std::path::Path;

    fn flags(access: Access) -> OFlag {
        match access {
            // Non-blocking, so opening a FIFO never waits for a writer (it is refused
            // afterwards as not a regular file).
            Access::Read => OFlag::O_RDONLY | OFlag::O_NONBLOCK | OFlag::O_CLOEXEC,
            Access::Directory => OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC,
        }
    }

    pub(super) fn open_beneath(root: &Path, relative: &Path, access: Access) -> io::Result<File> {
        let dir = nix::fcntl::open(
            root,
            OFlag::O_PATH | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC,
            Mode::empty(),
        )?;
        let relative = if relative.as_os_str().is_empty() {
            Path::new(".")
        } else {
            relative
        };
        let how = OpenHow::new()
            .flags(flags(access))
            .resolve(ResolveFlag::RESOLVE_BENEATH | ResolveFlag::RESOLVE_NO_MAGICLINKS);
        match openat2(&dir, relative, how) {
            Ok(fd) => clear_nonblocking(File::from(fd), access),
            Err(Errno::EXDEV) | Err(Errno::ELOOP) if escapes(root, relative) => {
                Err(io::Error::new(
                    io::ErrorKind::PermissionDenied,
                    Escaped {
                        root: root.to_path_buf(),
                    },
                ))
            }
            // A kernel older than 5.6 (or a seccomp filter) has no openat2: one name at a time,
            // following no link.
            Err(Errno::ENOSYS) => super::walk::open(root, relative, access),
            Err(errno) => Err(errno.into()),
        }
    }

    /// Whether the refusal was the escape (not a symlink loop inside the folder).
    fn escapes(root: &Path, relative: &Path) -> bool {
        match std::fs::canonicalize(root.join(relative)) {
            Ok(real) => std::fs::canonicalize(root).is_ok_and(|root| !real.starts_with(root)),
            Err(_) => true,
        }
    }

    pub(super) fn remove_beneath(root: &Path, folder: &Path, name: &Path) -> io::Result<()> {
        let folder = open_beneath(root, folder, Access::Directory)?;
        nix::unistd::unlinkat(&folder, name, nix::unistd::UnlinkatFlags::NoRemoveDir)?;
        Ok(())
    }

    pub(super) fn open_plain(path: &Path, access: Access) -> io::Result<File> {
        let fd = nix::fcntl::open(path, flags(access), Mode::empty())?;
        clear_nonblocking(File::from(fd), access)
    }

    /// Reads block again once the file is known (O_NONBLOCK was for the open only).
    fn clear_nonblocking(file: File, access: Access) -> io::Result<File> {
        if access == Access::Read {
            let flags = nix::fcntl::fcntl(&file, nix::fcntl::FcntlArg::F_GETFL)?;
            let flags = OFlag::from_bits_truncate(flags) & !OFlag::O_NONBLOCK;
            nix::fcntl::fcntl(&file, nix::fcntl::FcntlArg::F_SETFL(flags))?;
        }
        Ok(file)
    }
}

#[cfg(all(unix, not(target_os = "linux")))]
mod imp {
    use super::Access;
    use std::fs::File;
    use std::io;
    use std::path::Path;

    pub(super) fn open_beneath(root: &Path, relative: &Path, access: Access) -> io::Result<File> {
        super::walk::open(root, relative, access)
    }

    pub(super) fn remove_beneath(root: &Path, folder: &Path, name: &Path) -> io::Result<()> {
        let folder = open_beneath(root, folder, Access::Directory)?;
        nix::unistd::unlinkat(&folder, name, nix::unistd::UnlinkatFlags::NoRemoveDir)?;
        Ok(())
    }

    pub(super) fn open_plain(path: &Path, access: Access) -> io::Result<File> {
        match access {
            Access::Read | Access::Directory => File::open(path),
        }
    }
}

#[cfg(windows)]
mod windows;
#[cfg(windows)]
use windows as imp;

#[cfg(unix)]
mod walk;

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;
    use std::io::Read;

    #[test]
    fn inside_paths_open_and_links_that_stay_inside_work() {
        let root = tempfile::tempdir().unwrap();
        std::fs::create_dir(root.path().join("sub")).unwrap();
        std::fs::write(root.path().join("sub/a.txt"), "hello").unwrap();
        std::os::unix::fs::symlink("sub", root.path().join("link")).unwrap();
        let mut text = String::new();
        open(
            Some(root.path()),
            &root.path().join("link/a.txt"),
            Access::Read,
        )
        .unwrap()
        .read_to_string(&mut text)
        .unwrap();
        assert_eq!(text, "hello");
        assert!(open(Some(root.path()), root.path(), Access::Directory).is_ok());
    }

    #[test]
    fn a_link_out_of_the_root_is_refused_as_an_escape() {
        let root = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret"), "s").unwrap();
        std::os::unix::fs::symlink(outside.path(), root.path().join("out")).unwrap();
        std::os::unix::fs::symlink(outside.path().join("secret"), root.path().join("file"))
            .unwrap();
        for path in ["out/secret", "file"] {
            let error = open(Some(root.path()), &root.path().join(path), Access::Read).unwrap_err();
            assert!(escaped(&error).is_some(), "{path}: {error}");
            assert!(
                error
                    .to_string()
                    .contains("leads out of the project folder")
            );
        }
        // Outside the root, by its own name: the plain open (the policy judged that name).
        assert!(
            open(
                Some(root.path()),
                &outside.path().join("secret"),
                Access::Read
            )
            .is_ok()
        );
        let missing = open(Some(root.path()), &root.path().join("nope"), Access::Read).unwrap_err();
        assert_eq!(missing.kind(), io::ErrorKind::NotFound);
        assert!(escaped(&missing).is_none());
    }

    #[test]
    fn a_removal_stays_beneath_the_root() {
        let root = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("precious"), "p").unwrap();
        std::fs::write(root.path().join("a.txt"), "a").unwrap();
        let path = root.path().join("a.txt");
        let real = std::fs::canonicalize(&path).unwrap();
        remove_file(Some(root.path()), &path, &real).unwrap();
        assert!(!path.exists());
        // A link inside resolved to a file outside: refused, the file stays.
        let link = root.path().join("link");
        std::os::unix::fs::symlink(outside.path().join("precious"), &link).unwrap();
        let target = std::fs::canonicalize(&link).unwrap();
        let error = remove_file(Some(root.path()), &link, &target).unwrap_err();
        assert!(escaped(&error).is_some(), "{error}");
        assert!(outside.path().join("precious").exists());
    }
}
