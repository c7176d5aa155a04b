//! Linux: the launcher's side. `agent-runtime --sandbox-exec <plan> -- program args…` runs
//! [`launch`], a single-threaded process that confines what it starts:
//!
//! 1. it enters user, mount, PID, IPC and network namespaces of its own and builds the
//!    command's mount view ([`view`]): the machine read-only, the grants writable, the tool
//!    caches privately writable, read-only and hidden paths masked, a minimal `/dev`, an
//!    empty `/run`, the private temporary folder as `/tmp`;
//! 2. it starts `agent-runtime --sandbox-init` ([`init`]) as the first process of the new
//!    PID namespace, which mounts that namespace's `/proc`, brings up the loopback device of
//!    the network namespace (which has no other device: the only way out is the egress
//!    proxy, reached through a loopback port bridged to its Unix socket), applies the inner
//!    wall ([`wall`]: Landlock and seccomp) and starts the command; when the command ends,
//!    everything else in the namespace ends with it;
//! 3. it waits, blocking the termination signals the runtime sends the process group (the
//!    command receives them; a `SIGKILL` ends the launcher, and the namespace with it).
//!
//! Where the kernel refuses user namespaces, the launcher applies the inner wall to itself
//! and execs the command: Landlock and seccomp alone, which cannot hide a path or keep a
//! path inside a grant read-only, so `required` refuses a plan that needs either.

mod complement;
mod init;
mod view;
mod wall;

use std::ffi::OsString;
use std::os::unix::process::CommandExt as _;
use std::path::Path;
use std::process::ExitCode;

use agent_protocol::sandbox::{SandboxMode, SandboxStatus};
use landlock::{Access, AccessFs, AccessNet, CompatLevel, Compatible, Ruleset, RulesetAttr};
use nix::sys::signal::{SigSet, SigmaskHow, Signal, sigprocmask};

use super::Plan;

/// The hidden subcommand of the first process of the sandbox's PID namespace.
pub const INIT_FLAG: &str = "--sandbox-init";

/// What this kernel can enforce, learnt without confining this process.
pub(crate) fn probe(mode: SandboxMode) -> SandboxStatus {
    let fs = Ruleset::default()
        .set_compatibility(CompatLevel::HardRequirement)
        .handle_access(AccessFs::from_all(landlock::ABI::V1))
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
        .handle_access(AccessNet::from_all(wall::NET_ABI))
        .and_then(Ruleset::create)
        .is_ok();
    let scopes = wall::scopes_available();
    let namespaces = user_namespaces();
    SandboxStatus {
        mode,
        enforced: true,
        mechanism: if namespaces {
            "namespaces+landlock+seccomp"
        } else {
            "landlock+seccomp"
        }
        .to_owned(),
        detail: detail(namespaces, tcp, scopes),
    }
}

/// The sentence GetSessionState reports: exactly which guarantees hold here.
fn detail(namespaces: bool, tcp: bool, scopes: bool) -> String {
    let mut parts: Vec<&str> = Vec::new();
    if namespaces {
        parts.push(
            "commands read anywhere but the policy's blocked paths, the credential stores and the runtime's own folders (hidden)",
        );
        parts.push(
            "they write only in the granted folders, a private temporary folder and private layers over the tool caches; `.git` config and hooks and read-blocked paths stay unchanged",
        );
        parts.push(
            "they have no network device: with a network grant they reach the egress proxy only, which applies the policy's domain and address rules",
        );
        parts.push(
            "they see and signal only their own processes, and everything they start ends with them",
        );
    } else {
        parts.push(
            "user namespaces are unavailable: commands write only in the granted folders and read anywhere but the credential stores, the runtime's folders and blocked paths outside the grants (Landlock; the folders holding those cannot be listed), but blocked paths inside the grants stay readable and writable",
        );
        parts.push(if tcp {
            "without a network grant no socket but a Unix one; with one, TCP to the runtime's egress proxy only (Landlock TCP rules, seccomp); no listening socket"
        } else {
            "without a network grant no socket but a Unix one (seccomp); with one, TCP pointed at the runtime's egress proxy but not held to it: this kernel has no Landlock TCP rules"
        });
        parts.push(if scopes {
            "no signal to processes outside the sandbox and no abstract socket made outside it (Landlock scopes), but daemons may outlive a command"
        } else {
            "this kernel cannot scope signals or abstract sockets: other processes of the user can be signalled, and daemons may outlive a command"
        });
    }
    parts.join("; ")
}

fn user_namespaces() -> bool {
    let read = |path: &str| std::fs::read_to_string(path).ok();
    let max = read("/proc/sys/user/max_user_namespaces")
        .and_then(|text| text.trim().parse::<u64>().ok())
        .unwrap_or(1);
    let root = nix::unistd::geteuid().is_root();
    let restricted = read("/proc/sys/kernel/apparmor_restrict_unprivileged_userns")
        .is_some_and(|text| text.trim() == "1");
    let cloning_off =
        read("/proc/sys/kernel/unprivileged_userns_clone").is_some_and(|text| text.trim() == "0");
    max > 0 && (root || !(restricted || cloning_off))
}

/// The launcher's and the init's one voice: their stderr is the command's, the only place
/// to say why it could not start.
#[allow(clippy::print_stderr)]
fn say(message: &str) {
    eprintln!("agent-runtime sandbox: {message}");
}

fn fail(message: String) -> ExitCode {
    say(&message);
    ExitCode::from(126)
}

/// The launcher (`flag` [`super::LAUNCHER_FLAG`]) or the init ([`INIT_FLAG`]): `args` are
/// what follows the flag: the plan, `--`, the program and its arguments. Returns only when
/// the program ended or could not be started.
pub fn launch(flag: &OsString, args: &[OsString]) -> ExitCode {
    if flag == INIT_FLAG {
        return init::run(args);
    }
    let (plan, program, rest) = match parse(args) {
        Ok(parsed) => parsed,
        Err(message) => return fail(message),
    };
    if plan.namespaces {
        match view::unshare_all(&plan) {
            Ok(()) => return in_namespaces(&plan, program, rest),
            Err(message) if plan.required => {
                return fail(format!("{message} (AGENT_RUNTIME_SANDBOX=required)"));
            }
            Err(_) => {}
        }
    }
    on_the_host(&plan, program, rest)
}

fn in_namespaces(plan: &Plan, program: &OsString, rest: &[OsString]) -> ExitCode {
    let view = view::build(plan);
    if let Some(problem) = view.problems.first()
        && plan.required
    {
        return fail(format!("{problem} (AGENT_RUNTIME_SANDBOX=required)"));
    }
    // The command gets the termination signals of the process group; this process waits.
    let mut terminating = SigSet::empty();
    for signal in [
        Signal::SIGTERM,
        Signal::SIGINT,
        Signal::SIGHUP,
        Signal::SIGQUIT,
    ] {
        terminating.add(signal);
    }
    let _ = sigprocmask(SigmaskHow::SIG_BLOCK, Some(&terminating), None);
    let mut init = std::process::Command::new("/proc/self/exe");
    init.arg(INIT_FLAG)
        .arg(view.plan.to_json())
        .arg("--")
        .arg(program)
        .args(rest);
    if view.tmp_is_private {
        for name in ["TMPDIR", "TMP", "TEMP"] {
            init.env(name, "/tmp");
        }
    }
    // The child inherits the mask; the init clears it before it starts the command.
    let code = match init.status() {
        Ok(status) => status
            .code()
            .and_then(|code| u8::try_from(code).ok())
            .map_or(ExitCode::from(137), ExitCode::from),
        Err(error) => fail(format!(
            "the sandbox's first process could not start: {error}"
        )),
    };
    view.finish();
    code
}

/// Landlock and seccomp alone, on the machine's namespaces: reads granted around the
/// hidden paths (none can be masked), writes in the grants; a hidden path inside a grant and
/// a read-only path stay within reach, which `required` refuses.
fn on_the_host(plan: &Plan, program: &OsString, rest: &[OsString]) -> ExitCode {
    let around = complement::around(Path::new("/"), &plan.hidden, &plan.writable());
    if plan.required
        && let Some(path) = around
            .uncovered
            .iter()
            .chain(plan.read_only.iter().filter(|path| path.exists()))
            .next()
    {
        return fail(format!(
            "without user namespaces {} cannot be kept from commands (AGENT_RUNTIME_SANDBOX=required)",
            path.display()
        ));
    }
    if let Err(message) = wall::apply(plan, wall::Inside::Host, around.readable.as_deref())
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
    say(&format!(
        "could not run {}: {error}",
        Path::new(program).display()
    ));
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_kernel_offers_landlock_with_tcp_rules_and_namespaces() {
        let status = probe(SandboxMode::Required);
        assert!(status.enforced, "{status:?}");
        assert_eq!(
            status.mechanism, "namespaces+landlock+seccomp",
            "{status:?}"
        );
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
    fn the_fallback_says_what_it_cannot_keep() {
        let text = detail(false, true, true);
        assert!(text.contains("stay readable"), "{text}");
        assert!(text.contains("daemons may outlive"), "{text}");
        let full = detail(true, true, true);
        assert!(full.contains("no network device"), "{full}");
    }
}
