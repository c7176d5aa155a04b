//! `Shell.Exec` command enforcement (local-agent-host.md §8.4, and its open question in §13):
//! which programs a `RunCommand` line would start, judged against `allowedCommands` and
//! `blockedCommands`.
//!
//! The line is read the way a POSIX shell (`sh -c`, bash, zsh) reads it, and **every**
//! program it could start is judged, not only the first word:
//!
//! - every simple command across `;`, `&&`, `||`, `|`, `|&`, `&`, newlines, subshells
//!   `( … )`, groups `{ …; }`, `if`/`while`/`until`/`for` bodies, command substitutions
//!   `$( … )` and backticks (recursively, also inside double quotes and redirection targets);
//! - quotes (`'…'`, `"…"`) and backslashes are removed as the shell removes them, so `"r"m`
//!   and `r\m` are `rm`; a `#` that starts a word starts a comment;
//! - redirections (`>`, `>>`, `<`, `2>&1`, `>&`, `<>`, `>|`, here-strings `<<<`) are skipped
//!   with their target, which is never a command. `&>` is a redirection for bash and zsh but
//!   `&` then `>` for a POSIX `sh`, so both readings are judged. The target of a redirection
//!   that writes is a file written ([`analyse`] lists them; the enforcer judges them against
//!   the File.Write grant), and a target that is or could be `/dev/tcp/…` or `/dev/udp/…`
//!   (bash opens a network connection) is denied;
//! - leading assignments (`FOO=1 cmd`) and reserved words (`!`, `{`, `if`, `then`, `do`, …)
//!   are skipped; `for NAME in WORDS` is no command;
//! - wrappers — `env`, `sudo`, `doas`, `nohup`, `nice`, `time`, `timeout` (and its duration),
//!   `xargs`, `exec`, `command`, `builtin`, `stdbuf`, `setsid`, `strace`, `ltrace`, `ionice`,
//!   `taskset`, `chroot`, `busybox`, `unbuffer`, zsh's `noglob`/`nocorrect` — are commands
//!   that must pass themselves, **and** the program they run is judged too, after their own
//!   options (an option the table does not know is refused: it might take the next word);
//!   `xargs` runs `echo` when given nothing, and its input is an unknown last argument;
//!   `find … -exec/-execdir/-ok/-okdir PROGRAM … ;` runs PROGRAM, whose `{}` is unknown;
//! - `sh`/`bash`/`zsh`/`dash`/`ksh`/… `-c SCRIPT` and `eval ARGS` read their literal script
//!   as a command line, recursively (the shell or `eval` is judged as well); a shell without
//!   `-c` runs a file or its input, like any interpreter;
//! - a program is known by its base name: `/usr/bin/rm`, `./rm` and `../bin/rm` are `rm`.
//!
//! Matching. A single-word entry names a program by base name. A multi-word entry such as
//! `"rm -rf /"` matches a command whose words, with the program's base name, start with the
//! entry's words. `blockedCommands` wins over `allowedCommands`. Blocked entries compare names
//! ASCII-case-insensitively and ignore a `.exe` suffix (`RM` runs `rm` on a case-insensitive
//! file system); allowed entries compare exactly, so the rules only ever lean towards denial.
//! An argument whose value is unknown (an expansion, a glob that could expand to the entry's
//! word, `{}`) at a position a blocked entry compares is a denial: `rm -rf $DIR` and
//! `rm -rf /*` are refused under `"rm -rf /"`, while `rm -rf /tmp/x` passes. Allowed
//! multi-word entries need the literal words.
//!
//! Decided: **what cannot be proven safe is denied**, naming why ("Cannot tell which command
//! runs: $CMD"): a program name produced by an expansion (`$CMD`, `${X}`, `$(…)`, `$'…'`,
//! zsh `=cmd`), a glob or brace expansion; unbalanced quotes or parentheses; here-documents
//! (`<<`); process substitution (`<( … )`, `>( … )`); commands inside `${…}` or `$((…))`;
//! `case` statements and function definitions; `eval` or `sh -c` with a non-literal
//! argument; a wrapper option that is not literal or not known; nesting deeper than 24.
//!
//! Also denied, because bash evaluates text again there (`expand.rs`, `builtins.rs`):
//! arithmetic (`$((…))`, `$[…]`, array subscripts, `${X:offset:length}`) on anything but
//! literal numbers — bash evaluates a variable's *value* as an expression, and
//! `a[$(cmd)]` runs `cmd` —; `${…}` transformations other than `@Q @U @u @L @a` (`@P` is
//! prompt expansion) and `${!X}` indirection; `alias`, `shopt expand_aliases`, `let` and
//! `[[ … -eq … ]]` on variables, subscripted names given to `unset`/`declare`/`read`/
//! `printf -v`/`test -v`/…, `hash -p`, `enable -f`, `mapfile -C`, `compgen`/`complete`
//! `-C`/`-F`, `bind -x`, `fc`; setting `PS0`–`PS4`, `PROMPT_COMMAND`, `BASH_ENV`, `ENV`,
//! `SHELLOPTS`, `BASHOPTS` or an exported function (`BASH_FUNC_x%%`). A `trap` action is
//! read as a command line, like `eval`'s argument. A bracket class holding a substitution
//! (`[`…`]`) is read for the commands in it.
//!
//! Every way the line sets a variable is judged (`assign.rs`): leading assignments
//! (`NAME=`, `NAME+=`), `declare`/`typeset`/`local`/`export`/`readonly` arguments, `read`,
//! `mapfile`/`readarray`, `printf -v`, `getopts`, `for`/`select` variables, `${X:=…}`, and
//! `env`/`sudo` words with `=` (also through `command`, `builtin`, `exec`). Bash evaluates a
//! value given to an integer-attributed variable as arithmetic — `RANDOM`, `SRANDOM`,
//! `OPTIND`, `HISTCMD`, … and any name the line gives `-i` — so such a value must be a
//! literal number expression, and `read`/`printf -v`/`getopts`/`mapfile`/`for` into one is
//! denied; the arithmetic command `((…))` is judged like `$((…))`; namerefs
//! (`declare -n`) and a declaration whose variable is not literal (`declare "$N"=1`,
//! `read $V`) are denied. Setting `PATH`, `LD_*`, `DYLD_*`, `GCONV_PATH` or
//! `BASH_LOADABLES_PATH` (which make an admitted name load or be other code) is denied when
//! `allowedCommands` applies.
//!
//! On Windows (the enforcer's [`Os`]) the line is read the way cmd.exe reads it, since the
//! tool runtime runs it as `%ComSpec% /s /c "LINE"` (`cmd.rs`, `cmd/`), with the same
//! outputs and matching:
//!
//! - every command across `&`, `&&`, `||`, `|` and blocks `( … )` (nested; `)` closes only
//!   outside quotes and unescaped), inside `if … COMMAND [else COMMAND]` and
//!   `for … do COMMAND`; `for`, `if`, `else`, `do`, `in`, `rem`, `::` and labels are syntax,
//!   every builtin (`set`, `call`, `echo`, `type`, `cd`, `start`, `cmd`, …) is a command the
//!   lists judge. Over-approximated: commands after a `rem` and its next `&` are judged, and
//!   so is a command after `else` that follows an `if` body without parentheses;
//! - `^` escapes the next character outside quotes and `"` toggles quoting (operators inside
//!   are literal; quotes are removed from the program's name); the command token is found as
//!   cmd.exe finds it: after delimiters (` ,;=`, tab) and `@`, ending at a delimiter, `/`,
//!   `+` or `(` (`dir/w`, `del,x`, `echo(`); a token that starts with an internal command's
//!   name and a character no name holds is that command too (`echo.`, `del.exe`); a
//!   program is known by its base name (`C:\Windows\System32\DEL.EXE`, `..\x\rm.bat`);
//! - `%NAME%`, `%i`, `%~…` and `!NAME!` (delayed expansion may be on) are unknown values:
//!   in a program name they are denied, in an argument a blocked entry comparing it denies;
//!   arguments are judged both as programs split them (whitespace) and as cmd.exe's own
//!   commands do (also at `,`, `;`, `=`);
//! - cmd.exe expands and parses text a second time in `call` (after doubling its carets),
//!   on both sides of a pipe, in `cmd /c LINE` (with its quote stripping: both readings
//!   when cmd.exe may keep the quotes), in `start`'s program and in `for /f`'s `('…')` or
//!   `` (`…`) `` command: that text is read as a command line of its own. A value expanded
//!   there may hold operators, so it must be the line's own safe text: unset by the line
//!   (the user's environment, taken as data), set by the line to text without special
//!   characters, or a number from `set /a`. Otherwise (`set /p`, a value with `&`, after
//!   a program that may be a batch file, inside a loop) the line could run anything: it is
//!   denied when `allowedCommands` or `blockedCommands` applies, and admitted without them;
//! - redirections anywhere (`>`, `>>`, `<`, `2>`, `2>&1`, `>&2`, `<&0`); written targets are
//!   files written, as on Unix. Blocked entries also ignore `.com`, `.bat`, `.cmd`, trailing
//!   dots and a leading `@`, take a builtin's two names as one (`del`/`erase`, `rd`/`rmdir`,
//!   `md`/`mkdir`, `cd`/`chdir`, `ren`/`rename`), and compare arguments case-insensitively.
//!
//! Also denied on Windows: unbalanced quotes or parentheses, text after a block's `)`,
//! line breaks (cmd.exe stops at one outside a block and reads on inside one) and other
//! control characters (Ctrl-Z reads as a line break, a form feed may part words), substrings
//! and substitutions (`%X:~0,1%` can pick any character, an operator or a quote),
//! `%CD%`, `%__CD__%`, `%=C:%` and `%CMDCMDLINE%` (their values are chosen by the command:
//! a folder may be named `a&calc`), an `if` condition or `for` header not understood, an
//! unknown option of `cmd` or `start`, `cmd` switches after other text, `cmd` without
//! `/c` or with `/k` (it then runs commands from its input, which the model sends), a
//! token that may be `for`, `if` or `rem` but is not exactly one (`for.`), and setting
//! `ComSpec` (cmd.exe starts it for pipes and `for /f`).
//!
//! Not covered (an allowlist is the security boundary; a blocklist is a speed bump):
//! interpreters running code from arguments (`python -c`, `awk 'BEGIN{system(…)}'`,
//! `git -c alias…`, `make`), programs that run a string through a shell themselves (`watch`,
//! `su -c`, `flock -c`, `ssh`), option reorderings of blocked entries (`rm -fr /`), aliases
//! and functions defined by shell start-up files, `PATH` pointing elsewhere in the user's
//! own environment (or set by the line under a blocklist alone), variables other programs
//! read as commands or code (`PAGER`, `EDITOR`, `GIT_SSH_COMMAND`, `LESSOPEN`,
//! `NODE_OPTIONS`, `PYTHONSTARTUP`, …: such a program judged as itself then runs them), and
//! a file the line writes being run by an admitted interpreter or shell (`bash f`). A
//! relative name such as `./ls` is judged as `ls`. On Windows also: programs that run strings
//! (`powershell -c`, `pwsh`, `wsl`, `bash -c`, `wmic process call create`, `schtasks`,
//! `runas`, `forfiles /c`, `mshta`, `rundll32`), which are judged as programs only;
//! `start` opening a document or URL with its associated program, or running a builtin
//! through `cmd /k`, which then reads its input; a document run as a command, or `assoc`
//! and `ftype` changing what one opens with; 8.3 short names (`DELETE~1.EXE`) and
//! `doskey` macros; operators in values of the user's own environment.

mod assign;
#[cfg(test)]
mod assign_tests;
mod builtins;
mod cmd;
mod expand;
#[cfg(test)]
mod fuzz_tests;
#[cfg(test)]
mod hardening_tests;
mod parse;
mod programs;
#[cfg(test)]
mod tests;
mod word;

use agent_path_rules::Os;

use self::parse::invocations;
use self::word::{Pat, Word, could_be};

/// Why a command line may not run; the `Display` text is the reason shown to the model.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CommandDenial {
    /// The matched words of a blocked entry, base name normalised (`rm -rf /`, `sudo`).
    #[error("Command is blocked: {0}")]
    Blocked(String),
    /// The base name of a program no allowed entry admits.
    #[error("Command not in allowed commands: {0}")]
    NotAllowed(String),
    /// The line cannot be shown to run only judged programs; the text says why.
    #[error("{0}")]
    Unanalysable(String),
}

/// The distinct base names of every program `line` would start, in order of appearance.
#[cfg(test)]
pub(crate) fn base_commands(line: &str) -> Result<Vec<String>, CommandDenial> {
    check(line, None, None)
}

/// Which shell reads the line: cmd.exe on Windows, a POSIX shell elsewhere.
fn is_cmd(os: Os) -> bool {
    os == Os::Windows
}

/// A file a redirection of the line writes (`> out.txt`), for the File.Write check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WriteTarget {
    /// A literal path, as written (relative to the command's working directory).
    Path(String),
    /// A target only known when the line runs (`> $F`, `> *.log`); the source text.
    Unknown(String),
}

/// What an admitted line does: its programs (as [`check`] returns them) and the files its
/// redirections write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Analysis {
    pub programs: Vec<String>,
    pub writes: Vec<WriteTarget>,
}

/// Judges every program `line` would start, like [`check`], and lists the files its
/// redirections write; `os` chooses the shell that reads the line (cmd.exe on Windows).
pub fn analyse(
    line: &str,
    allowed: Option<&[String]>,
    blocked: Option<&[String]>,
    os: Os,
) -> Result<Analysis, CommandDenial> {
    if line.contains('\0') {
        return Err(CommandDenial::Unanalysable(
            "Command contains a NUL byte".to_owned(),
        ));
    }
    let windows = is_cmd(os);
    let found = if windows {
        cmd::invocations(line)?
    } else {
        invocations(line)?
    };
    let listed = allowed.is_some() || blocked.is_some_and(|entries| !entries.is_empty());
    if listed && let Some(reason) = found.opaque.first() {
        return Err(CommandDenial::Unanalysable(reason.clone()));
    }
    if allowed.is_some()
        && let Some(reason) = found.rebinding.first()
    {
        return Err(CommandDenial::Unanalysable(reason.clone()));
    }
    let programs = judge(&found.programs, allowed, blocked, windows)?;
    let writes = found
        .writes
        .iter()
        .map(|word| {
            if word.is_literal() {
                WriteTarget::Path(word.text.clone())
            } else {
                WriteTarget::Unknown(word.raw.clone())
            }
        })
        .collect();
    Ok(Analysis { programs, writes })
}

/// Judges every program `line` would start. On success, the distinct base names found (for
/// the approval risk: all of them are admitted by `allowed` when it is set).
#[cfg(test)]
pub(crate) fn check(
    line: &str,
    allowed: Option<&[String]>,
    blocked: Option<&[String]>,
) -> Result<Vec<String>, CommandDenial> {
    analyse(line, allowed, blocked, Os::OtherUnix).map(|analysis| analysis.programs)
}

fn judge(
    found: &[Vec<Word>],
    allowed: Option<&[String]>,
    blocked: Option<&[String]>,
    windows: bool,
) -> Result<Vec<String>, CommandDenial> {
    for words in found {
        let name = program(words)?;
        for entry in blocked.unwrap_or_default() {
            match blocked_match(entry, name, words, windows) {
                Match::No => {}
                Match::Yes(display) => return Err(CommandDenial::Blocked(display)),
                Match::Maybe => {
                    return Err(CommandDenial::Unanalysable(format!(
                        "Cannot tell whether {} is the blocked command {}",
                        raw(words),
                        entry.trim()
                    )));
                }
            }
        }
    }
    let mut bases: Vec<String> = Vec::new();
    for words in found {
        let name = program(words)?;
        if let Some(allowed) = allowed
            && !allowed
                .iter()
                .any(|entry| allowed_match(entry, name, words))
        {
            return Err(CommandDenial::NotAllowed(name.to_owned()));
        }
        if !bases.iter().any(|known| known == name) {
            bases.push(name.to_owned());
        }
    }
    Ok(bases)
}

/// The base name of an invocation's program, or why it cannot be told.
fn program(words: &[Word]) -> Result<&str, CommandDenial> {
    match words.first() {
        Some(name) if name.is_literal() => Ok(base_name(&name.text)),
        Some(name) => Err(CommandDenial::Unanalysable(format!(
            "Cannot tell which command runs: {}",
            name.raw
        ))),
        None => Err(CommandDenial::Unanalysable(
            "Cannot tell which command runs: an empty command".to_owned(),
        )),
    }
}

/// `/usr/bin/rm`, `./rm`, `..\bin\rm` → `rm`.
pub(crate) fn base_name(name: &str) -> &str {
    name.rsplit(['/', '\\']).next().unwrap_or(name)
}

/// A program name as blocked entries compare it: ASCII lowercase without `.exe`; on Windows
/// also without the other PATHEXT extensions (`.com`, `.bat`, `.cmd`), without what
/// Windows or cmd.exe ignore around a name (trailing dots and spaces, a leading `@`), and
/// with one name for builtins that have two (`erase` is `del`, `rmdir` is `rd`).
pub(super) fn loose(name: &str, windows: bool) -> String {
    let mut lower = name.to_ascii_lowercase();
    if windows {
        let mut name = lower.trim_start_matches(['@', '(', ' ', '\t', ',', ';', '=']);
        // `C:del` runs del from drive C's folder; `del.exe::$DATA` is the file itself.
        if name.as_bytes().get(1) == Some(&b':') {
            name = &name[2..];
        }
        name = name.strip_suffix("::$data").unwrap_or(name);
        lower = name.trim_end_matches(['.', ' ', '\t']).to_owned();
    }
    let extensions: &[&str] = if windows {
        &[".exe", ".com", ".bat", ".cmd"]
    } else {
        &[".exe"]
    };
    for extension in extensions {
        if let Some(stem) = lower.strip_suffix(extension)
            && !stem.is_empty()
        {
            lower = if windows {
                stem.trim_end_matches(['.', ' ']).to_owned()
            } else {
                stem.to_owned()
            };
            break;
        }
    }
    if windows {
        // cmd.exe's builtins with two names.
        let same = match lower.as_str() {
            "erase" => "del",
            "rmdir" => "rd",
            "mkdir" => "md",
            "chdir" => "cd",
            "rename" => "ren",
            _ => return lower,
        };
        return same.to_owned();
    }
    lower
}

/// `word` with its known characters lowercased, for Windows' case-insensitive arguments.
fn lowered(word: &Word) -> Word {
    let mut lower = word.clone();
    lower.text = lower.text.to_ascii_lowercase();
    for pat in &mut lower.pattern {
        if let Pat::Byte(byte) = pat {
            *byte = byte.to_ascii_lowercase();
        }
    }
    lower
}

fn raw(words: &[Word]) -> String {
    words
        .iter()
        .map(|word| word.raw.as_str())
        .collect::<Vec<_>>()
        .join(" ")
}

enum Match {
    No,
    Yes(String),
    Maybe,
}

fn blocked_match(entry: &str, name: &str, words: &[Word], windows: bool) -> Match {
    let mut parts = entry.split_whitespace();
    let Some(first) = parts.next() else {
        return Match::No;
    };
    let entry_name = base_name(first);
    if loose(entry_name, windows) != loose(name, windows) {
        return Match::No;
    }
    let mut maybe = false;
    let mut display = vec![name.to_owned()];
    for (part, word) in parts.zip(
        words
            .iter()
            .skip(1)
            .map(Some)
            .chain(std::iter::repeat(None)),
    ) {
        let Some(word) = word else {
            return Match::No; // the command is shorter than the entry
        };
        // Windows programs read their switches without regard to case.
        let lower;
        let (word, part) = if windows {
            lower = lowered(word);
            (&lower, part.to_ascii_lowercase())
        } else {
            (word, part.to_owned())
        };
        let part = part.as_str();
        if word.split || word.brace {
            return Match::Maybe; // could be any number of words
        }
        if word.is_literal() {
            if word.text != part {
                return Match::No;
            }
        } else if could_be(word, part) {
            maybe = true;
        } else {
            return Match::No;
        }
        display.push(part.to_owned());
    }
    if maybe {
        Match::Maybe
    } else {
        Match::Yes(display.join(" "))
    }
}

fn allowed_match(entry: &str, name: &str, words: &[Word]) -> bool {
    let mut parts = entry.split_whitespace();
    let Some(first) = parts.next() else {
        return false;
    };
    if base_name(first) != name {
        return false;
    }
    let mut args = words.iter().skip(1);
    parts.all(|part| {
        args.next()
            .is_some_and(|word| word.is_literal() && word.text == part)
    })
}
