//! Variables a line sets, and why some of them run code: bash evaluates the value given to
//! an integer-attributed variable (`RANDOM`, `OPTIND`, any `declare -i` name) as
//! arithmetic, where `a[$(cmd)]` runs `cmd`; the shell runs or prompt-expands `BASH_ENV`,
//! `PROMPT_COMMAND`, `PS4`, …; the loader and the shell find code through `LD_PRELOAD`,
//! `PATH` and exported functions. Every way the line sets a variable is recorded (leading
//! assignments, `declare`/`export`/…, `read`, `printf -v`, `getopts`, `mapfile`, `for`,
//! `${X:=…}`, `env`/`sudo` words) and judged once the whole line is read, so an attribute
//! given after the assignment counts as well.

use super::CommandDenial;
use super::expand;
use super::parse::Parser;
use super::word::{Pat, Word, is_name};

/// Variables whose value the shell later runs or prompt-expands (`PS4='$(cmd)'; set -x`).
const CODE_VARIABLES: &[&str] = &[
    "PS0",
    "PS1",
    "PS2",
    "PS3",
    "PS4",
    "PROMPT_COMMAND",
    "BASH_ENV",
    "ENV",
    "SHELLOPTS",
    "BASHOPTS",
];

/// bash's variables that carry the integer attribute from the start (bash 5.2; `SECONDS`
/// and `LINENO` for other versions).
const INTEGER_VARIABLES: &[&str] = &[
    "RANDOM", "SRANDOM", "OPTIND", "HISTCMD", "BASHPID", "EUID", "UID", "PPID", "SECONDS", "LINENO",
];

/// A variable that makes programs load or find other code: the dynamic loader's (`LD_*`,
/// macOS `DYLD_*`), glibc's converters, bash's loadable builtins and `PATH` itself.
fn rebinds_programs(name: &str) -> bool {
    name == "PATH"
        || name == "GCONV_PATH"
        || name == "BASH_LOADABLES_PATH"
        || name.starts_with("LD_")
        || name.starts_with("DYLD_")
}

/// One variable the line sets.
#[derive(Debug, Clone)]
pub(super) struct Assigned {
    pub name: String,
    /// The value is known to be a literal number expression (`5`, `1+2`, empty), which
    /// bash's arithmetic cannot turn into code.
    pub inert: bool,
    /// Set in a program's environment (`env X=…`), not as a shell variable.
    pub environment: bool,
}

/// What the line sets, for [`judge`].
#[derive(Debug, Default)]
pub(super) struct Assignments {
    pub set: Vec<Assigned>,
    /// Names given the integer attribute (`declare -i n`).
    pub integer: Vec<String>,
}

impl Assignments {
    pub(super) fn shell(&mut self, name: &str, inert: bool) {
        self.set.push(Assigned {
            name: name.to_owned(),
            inert,
            environment: false,
        });
    }
}

fn refuse(why: String) -> CommandDenial {
    CommandDenial::Unanalysable(why)
}

/// Whether `value` is text bash's arithmetic reads as numbers only.
fn inert_text(value: &str) -> bool {
    expand::arithmetic(value).is_none()
}

/// `NAME=value` or `NAME+=value` as a shell assignment word (`assignment` set by the reader):
/// the name and whether the value is inert.
pub(super) fn split_assignment(word: &Word) -> (String, bool) {
    let (name, value) = word.text.split_once('=').unwrap_or((&word.text, ""));
    let name = name.strip_suffix('+').unwrap_or(name);
    (name.to_owned(), word.is_literal() && inert_text(value))
}

/// The name a declaration argument (`n`, `n=1`, `a[0]=x`, `"n=$X"`) sets and whether its
/// value is inert, or `None` when the name is not known before the line runs.
fn declared(word: &Word) -> Option<(String, bool)> {
    // The text before the first literal `=` must be literal: `"$N"=1` could set anything.
    let eq = word.pattern.iter().position(|p| *p == Pat::Byte(b'='));
    let head = &word.pattern[..eq.unwrap_or(word.pattern.len())];
    if !head.iter().all(|p| matches!(p, Pat::Byte(_))) || (eq.is_none() && !word.is_literal()) {
        return None;
    }
    let (name, value) = match word.text.split_once('=') {
        Some((name, value)) => (name, Some(value)),
        None => (word.text.as_str(), None),
    };
    let name = name.strip_suffix('+').unwrap_or(name);
    let name = name.split('[').next().unwrap_or(name);
    if !is_name(name.as_bytes()) {
        return None;
    }
    let inert = match value {
        Some(value) => word.is_literal() && inert_text(value),
        None => true,
    };
    Some((name.to_owned(), inert))
}

/// Judges every variable the line sets: code variables are refused, integer ones unless
/// the value is inert; variables that rebind programs are returned as reasons, denied when
/// an allowlist applies.
pub(super) fn judge(found: &Assignments) -> Result<Vec<String>, CommandDenial> {
    let mut rebinding = Vec::new();
    for assigned in &found.set {
        let name = assigned.name.as_str();
        if CODE_VARIABLES.contains(&name) {
            return Err(refuse(format!(
                "Setting {name} is not allowed: the shell runs or expands its value later"
            )));
        }
        if name.starts_with("BASH_FUNC_") || name.contains('%') || name.contains("()") {
            return Err(refuse(format!(
                "Setting {name} is not allowed: it defines a shell function"
            )));
        }
        if rebinds_programs(name) {
            rebinding.push(format!(
                "Setting {name} is not allowed: it changes which code a program runs"
            ));
            continue;
        }
        let integer = INTEGER_VARIABLES.contains(&name) || found.integer.iter().any(|n| n == name);
        if integer && !assigned.inert && !assigned.environment {
            return Err(refuse(format!(
                "Setting the integer variable {name} to anything but a literal number is not \
                 analysed (bash evaluates its value as arithmetic, which can run commands)"
            )));
        }
    }
    Ok(rebinding)
}

/// Short options of `read` that take a value (`-a` names the array read into).
const READ_VALUED: &str = "dinNptua";
const READ_FLAGS: &str = "ers";
const MAPFILE_VALUED: &str = "dnOsuCc";
const MAPFILE_FLAGS: &str = "t";

impl Parser<'_, '_> {
    /// `declare`, `typeset`, `local`, `export`, `readonly`: the variables they set, the
    /// integer attribute they give, and namerefs (which make a name set another variable).
    pub(super) fn declaration(
        &mut self,
        builtin: &str,
        args: &[Word],
    ) -> Result<(), CommandDenial> {
        let mut integer = false;
        let mut names = Vec::new();
        let mut options = true;
        for word in args {
            if options && word.is_literal() && word.text == "--" {
                options = false;
                continue;
            }
            if options
                && word.is_literal()
                && let Some(cluster) = word.text.strip_prefix(['-', '+'])
                && !cluster.is_empty()
            {
                integer |= cluster.contains('i');
                if cluster.contains('n') && builtin != "export" {
                    return Err(refuse(format!(
                        "{builtin} -n is not analysed: a nameref makes a name set another variable"
                    )));
                }
                continue;
            }
            options = false;
            let Some((name, inert)) = declared(word) else {
                return Err(refuse(format!(
                    "Cannot tell which variable {builtin} sets: {}",
                    word.raw
                )));
            };
            if word.text.contains('=') {
                self.out.assigned.shell(&name, inert);
            }
            names.push(name);
        }
        if integer {
            self.out.assigned.integer.extend(names);
        }
        Ok(())
    }

    /// `read`, `mapfile`/`readarray`, `printf -v`, `getopts`: the variables they fill with
    /// text only known when the line runs.
    pub(super) fn reads_into(&mut self, builtin: &str, args: &[Word]) -> Result<(), CommandDenial> {
        let mut targets: Vec<&Word> = Vec::new();
        match builtin {
            "read" | "mapfile" | "readarray" => {
                let (flags, valued) = if builtin == "read" {
                    (READ_FLAGS, READ_VALUED)
                } else {
                    (MAPFILE_FLAGS, MAPFILE_VALUED)
                };
                let mut i = 0;
                let mut options = true;
                while let Some(word) = args.get(i) {
                    i += 1;
                    if !word.is_literal() {
                        return Err(refuse(format!(
                            "Cannot tell which variable {builtin} sets: {}",
                            word.raw
                        )));
                    }
                    if options && word.text == "--" {
                        options = false;
                        continue;
                    }
                    let Some(cluster) = word
                        .text
                        .strip_prefix('-')
                        .filter(|c| options && !c.is_empty())
                    else {
                        options = false;
                        targets.push(word);
                        continue;
                    };
                    for (at, option) in cluster.char_indices() {
                        if flags.contains(option) {
                            continue;
                        }
                        if !valued.contains(option) {
                            return Err(refuse(format!(
                                "Cannot tell which variable {builtin} sets: its option -{option} is not known"
                            )));
                        }
                        let rest = &cluster[at + 1..];
                        if option == 'a' {
                            if rest.is_empty() {
                                targets.extend(args.get(i));
                                i += 1;
                            } else {
                                self.out.assigned.shell(rest, false);
                            }
                        } else if rest.is_empty() {
                            i += 1;
                        }
                        break;
                    }
                }
                if targets.is_empty() {
                    let default = if builtin == "read" {
                        "REPLY"
                    } else {
                        "MAPFILE"
                    };
                    self.out.assigned.shell(default, false);
                }
            }
            "printf" => {
                let args = match args.first() {
                    Some(w) if w.is_literal() && w.text == "--" => &args[1..],
                    _ => args,
                };
                if let Some(first) = args.first() {
                    if !first.is_literal() && could_start_with_dash(first) {
                        return Err(refuse(format!(
                            "Cannot tell which variable printf sets: {}",
                            first.raw
                        )));
                    }
                    if let Some(rest) = first.text.strip_prefix("-v").filter(|_| first.is_literal())
                    {
                        if rest.is_empty() {
                            targets.extend(args.get(1));
                        } else {
                            self.out.assigned.shell(rest, false);
                        }
                    }
                }
            }
            _ => targets.extend(args.get(1)), // getopts OPTSTRING NAME
        }
        for target in targets {
            match declared(target) {
                Some((name, _)) if target.is_literal() => self.out.assigned.shell(&name, false),
                _ => {
                    return Err(refuse(format!(
                        "Cannot tell which variable {builtin} sets: {}",
                        target.raw
                    )));
                }
            }
        }
        Ok(())
    }
}

fn could_start_with_dash(word: &Word) -> bool {
    super::word::could_start_with(word, "-")
}

/// `env`/`sudo` words before the program: any word holding `=` sets that variable in the
/// program's environment (`BASH_FUNC_ls%%=() {…}` defines a function for a child bash).
pub(super) fn environment(found: &mut Assignments, word: &Word) -> bool {
    match word.text.split_once('=') {
        Some((name, _)) if !name.is_empty() => {
            found.set.push(Assigned {
                name: name.to_owned(),
                inert: true,
                environment: true,
            });
            true
        }
        _ => false,
    }
}

impl Parser<'_, '_> {
    /// The variables a builtin called by the line sets.
    pub(super) fn assignments(
        &mut self,
        builtin: &str,
        args: &[Word],
    ) -> Result<(), CommandDenial> {
        match builtin {
            "declare" | "typeset" | "local" | "export" | "readonly" => {
                self.declaration(builtin, args)
            }
            "read" | "mapfile" | "readarray" | "printf" | "getopts" => {
                self.reads_into(builtin, args)
            }
            _ => Ok(()),
        }
    }

    /// `for NAME in WORDS` / `select NAME in WORDS`: NAME takes each word in turn (the
    /// positional parameters without `in`).
    pub(super) fn loop_variable(&mut self, header: &[Word]) {
        let Some((name, rest)) = header.split_first() else {
            return;
        };
        if !name.is_literal() || !is_name(name.text.as_bytes()) {
            return;
        }
        let inert = match rest.first() {
            Some(word) if word.is_literal() && word.text == "in" => rest[1..]
                .iter()
                .take_while(|w| !(w.is_literal() && !w.quoted && w.text == "do"))
                .all(|w| w.is_literal() && (w.text == ";" || inert_text(&w.text))),
            _ => false,
        };
        self.out.assigned.shell(&name.text, inert);
    }
}
