//! The first process of the sandbox's PID namespace (`agent-runtime --sandbox-init`): it
//! mounts the namespace's own `/proc`, brings the loopback device of the empty network
//! namespace up, bridges a loopback port to the egress proxy's Unix socket, applies the
//! inner wall to itself, starts the command and reaps every process that ends in the
//! namespace. When the command ends, so does this process, and the kernel ends everything
//! else in the namespace with it: no daemon outlives its command.

use std::ffi::OsString;
use std::net::{Ipv4Addr, TcpListener, TcpStream};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use nix::sys::signal::Signal;
use nix::sys::wait::{WaitStatus, waitpid};

use super::wall::{self, Inside};
use super::{fail, parse, say};

/// Runs the init; `args` follow the flag: the plan, `--`, the program and its arguments.
pub(super) fn run(args: &[OsString]) -> ExitCode {
    let (plan, program, rest) = match parse(args) {
        Ok(parsed) => parsed,
        Err(message) => return fail(message),
    };
    // The launcher waits for this process; if it is killed outright, so is this one, and
    // with it the namespace.
    if let Err(error) = nix::sys::prctl::set_pdeathsig(Signal::SIGKILL) {
        return fail(format!("no parent-death signal: {error}"));
    }
    // The launcher blocks the termination signals it leaves to the command; the command
    // must receive them (as the first process of a PID namespace, this one is spared them
    // by the kernel anyway).
    let _ = nix::sys::signal::sigprocmask(
        nix::sys::signal::SigmaskHow::SIG_SETMASK,
        Some(&nix::sys::signal::SigSet::empty()),
        None,
    );
    let mut problems = Vec::new();
    if let Err(error) = mount_proc() {
        problems.push(format!(
            "the sandbox's own /proc could not be mounted: {error}"
        ));
    }
    if !plan.unconfined_network()
        && let Err(error) = loopback_up()
    {
        problems.push(format!("the loopback device stays down: {error}"));
    }
    let bridge = match (plan.proxy_port, plan.proxy_socket.as_deref()) {
        (Some(port), Some(socket)) if plan.network => {
            match TcpListener::bind((Ipv4Addr::LOCALHOST, port)) {
                Ok(listener) => Some((listener, socket.to_path_buf())),
                Err(error) => {
                    problems.push(format!(
                        "the egress proxy's port could not be opened: {error}"
                    ));
                    None
                }
            }
        }
        _ => None,
    };
    if let Err(message) = wall::apply(&plan, Inside::Namespaces, None) {
        problems.push(message);
    }
    if let Some(problem) = problems.first()
        && plan.required
    {
        return fail(format!("{problem} (AGENT_RUNTIME_SANDBOX=required)"));
    }
    // Threads start after the wall: they inherit it.
    if let Some((listener, socket)) = bridge {
        spawn_bridge(listener, socket);
    }
    let child = match std::process::Command::new(program).args(rest).spawn() {
        Ok(child) => child,
        Err(error) => {
            let code = if error.kind() == std::io::ErrorKind::NotFound {
                127
            } else {
                126
            };
            say(&format!(
                "could not run {}: {error}",
                Path::new(program).display()
            ));
            return ExitCode::from(code);
        }
    };
    reap_until(child.id())
}

/// Reaps every process of the namespace until `command` ends; returns its exit code, or
/// 128 + the signal that ended it, as a shell reports it.
fn reap_until(command: u32) -> ExitCode {
    let command = i32::try_from(command).unwrap_or_default();
    loop {
        match waitpid(None, None) {
            Ok(WaitStatus::Exited(pid, code)) if pid.as_raw() == command => {
                return ExitCode::from(u8::try_from(code & 0xff).unwrap_or(1));
            }
            Ok(WaitStatus::Signaled(pid, signal, _)) if pid.as_raw() == command => {
                return ExitCode::from(u8::try_from(128 + (signal as i32)).unwrap_or(1));
            }
            Ok(_) | Err(nix::errno::Errno::EINTR) => {}
            Err(_) => return ExitCode::from(1),
        }
    }
}

fn mount_proc() -> nix::Result<()> {
    use nix::mount::{MsFlags, mount};
    mount(
        Some("proc"),
        "/proc",
        Some("proc"),
        MsFlags::MS_NOSUID | MsFlags::MS_NODEV | MsFlags::MS_NOEXEC,
        None::<&str>,
    )
}

/// `RTM_NEWLINK` setting `IFF_UP` on interface 1 — the loopback device, the first one every
/// network namespace registers — over a route netlink socket, and its acknowledgement.
fn loopback_up() -> Result<(), String> {
    use nix::sys::socket::{
        AddressFamily, MsgFlags, NetlinkAddr, SockFlag, SockProtocol, SockType, bind, recv, sendto,
        socket,
    };
    use std::os::fd::AsRawFd as _;
    const RTM_NEWLINK: u16 = 16;
    const NLM_F_REQUEST: u16 = 1;
    const NLM_F_ACK: u16 = 4;
    const IFF_UP: u32 = 1;
    const LOOPBACK_INDEX: i32 = 1;
    let text = |error: nix::Error| error.to_string();
    let fd = socket(
        AddressFamily::Netlink,
        SockType::Raw,
        SockFlag::SOCK_CLOEXEC,
        SockProtocol::NetlinkRoute,
    )
    .map_err(text)?;
    bind(fd.as_raw_fd(), &NetlinkAddr::new(0, 0)).map_err(text)?;
    let mut message = Vec::with_capacity(32);
    message.extend_from_slice(&32u32.to_ne_bytes()); // nlmsg_len
    message.extend_from_slice(&RTM_NEWLINK.to_ne_bytes());
    message.extend_from_slice(&(NLM_F_REQUEST | NLM_F_ACK).to_ne_bytes());
    message.extend_from_slice(&1u32.to_ne_bytes()); // nlmsg_seq
    message.extend_from_slice(&0u32.to_ne_bytes()); // nlmsg_pid
    message.push(0); // ifi_family: AF_UNSPEC
    message.push(0);
    message.extend_from_slice(&0u16.to_ne_bytes()); // ifi_type
    message.extend_from_slice(&LOOPBACK_INDEX.to_ne_bytes());
    message.extend_from_slice(&IFF_UP.to_ne_bytes()); // ifi_flags
    message.extend_from_slice(&IFF_UP.to_ne_bytes()); // ifi_change
    sendto(
        fd.as_raw_fd(),
        &message,
        &NetlinkAddr::new(0, 0),
        MsgFlags::empty(),
    )
    .map_err(text)?;
    let mut answer = [0u8; 64];
    let length = recv(fd.as_raw_fd(), &mut answer, MsgFlags::empty()).map_err(text)?;
    // NLMSG_ERROR (2) carries the error code (0: acknowledged) after the 16-byte header.
    let kind = answer.get(4..6).map(|b| u16::from_ne_bytes([b[0], b[1]]));
    let code = answer
        .get(16..20)
        .map(|b| i32::from_ne_bytes([b[0], b[1], b[2], b[3]]));
    match (length >= 20, kind, code) {
        (true, Some(2), Some(0)) => Ok(()),
        (true, Some(2), Some(code)) => Err(nix::Error::from_raw(-code).to_string()),
        _ => Err("no acknowledgement from the kernel".to_owned()),
    }
}

/// Accepts on the namespace's loopback port and joins each connection to the proxy's Unix
/// socket, for as long as the command runs.
fn spawn_bridge(listener: TcpListener, socket: PathBuf) {
    let accept = move || {
        for client in listener.incoming().flatten() {
            let socket = socket.clone();
            let _ = std::thread::Builder::new()
                .name("egress-bridge".to_owned())
                .spawn(move || join(client, &socket));
        }
    };
    if let Err(error) = std::thread::Builder::new()
        .name("egress-accept".to_owned())
        .spawn(accept)
    {
        say(&format!("the egress bridge could not start: {error}"));
    }
}

fn join(client: TcpStream, socket: &Path) {
    let Ok(proxy) = UnixStream::connect(socket) else {
        return;
    };
    let (Ok(mut client_in), Ok(mut proxy_in)) = (client.try_clone(), proxy.try_clone()) else {
        return;
    };
    let (mut client_out, mut proxy_out) = (client, proxy);
    let upstream = std::thread::Builder::new()
        .name("egress-bridge-up".to_owned())
        .spawn(move || {
            let _ = std::io::copy(&mut client_in, &mut proxy_out);
            let _ = proxy_out.shutdown(std::net::Shutdown::Write);
        });
    let _ = std::io::copy(&mut proxy_in, &mut client_out);
    let _ = client_out.shutdown(std::net::Shutdown::Write);
    if let Ok(upstream) = upstream {
        let _ = upstream.join();
    }
}
