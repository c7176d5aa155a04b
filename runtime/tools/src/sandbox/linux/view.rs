//! The command's mount view, built by the launcher in namespaces of its own (a user
//! namespace, so no privilege is needed): every mount of the machine read-only; the granted
//! trees writable; the tool caches writable through a private overlay layer; read-only and
//! hidden paths masked; a minimal `/dev` with a private `devpts`; `/run` empty; `/tmp` the
//! private temporary folder. The command's PID namespace mounts its own `/proc` (`init`).
//!
//! Mounts made here belong to the sandbox's user namespace and are gone with it; nothing
//! changes on the machine. A remount that fails (a mount locked by the kernel) leaves that
//! mount as it was: the Landlock wall still holds writes to the grants.

use std::ffi::OsString;
use std::os::unix::fs::{OpenOptionsExt as _, PermissionsExt as _};
use std::path::{Path, PathBuf};

use nix::mount::{MntFlags, MsFlags, mount, umount2};
use nix::sched::{CloneFlags, unshare};

use super::super::Plan;

const NONE: Option<&str> = None;

/// What the launcher keeps after building the view: the command's plan as seen inside it,
/// and what to remove once the command has ended.
#[derive(Debug)]
pub(super) struct View {
    /// The plan with paths as the view shows them (the private temporary folder is `/tmp`).
    pub plan: Plan,
    /// Whether `/tmp` is the private temporary folder.
    pub tmp_is_private: bool,
    /// A scratch folder made on the machine, where `/run` could not hold the scratch space.
    leftover: Option<PathBuf>,
    /// The private temporary folder on the machine.
    tmp: Option<PathBuf>,
    /// What could not be made as planned.
    pub problems: Vec<String>,
}

impl View {
    /// Removes what the view left on the machine once the command has ended (through the
    /// view: the private temporary folder may be `/tmp` by now). Usually nothing: the
    /// scratch space and the cache layers live in a memory file system that ends with the
    /// namespace, and so do the mounts — no unmount, no folder to remove, no write-back.
    pub(super) fn finish(self) {
        let Some(folder) = self.leftover else {
            return;
        };
        let seen = match (&self.tmp, self.tmp_is_private) {
            (Some(tmp), true) => folder
                .strip_prefix(tmp)
                .map_or_else(|_| folder.clone(), |rest| Path::new("/tmp").join(rest)),
            _ => folder.clone(),
        };
        let _ = umount2(seen.as_path(), MntFlags::MNT_DETACH);
        remove_tree(&seen);
    }
}

/// Enters user, mount, PID, IPC and network namespaces of its own (no network namespace
/// for a network the plan leaves unconfined); `Err` when the kernel refuses (nothing
/// changed then, and the caller may confine on the host's namespaces).
pub(super) fn unshare_all(plan: &Plan) -> Result<(), String> {
    let (uid, gid) = (nix::unistd::getuid(), nix::unistd::getgid());
    let mut namespaces = CloneFlags::CLONE_NEWUSER
        | CloneFlags::CLONE_NEWNS
        | CloneFlags::CLONE_NEWPID
        | CloneFlags::CLONE_NEWIPC;
    if !plan.unconfined_network() {
        namespaces |= CloneFlags::CLONE_NEWNET;
    }
    unshare(namespaces).map_err(|error| format!("no namespaces of its own: {error}"))?;
    let write = |file: &str, text: String| {
        std::fs::write(file, text).map_err(|error| format!("{file}: {error}"))
    };
    // Absent before Linux 3.19, where gid_map needs no such step.
    if Path::new("/proc/self/setgroups").exists() {
        write("/proc/self/setgroups", "deny".to_owned())?;
    }
    write("/proc/self/uid_map", format!("{uid} {uid} 1\n"))?;
    write("/proc/self/gid_map", format!("{gid} {gid} 1\n"))?;
    mount(NONE, "/", NONE, MsFlags::MS_REC | MsFlags::MS_PRIVATE, NONE)
        .map_err(|error| format!("mounts could not be made private: {error}"))
}

/// Builds the view (after [`unshare_all`]) and returns to the working folder through it.
pub(super) fn build(plan: &Plan) -> View {
    let mut problems = Vec::new();
    let cwd = std::env::current_dir().ok();
    let machine_mounts = mount_points();
    for point in &machine_mounts {
        // A mount the kernel keeps as it is stays so; Landlock holds writes anyway.
        let _ = remount(point, true);
    }
    for tree in plan.write.iter().filter(|tree| tree.exists()) {
        if let Err(error) = bind(tree, tree, false) {
            problems.push(format!("{} is not writable: {error}", tree.display()));
        }
    }
    // The scratch space (the masks, the private `/dev`, the cache layers) is a memory file
    // system mounted at `/run`, which an empty one covers once the view is made; where
    // `/run` is missing, a folder of the private temporary folder holds it.
    let (scratch, leftover) = match scratch_space(plan) {
        Ok(place) => place,
        Err(error) => {
            problems.push(format!("no scratch space for the view: {error}"));
            (None, None)
        }
    };
    if let Some(scratch) = &scratch {
        for (index, cache) in plan.caches.iter().enumerate() {
            if let Err(error) = private_layer(cache, scratch, index) {
                problems.push(format!("{} stays read-only: {error}", cache.display()));
            }
        }
    }
    for path in plan.read_only.iter().filter(|path| path.exists()) {
        if let Err(error) = bind(path, path, true) {
            problems.push(format!("{} stays writable: {error}", path.display()));
        }
    }
    if let Some(scratch) = &scratch {
        for path in &plan.hidden {
            if let Err(error) = hide(path, scratch) {
                problems.push(format!("{} stays readable: {error}", path.display()));
            }
        }
        if let Err(error) = private_dev(scratch) {
            problems.push(format!("/dev is the machine's: {error}"));
        }
    }
    // An empty `/run` over the machine's (or over the scratch space: the masks, `/dev` and
    // the layers keep what they need of it).
    if Path::new("/run").is_dir()
        && let Err(error) = tmpfs(Path::new("/run"), "mode=0755,size=1m", false)
    {
        problems.push(format!("/run is the machine's: {error}"));
    }
    let mut view_plan = plan.clone();
    let mut tmp_is_private = false;
    if let Some(tmp) = plan
        .tmp
        .as_ref()
        .filter(|tmp| tmp.as_path() != Path::new("/tmp"))
        && Path::new("/tmp").is_dir()
    {
        let kept = held_under_tmp(plan, tmp);
        match mount(
            Some(tmp.as_path()),
            "/tmp",
            NONE,
            MsFlags::MS_BIND | MsFlags::MS_REC,
            NONE,
        ) {
            Ok(()) => {
                tmp_is_private = true;
                for (tree, fd) in &kept {
                    if let Err(error) = bind_held(tree, fd) {
                        problems.push(format!("{} is out of reach: {error}", tree.display()));
                    }
                }
                let inside = |path: &PathBuf| match path.strip_prefix(tmp) {
                    Ok(rest) => Path::new("/tmp").join(rest),
                    Err(_) => path.clone(),
                };
                view_plan.proxy_socket = plan.proxy_socket.as_ref().map(inside);
                view_plan.write = plan.write.iter().map(inside).collect();
                view_plan.tmp = Some(PathBuf::from("/tmp"));
            }
            Err(error) => problems.push(format!("/tmp is the machine's: {error}")),
        }
    }
    if let Some(cwd) = cwd
        && let Err(error) = std::env::set_current_dir(&cwd)
    {
        problems.push(format!("{} cannot be entered: {error}", cwd.display()));
    }
    View {
        plan: view_plan,
        tmp_is_private,
        leftover,
        tmp: plan.tmp.clone(),
        problems,
    }
}

/// The granted trees under `/tmp` (a project in a temporary folder) and the home folder
/// when it is there (a test harness's, a CI job's), held open before `/tmp` is covered so
/// they can be bound again at their place after, with the masks and layers inside them.
fn held_under_tmp(plan: &Plan, tmp: &Path) -> Vec<(PathBuf, std::os::fd::OwnedFd)> {
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let mut trees: Vec<&PathBuf> = plan.write.iter().chain(&home).collect();
    trees.sort();
    trees.dedup();
    trees
        .iter()
        .copied()
        .filter(|tree| {
            tree.starts_with("/tmp")
                && tree.as_path() != Path::new("/tmp")
                && *tree != tmp
                && tree.exists()
        })
        .filter(|tree| {
            // One inside another comes with it.
            !plan
                .write
                .iter()
                .chain(&home)
                .any(|outer| outer != *tree && tree.starts_with(outer))
        })
        .filter_map(|tree| {
            nix::fcntl::open(
                tree.as_path(),
                nix::fcntl::OFlag::O_PATH | nix::fcntl::OFlag::O_CLOEXEC,
                nix::sys::stat::Mode::empty(),
            )
            .ok()
            .map(|fd| (tree.clone(), fd))
        })
        .collect()
}

/// The mount points of this mount namespace, parents first, from `/proc/self/mountinfo`
/// (whose fifth field escapes space, tab, newline and backslash in octal).
fn mount_points() -> Vec<PathBuf> {
    let Ok(text) = std::fs::read_to_string("/proc/self/mountinfo") else {
        return Vec::new();
    };
    text.lines()
        .filter_map(|line| line.split(' ').nth(4))
        .map(unescape)
        .collect()
}

fn unescape(field: &str) -> PathBuf {
    use std::os::unix::ffi::OsStringExt as _;
    let bytes = field.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut index = 0;
    while index < bytes.len() {
        let octal = bytes
            .get(index + 1..index + 4)
            .filter(|digits| {
                bytes[index] == b'\\' && digits.iter().all(|d| (b'0'..=b'7').contains(d))
            })
            .map(|d| (d[0] - b'0') * 64 + (d[1] - b'0') * 8 + (d[2] - b'0'));
        match octal {
            Some(byte) => {
                out.push(byte);
                index += 4;
            }
            None => {
                out.push(bytes[index]);
                index += 1;
            }
        }
    }
    PathBuf::from(OsString::from_vec(out))
}

/// The flags the kernel locked on a mount seen from a user namespace: a remount must keep
/// them.
pub(super) fn locked_flags(flags: nix::sys::statvfs::FsFlags) -> MsFlags {
    use nix::sys::statvfs::FsFlags;
    [
        (FsFlags::ST_NOSUID, MsFlags::MS_NOSUID),
        (FsFlags::ST_NODEV, MsFlags::MS_NODEV),
        (FsFlags::ST_NOEXEC, MsFlags::MS_NOEXEC),
        (FsFlags::ST_NOATIME, MsFlags::MS_NOATIME),
        (FsFlags::ST_NODIRATIME, MsFlags::MS_NODIRATIME),
        (FsFlags::ST_RELATIME, MsFlags::MS_RELATIME),
    ]
    .into_iter()
    .filter(|(statvfs, _)| flags.contains(*statvfs))
    .fold(MsFlags::empty(), |all, (_, mount)| all | mount)
}

/// Remounts the mount at `point` read-only or writable, keeping its locked flags.
fn remount(point: &Path, read_only: bool) -> nix::Result<()> {
    let stat = nix::sys::statvfs::statvfs(point)?;
    let mut flags = MsFlags::MS_BIND | MsFlags::MS_REMOUNT | locked_flags(stat.flags());
    if read_only {
        flags |= MsFlags::MS_RDONLY;
    }
    mount(NONE, point, NONE, flags, NONE)
}

/// Binds `source` over `target` (with what is mounted below it), read-only or writable.
fn bind(source: &Path, target: &Path, read_only: bool) -> nix::Result<()> {
    mount(
        Some(source),
        target,
        NONE,
        MsFlags::MS_BIND | MsFlags::MS_REC,
        NONE,
    )?;
    remount(target, read_only)
}

/// Binds the tree held open by `fd` (with its masks) at `target`, made in the private /tmp.
fn bind_held(target: &Path, fd: &std::os::fd::OwnedFd) -> Result<(), String> {
    use std::os::fd::AsRawFd as _;
    if target.is_file() || target.symlink_metadata().is_err() {
        std::fs::create_dir_all(target).map_err(|error| error.to_string())?;
    }
    let source = format!("/proc/self/fd/{}", fd.as_raw_fd());
    mount(
        Some(source.as_str()),
        target,
        NONE,
        MsFlags::MS_BIND | MsFlags::MS_REC,
        NONE,
    )
    .map_err(|error| error.to_string())
}

fn tmpfs(target: &Path, options: &str, read_only: bool) -> nix::Result<()> {
    let mut flags = MsFlags::MS_NOSUID | MsFlags::MS_NODEV;
    if read_only {
        flags |= MsFlags::MS_RDONLY;
    }
    mount(Some("tmpfs"), target, Some("tmpfs"), flags, Some(options))
}

/// The scratch space: a memory file system at `/run`, or in a per-command folder of the
/// private temporary folder (then also returned as the folder to remove afterwards).
fn scratch_space(plan: &Plan) -> Result<(Option<PathBuf>, Option<PathBuf>), String> {
    let run = Path::new("/run");
    if run.is_dir() {
        scratch_mount(run)?;
        return Ok((Some(run.to_path_buf()), None));
    }
    let Some(tmp) = &plan.tmp else {
        return Err("neither /run nor a private temporary folder to hold it".to_owned());
    };
    let folder = tmp.join(format!(".sandbox-{}", std::process::id()));
    std::fs::create_dir(&folder).map_err(|error| error.to_string())?;
    scratch_mount(&folder)?;
    Ok((Some(folder.clone()), Some(folder)))
}

/// A memory file system at `point` with the empty mask file the hidden files are covered
/// with. Its size is the kernel's default for tmpfs (half the memory): the tool caches'
/// private layers are written here, and are gone with the command.
fn scratch_mount(point: &Path) -> Result<(), String> {
    tmpfs(point, "mode=0700", false).map_err(|error| error.to_string())?;
    let mask = point.join("mask");
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o000)
        .open(&mask)
        .map_err(|error| format!("{}: {error}", mask.display()))?;
    Ok(())
}

/// `path` unreadable: an empty read-only tmpfs without rights over a folder, the empty
/// mask file over anything else. A path that does not exist needs nothing here: it lies
/// on a read-only mount, or the tool runtime removes what a command created there.
fn hide(path: &Path, scratch: &Path) -> nix::Result<()> {
    let Ok(meta) = std::fs::metadata(path) else {
        return Ok(());
    };
    if meta.is_dir() {
        tmpfs(path, "mode=0000,size=4k", true)
    } else {
        bind(&scratch.join("mask"), path, true)
    }
}

/// A private copy-on-write layer over `cache`: an overlay whose upper layer is a fresh
/// folder in the scratch space, so a command writes the cache without changing it. The
/// overlay is `volatile` (the kernel skips writing it back: it ends unread with the
/// command), which keeps the namespace's end from syncing the machine's disks.
fn private_layer(cache: &Path, scratch: &Path, index: usize) -> Result<(), String> {
    if !cache.is_dir() {
        return Ok(());
    }
    let Some(lower) = cache
        .to_str()
        .filter(|text| !text.contains([',', ':', '\\']))
    else {
        return Err("its name cannot be given to overlayfs".to_owned());
    };
    let layer = scratch.join(format!("layer-{index}"));
    let (upper, work) = (layer.join("upper"), layer.join("work"));
    for folder in [&upper, &work] {
        std::fs::create_dir_all(folder).map_err(|error| error.to_string())?;
    }
    let options = format!(
        "lowerdir={lower},upperdir={},workdir={},volatile",
        upper.display(),
        work.display()
    );
    let flags = MsFlags::MS_NOSUID | MsFlags::MS_NODEV;
    mount(
        Some("overlay"),
        cache,
        Some("overlay"),
        flags,
        Some(options.as_str()),
    )
    .or_else(|_| {
        let options = format!("{options},userxattr");
        mount(
            Some("overlay"),
            cache,
            Some("overlay"),
            flags,
            Some(options.as_str()),
        )
    })
    .map_err(|error| error.to_string())
}

/// A minimal `/dev`: the harmless devices of the machine, a private `devpts` (no other
/// terminal's), a private `/dev/shm`, the usual links; made in the scratch space and moved
/// over `/dev`.
fn private_dev(scratch: &Path) -> Result<(), String> {
    let text = |error: nix::Error| error.to_string();
    let io = |error: std::io::Error| error.to_string();
    let dev = scratch.join("dev");
    std::fs::create_dir(&dev).map_err(io)?;
    tmpfs(&dev, "mode=0755,size=64k", false).map_err(text)?;
    for name in ["null", "zero", "full", "random", "urandom", "tty"] {
        let device = Path::new("/dev").join(name);
        if !device.exists() {
            continue;
        }
        let node = dev.join(name);
        std::fs::File::create(&node).map_err(io)?;
        mount(Some(device.as_path()), &node, NONE, MsFlags::MS_BIND, NONE).map_err(text)?;
    }
    let pts = dev.join("pts");
    std::fs::create_dir(&pts).map_err(io)?;
    mount(
        Some("devpts"),
        &pts,
        Some("devpts"),
        MsFlags::MS_NOSUID | MsFlags::MS_NOEXEC,
        Some("newinstance,ptmxmode=0666,mode=0620"),
    )
    .map_err(text)?;
    let shm = dev.join("shm");
    std::fs::create_dir(&shm).map_err(io)?;
    tmpfs(&shm, "mode=1777", false).map_err(text)?;
    std::fs::set_permissions(&shm, std::fs::Permissions::from_mode(0o1777)).map_err(io)?;
    for (link, target) in [
        ("ptmx", "pts/ptmx"),
        ("fd", "/proc/self/fd"),
        ("stdin", "/proc/self/fd/0"),
        ("stdout", "/proc/self/fd/1"),
        ("stderr", "/proc/self/fd/2"),
    ] {
        std::os::unix::fs::symlink(target, dev.join(link)).map_err(io)?;
    }
    mount(Some(dev.as_path()), "/dev", NONE, MsFlags::MS_MOVE, NONE).map_err(text)
}

/// Removes a folder of the launcher's own, making its inner folders writable first (an
/// overlay's work folder is left without rights).
fn remove_tree(folder: &Path) {
    if let Ok(entries) = std::fs::read_dir(folder) {
        for entry in entries.flatten() {
            let path = entry.path();
            if entry.file_type().is_ok_and(|kind| kind.is_dir()) {
                let _ = std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o700));
                remove_tree(&path);
            }
        }
    }
    let _ = std::fs::remove_dir_all(folder).or_else(|_| std::fs::remove_file(folder));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mountinfo_escapes_are_undone() {
        assert_eq!(unescape("/a\\040b\\134c"), PathBuf::from("/a b\\c"));
        assert_eq!(unescape("/plain"), PathBuf::from("/plain"));
        assert_eq!(unescape("/odd\\04"), PathBuf::from("/odd\\04"));
    }

    #[test]
    fn locked_mount_flags_are_kept() {
        use nix::sys::statvfs::FsFlags;
        let kept = locked_flags(FsFlags::ST_NOSUID | FsFlags::ST_RDONLY | FsFlags::ST_NODEV);
        assert_eq!(kept, MsFlags::MS_NOSUID | MsFlags::MS_NODEV);
    }
}
