//! Which program a cmd.exe command runs (the command token, cmd.exe's internal commands),
//! and the builtins that read text again: `call` (a second expansion and parse), `cmd`
//! (`/c LINE`), `start` (its program, which cmd.exe runs through `cmd /k` when it is a
//! builtin or a batch file), `set` (what later expansions may hold).

use super::super::word::Word;
use super::super::{CommandDenial, base_name, loose};
use super::lex::{CWord, Ev, Kind, make};
use super::{Reader, opaque};

/// cmd.exe's internal commands. A command token that starts with one followed by a
/// character no name holds runs it (`echo.`, `dir\`, `echo.bat`).
const INTERNAL: &[&str] = &[
    "assoc", "break", "call", "cd", "chdir", "cls", "color", "copy", "date", "del", "dir", "dpath",
    "echo", "endlocal", "erase", "exit", "for", "ftype", "goto", "if", "keys", "md", "mkdir",
    "mklink", "move", "path", "pause", "popd", "prompt", "pushd", "rd", "rem", "ren", "rename",
    "rmdir", "set", "setlocal", "shift", "start", "time", "title", "type", "ver", "verify", "vol",
];

/// Commands that set no variable. Any other (`path`, `setlocal`, a program that may be a
/// batch file run in this cmd.exe) may set any.
const KEEP_VARIABLES: &[&str] = &[
    "assoc", "break", "cd", "chdir", "cls", "cmd", "color", "copy", "date", "del", "dir", "echo",
    "erase", "exit", "ftype", "goto", "keys", "md", "mkdir", "mklink", "move", "pause", "popd",
    "pushd", "rd", "rem", "ren", "rename", "rmdir", "shift", "start", "time", "title", "type",
    "ver", "verify", "vol",
];

/// `start` options without and with a value.
const START_FLAGS: &[&str] = &[
    "b",
    "wait",
    "min",
    "max",
    "i",
    "low",
    "normal",
    "high",
    "realtime",
    "abovenormal",
    "belownormal",
    "shared",
    "separate",
];
const START_VALUED: &[&str] = &["d", "affinity", "node", "machine"];

fn is_byte(ev: &Ev, set: &[u8]) -> bool {
    matches!(ev.kind, Kind::Byte(b) if !ev.quoted && set.contains(&b))
}

/// The command token and what follows it in the same word: cmd.exe ends the token at a
/// delimiter and at `/`, `+` or `(` (`dir/w`, `del,x`, `echo(`).
fn split_token(evs: &[Ev]) -> (&[Ev], &[Ev]) {
    match evs.iter().position(|ev| is_byte(ev, b",;=/+(")) {
        Some(0) | None => (evs, &[]),
        Some(at) if is_byte(&evs[at], b",;=") => (&evs[..at], &evs[at + 1..]),
        Some(at) => evs.split_at(at),
    }
}

/// A word split at cmd.exe's delimiters too, as its own commands read their arguments.
fn pieces(evs: &[Ev]) -> Vec<&[Ev]> {
    evs.split(|ev| is_byte(ev, b",;="))
        .filter(|piece| !piece.is_empty())
        .collect()
}

/// The internal command a token names, if any.
fn internal(token: &Word) -> Option<&'static str> {
    if !token.is_literal() || token.quoted {
        return None;
    }
    let lower = token.text.to_ascii_lowercase();
    INTERNAL.iter().copied().find(|name| {
        lower.strip_prefix(name).is_some_and(|rest| {
            rest.bytes()
                .next()
                .is_none_or(|b| !(b.is_ascii_alphanumeric() || b == b'_'))
        })
    })
}

/// `cmd /c LINE` (also `/k`, and `for /f`'s commands): the lines cmd.exe may read. A line
/// starting with `"` loses that quote and the last one, unless (without `/s`) it holds
/// exactly two quotes around a name with whitespace and no special character, which cmd.exe
/// keeps when that names a file: then both readings are judged.
pub(super) fn slash_c(line: &str, s: bool) -> Vec<String> {
    let trimmed = line.trim_start_matches([' ', '\t']);
    let Some(inner) = trimmed.strip_prefix('"') else {
        return vec![line.to_owned()];
    };
    let stripped = match inner.rfind('"') {
        Some(at) => format!("{}{}", &inner[..at], &inner[at + 1..]),
        None => inner.to_owned(),
    };
    let mut readings = vec![stripped];
    if !s && line.matches('"').count() == 2 {
        let between = inner.split('"').next().unwrap_or_default();
        if !between.contains(['&', '<', '>', '(', ')', '@', '^', '|'])
            && between.contains([' ', '\t'])
        {
            readings.push(line.to_owned());
        }
    }
    readings
}

fn reads_input() -> CommandDenial {
    opaque(
        "Cannot tell which commands cmd runs: without /c (or with /k) it runs commands from its input",
    )
}

impl Reader<'_, '_> {
    /// `if` or `for` when the command token is one, with the rest of its word (`for/L`).
    pub(super) fn keyword(&self, first: &CWord) -> Option<(&'static str, Option<CWord>)> {
        let (head, rest) = split_token(&first.evs);
        let name = make(head, &first.raw, false);
        let keyword = match name.text.to_ascii_lowercase().as_str() {
            "if" => "if",
            "for" => "for",
            _ => return None,
        };
        if !name.is_literal() || name.quoted {
            return None;
        }
        Some((keyword, self.sub_word(rest)))
    }

    fn sub_word(&self, evs: &[Ev]) -> Option<CWord> {
        let (first, last) = (evs.first()?, evs.last()?);
        Some(CWord {
            evs: evs.to_vec(),
            raw: self.cooked(first.from, last.to),
        })
    }

    /// Records the invocations of one command (every reading of its program token, with the
    /// arguments split as programs and as cmd.exe's own commands split them), then follows
    /// what the builtin or program runs in turn.
    pub(super) fn invoke(&mut self, words: &[CWord]) -> Result<(), CommandDenial> {
        let Some(first) = words.first() else {
            return Ok(());
        };
        let (head, rest) = split_token(&first.evs);
        let token = make(head, &first.raw, self.bang);
        let lower = token.text.to_ascii_lowercase();
        if token.is_literal() && !token.quoted && (lower.starts_with(':') || lower == "rem") {
            return Ok(()); // a label, a `::` or `rem` comment: the words after run nothing
        }
        if let Some(name @ ("if" | "for" | "rem")) = internal(&token) {
            // `for.`, `if[`: whether cmd.exe takes them for the keyword is not known.
            return Err(opaque(format!(
                "Cannot tell which commands run: {} may be {name}",
                token.raw
            )));
        }
        let mut names = vec![token.clone()];
        let builtin = internal(&token);
        // `x(1).exe`: whether cmd.exe ends a program's name at `(` or `+` is not certain, so
        // both names are judged (a `/` is never part of one).
        if token.is_literal()
            && builtin.is_none()
            && !rest.first().is_some_and(|ev| is_byte(ev, b"/"))
        {
            let up_to_delimiter = first
                .evs
                .split(|ev| is_byte(ev, b",;="))
                .next()
                .unwrap_or_default();
            if up_to_delimiter.len() != head.len() {
                names.push(make(up_to_delimiter, &first.raw, self.bang));
            }
        }
        if let Some(name) = builtin
            && !token.text.eq_ignore_ascii_case(name)
        {
            names.push(Word::literal(name));
        }
        let mut args: Vec<CWord> = self.sub_word(rest).into_iter().collect();
        args.extend(words[1..].iter().cloned());
        let whole: Vec<Word> = args.iter().map(|w| w.word(self.bang)).collect();
        let split: Vec<Word> = args
            .iter()
            .flat_map(|w| {
                pieces(&w.evs)
                    .into_iter()
                    .map(|p| make(p, &w.raw, self.bang))
            })
            .collect();
        for name in &names {
            for list in [&whole, &split] {
                let mut invocation = vec![name.clone()];
                invocation.extend(list.iter().cloned());
                self.out.programs.push(invocation);
            }
        }
        if !token.is_literal() {
            self.env.taint();
            return Ok(());
        }
        let tail = match (args.first(), args.last()) {
            (Some(a), Some(b)) => {
                let from = a.evs.first().map_or(0, |ev| ev.from);
                self.cooked(from, b.evs.last().map_or(from, |ev| ev.to))
            }
            _ => String::new(),
        };
        let program = builtin.map_or_else(|| loose(base_name(&token.text), true), str::to_owned);
        match program.as_str() {
            "set" => {
                if tail.to_ascii_lowercase().contains("comspec") {
                    return Err(opaque(
                        "Setting ComSpec is not allowed: cmd.exe runs it for pipes and for /f",
                    ));
                }
                let certain = !self.conditional && !self.looping;
                self.env.set(&tail, certain);
            }
            "call" => {
                // call doubles every caret, then expands and parses its text again.
                self.again(&tail, false, "call")?;
                self.env.taint();
            }
            "cmd" => self.cmd(&tail)?,
            "start" => self.start(&args)?,
            name if KEEP_VARIABLES.contains(&name) => {}
            _ => {
                let lower = token.text.to_ascii_lowercase();
                if !(lower.ends_with(".exe") || lower.ends_with(".com")) {
                    self.env.taint();
                }
            }
        }
        Ok(())
    }

    /// `cmd [switches] /c LINE`: LINE is a command line of its own. Without `/c` (or with
    /// `/k`) cmd.exe runs commands from its input, which the model sends: refused.
    fn cmd(&mut self, tail: &str) -> Result<(), CommandDenial> {
        let unknown = |option: &str| {
            opaque(format!(
                "Cannot tell which command cmd runs: its option {option} is not known"
            ))
        };
        let bytes = tail.as_bytes();
        let mut s = false;
        let mut i = 0;
        loop {
            while bytes.get(i).is_some_and(|b| matches!(b, b' ' | b'\t')) {
                i += 1;
            }
            if bytes.get(i) != Some(&b'/') {
                let lower = tail.to_ascii_lowercase();
                if ["/c", "/k", "/r"]
                    .iter()
                    .any(|switch| lower.contains(switch))
                {
                    return Err(opaque(format!(
                        "Cannot tell which command cmd runs: {}",
                        tail.trim()
                    )));
                }
                return Err(reads_input());
            }
            let letter = bytes.get(i + 1).map(u8::to_ascii_lowercase);
            let option = tail.get(i..(i + 2).min(tail.len())).unwrap_or("/");
            i += 2;
            match letter {
                Some(b'k') => return Err(reads_input()),
                Some(b'c' | b'r') => {
                    let line = tail.get(i..).unwrap_or_default();
                    for reading in slash_c(line, s) {
                        self.again(&reading, true, "cmd")?;
                    }
                    return Ok(());
                }
                Some(b's') => s = true,
                Some(b'q' | b'd' | b'a' | b'u' | b'x' | b'y') => {}
                Some(b't' | b'e' | b'f' | b'v') => {
                    if bytes.get(i) == Some(&b':') {
                        i += 1;
                        while bytes.get(i).is_some_and(u8::is_ascii_alphanumeric) {
                            i += 1;
                        }
                    }
                }
                _ => return Err(unknown(option)),
            }
            if !matches!(bytes.get(i), None | Some(b' ' | b'\t' | b'/')) {
                return Err(unknown(tail.get(i - 2..).unwrap_or(option)));
            }
        }
    }

    /// `start ["TITLE"] [/OPTIONS] PROGRAM ARGS`: PROGRAM and its arguments are read as a
    /// line, since cmd.exe runs a builtin or batch file through `cmd /k`.
    fn start(&mut self, args: &[CWord]) -> Result<(), CommandDenial> {
        let Some(first) = args.first() else {
            return Ok(());
        };
        // A first word in quotes is the window's title; one that only starts with a quote
        // (`"d"el`) is read both ways.
        let quotes = first.evs.iter().filter(|ev| ev.kind == Kind::Quote).count();
        let title = first.evs.first().is_some_and(|ev| ev.kind == Kind::Quote);
        let pure =
            title && quotes == 2 && first.evs.last().is_some_and(|ev| ev.kind == Kind::Quote);
        if title && !pure {
            self.start_program(args, 0)?;
        }
        self.start_program(args, usize::from(title))
    }

    fn start_program(&mut self, args: &[CWord], mut i: usize) -> Result<(), CommandDenial> {
        while let Some(word) = args.get(i) {
            if !word.raw.starts_with('/') {
                break;
            }
            let Some(option) = word.keyword() else {
                return Err(opaque(format!(
                    "Cannot tell which command start runs: its option {} is not literal",
                    word.raw
                )));
            };
            let option = &option[1..];
            if START_FLAGS.contains(&option) {
                i += 1;
            } else if START_VALUED.contains(&option) {
                i += 2;
            } else if option.starts_with('d') {
                i += 1; // `/dPATH`
            } else {
                return Err(opaque(format!(
                    "Cannot tell which command start runs: its option {} is not known",
                    word.raw
                )));
            }
        }
        let (Some(program), Some(last)) = (args.get(i), args.last()) else {
            return Ok(());
        };
        let from = program.evs.first().map_or(0, |ev| ev.from);
        let line = self.cooked(from, last.evs.last().map_or(from, |ev| ev.to));
        for reading in slash_c(&line, false) {
            self.again(&reading, true, "start")?;
        }
        Ok(())
    }
}
