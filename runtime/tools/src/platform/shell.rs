//! Shell resolution (local-tool-runtime.md §6.2): which program runs a command string, and
//! with which arguments. The choice is a pure function of the environment so that every
//! platform's rule is unit-tested on every platform.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

pub(crate) use agent_path_rules::Os;

/// A shell and the way a command string is handed to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Shell {
    /// `program -c command` (sh, bash, zsh, fish, …).
    Posix(PathBuf),
    /// `cmd.exe /c command`. The command must reach cmd.exe verbatim (a raw argument): cmd.exe
    /// parses its command line itself and does not follow the quoting rules that argument
    /// escaping assumes.
    Cmd(PathBuf),
}

impl Shell {
    pub(crate) fn program(&self) -> &Path {
        match self {
            Shell::Posix(program) | Shell::Cmd(program) => program,
        }
    }

    /// The switch that precedes the command string.
    pub(crate) fn command_switch(&self) -> &'static str {
        match self {
            Shell::Posix(_) => "-c",
            Shell::Cmd(_) => "/c",
        }
    }
}

/// The shell of this machine: see [`choose_shell`].
pub(crate) fn resolve_shell() -> Shell {
    choose_shell(
        Os::current(),
        std::env::var_os("SHELL").as_deref(),
        std::env::var_os("ComSpec").as_deref(),
        is_executable_file,
    )
}

/// macOS and other unixes: `$SHELL` when it names an executable file by absolute path (the
/// user's own shell, §6.2), else `/bin/zsh` on macOS, else `/bin/sh`. Windows: `%ComSpec%`,
/// else `cmd.exe`. `usable` says whether a path is an executable file.
pub(crate) fn choose_shell(
    os: Os,
    shell_var: Option<&OsStr>,
    comspec_var: Option<&OsStr>,
    usable: impl Fn(&Path) -> bool,
) -> Shell {
    let from_var = |value: Option<&OsStr>| {
        value
            .filter(|value| !value.is_empty())
            .map(PathBuf::from)
            // `os`'s rule, not the host's: `/bin/zsh` has a root on every host, while
            // `is_absolute` would also want a drive letter on Windows.
            .filter(|path| os == Os::Windows || path.has_root())
    };
    match os {
        Os::Windows => Shell::Cmd(from_var(comspec_var).unwrap_or_else(|| "cmd.exe".into())),
        Os::MacOs | Os::OtherUnix => {
            let candidates = from_var(shell_var)
                .into_iter()
                .chain((os == Os::MacOs).then(|| PathBuf::from("/bin/zsh")));
            Shell::Posix(
                candidates
                    .into_iter()
                    .find(|path| usable(path))
                    .unwrap_or_else(|| PathBuf::from("/bin/sh")),
            )
        }
    }
}

#[cfg(unix)]
fn is_executable_file(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path)
        .map(|metadata| metadata.is_file() && metadata.permissions().mode() & 0o111 != 0)
        .unwrap_or(false)
}

#[cfg(not(unix))]
fn is_executable_file(path: &Path) -> bool {
    path.is_file()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn posix(path: &str) -> Shell {
        Shell::Posix(PathBuf::from(path))
    }

    #[test]
    fn unix_prefers_an_executable_shell_variable_then_zsh_on_macos_then_sh() {
        let all = |_: &Path| true;
        let none = |_: &Path| false;
        let shell = Some(OsStr::new("/usr/bin/fish"));
        assert_eq!(
            choose_shell(Os::OtherUnix, shell, None, all),
            posix("/usr/bin/fish")
        );
        assert_eq!(
            choose_shell(Os::OtherUnix, shell, None, none),
            posix("/bin/sh")
        );
        assert_eq!(
            choose_shell(Os::OtherUnix, None, None, all),
            posix("/bin/sh")
        );
        assert_eq!(choose_shell(Os::MacOs, None, None, all), posix("/bin/zsh"));
        assert_eq!(
            choose_shell(Os::MacOs, shell, None, all),
            posix("/usr/bin/fish")
        );
        let only_zsh = |path: &Path| path == Path::new("/bin/zsh");
        assert_eq!(
            choose_shell(Os::MacOs, shell, None, only_zsh),
            posix("/bin/zsh")
        );
        assert_eq!(choose_shell(Os::MacOs, None, None, none), posix("/bin/sh"));
        // A relative or empty $SHELL is not trusted: it would depend on the working directory.
        assert_eq!(
            choose_shell(Os::OtherUnix, Some(OsStr::new("bash")), None, all),
            posix("/bin/sh")
        );
        assert_eq!(
            choose_shell(Os::OtherUnix, Some(OsStr::new("")), None, all),
            posix("/bin/sh")
        );
        assert_eq!(posix("/bin/sh").command_switch(), "-c");
    }

    #[test]
    fn windows_uses_comspec_or_cmd_exe_with_slash_c() {
        let none = |_: &Path| false;
        let comspec = Some(OsStr::new(r"C:\Windows\system32\cmd.exe"));
        let shell = choose_shell(Os::Windows, Some(OsStr::new("/bin/bash")), comspec, none);
        assert_eq!(
            shell,
            Shell::Cmd(PathBuf::from(r"C:\Windows\system32\cmd.exe"))
        );
        assert_eq!(shell.command_switch(), "/c");
        assert_eq!(
            choose_shell(Os::Windows, None, None, none).program(),
            Path::new("cmd.exe")
        );
    }

    #[cfg(unix)]
    #[test]
    fn this_machine_resolves_to_an_executable_shell() {
        let shell = resolve_shell();
        assert!(is_executable_file(shell.program()), "{shell:?}");
        assert!(!is_executable_file(Path::new("/")));
    }
}
