//! The shell-language reader behind [`super`]: turns a command line into every program
//! invocation it can start, or refuses with a reason. See the parent module for the rules.

use super::CommandDenial;
use super::assign::{self, Assignments};
use super::expand;
use super::word::{Builder, Pat, Word, is_name};

mod redirect;

/// Deepest nesting of subshells, substitutions, nested scripts and wrappers.
const MAX_DEPTH: usize = 24;

fn is_meta(byte: u8) -> bool {
    matches!(
        byte,
        b' ' | b'\t' | b'\n' | b';' | b'&' | b'|' | b'(' | b')' | b'<' | b'>'
    )
}

fn opaque(reason: impl Into<String>) -> CommandDenial {
    CommandDenial::Unanalysable(reason.into())
}

/// The words of one simple command, and where `&>` would split it under a POSIX `sh`.
#[derive(Default)]
struct Simple {
    words: Vec<Word>,
    split_at: Option<usize>,
}

/// What a line does that the policy judges.
#[derive(Debug, Default)]
pub(super) struct Found {
    /// Every program invocation, outermost and innermost alike.
    pub programs: Vec<Vec<Word>>,
    /// The target of every redirection that writes a file (`>`, `>>`, `>|`, `<>`, `&>`).
    pub writes: Vec<Word>,
    /// Why parts of the line could run any program (cmd.exe expanding a value set by the
    /// line, then parsing it again): denied when a list of commands applies.
    pub opaque: Vec<String>,
    /// Every variable the line sets ([`assign`](super::assign)).
    pub assigned: Assignments,
    /// Why the line could make an allowed name run other code (`PATH=. ls`,
    /// `LD_PRELOAD=…`): denied when `allowedCommands` applies.
    pub rebinding: Vec<String>,
}

pub(super) struct Parser<'s, 'o> {
    src: &'s str,
    bytes: &'s [u8],
    pos: usize,
    pub(super) depth: usize,
    pub(super) out: &'o mut Found,
}

/// Every invocation `line` can start and every file it redirects into.
pub(super) fn invocations(line: &str) -> Result<Found, CommandDenial> {
    let mut out = Found::default();
    Parser::new(line, 0, &mut out).list(false)?;
    out.rebinding = assign::judge(&out.assigned)?;
    Ok(out)
}

impl<'s, 'o> Parser<'s, 'o> {
    fn new(src: &'s str, depth: usize, out: &'o mut Found) -> Self {
        Parser {
            src,
            bytes: src.as_bytes(),
            pos: 0,
            depth,
            out,
        }
    }

    /// Reads `script` (the text of a backtick substitution, `sh -c`, `eval`) as a command line.
    pub(super) fn nested(&mut self, script: &str) -> Result<(), CommandDenial> {
        self.enter()?;
        let result = Parser::new(script, self.depth, self.out).list(false);
        self.depth -= 1;
        result
    }

    pub(super) fn enter(&mut self) -> Result<(), CommandDenial> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(opaque(
                "Cannot tell which commands run: the command is nested too deeply",
            ));
        }
        Ok(())
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    fn peek_at(&self, ahead: usize) -> Option<u8> {
        self.bytes.get(self.pos + ahead).copied()
    }

    fn eat(&mut self, byte: u8) -> bool {
        if self.peek() == Some(byte) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn skip_blanks(&mut self) {
        loop {
            match self.peek() {
                Some(b' ' | b'\t') => self.pos += 1,
                Some(b'\\') if self.peek_at(1) == Some(b'\n') => self.pos += 2,
                _ => return,
            }
        }
    }

    /// A command list, up to the end of input or (when `close`) the `)` that ends it.
    fn list(&mut self, close: bool) -> Result<(), CommandDenial> {
        let mut simple = Simple::default();
        loop {
            self.skip_blanks();
            let Some(byte) = self.peek() else {
                if close {
                    return Err(opaque(
                        "Cannot tell which commands run: unbalanced parenthesis",
                    ));
                }
                return self.finish(simple);
            };
            match byte {
                b'#' => {
                    while self.peek().is_some_and(|b| b != b'\n') {
                        self.pos += 1;
                    }
                }
                b'\n' | b';' => {
                    self.pos += 1;
                    self.finish(std::mem::take(&mut simple))?;
                }
                b'|' => {
                    self.pos += 1;
                    let _ = self.eat(b'|') || self.eat(b'&');
                    self.finish(std::mem::take(&mut simple))?;
                }
                b'&' if self.peek_at(1) == Some(b'>') => {
                    // bash/zsh: redirect both streams; POSIX sh: `&` then a redirection.
                    self.pos += 2;
                    self.eat(b'>');
                    simple.split_at.get_or_insert(simple.words.len());
                    self.target(true)?;
                }
                b'&' => {
                    self.pos += 1;
                    self.eat(b'&');
                    self.finish(std::mem::take(&mut simple))?;
                }
                b'(' if simple.words.is_empty()
                    && self.peek_at(1) == Some(b'(')
                    && self.arithmetic_at(self.pos + 2, self.pos)? => {}
                b'(' if simple.words.is_empty() => {
                    self.pos += 1;
                    self.enter()?;
                    self.list(true)?;
                    self.depth -= 1;
                }
                b'(' => {
                    self.finish(simple)?;
                    return Err(opaque("Function definitions and arrays are not analysed"));
                }
                b')' if close => {
                    self.pos += 1;
                    return self.finish(simple);
                }
                b')' => {
                    self.finish(simple)?; // `case x in a)` explains itself better
                    return Err(opaque(
                        "Cannot tell which commands run: unbalanced parenthesis",
                    ));
                }
                b'<' | b'>' => self.redirection()?,
                _ => {
                    let word = self.word()?;
                    // Only literal digits are a descriptor: `$CMD>f` runs `$CMD`.
                    let io_number = !word.quoted
                        && word.is_literal()
                        && !word.text.is_empty()
                        && word.text.bytes().all(|b| b.is_ascii_digit());
                    let io_var = !word.quoted
                        && word.is_literal()
                        && word.text.starts_with('{')
                        && word.text.ends_with('}')
                        && is_name(&word.text.as_bytes()[1..word.text.len() - 1]);
                    let before_redirect = matches!(self.peek(), Some(b'<' | b'>'));
                    if !(before_redirect && (io_number || io_var)) {
                        simple.words.push(word);
                    }
                }
            }
        }
    }

    fn excerpt(&self, start: usize) -> String {
        let end = (start + 24).min(self.bytes.len());
        let end = (end..=self.bytes.len())
            .find(|&i| self.src.is_char_boundary(i))
            .unwrap_or(self.bytes.len());
        self.src.get(start..end).unwrap_or_default().to_owned()
    }

    fn word(&mut self) -> Result<Word, CommandDenial> {
        let start = self.pos;
        let mut word = Builder::new();
        while let Some(byte) = self.peek() {
            if is_meta(byte) {
                break;
            }
            match byte {
                b'\\' => {
                    self.pos += 1;
                    match self.peek() {
                        Some(b'\n') => self.pos += 1,
                        Some(next) => {
                            word.byte(next, true);
                            self.pos += 1;
                        }
                        None => word.byte(b'\\', false),
                    }
                }
                b'\'' => {
                    self.pos += 1;
                    let Some(len) = self.bytes[self.pos..].iter().position(|&b| b == b'\'') else {
                        return Err(unbalanced("single quote", self.excerpt(start)));
                    };
                    for i in self.pos..self.pos + len {
                        word.byte(self.bytes[i], true);
                    }
                    word.word.quoted = true;
                    self.pos += len + 1;
                }
                b'"' => {
                    self.pos += 1;
                    word.word.quoted = true;
                    self.double_quoted(&mut word, start)?;
                }
                b'$' => self.dollar(&mut word, false, start)?,
                b'`' => self.backtick(&mut word, false, start)?,
                b'*' => {
                    self.pos += 1;
                    word.glob(Pat::Star);
                }
                b'?' => {
                    self.pos += 1;
                    word.glob(Pat::One);
                }
                b'[' => {
                    let class = self.bytes[self.pos + 1..]
                        .iter()
                        .take_while(|&&b| !is_meta(b) && !matches!(b, b'\'' | b'"' | b'\\'));
                    let mut close = None;
                    let mut expands = false;
                    for (at, &b) in class.enumerate() {
                        if b == b']' && at > 0 {
                            close = Some(at);
                            break;
                        }
                        expands |= matches!(b, b'$' | b'`');
                    }
                    match close {
                        // The class holds a substitution: read its inside as ordinary word
                        // text, so every command in it is found; the word is a glob.
                        Some(_) if expands => {
                            self.pos += 1;
                            word.wild();
                        }
                        Some(len) if len > 0 => {
                            self.pos += len + 2;
                            word.glob(Pat::One);
                        }
                        _ => {
                            self.pos += 1;
                            word.byte(b'[', false);
                        }
                    }
                }
                b'=' if self.pos == start => {
                    // zsh: `=cmd` expands to the path of cmd.
                    self.pos += 1;
                    word.byte(b'=', false);
                    word.word.dynamic = true;
                }
                _ => {
                    self.pos += 1;
                    word.byte(byte, false);
                }
            }
        }
        Ok(word.finish(&self.src[start..self.pos]))
    }

    fn double_quoted(&mut self, word: &mut Builder, start: usize) -> Result<(), CommandDenial> {
        loop {
            match self.peek() {
                None => return Err(unbalanced("double quote", self.excerpt(start))),
                Some(b'"') => {
                    self.pos += 1;
                    return Ok(());
                }
                Some(b'\\') => {
                    self.pos += 1;
                    match self.peek() {
                        Some(b'\n') => self.pos += 1,
                        Some(next @ (b'$' | b'`' | b'"' | b'\\')) => {
                            word.byte(next, true);
                            self.pos += 1;
                        }
                        _ => word.byte(b'\\', true),
                    }
                }
                Some(b'$') => self.dollar(word, true, start)?,
                Some(b'`') => self.backtick(word, true, start)?,
                Some(byte) => {
                    word.byte(byte, true);
                    self.pos += 1;
                }
            }
        }
    }

    fn dollar(
        &mut self,
        word: &mut Builder,
        quoted: bool,
        start: usize,
    ) -> Result<(), CommandDenial> {
        match self.peek_at(1) {
            Some(b'(')
                if self.peek_at(2) == Some(b'(') && self.arithmetic_at(self.pos + 3, start)? =>
            {
                word.expansion(quoted);
            }
            Some(b'(') => {
                self.pos += 2;
                self.enter()?;
                self.list(true)?;
                self.depth -= 1;
                word.expansion(quoted);
            }
            Some(b'{') => self.braced_parameter(word, quoted, start)?,
            Some(b'[') => {
                // bash's old arithmetic `$[…]`.
                self.pos += 2;
                let body_start = self.pos;
                let mut depth = 1usize;
                while depth > 0 {
                    match self.peek() {
                        None => return Err(unbalanced("$[", self.excerpt(start))),
                        Some(b'[') => depth += 1,
                        Some(b']') => depth -= 1,
                        Some(_) => {}
                    }
                    self.pos += 1;
                }
                let body = self.src.get(body_start..self.pos - 1).unwrap_or("`");
                if let Some(why) = expand::arithmetic(body) {
                    return Err(opaque(why));
                }
                word.expansion(quoted);
            }
            Some(b'\'') => {
                // bash `$'…'`: escapes could spell any name.
                self.pos += 2;
                loop {
                    match self.peek() {
                        None => return Err(unbalanced("single quote", self.excerpt(start))),
                        Some(b'\\') => self.pos += 2,
                        Some(b'\'') => break,
                        Some(_) => self.pos += 1,
                    }
                }
                self.pos += 1;
                word.expansion(true);
            }
            Some(b'"') => {
                self.pos += 2;
                self.double_quoted(word, start)?;
                word.expansion(true);
            }
            Some(next) if next.is_ascii_alphabetic() || next == b'_' => {
                self.pos += 2;
                while self
                    .peek()
                    .is_some_and(|b| b.is_ascii_alphanumeric() || b == b'_')
                {
                    self.pos += 1;
                }
                word.expansion(quoted);
            }
            Some(next) if next.is_ascii_digit() || b"@*#?$!-".contains(&next) => {
                self.pos += 2;
                word.expansion(quoted && next != b'@');
            }
            _ => {
                self.pos += 1;
                word.byte(b'$', quoted);
            }
        }
        Ok(())
    }

    /// `${…}` at `$`: a parameter expansion, read to its closing brace. Refused when its
    /// body runs something or expands in a way the analyser cannot follow.
    fn braced_parameter(
        &mut self,
        word: &mut Builder,
        quoted: bool,
        start: usize,
    ) -> Result<(), CommandDenial> {
        self.pos += 2;
        let body_start = self.pos;
        let mut depth = 1usize;
        while depth > 0 {
            match self.peek() {
                None => return Err(unbalanced("${", self.excerpt(start))),
                Some(b'\\') => self.pos += 2,
                Some(quote @ (b'\'' | b'"')) => {
                    self.pos += 1;
                    while self.peek().is_some_and(|b| b != quote) {
                        self.pos += 1;
                    }
                    self.pos += 1;
                }
                Some(b'{') => {
                    depth += 1;
                    self.pos += 1;
                }
                Some(b'}') => {
                    depth -= 1;
                    self.pos += 1;
                }
                Some(_) => self.pos += 1,
            }
        }
        let body = self.src.get(body_start..self.pos - 1).unwrap_or("`");
        if runs_something(body) {
            return Err(opaque(format!(
                "Commands inside ${{…}} are not analysed: {}",
                self.excerpt(start)
            )));
        }
        if let Some(why) = expand::parameter(body) {
            return Err(opaque(why));
        }
        if let Some((name, value)) = expand::assignment(body) {
            let inert = expand::arithmetic(value).is_none();
            self.out.assigned.shell(name, inert);
        }
        word.expansion(quoted && !body.contains('@'));
        Ok(())
    }

    /// `$(( … ))` or the command `(( … ))` whose body starts at `body`: true when it is one
    /// (and consumed); false when it is `$( (…) … )` or `( (…) … )`.
    fn arithmetic_at(&mut self, body: usize, start: usize) -> Result<bool, CommandDenial> {
        let mut depth = 2usize;
        let mut i = body;
        loop {
            match self.bytes.get(i) {
                None => return Err(unbalanced("$((", self.excerpt(start))),
                Some(b'(') => depth += 1,
                Some(b')') => {
                    depth -= 1;
                    if depth == 1 {
                        if self.bytes.get(i + 1) != Some(&b')') {
                            return Ok(false);
                        }
                        let dollar = body >= 3 && self.bytes.get(body - 3) == Some(&b'$');
                        let body = self.src.get(body..i).unwrap_or("`");
                        if runs_something(body) || body.contains(['\'', '"']) {
                            return Err(opaque(format!(
                                "Commands inside {}((…)) are not analysed: {}",
                                if dollar { "$" } else { "" },
                                self.excerpt(start)
                            )));
                        }
                        if let Some(why) = expand::arithmetic(body) {
                            return Err(opaque(why));
                        }
                        self.pos = i + 2;
                        return Ok(true);
                    }
                }
                Some(_) => {}
            }
            i += 1;
        }
    }

    fn backtick(
        &mut self,
        word: &mut Builder,
        quoted: bool,
        start: usize,
    ) -> Result<(), CommandDenial> {
        self.pos += 1;
        let mut inner = Vec::new();
        loop {
            match self.peek() {
                None => return Err(unbalanced("backquote", self.excerpt(start))),
                Some(b'`') => break,
                Some(b'\\') => match self.peek_at(1) {
                    Some(next @ (b'$' | b'`' | b'\\')) => {
                        inner.push(next);
                        self.pos += 2;
                    }
                    Some(b'"') if quoted => {
                        inner.push(b'"');
                        self.pos += 2;
                    }
                    _ => {
                        inner.push(b'\\');
                        self.pos += 1;
                    }
                },
                Some(byte) => {
                    inner.push(byte);
                    self.pos += 1;
                }
            }
        }
        self.pos += 1;
        let inner = String::from_utf8_lossy(&inner).into_owned();
        self.nested(&inner)?;
        word.expansion(quoted);
        Ok(())
    }

    /// The end of a simple command: its leading assignments and reserved words are skipped,
    /// and the rest is a program invocation.
    fn finish(&mut self, simple: Simple) -> Result<(), CommandDenial> {
        self.simple(&simple.words)?;
        if let Some(at) = simple.split_at
            && at > 0
            && at < simple.words.len()
        {
            self.simple(&simple.words[at..])?;
        }
        Ok(())
    }

    fn simple(&mut self, words: &[Word]) -> Result<(), CommandDenial> {
        let mut i = 0;
        while let Some(word) = words.get(i) {
            if word.assignment {
                let (name, inert) = assign::split_assignment(word);
                self.out.assigned.shell(&name, inert);
                i += 1;
                continue;
            }
            if word.quoted || !word.is_literal() {
                break;
            }
            match word.text.as_str() {
                "!" | "{" | "}" | "if" | "then" | "else" | "elif" | "fi" | "while" | "until"
                | "do" | "done" | "coproc" => i += 1,
                "for" | "select" => {
                    // The loop variable and word list are no commands; a body may follow `do`.
                    self.loop_variable(&words[i + 1..]);
                    match words[i..].iter().position(|w| !w.quoted && w.text == "do") {
                        Some(at) => i += at + 1,
                        None => return Ok(()),
                    }
                }
                "case" | "esac" => return Err(opaque("case statements are not analysed")),
                "function" => return Err(opaque("Function definitions are not analysed")),
                _ => break,
            }
        }
        match words.get(i..) {
            Some(rest) if !rest.is_empty() => self.program(rest),
            _ => Ok(()),
        }
    }
}

fn unbalanced(what: &str, near: String) -> CommandDenial {
    opaque(format!(
        "Cannot tell which commands run: unbalanced {what} in {near}"
    ))
}

fn runs_something(body: &str) -> bool {
    body.contains('`') || body.contains("$(") || body.contains("<(") || body.contains(">(")
}
