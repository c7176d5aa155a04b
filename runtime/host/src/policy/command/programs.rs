//! Programs that run other programs: wrappers (`sudo`, `env`, `timeout`, `xargs`, …),
//! shells given `-c`, `eval`, and `find -exec`. Each is recorded as an invocation itself and
//! the program it runs is analysed too.

use super::CommandDenial;
use super::base_name;
use super::parse::Parser;
use super::word::Word;

/// How a wrapper's own options are read before the program it runs.
struct Wrapper {
    names: &'static [&'static str],
    /// Short options without a value.
    flags: &'static str,
    /// Short options with a value (attached or the next word).
    valued: &'static str,
    /// Short options whose value can only be attached (`xargs -i{}`).
    optional: &'static str,
    /// Long options without a value (`--opt=value` is accepted too).
    long_flags: &'static [&'static str],
    long_valued: &'static [&'static str],
    /// Operands before the program (`timeout DURATION`, `chroot DIR`, `taskset MASK`).
    operands: usize,
    /// `NAME=value` words before the program are skipped (`env`, `sudo`).
    assignments: bool,
    /// `nice -10`.
    numeric: bool,
}

const PLAIN: Wrapper = Wrapper {
    names: &[],
    flags: "",
    valued: "",
    optional: "",
    long_flags: &[],
    long_valued: &[],
    operands: 0,
    assignments: false,
    numeric: false,
};

const WRAPPERS: &[Wrapper] = &[
    Wrapper {
        names: &["env"],
        flags: "i0v",
        valued: "uC",
        long_flags: &[
            "ignore-environment",
            "null",
            "debug",
            "block-signal",
            "default-signal",
            "ignore-signal",
            "list-signal-handling",
        ],
        long_valued: &["unset", "chdir"],
        assignments: true,
        ..PLAIN
    },
    Wrapper {
        names: &["sudo"],
        flags: "AbBEeHiKklNnPSsv",
        valued: "CDghpRrTtUuc",
        long_flags: &[
            "askpass",
            "background",
            "bell",
            "preserve-env",
            "edit",
            "set-home",
            "login",
            "remove-timestamp",
            "reset-timestamp",
            "list",
            "non-interactive",
            "preserve-groups",
            "stdin",
            "shell",
            "validate",
        ],
        long_valued: &[
            "close-from",
            "chdir",
            "group",
            "host",
            "prompt",
            "chroot",
            "role",
            "type",
            "command-timeout",
            "other-user",
            "user",
            "login-class",
        ],
        assignments: true,
        ..PLAIN
    },
    Wrapper {
        names: &["doas"],
        flags: "nsL",
        valued: "uC",
        ..PLAIN
    },
    Wrapper {
        names: &[
            "nohup",
            "builtin",
            "busybox",
            "noglob",
            "nocorrect",
            "unbuffer",
        ],
        ..PLAIN
    },
    Wrapper {
        names: &["nice"],
        valued: "n",
        long_valued: &["adjustment"],
        numeric: true,
        ..PLAIN
    },
    Wrapper {
        names: &["time"],
        flags: "apqv",
        valued: "fo",
        long_flags: &["append", "portability", "quiet", "verbose"],
        long_valued: &["format", "output"],
        ..PLAIN
    },
    Wrapper {
        names: &["timeout"],
        flags: "v",
        valued: "ks",
        long_flags: &["foreground", "preserve-status", "verbose"],
        long_valued: &["kill-after", "signal"],
        operands: 1,
        ..PLAIN
    },
    Wrapper {
        names: &["xargs"],
        flags: "0oprtx",
        valued: "adEILnPs",
        optional: "eil",
        long_flags: &[
            "null",
            "open-tty",
            "interactive",
            "no-run-if-empty",
            "verbose",
            "exit",
            "show-limits",
            "replace",
            "eof",
            "max-lines",
        ],
        long_valued: &[
            "arg-file",
            "delimiter",
            "max-args",
            "max-procs",
            "max-chars",
            "process-slot-var",
        ],
        ..PLAIN
    },
    Wrapper {
        names: &["exec"],
        flags: "cl",
        valued: "a",
        ..PLAIN
    },
    Wrapper {
        names: &["command"],
        flags: "pvV",
        ..PLAIN
    },
    Wrapper {
        names: &["stdbuf"],
        valued: "eio",
        long_valued: &["error", "input", "output"],
        ..PLAIN
    },
    Wrapper {
        names: &["setsid"],
        flags: "cfw",
        long_flags: &["ctty", "fork", "wait"],
        ..PLAIN
    },
    Wrapper {
        names: &["strace", "ltrace"],
        flags: "AcCdDfFhikLnqrStTvVwxyYzZ",
        valued: "abeEIlOopPsSuUX",
        long_flags: &["follow-forks", "summary-only", "no-abbrev", "verbose"],
        long_valued: &[
            "output",
            "trace",
            "signal",
            "string-limit",
            "user",
            "env",
            "attach",
        ],
        ..PLAIN
    },
    Wrapper {
        names: &["ionice"],
        flags: "t",
        valued: "cnpPu",
        long_flags: &["ignore"],
        long_valued: &["class", "classdata", "pid", "pgid", "uid"],
        ..PLAIN
    },
    Wrapper {
        names: &["taskset"],
        flags: "acp",
        long_flags: &["all-tasks", "cpu-list", "pid"],
        operands: 1,
        ..PLAIN
    },
    Wrapper {
        names: &["chroot"],
        long_flags: &["skip-chdir"],
        long_valued: &["userspec", "groups"],
        operands: 1,
        ..PLAIN
    },
];

const SHELLS: &[&str] = &[
    "sh", "bash", "rbash", "dash", "zsh", "ksh", "mksh", "pdksh", "ash", "yash", "posh", "fish",
];

/// Programs whose `-exec` style arguments are themselves invocations.
const FIND_ACTIONS: &[&str] = &["-exec", "-execdir", "-ok", "-okdir"];

fn cannot_tell(program: &str, why: &str) -> CommandDenial {
    CommandDenial::Unanalysable(format!("Cannot tell which command {program} runs: {why}"))
}

impl Parser<'_, '_> {
    /// Records `words` (program first) and analyses whatever that program runs in turn.
    pub(super) fn program(&mut self, words: &[Word]) -> Result<(), CommandDenial> {
        self.out.programs.push(words.to_vec());
        let Some(name) = words.first().filter(|name| name.is_literal()) else {
            return Ok(()); // judged (and denied) with the other invocations
        };
        let base = base_name(&name.text).to_owned();
        self.enter()?;
        let result = match base.as_str() {
            "eval" => self.eval(&words[1..]),
            "trap" => self.trap(&words[1..]),
            builtin if super::builtins::RE_EVALUATING.contains(&builtin) => {
                super::builtins::judge(builtin, &words[1..])
                    .and_then(|()| self.assignments(builtin, &words[1..]))
            }
            "find" => self.find(&words[1..]),
            shell if SHELLS.contains(&shell) => self.shell(shell, &words[1..]),
            _ => match WRAPPERS.iter().find(|w| w.names.contains(&base.as_str())) {
                Some(wrapper) => self.wrapper(&base, wrapper, &words[1..]),
                None => Ok(()),
            },
        };
        self.depth -= 1;
        result
    }

    fn eval(&mut self, args: &[Word]) -> Result<(), CommandDenial> {
        if let Some(word) = args.iter().find(|word| !word.is_literal()) {
            return Err(cannot_tell(
                "eval",
                &format!("its argument {} is not a literal string", word.raw),
            ));
        }
        let script = args
            .iter()
            .map(|word| word.text.as_str())
            .collect::<Vec<_>>()
            .join(" ");
        self.nested(&script)
    }

    /// `sh -c SCRIPT`: the script is read as a command line. Without `-c` the shell runs a
    /// script file or standard input, like any interpreter.
    fn shell(&mut self, shell: &str, args: &[Word]) -> Result<(), CommandDenial> {
        let mut command_mode = false;
        let mut i = 0;
        while let Some(word) = args.get(i) {
            if !word.is_literal() {
                if command_mode {
                    break; // the script, judged below
                }
                if word.text.starts_with(['-', '+']) || word.split {
                    return Err(cannot_tell(
                        shell,
                        &format!("{} is not a literal string", word.raw),
                    ));
                }
                break;
            }
            let text = word.text.as_str();
            if text == "--" || text == "-" {
                i += 1;
                break;
            }
            if let Some(long) = text.strip_prefix("--") {
                if long.starts_with("command") || long.starts_with("init-command") {
                    return Err(cannot_tell(shell, &format!("{text} is not analysed")));
                }
                i += if matches!(long, "rcfile" | "init-file") {
                    2
                } else {
                    1
                };
                continue;
            }
            match text.strip_prefix(['-', '+']) {
                Some(cluster) if !cluster.is_empty() => {
                    command_mode |= cluster.contains('c');
                    i += if cluster.contains(['o', 'O']) { 2 } else { 1 };
                }
                _ => break,
            }
        }
        if !command_mode {
            return Ok(());
        }
        match args.get(i) {
            Some(script) if script.is_literal() => self.nested(&script.text),
            Some(script) => Err(cannot_tell(
                &format!("{shell} -c"),
                &format!("its script {} is not a literal string", script.raw),
            )),
            None => Ok(()),
        }
    }

    /// `find … -exec PROGRAM ARGS… ;` — every `{}` is a path only known when it runs.
    fn find(&mut self, args: &[Word]) -> Result<(), CommandDenial> {
        let mut i = 0;
        while let Some(word) = args.get(i) {
            i += 1;
            if word.dynamic || word.split || word.brace {
                return Err(cannot_tell(
                    "find",
                    &format!("{} could be an -exec action", word.raw),
                ));
            }
            if !FIND_ACTIONS.contains(&word.text.as_str()) {
                continue;
            }
            let end = args[i..]
                .iter()
                .position(|w| w.is_literal() && (w.text == ";" || w.text == "+"))
                .map_or(args.len(), |at| i + at);
            let run: Vec<Word> = args[i..end].iter().map(|w| placeholder(w, "{}")).collect();
            if !run.is_empty() {
                self.program(&run)?;
            }
            i = end + 1;
        }
        Ok(())
    }

    fn wrapper(&mut self, name: &str, spec: &Wrapper, args: &[Word]) -> Result<(), CommandDenial> {
        let mut operands = spec.operands;
        let mut options = true;
        let mut replace: Option<String> = None;
        let mut i = 0;
        while let Some(word) = args.get(i) {
            if !word.is_literal() {
                return Err(cannot_tell(name, &format!("{} is not literal", word.raw)));
            }
            let text = word.text.as_str();
            if options && text == "--" {
                options = false;
                i += 1;
                continue;
            }
            if spec.assignments && super::assign::environment(&mut self.out.assigned, word) {
                i += 1;
                continue;
            }
            if options && name == "env" && text == "-" {
                i += 1;
                continue;
            }
            if options && let Some(long) = text.strip_prefix("--") {
                let (option, value) = match long.split_once('=') {
                    Some((option, value)) => (option, Some(value)),
                    None => (long, None),
                };
                if spec.long_flags.contains(&option) {
                    if option == "replace" {
                        replace = Some(value.unwrap_or("{}").to_owned());
                    }
                    i += 1;
                } else if spec.long_valued.contains(&option) {
                    i += if value.is_some() { 1 } else { 2 };
                } else {
                    return Err(cannot_tell(
                        name,
                        &format!("its option {text} is not known"),
                    ));
                }
                continue;
            }
            if options && let Some(cluster) = text.strip_prefix('-').filter(|c| !c.is_empty()) {
                i += 1;
                if spec.numeric && cluster.bytes().all(|b| b.is_ascii_digit()) {
                    continue;
                }
                for (at, option) in cluster.char_indices() {
                    let rest = &cluster[at + option.len_utf8()..];
                    if spec.flags.contains(option) {
                        continue;
                    }
                    if spec.optional.contains(option) {
                        if name == "xargs" && option == 'i' {
                            replace = Some(if rest.is_empty() { "{}" } else { rest }.to_owned());
                        }
                        break;
                    }
                    if spec.valued.contains(option) {
                        let value = if rest.is_empty() {
                            i += 1;
                            args.get(i - 1).map(|w| w.text.as_str())
                        } else {
                            Some(rest)
                        };
                        if name == "xargs" && option == 'I' {
                            replace = value.map(str::to_owned);
                        }
                        break;
                    }
                    return Err(cannot_tell(
                        name,
                        &format!("its option -{option} is not known"),
                    ));
                }
                continue;
            }
            if operands > 0 {
                operands -= 1;
                i += 1;
                continue;
            }
            break;
        }
        let mut run: Vec<Word> = args.get(i..).unwrap_or_default().to_vec();
        if name == "xargs" {
            // xargs appends its input to the command (by default `echo`), or puts it in place
            // of the replace string.
            if run.is_empty() {
                run.push(Word::literal("echo"));
            }
            if let Some(replace) = replace.filter(|r| !r.is_empty()) {
                run = run.iter().map(|w| placeholder(w, &replace)).collect();
            }
            run.push(Word::unknown("<xargs input>"));
        }
        if run.is_empty() {
            return Ok(());
        }
        self.program(&run)
    }
}

/// `word`, unknown when it holds `marker` (a path or input line inserted at run time).
fn placeholder(word: &Word, marker: &str) -> Word {
    if word.text.contains(marker) {
        let mut unknown = Word::unknown(&word.raw);
        unknown.split = false;
        unknown
    } else {
        word.clone()
    }
}
