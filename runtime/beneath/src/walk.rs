//! The resolution beneath a folder without `openat2` (other Unix systems, or a Linux kernel
//! or seccomp filter without it): one name at a time from a handle of the folder, following
//! no link at all and refusing `..`. Stricter than `RESOLVE_BENEATH` (a link that stays
//! inside is refused too), never looser.

use std::fs::File;
use std::io;
use std::path::{Component, Path};

use nix::errno::Errno;
use nix::fcntl::{AtFlags, OFlag, openat};
use nix::sys::stat::{Mode, SFlag, fstatat};

use super::{Access, escape};

fn flags(access: Access) -> OFlag {
    match access {
        Access::Read => OFlag::O_RDONLY | OFlag::O_NONBLOCK | OFlag::O_CLOEXEC,
        Access::Directory => OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC,
    }
}

/// Whether `name` in `dir` is a symbolic link (the cause of an ELOOP or ENOTDIR).
fn is_link(dir: &File, name: &std::ffi::OsStr) -> bool {
    fstatat(dir, name, AtFlags::AT_SYMLINK_NOFOLLOW).is_ok_and(|stat| {
        SFlag::from_bits_truncate(stat.st_mode & SFlag::S_IFMT.bits()) == SFlag::S_IFLNK
    })
}

pub(crate) fn open(root: &Path, relative: &Path, access: Access) -> io::Result<File> {
    let mut dir = File::from(nix::fcntl::open(
        root,
        flags(Access::Directory),
        Mode::empty(),
    )?);
    let mut names = Vec::new();
    for part in relative.components() {
        match part {
            Component::Normal(name) => names.push(name),
            Component::CurDir => {}
            _ => return Err(escape(root)),
        }
    }
    let Some((last, folders)) = names.split_last() else {
        return match access {
            Access::Directory => Ok(dir),
            Access::Read => finish(
                File::from(nix::fcntl::open(root, flags(access), Mode::empty())?),
                access,
            ),
        };
    };
    for name in folders {
        let step = flags(Access::Directory) | OFlag::O_NOFOLLOW;
        dir = match openat(&dir, *name, step, Mode::empty()) {
            Ok(fd) => File::from(fd),
            Err(Errno::ELOOP | Errno::ENOTDIR) if is_link(&dir, name) => {
                return Err(escape(root));
            }
            Err(errno) => return Err(errno.into()),
        };
    }
    match openat(
        &dir,
        *last,
        flags(access) | OFlag::O_NOFOLLOW,
        Mode::empty(),
    ) {
        Ok(fd) => finish(File::from(fd), access),
        Err(Errno::ELOOP | Errno::ENOTDIR) if is_link(&dir, last) => Err(escape(root)),
        Err(errno) => Err(errno.into()),
    }
}

/// Reads block again once the file is known (O_NONBLOCK was for the open only).
fn finish(file: File, access: Access) -> io::Result<File> {
    if access == Access::Read {
        let flags = nix::fcntl::fcntl(&file, nix::fcntl::FcntlArg::F_GETFL)?;
        let flags = OFlag::from_bits_truncate(flags) & !OFlag::O_NONBLOCK;
        nix::fcntl::fcntl(&file, nix::fcntl::FcntlArg::F_SETFL(flags))?;
    }
    Ok(file)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_walk_refuses_every_link_and_climb() {
        let root = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::create_dir(root.path().join("sub")).unwrap();
        std::fs::write(root.path().join("sub/a.txt"), "a").unwrap();
        std::fs::write(outside.path().join("secret"), "s").unwrap();
        std::os::unix::fs::symlink(outside.path(), root.path().join("out")).unwrap();
        std::os::unix::fs::symlink(outside.path().join("secret"), root.path().join("file"))
            .unwrap();
        assert!(open(root.path(), Path::new("sub/a.txt"), Access::Read).is_ok());
        assert!(open(root.path(), Path::new("sub"), Access::Directory).is_ok());
        for path in ["out/secret", "file", "../x", "sub/../../x"] {
            let error = open(root.path(), Path::new(path), Access::Read).unwrap_err();
            assert!(super::super::escaped(&error).is_some(), "{path}: {error}");
        }
        let missing = open(root.path(), Path::new("nope"), Access::Read).unwrap_err();
        assert_eq!(missing.kind(), io::ErrorKind::NotFound);
    }
}
