//! Linux: the launcher's side. `agent-runtime --sandbox-exec <plan> -- program args…` runs
//! [`launch`], which confines its own (single-threaded) process and execs the program:
//!
//! 1. read-only folders inside writable ones (`.git`, blocked paths): Landlock can only
//!    grant, never carve a hole into a granted tree, so they are bind-mounted read-only
//!    over themselves in a private mount namespace (in a user namespace of its own, so no
//!    privilege is needed);
//! 2. Landlock: writes only under the plan's writable trees; reads, when confined, under
//!    the plan's readable ones; with no network, no TCP connect or bind (ABI ≥ 4); with the
//!    network through the egress proxy, TCP connect to the proxy's port only. A
//!    Landlock-confined process can no longer change mounts, so it cannot undo step 1;
//! 3. seccomp, with no network: `socket()` of any family but `AF_UNIX` fails (UDP, raw,
//!    netlink…), and so does `io_uring_setup` (its own way to open sockets); through the
//!    proxy, TCP sockets are allowed too, nothing else.
//!
//! Landlock's port rule does not name an address: a server elsewhere listening on the
//! proxy's port number could be reached directly. The port is a random one of the moment.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use agent_protocol::sandbox::{SandboxMode, SandboxStatus};
use landlock::{
    ABI, Access, AccessFs, AccessNet, BitFlags, CompatLevel, Compatible, NetPort, Ruleset,
    RulesetAttr, RulesetCreatedAttr, RulesetStatus, path_beneath_rules,
};
use nix::libc;
use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule,
};

use super::Plan;

/// The file-system rights this build asks for (ABI 5: ioctl on devices included).
const FS_ABI: ABI = ABI::V5;
/// TCP connect and bind rules.
const NET_ABI: ABI = ABI::V4;

/// What this kernel can enforce, learnt without confining this process: a ruleset created
/// as a hard requirement fails when the kernel lacks it.
pub(crate) fn probe(mode: SandboxMode) -> SandboxStatus {
    let fs = Ruleset::default()
        .set_compatibility(CompatLevel::HardRequirement)
        .handle_access(AccessFs::from_all(ABI::V1))
        .and_then(Ruleset::create);
    if let Err(error) = fs {
        return SandboxStatus {
            mode,
            enforced: false,
            mechanism: "none".to_owned(),
            detail: format!("Landlock is unavailable in this kernel ({error})"),
        };
    }
    let tcp = Ruleset::default()
        .set_compatibility(CompatLevel::HardRequirement)
        .handle_access(AccessNet::from_all(NET_ABI))
        .and_then(Ruleset::create)
        .is_ok();
    let mut detail = String::from(
        "commands write only in the granted folders (Landlock); `.git` and blocked paths stay read-only",
    );
    if !user_namespaces() {
        detail.push_str(
            " where user namespaces are available (they are not here: those stay writable)",
        );
    }
    detail.push_str(if tcp {
        "; without a network grant no socket but a Unix one (Landlock TCP rules, seccomp)"
    } else {
        "; without a network grant no socket but a Unix one (seccomp; this kernel has no Landlock TCP rules)"
    });
    detail.push_str(if tcp {
        "; with one, TCP only, to the runtime's egress proxy only, which applies the policy's domain and address rules"
    } else {
        "; with one, TCP only, pointed at the runtime's egress proxy (which applies the policy's domain and address rules) but not held to it: this kernel has no Landlock TCP rules"
    });
    SandboxStatus {
        mode,
        enforced: true,
        mechanism: "landlock+seccomp".to_owned(),
        detail,
    }
}

fn user_namespaces() -> bool {
    let read = |path: &str| std::fs::read_to_string(path).ok();
    let max = read("/proc/sys/user/max_user_namespaces")
        .and_then(|text| text.trim().parse::<u64>().ok())
        .unwrap_or(1);
    let restricted = read("/proc/sys/kernel/apparmor_restrict_unprivileged_userns")
        .is_some_and(|text| text.trim() == "1");
    max > 0 && (!restricted || nix::unistd::geteuid().is_root())
}

/// The launcher: `args` are what follows `--sandbox-exec`: the plan, `--`, the program and
/// its arguments. Returns only when the program could not be started.
// The launcher's stderr is the command's: the only place to say why it could not start.
#[allow(clippy::print_stderr)]
pub fn launch(args: &[OsString]) -> ExitCode {
    let fail = |message: String| {
        eprintln!("agent-runtime sandbox: {message}");
        ExitCode::from(126)
    };
    let (plan, program, rest) = match parse(args) {
        Ok(parsed) => parsed,
        Err(message) => return fail(message),
    };
    if let Err(message) = confine(&plan)
        && plan.required
    {
        return fail(format!("{message} (AGENT_RUNTIME_SANDBOX=required)"));
    }
    let error = std::process::Command::new(program).args(rest).exec();
    let code = if error.kind() == std::io::ErrorKind::NotFound {
        127
    } else {
        126
    };
    eprintln!(
        "agent-runtime sandbox: could not run {}: {error}",
        Path::new(program).display()
    );
    ExitCode::from(code)
}

fn parse(args: &[OsString]) -> Result<(Plan, &OsString, &[OsString]), String> {
    match args {
        [plan, dashes, program, rest @ ..] if dashes == "--" => {
            let text = plan.to_str().ok_or("the sandbox plan is not UTF-8")?;
            Ok((Plan::from_json(text)?, program, rest))
        }
        _ => Err("usage: agent-runtime --sandbox-exec <plan> -- <program> [args…]".to_owned()),
    }
}

/// Applies every part it can; the first error is returned after the rest was applied, so a
/// best-effort launch keeps whatever works.
pub(crate) fn confine(plan: &Plan) -> Result<(), String> {
    let mut first = None;
    let mut note = |result: Result<(), String>| {
        if let Err(message) = result {
            first.get_or_insert(message);
        }
    };
    let read_only: Vec<&PathBuf> = plan.read_only.iter().filter(|p| p.exists()).collect();
    if !read_only.is_empty() {
        note(read_only_mounts(&read_only));
    }
    note(landlock(plan));
    if !plan.network {
        note(no_sockets());
    } else if plan.proxy_port.is_some() {
        note(tcp_only());
    }
    first.map_or(Ok(()), Err)
}

fn landlock(plan: &Plan) -> Result<(), String> {
    let error = |error: landlock::RulesetError| format!("Landlock: {error}");
    let handled = if plan.read.is_some() {
        AccessFs::from_all(FS_ABI)
    } else {
        AccessFs::from_write(FS_ABI)
    };
    let mut ruleset = Ruleset::default().handle_access(handled).map_err(error)?;
    let proxy = plan.proxy_port.filter(|_| plan.network);
    if !plan.network || proxy.is_some() {
        ruleset = ruleset
            .handle_access(AccessNet::from_all(NET_ABI))
            .map_err(error)?;
    }
    let existing = |paths: &[PathBuf]| -> Vec<PathBuf> {
        paths.iter().filter(|path| path.exists()).cloned().collect()
    };
    let mut created = ruleset.create().map_err(error)?;
    if let Some(read) = &plan.read {
        let rights: BitFlags<AccessFs> = AccessFs::from_read(FS_ABI) & handled;
        created = created
            .add_rules(path_beneath_rules(existing(read), rights))
            .map_err(error)?;
    }
    created = created
        .add_rules(path_beneath_rules(
            existing(&plan.write),
            AccessFs::from_all(FS_ABI) & handled,
        ))
        .map_err(error)?;
    if let Some(port) = proxy {
        created = created
            .add_rule(NetPort::new(port, AccessNet::ConnectTcp))
            .map_err(error)?;
    }
    let status = created.restrict_self().map_err(error)?;
    if status.ruleset == RulesetStatus::NotEnforced {
        return Err("Landlock is unavailable in this kernel".to_owned());
    }
    Ok(())
}

fn seccomp_error(error: impl std::fmt::Display) -> String {
    format!("seccomp: {error}")
}

/// `socket()`'s argument `index` compared with `value`.
fn socket_arg(index: u8, op: SeccompCmpOp, value: i32) -> Result<SeccompCondition, String> {
    SeccompCondition::new(
        index,
        SeccompCmpArgLen::Dword,
        op,
        u64::try_from(value).unwrap_or_default(),
    )
    .map_err(seccomp_error)
}

fn no_sockets() -> Result<(), String> {
    let not_unix = socket_arg(0, SeccompCmpOp::Ne, libc::AF_UNIX)?;
    deny_sockets(vec![
        SeccompRule::new(vec![not_unix]).map_err(seccomp_error)?,
    ])
}

/// With the egress proxy: Unix sockets and TCP over IPv4/IPv6 only (Landlock holds TCP to
/// the proxy's port); no UDP (so no DNS of its own), raw, netlink or other family.
fn tcp_only() -> Result<(), String> {
    let not_unix = || socket_arg(0, SeccompCmpOp::Ne, libc::AF_UNIX);
    let rule = |conditions| SeccompRule::new(conditions).map_err(seccomp_error);
    deny_sockets(vec![
        rule(vec![
            not_unix()?,
            socket_arg(0, SeccompCmpOp::Ne, libc::AF_INET)?,
            socket_arg(0, SeccompCmpOp::Ne, libc::AF_INET6)?,
        ])?,
        // The type carries SOCK_NONBLOCK/SOCK_CLOEXEC in its high bits.
        rule(vec![
            not_unix()?,
            socket_arg(1, SeccompCmpOp::MaskedEq(0xf), libc::SOCK_DGRAM)?,
        ])?,
        rule(vec![
            not_unix()?,
            socket_arg(1, SeccompCmpOp::MaskedEq(0xf), libc::SOCK_RAW)?,
        ])?,
        rule(vec![
            not_unix()?,
            socket_arg(1, SeccompCmpOp::MaskedEq(0xf), libc::SOCK_SEQPACKET)?,
        ])?,
        // A stream socket of another protocol (SCTP, MPTCP) escapes Landlock's TCP rules.
        rule(vec![
            not_unix()?,
            socket_arg(2, SeccompCmpOp::Ne, 0)?,
            socket_arg(2, SeccompCmpOp::Ne, libc::IPPROTO_TCP)?,
        ])?,
    ])
}

/// A filter failing `socket()` when any of `rules` matches, and `io_uring_setup` always.
fn deny_sockets(rules: Vec<SeccompRule>) -> Result<(), String> {
    fn error(error: impl std::fmt::Display) -> String {
        seccomp_error(error)
    }
    let rules = BTreeMap::from([
        (libc::SYS_socket, rules),
        // An empty rule list matches the call whatever its arguments.
        (libc::SYS_io_uring_setup, Vec::new()),
    ]);
    let arch = std::env::consts::ARCH
        .try_into()
        .map_err(|_| format!("seccomp: no filter for {}", std::env::consts::ARCH))?;
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EACCES as u32),
        arch,
    )
    .map_err(error)?;
    let program: BpfProgram = filter.try_into().map_err(error)?;
    seccompiler::apply_filter(&program).map_err(error)
}

/// A private mount namespace (in a user namespace of its own) in which `paths` are
/// read-only bind mounts of themselves.
fn read_only_mounts(paths: &[&PathBuf]) -> Result<(), String> {
    use nix::mount::{MsFlags, mount};
    use nix::sched::{CloneFlags, unshare};
    let (uid, gid) = (nix::unistd::getuid(), nix::unistd::getgid());
    unshare(CloneFlags::CLONE_NEWUSER | CloneFlags::CLONE_NEWNS)
        .map_err(|error| format!("no private mount namespace for read-only folders: {error}"))?;
    let write = |file: &str, text: String| {
        std::fs::write(file, text).map_err(|error| format!("{file}: {error}"))
    };
    // Absent before Linux 3.19, where gid_map needs no such step.
    if Path::new("/proc/self/setgroups").exists() {
        write("/proc/self/setgroups", "deny".to_owned())?;
    }
    write("/proc/self/uid_map", format!("{uid} {uid} 1\n"))?;
    write("/proc/self/gid_map", format!("{gid} {gid} 1\n"))?;
    let none: Option<&str> = None;
    mount(none, "/", none, MsFlags::MS_REC | MsFlags::MS_PRIVATE, none)
        .map_err(|error| format!("mounts could not be made private: {error}"))?;
    for path in paths {
        let failed = |error: nix::Error| format!("{} stays writable: {error}", path.display());
        mount(
            Some(path.as_path()),
            path.as_path(),
            none,
            MsFlags::MS_BIND | MsFlags::MS_REC,
            none,
        )
        .map_err(failed)?;
        // A remount in a user namespace must keep the flags the mount was locked with.
        let kept = nix::sys::statvfs::statvfs(path.as_path())
            .map(|stat| locked_flags(stat.flags()))
            .unwrap_or(MsFlags::empty());
        mount(
            none,
            path.as_path(),
            none,
            MsFlags::MS_BIND | MsFlags::MS_REMOUNT | MsFlags::MS_RDONLY | kept,
            none,
        )
        .map_err(failed)?;
    }
    Ok(())
}

fn locked_flags(flags: nix::sys::statvfs::FsFlags) -> nix::mount::MsFlags {
    use nix::mount::MsFlags;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_kernel_offers_landlock_with_tcp_rules() {
        let status = probe(SandboxMode::Required);
        assert!(status.enforced, "{status:?}");
        assert!(
            !status.detail.contains("no Landlock TCP rules"),
            "{status:?}"
        );
    }

    #[test]
    fn the_launcher_refuses_malformed_arguments_by_name() {
        let args = |list: &[&str]| list.iter().map(OsString::from).collect::<Vec<_>>();
        assert!(parse(&args(&["{}", "sh"])).unwrap_err().contains("usage"));
        assert!(
            parse(&args(&["{", "--", "sh"]))
                .unwrap_err()
                .contains("malformed")
        );
        let plan = Plan::default().to_json();
        let parsed = args(&[&plan, "--", "sh", "-c", "true"]);
        let (_, program, rest) = parse(&parsed).unwrap();
        assert_eq!(program, "sh");
        assert_eq!(rest.len(), 2);
    }

    #[test]
    fn locked_mount_flags_are_kept() {
        use nix::mount::MsFlags;
        use nix::sys::statvfs::FsFlags;
        let kept = locked_flags(FsFlags::ST_NOSUID | FsFlags::ST_RDONLY | FsFlags::ST_NODEV);
        assert_eq!(kept, MsFlags::MS_NOSUID | MsFlags::MS_NODEV);
    }
}
