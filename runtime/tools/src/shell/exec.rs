//! Running one command (local-tool-runtime.md §4.4): the platform shell — or, for
//! ExecuteCode, an interpreter —, confined to what the request grants, run as a process
//! tree of its own by [`crate::platform::run`].

use std::ffi::OsStr;
use std::path::Path;
use std::time::Duration;

use agent_protocol::ToolRequest;

use crate::platform::run::{Outcome, Settings, run_prepared};
use crate::platform::shell::Shell;

/// The arguments that follow the shell program. `cmd.exe` gets one raw argument
/// `/s /c "command"`: with `/s` it strips exactly the outer quotes and runs the rest verbatim,
/// so commands that themselves start with a quoted path survive (§6.2's `cmd.exe /c`).
pub(crate) fn shell_arguments(shell: &Shell, command: &str) -> Vec<String> {
    match shell {
        Shell::Posix(_) => vec![shell.command_switch().to_owned(), command.to_owned()],
        Shell::Cmd(_) => vec![format!("/s {} \"{command}\"", shell.command_switch())],
    }
}

/// Runs `command` to its end or its timeout, confined to what `request` grants
/// (`crate::sandbox`). `Err` only when the shell cannot be started (or the sandbox, being
/// required, is unavailable).
pub(crate) async fn run(
    request: &ToolRequest,
    shell: &Shell,
    command: &str,
    cwd: &Path,
    stdin: Option<&str>,
    timeout: Duration,
    settings: Settings,
) -> std::io::Result<Outcome> {
    let arguments = shell_arguments(shell, command);
    let raw = matches!(shell, Shell::Cmd(_));
    let add_arguments = |builder: &mut tokio::process::Command| {
        #[cfg(windows)]
        if raw {
            for argument in &arguments {
                builder.raw_arg(argument);
            }
            return;
        }
        #[cfg(not(windows))]
        let _ = raw;
        builder.args(&arguments);
    };
    run_program(
        request,
        shell.program().as_os_str(),
        add_arguments,
        cwd,
        stdin,
        timeout,
        settings,
    )
    .await
}

/// Runs `program` (its arguments added by `add_arguments`) to its end or its timeout,
/// confined to what `request` grants: the launch path of RunCommand and ExecuteCode. `Err`
/// only when the program cannot be started (or the sandbox, being required, is
/// unavailable).
pub(crate) async fn run_program(
    request: &ToolRequest,
    program: &OsStr,
    add_arguments: impl FnOnce(&mut tokio::process::Command),
    cwd: &Path,
    stdin: Option<&str>,
    timeout: Duration,
    settings: Settings,
) -> std::io::Result<Outcome> {
    let confined = crate::sandbox::command(program, request)
        .map_err(|message| std::io::Error::new(std::io::ErrorKind::PermissionDenied, message))?;
    // The proxy lives until the program has ended.
    let crate::sandbox::Confined {
        command: mut builder,
        egress: _egress,
        after,
    } = confined;
    add_arguments(&mut builder);
    let outcome = run_prepared(builder, cwd, stdin, timeout, settings).await;
    // Whatever the program made at a path it may not create goes, ended normally or not.
    let Ok(mut outcome) = outcome else {
        after.settle(cwd, "");
        return outcome;
    };
    let stderr = String::from_utf8_lossy(&outcome.stderr.head).into_owned()
        + &String::from_utf8_lossy(&outcome.stderr.tail);
    outcome.notes = after.settle(cwd, &stderr);
    Ok(outcome)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    #[test]
    fn posix_shells_get_dash_c_and_cmd_gets_one_raw_slash_s_slash_c_argument() {
        let sh = Shell::Posix(PathBuf::from("/bin/sh"));
        assert_eq!(shell_arguments(&sh, "echo 'a b'"), ["-c", "echo 'a b'"]);
        let cmd = Shell::Cmd(PathBuf::from("cmd.exe"));
        assert_eq!(
            shell_arguments(&cmd, r#""C:\Program Files\x.exe" "a b""#),
            [r#"/s /c ""C:\Program Files\x.exe" "a b"""#]
        );
    }
}
