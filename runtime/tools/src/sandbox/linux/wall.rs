//! The inner wall, applied to the sandbox's own process just before it starts the command
//! (which inherits both): Landlock and seccomp. Inside namespaces it repeats what the mount
//! view and the empty network namespace already enforce; without them (a kernel that
//! refuses user namespaces) it is the whole sandbox.
//!
//! - Landlock: writes only under the plan's writable trees (reads are not confined:
//!   INTEROP.md §10, except around the hidden paths where no mount view hides them); with no network, no TCP connect or bind (ABI ≥ 4); through the egress
//!   proxy, TCP connect to the proxy's port only; where the kernel has ABI 6, no signal to a
//!   process outside the sandbox and no abstract Unix socket made outside it. A
//!   Landlock-confined process can no longer change mounts, so it cannot undo the view.
//! - seccomp: with no network, `socket()` of any family but `AF_UNIX` fails; through the
//!   proxy, TCP over IPv4/IPv6 too, nothing else. Always: `io_uring` (its own way to open
//!   sockets), TCP Fast Open (`sendto`/`sendmsg` with `MSG_FASTOPEN`, the
//!   `TCP_FASTOPEN_CONNECT` option: Landlock's connect rule is not on that path), and every
//!   x32 system call (the same numbers with another bit, which a filter keyed by number
//!   would let through). Without a network namespace `listen()` fails too: a socket listened
//!   on without `bind()` takes a port Landlock's bind rule never saw.

use std::collections::BTreeMap;
use std::path::PathBuf;

use landlock::{
    ABI, Access, AccessFs, AccessNet, CompatLevel, Compatible, NetPort, Ruleset, RulesetAttr,
    RulesetCreatedAttr, RulesetStatus, Scope, path_beneath_rules,
};
use nix::libc;
use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule,
};

use super::super::Plan;
use super::super::plan::DEVICES;

/// The file-system rights this build asks for (ABI 5: ioctl on devices included).
pub(super) const FS_ABI: ABI = ABI::V5;
/// TCP connect and bind rules.
pub(super) const NET_ABI: ABI = ABI::V4;

/// `x86_64`'s bit for the x32 ABI's system calls.
const X32_SYSCALL_BIT: u32 = 0x4000_0000;

/// Where the wall is applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Inside {
    /// A mount view, PID and network namespaces of the sandbox's own.
    Namespaces,
    /// The machine's own namespaces: the wall is everything.
    Host,
}

/// Landlock, then seccomp. Applies every part it can; the first error is returned after the
/// rest was applied, so a best-effort launch keeps whatever works.
/// `reads`: where reads are confined (outside namespaces, around the hidden paths:
/// [`super::complement`]), the paths a command may read beneath.
pub(super) fn apply(plan: &Plan, inside: Inside, reads: Option<&[PathBuf]>) -> Result<(), String> {
    let mut first = None;
    let mut note = |result: Result<(), String>| {
        if let Err(message) = result {
            first.get_or_insert(message);
        }
    };
    note(landlock(plan, inside, reads));
    note(seccomp(plan, inside));
    first.map_or(Ok(()), Err)
}

fn landlock(plan: &Plan, inside: Inside, reads: Option<&[PathBuf]>) -> Result<(), String> {
    let error = |error: landlock::RulesetError| format!("Landlock: {error}");
    let handled = match reads {
        Some(_) => AccessFs::from_all(FS_ABI),
        None => AccessFs::from_write(FS_ABI),
    };
    let mut ruleset = Ruleset::default().handle_access(handled).map_err(error)?;
    let proxy = plan.proxy_port.filter(|_| plan.network);
    if !plan.network || proxy.is_some() {
        ruleset = ruleset
            .handle_access(AccessNet::from_all(NET_ABI))
            .map_err(error)?;
    }
    // Scopes are ABI 6: a kernel without them keeps the rest.
    ruleset = ruleset
        .set_compatibility(CompatLevel::BestEffort)
        .scope(Scope::Signal | Scope::AbstractUnixSocket)
        .map_err(error)?;
    let mut writable: Vec<PathBuf> = plan.writable();
    match inside {
        // The view's /dev and /tmp are the sandbox's own.
        Inside::Namespaces => writable.extend(["/dev", "/tmp"].map(PathBuf::from)),
        Inside::Host => writable.extend(DEVICES.iter().map(PathBuf::from)),
    }
    writable.retain(|path| path.exists());
    let mut created = ruleset.create().map_err(error)?;
    created = created
        .add_rules(path_beneath_rules(
            writable,
            AccessFs::from_all(FS_ABI) & handled,
        ))
        .map_err(error)?;
    if let Some(readable) = reads {
        created = created
            .add_rules(path_beneath_rules(readable, AccessFs::from_read(FS_ABI)))
            .map_err(error)?;
    }
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

/// Whether this kernel scopes signals and abstract sockets (Landlock ABI 6).
pub(super) fn scopes_available() -> bool {
    Ruleset::default()
        .set_compatibility(CompatLevel::HardRequirement)
        .scope(Scope::Signal)
        .and_then(Ruleset::create)
        .is_ok()
}

fn seccomp_error(error: impl std::fmt::Display) -> String {
    format!("seccomp: {error}")
}

/// A system call's argument `index` compared with `value`.
fn arg(index: u8, op: SeccompCmpOp, value: u64) -> Result<SeccompCondition, String> {
    SeccompCondition::new(index, SeccompCmpArgLen::Dword, op, value).map_err(seccomp_error)
}

fn rule(conditions: Vec<SeccompCondition>) -> Result<SeccompRule, String> {
    SeccompRule::new(conditions).map_err(seccomp_error)
}

fn constant(value: i32) -> u64 {
    u64::try_from(value).unwrap_or_default()
}

/// `socket()` rules: with no network any family but `AF_UNIX`; through the proxy, anything
/// but `AF_UNIX` and TCP over IPv4/IPv6 (no UDP, so no DNS of its own; no raw, netlink or
/// other family; no stream of another protocol such as SCTP or MPTCP, which Landlock's TCP
/// rules do not see).
fn socket_rules(plan: &Plan) -> Result<Vec<SeccompRule>, String> {
    let not_unix = || arg(0, SeccompCmpOp::Ne, constant(libc::AF_UNIX));
    if !plan.network {
        return Ok(vec![rule(vec![not_unix()?])?]);
    }
    if plan.proxy_port.is_none() {
        return Ok(Vec::new());
    }
    // The type carries SOCK_NONBLOCK/SOCK_CLOEXEC in its high bits.
    let of_type = |kind| arg(1, SeccompCmpOp::MaskedEq(0xf), constant(kind));
    Ok(vec![
        rule(vec![
            not_unix()?,
            arg(0, SeccompCmpOp::Ne, constant(libc::AF_INET))?,
            arg(0, SeccompCmpOp::Ne, constant(libc::AF_INET6))?,
        ])?,
        rule(vec![not_unix()?, of_type(libc::SOCK_DGRAM)?])?,
        rule(vec![not_unix()?, of_type(libc::SOCK_RAW)?])?,
        rule(vec![not_unix()?, of_type(libc::SOCK_SEQPACKET)?])?,
        rule(vec![
            not_unix()?,
            arg(2, SeccompCmpOp::Ne, 0)?,
            arg(2, SeccompCmpOp::Ne, constant(libc::IPPROTO_TCP))?,
        ])?,
    ])
}

fn seccomp(plan: &Plan, inside: Inside) -> Result<(), String> {
    let flags_at = |index: u8| -> Result<SeccompRule, String> {
        let fast_open = constant(libc::MSG_FASTOPEN);
        rule(vec![arg(
            index,
            SeccompCmpOp::MaskedEq(fast_open),
            fast_open,
        )?])
    };
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::from([
        // An empty rule list matches the call whatever its arguments.
        (libc::SYS_io_uring_setup, Vec::new()),
        (libc::SYS_io_uring_enter, Vec::new()),
        (libc::SYS_io_uring_register, Vec::new()),
        (libc::SYS_sendto, vec![flags_at(3)?]),
        (libc::SYS_sendmsg, vec![flags_at(2)?]),
        (libc::SYS_sendmmsg, vec![flags_at(3)?]),
        (
            libc::SYS_setsockopt,
            vec![rule(vec![
                arg(1, SeccompCmpOp::Eq, constant(libc::IPPROTO_TCP))?,
                arg(2, SeccompCmpOp::Eq, constant(libc::TCP_FASTOPEN_CONNECT))?,
            ])?],
        ),
    ]);
    let sockets = socket_rules(plan)?;
    if !sockets.is_empty() {
        rules.insert(libc::SYS_socket, sockets);
    }
    if inside == Inside::Host {
        rules.insert(libc::SYS_listen, Vec::new());
    }
    let arch = std::env::consts::ARCH
        .try_into()
        .map_err(|_| format!("seccomp: no filter for {}", std::env::consts::ARCH))?;
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EACCES.unsigned_abs()),
        arch,
    )
    .map_err(seccomp_error)?;
    let compiled: BpfProgram = filter.try_into().map_err(seccomp_error)?;
    let program = if cfg!(target_arch = "x86_64") {
        let mut program = no_x32();
        program.extend(compiled);
        program
    } else {
        compiled
    };
    seccompiler::apply_filter(&program).map_err(seccomp_error)
}

/// A prologue failing every x32 system call: the architecture word is the same as
/// `x86_64`'s, the number has [`X32_SYSCALL_BIT`] set. The compiled filter that follows
/// loads what it needs itself.
fn no_x32() -> BpfProgram {
    use seccompiler::sock_filter;
    const BPF_LD_W_ABS: u16 = 0x20;
    const BPF_JGE_K: u16 = 0x35;
    const BPF_RET_K: u16 = 0x06;
    const SECCOMP_RET_ERRNO: u32 = 0x0005_0000;
    // struct seccomp_data: `nr` at offset 0.
    let errno = SECCOMP_RET_ERRNO | libc::ENOSYS.unsigned_abs();
    vec![
        sock_filter {
            code: BPF_LD_W_ABS,
            jt: 0,
            jf: 0,
            k: 0,
        },
        sock_filter {
            code: BPF_JGE_K,
            jt: 0,
            jf: 1,
            k: X32_SYSCALL_BIT,
        },
        sock_filter {
            code: BPF_RET_K,
            jt: 0,
            jf: 0,
            k: errno,
        },
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_x32_prologue_fails_numbers_with_the_x32_bit_and_falls_through_otherwise() {
        let program = no_x32();
        assert_eq!(program.len(), 3);
        assert_eq!(program[1].k, X32_SYSCALL_BIT);
        // Not taken (below the bit): skip the return.
        assert_eq!((program[1].jt, program[1].jf), (0, 1));
        assert_eq!(program[2].k & 0xffff, libc::ENOSYS.unsigned_abs());
    }
}
