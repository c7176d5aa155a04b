//! macOS: the Seatbelt profile (SBPL) a process runs under, `sandbox-exec -p <profile>`.
//! A pure function of the plan, so it is unit-tested on every OS. In SBPL the last
//! matching rule wins: the read-only and hidden denials come after the grants. The tool
//! caches stay read-only here (Seatbelt has no private layer to give).

use std::path::Path;

use super::Plan;

#[cfg(target_os = "macos")]
pub const SANDBOX_EXEC: &str = "/usr/bin/sandbox-exec";

/// An SBPL string literal: `"` and `\` escaped; a path is never interpreted as a pattern.
fn literal(path: &Path) -> String {
    let text = path.display().to_string();
    format!("\"{}\"", text.replace('\\', "\\\\").replace('"', "\\\""))
}

fn subpaths(paths: &[std::path::PathBuf]) -> String {
    paths
        .iter()
        .map(|path| format!("\n  (subpath {})", literal(path)))
        .collect()
}

pub(crate) fn profile(plan: &Plan) -> String {
    let mut profile = String::from(
        "(version 1)\n\
         (deny default)\n\
         (allow process-exec process-fork signal (target same-sandbox))\n\
         (allow sysctl-read mach-lookup ipc-posix-shm ipc-posix-sem pseudo-tty)\n\
         (allow file-ioctl (literal \"/dev/tty\") (regex #\"^/dev/ttys[0-9]+$\"))\n",
    );
    // INTEROP.md §10: reads anywhere but the hidden paths.
    profile.push_str("(allow file-read*)\n");
    profile.push_str("(allow file-write*");
    profile.push_str(&subpaths(&plan.write));
    profile.push_str(")\n");
    if !plan.read_only.is_empty() {
        profile.push_str("(deny file-write*");
        profile.push_str(&subpaths(&plan.read_only));
        profile.push_str(")\n");
    }
    if !plan.hidden.is_empty() {
        profile.push_str("(deny file-read* file-write*");
        profile.push_str(&subpaths(&plan.hidden));
        profile.push_str(")\n");
    }
    if let (true, Some(port)) = (plan.network, plan.proxy_port) {
        // Through the egress proxy only: TCP to its loopback port, and Unix sockets.
        profile.push_str(&format!(
            "(allow network* (remote unix-socket) (local unix-socket))\n(allow network-outbound (remote tcp \"localhost:{port}\"))\n"
        ));
    } else if plan.network {
        profile.push_str("(allow network*)\n");
    } else {
        profile.push_str("(allow network* (remote unix-socket) (local unix-socket))\n");
    }
    profile
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn plan(network: bool) -> Plan {
        Plan {
            write: vec![PathBuf::from("/w"), PathBuf::from("/dev/null")],
            read_only: vec![PathBuf::from("/w/.git/config")],
            hidden: vec![PathBuf::from("/w/.env"), PathBuf::from("/u/.ssh")],
            network,
            ..Plan::default()
        }
    }

    #[test]
    fn through_the_egress_proxy_only_its_port_is_reachable() {
        let mut proxied = plan(true);
        proxied.proxy_port = Some(4711);
        let text = profile(&proxied);
        assert!(text.contains("(allow network-outbound (remote tcp \"localhost:4711\"))"));
        assert!(!text.contains("(allow network*)\n"), "{text}");
    }

    #[test]
    fn writes_are_granted_then_read_only_and_hidden_paths_denied_and_network_is_unix_only() {
        let text = profile(&plan(false));
        let grant = text.find("(allow file-write*\n  (subpath \"/w\")").unwrap();
        let deny = text
            .find("(deny file-write*\n  (subpath \"/w/.git/config\"))")
            .unwrap();
        let hidden = text
            .find("(deny file-read* file-write*\n  (subpath \"/w/.env\")\n  (subpath \"/u/.ssh\"))")
            .unwrap();
        assert!(
            grant < deny && grant < hidden,
            "the denials must come last to win:\n{text}"
        );
        assert!(text.starts_with("(version 1)\n(deny default)\n"));
        assert!(text.contains("(allow file-read*)\n"));
        assert!(text.contains("(allow network* (remote unix-socket) (local unix-socket))"));
        assert!(!text.contains("(allow network*)"));
        assert!(profile(&plan(true)).contains("(allow network*)\n"));
    }

    #[test]
    fn paths_cannot_break_out_of_the_string() {
        let odd = Plan {
            write: vec![PathBuf::from("/a\"b\\c")],
            ..Plan::default()
        };
        assert!(profile(&odd).contains("(subpath \"/a\\\"b\\\\c\")"));
    }
}
