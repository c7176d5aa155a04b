//! The cmd.exe reader behind [`super`] on Windows, where the tool runtime runs a line as
//! `%ComSpec% /s /c "LINE"` (cmd.exe then reads LINE verbatim). See the parent module for
//! the rules; this one follows cmd.exe's phases: percent expansion (`env.rs`), the
//! special-character phase (`lex.rs`: carets, quotes, operators, redirections), then the
//! commands (`if`, `for`, blocks) and the builtins that read text again (`builtins.rs`).

mod builtins;
mod env;
#[cfg(test)]
mod fuzz_tests;
mod lex;
#[cfg(test)]
mod tests;

use self::env::Env;
use self::lex::CWord;
use super::CommandDenial;
use super::parse::Found;

/// Deepest nesting of blocks, loops, conditions and texts read again.
const MAX_DEPTH: usize = 24;

fn opaque(reason: impl Into<String>) -> CommandDenial {
    CommandDenial::Unanalysable(reason.into())
}

fn unbalanced(what: &str, near: &str) -> CommandDenial {
    let near: String = near.chars().take(24).collect();
    opaque(format!(
        "Cannot tell which commands run: unbalanced {what} in {near}"
    ))
}

fn is_comparison(word: Option<&str>) -> bool {
    matches!(
        word,
        Some("==" | "equ" | "neq" | "lss" | "leq" | "gtr" | "geq")
    )
}

/// Every invocation a cmd.exe `line` can start and every file it redirects into.
pub(super) fn invocations(line: &str) -> Result<Found, CommandDenial> {
    // cmd.exe stops reading at a line feed outside a block but reads on inside one, and
    // drops carriage returns: refused rather than guessed (a line needs none; `&` joins).
    let line = line.trim_end_matches(['\r', '\n']);
    if line.contains(['\r', '\n']) {
        return Err(opaque(
            "Line breaks are not analysed in a cmd.exe command: join the commands with &",
        ));
    }
    // Ctrl-Z reads as a line feed, form feed and the OEM no-break space may delimit words.
    if line.contains(|c: char| (c.is_control() && c != '\t') || c == '\u{ff}') {
        return Err(opaque(
            "Control characters are not analysed in a cmd.exe command",
        ));
    }
    env::spans(line, None)?;
    let mut out = Found::default();
    Reader::new(line, 0, true, Env::default(), &mut out).list(false)?;
    Ok(out)
}

pub(super) struct Reader<'s, 'o> {
    src: &'s str,
    bytes: &'s [u8],
    pos: usize,
    depth: usize,
    /// `^` escapes; false when `call` reads its text (it doubles carets first).
    carets: bool,
    /// The text holds `!`: delayed expansion may read carets once more.
    bang: bool,
    /// Blocks `(` open around the position.
    open: usize,
    /// A `set` here might not run (after `&&`, `||`, `|`, inside `if` and `for`).
    conditional: bool,
    /// Inside a `for` body, which runs again with values set by its previous rounds.
    looping: bool,
    /// The next word of an `if`/`for` header, left over from its first word (`for/L`).
    pending: Option<CWord>,
    /// The body of an `if` is being read: a later `else` starts a command.
    if_body: bool,
    env: Env,
    /// The text after the special-character phase: carets removed, quotes kept.
    cooked: Vec<u8>,
    out: &'o mut Found,
}

impl<'s, 'o> Reader<'s, 'o> {
    fn new(src: &'s str, depth: usize, carets: bool, env: Env, out: &'o mut Found) -> Self {
        Reader {
            src,
            bytes: src.as_bytes(),
            pos: 0,
            depth,
            carets,
            bang: src.contains('!'),
            open: 0,
            conditional: false,
            looping: false,
            pending: None,
            if_body: false,
            env,
            cooked: Vec::with_capacity(src.len()),
            out,
        }
    }

    fn enter(&mut self) -> Result<(), CommandDenial> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(opaque(
                "Cannot tell which commands run: the command is nested too deeply",
            ));
        }
        Ok(())
    }

    fn cooked(&self, from: usize, to: usize) -> String {
        String::from_utf8_lossy(self.cooked.get(from..to).unwrap_or_default()).into_owned()
    }

    /// Reads `text`, which cmd.exe expands and parses again (`what` says who does), as a
    /// command line of its own; its variables start as they are here.
    fn again(&mut self, text: &str, carets: bool, what: &str) -> Result<(), CommandDenial> {
        if text.contains(['\r', '\n']) {
            return Err(opaque(format!(
                "Cannot tell which commands run: {what} reads a line break"
            )));
        }
        if let Some(reason) = env::spans(text, Some((&self.env, self.looping, what)))? {
            self.out.opaque.push(reason);
        }
        self.enter()?;
        let mut nested = Reader::new(text, self.depth, carets, self.env.clone(), self.out);
        nested.looping = self.looping;
        let result = nested.list(false);
        self.depth -= 1;
        result
    }

    /// Commands joined by `&`, `&&`, `||`, `|`, to the end or (when `close`) to the `)`.
    fn list(&mut self, close: bool) -> Result<(), CommandDenial> {
        let saved = (self.conditional, self.looping);
        let mut piped = false;
        loop {
            let start = self.cooked.len();
            let before = self.env.clone();
            self.command()?;
            let side = self.cooked(start, self.cooked.len());
            self.skip_blanks();
            // A side of a pipe runs in a cmd.exe of its own: what it sets stays there.
            let pipe = self.peek() == Some(b'|') && self.peek_at(1) != Some(b'|');
            if piped || pipe {
                self.env = before;
            }
            match self.peek() {
                None if close => {
                    return Err(opaque(
                        "Cannot tell which commands run: unbalanced parenthesis",
                    ));
                }
                Some(b')') if !close => {
                    return Err(opaque(
                        "Cannot tell which commands run: unbalanced parenthesis",
                    ));
                }
                None | Some(b')') => {
                    if piped {
                        self.again(&side, true, "a pipe")?;
                    }
                    if self.peek().is_some() {
                        self.take();
                    }
                    break;
                }
                Some(b'|') => {
                    self.take();
                    let or = self.peek() == Some(b'|');
                    if or {
                        self.take();
                    }
                    // Each side of a pipe is run by a cmd.exe of its own, which reads the
                    // side's text again.
                    if piped || !or {
                        self.again(&side, true, "a pipe")?;
                    }
                    piped = !or;
                    self.conditional = true;
                }
                Some(b'&') => {
                    self.take();
                    if self.peek() == Some(b'&') {
                        self.take();
                        self.conditional = true;
                    }
                    if piped {
                        self.again(&side, true, "a pipe")?;
                    }
                    piped = false;
                }
                Some(_) => {
                    return Err(opaque(format!(
                        "Cannot tell which commands run: unexpected text after a block in {}",
                        self.src.get(self.pos..).unwrap_or_default()
                    )));
                }
            }
        }
        (self.conditional, self.looping) = saved;
        Ok(())
    }

    /// One command: a block, an `if`, a `for`, or a simple command with its redirections.
    fn command(&mut self) -> Result<(), CommandDenial> {
        let if_body = std::mem::take(&mut self.if_body);
        loop {
            self.skip_leading();
            if !self.at_redirection() {
                break;
            }
            self.redirection()?;
        }
        match self.peek() {
            None | Some(b'&' | b'|') => Ok(()),
            Some(b')') if self.open > 0 => Ok(()),
            Some(b'(') => self.block(),
            _ => {
                let Some(first) = self.word(false)? else {
                    return Ok(());
                };
                match self.keyword(&first) {
                    Some(("if", rest)) => {
                        self.pending = rest;
                        self.if_command()
                    }
                    Some(("for", rest)) => {
                        self.pending = rest;
                        self.for_command()
                    }
                    _ => self.simple(first, if_body),
                }
            }
        }
    }

    fn block(&mut self) -> Result<(), CommandDenial> {
        self.take();
        self.enter()?;
        self.open += 1;
        self.list(true)?;
        self.open -= 1;
        self.depth -= 1;
        loop {
            self.skip_blanks();
            if !self.at_redirection() {
                return Ok(());
            }
            self.redirection()?;
        }
    }

    /// A program or builtin with its arguments, up to an operator; redirections anywhere.
    fn simple(&mut self, first: CWord, if_body: bool) -> Result<(), CommandDenial> {
        let mut words = vec![first];
        loop {
            self.skip_blanks();
            if self.at_redirection() {
                self.redirection()?;
                continue;
            }
            match self.peek() {
                None | Some(b'&' | b'|') => break,
                Some(b')') if self.open > 0 => break,
                _ => {}
            }
            let Some(word) = self.word(false)? else { break };
            if if_body && word.keyword().as_deref() == Some("else") {
                // Over-approximated: cmd.exe only takes `else` after a block, but whatever
                // follows is judged as a command too.
                self.invoke(&words)?;
                return self.command();
            }
            words.push(word);
        }
        self.invoke(&words)
    }

    /// `if [/i] [not] (exist X | defined X | errorlevel N | cmdextversion N | A==B | A op B)
    /// COMMAND [else COMMAND]`.
    fn if_command(&mut self) -> Result<(), CommandDenial> {
        let mut token = self.header("if")?;
        if token.keyword().as_deref() == Some("/i") {
            token = self.header("if")?;
        }
        if token.keyword().as_deref() == Some("not") {
            token = self.header("if")?;
        }
        match token.keyword().as_deref() {
            Some("exist" | "defined" | "errorlevel" | "cmdextversion") => {
                // `if exist==exist …` may compare instead.
                if is_comparison(self.header("if")?.keyword().as_deref()) {
                    return Err(opaque(format!(
                        "Cannot tell which commands run: the condition of if is not analysed: {}",
                        token.raw
                    )));
                }
            }
            _ => {
                let op = self.header("if")?.keyword();
                match op.as_deref() {
                    op if is_comparison(op) => {
                        self.header("if")?;
                    }
                    _ => {
                        return Err(opaque(format!(
                            "Cannot tell which commands run: the condition of if is not analysed: {}",
                            token.raw
                        )));
                    }
                }
            }
        }
        self.conditional = true;
        self.enter()?;
        self.skip_leading();
        let block = self.peek() == Some(b'(');
        self.if_body = true;
        self.command()?;
        self.if_body = false;
        if block {
            self.skip_blanks();
            let rest = self.bytes.get(self.pos..).unwrap_or_default();
            let is_else = rest.len() >= 4
                && rest[..4].eq_ignore_ascii_case(b"else")
                && rest
                    .get(4)
                    .is_none_or(|&b| lex::is_delimiter(b) || b == b'(');
            if is_else {
                for _ in 0..4 {
                    self.take();
                }
                self.command()?;
            }
        }
        self.depth -= 1;
        Ok(())
    }

    /// `for [/d | /r [ROOT] | /l | /f ["OPTIONS"]] %X in (SET) do COMMAND`.
    fn for_command(&mut self) -> Result<(), CommandDenial> {
        let mut token = self.header("for")?;
        let mut lines = false;
        while token.raw.starts_with('/') {
            match token.keyword().as_deref() {
                Some("/d" | "/l") => {}
                Some("/r") => {
                    token = self.header("for")?;
                    if !token.raw.starts_with('%') {
                        token = self.header("for")?;
                    }
                    continue;
                }
                Some("/f") => {
                    lines = true;
                    token = self.header("for")?;
                    if token.raw.starts_with('"') {
                        token = self.header("for")?;
                    }
                    continue;
                }
                _ => {
                    return Err(opaque(format!(
                        "Cannot tell which commands run: the for option {} is not known",
                        token.raw
                    )));
                }
            }
            token = self.header("for")?;
        }
        if !token.raw.starts_with('%') || self.header("for")?.keyword().as_deref() != Some("in") {
            return Err(opaque(
                "Cannot tell which commands run: the for command is not analysed",
            ));
        }
        let set = self.for_set()?;
        if self.header("for")?.keyword().as_deref() != Some("do") {
            return Err(opaque(
                "Cannot tell which commands run: the for command is not analysed",
            ));
        }
        self.enter()?;
        if lines {
            let trimmed = set.trim_matches([' ', '\t']);
            if let Some(quote) = trimmed.chars().next().filter(|c| matches!(c, '\'' | '`')) {
                let Some(inner) = trimmed[1..].strip_suffix(quote) else {
                    return Err(unbalanced("quote in for /f", trimmed));
                };
                // for /f runs the text with `cmd.exe /c`.
                for reading in builtins::slash_c(inner, false) {
                    self.again(&reading, true, "for /f")?;
                }
            }
        }
        self.conditional = true;
        self.looping = true;
        self.command()?;
        self.depth -= 1;
        Ok(())
    }

    /// `(SET)` of a `for`, up to the first `)` outside quotes and not escaped; its cooked text.
    fn for_set(&mut self) -> Result<String, CommandDenial> {
        while self.peek().is_some_and(lex::is_delimiter) {
            self.take();
        }
        if self.peek() != Some(b'(') {
            return Err(opaque(
                "Cannot tell which commands run: the for command is not analysed",
            ));
        }
        self.take();
        let start = self.cooked.len();
        let mut quoted = false;
        loop {
            match self.peek() {
                None => return Err(unbalanced("parenthesis", self.src)),
                Some(b'^') if self.carets && !quoted => {
                    self.pos += 1;
                    self.take();
                }
                Some(b')') if !quoted => break,
                Some(b'&' | b'|' | b'<' | b'>') if !quoted => {
                    return Err(opaque(
                        "Cannot tell which commands run: an operator or redirection in the set of a for is not analysed",
                    ));
                }
                Some(byte) => {
                    quoted ^= byte == b'"';
                    self.take();
                }
            }
        }
        let set = self.cooked(start, self.cooked.len());
        self.take();
        Ok(set)
    }
}
