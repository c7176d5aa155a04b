//! cmd.exe's special-character phase as the analyser reads it: carets escape outside quotes,
//! `"` toggles quoting, `%…%` and `!…!` may expand (their extent becomes an unknown part of
//! the word), and words end at whitespace, operators and redirections.

use super::super::CommandDenial;
use super::super::word::{Pat, Word};
use super::{Reader, opaque, unbalanced};

/// One character of a word after the special-character phase.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    Byte(u8),
    /// A `"` (kept for the program, removed from the value).
    Quote,
    /// `%…%`, `!…!` or a `%i` for-variable: a value only known when the line runs.
    Unknown,
    /// `*` or `?`: the programs themselves expand wildcards.
    Star,
    One,
}

#[derive(Debug, Clone, Copy)]
pub(super) struct Ev {
    pub kind: Kind,
    pub quoted: bool,
    /// Where the character sits in the reader's cooked text (carets removed, quotes kept).
    pub from: usize,
    pub to: usize,
}

/// A word: its characters, and its source text for messages.
#[derive(Debug, Clone, Default)]
pub(super) struct CWord {
    pub evs: Vec<Ev>,
    pub raw: String,
}

impl CWord {
    /// The value (quotes removed) when it is exactly known and unquoted, lowercased: for
    /// keywords and switches.
    pub(super) fn keyword(&self) -> Option<String> {
        let word = make(&self.evs, &self.raw, false);
        (word.is_literal() && !word.quoted).then(|| word.text.to_ascii_lowercase())
    }

    pub(super) fn word(&self, bang: bool) -> Word {
        make(&self.evs, &self.raw, bang)
    }
}

/// The delimiters cmd.exe skips between arguments of its own commands.
pub(super) fn is_delimiter(byte: u8) -> bool {
    matches!(byte, b' ' | b'\t' | b',' | b';' | b'=')
}

/// A word from its characters. `bang`: delayed expansion may read the text again, where a
/// remaining caret escapes what follows, so a value holding one is not known.
pub(super) fn make(evs: &[Ev], raw: &str, bang: bool) -> Word {
    let mut word = Word {
        raw: raw.to_owned(),
        ..Word::default()
    };
    let mut text = Vec::new();
    for ev in evs {
        match ev.kind {
            Kind::Byte(byte) => {
                text.push(byte);
                word.pattern.push(Pat::Byte(byte));
                word.quoted |= ev.quoted;
            }
            Kind::Quote => word.quoted = true,
            Kind::Unknown => {
                word.dynamic = true;
                word.split = true;
                star(&mut word.pattern);
            }
            Kind::Star => {
                word.glob = true;
                star(&mut word.pattern);
            }
            Kind::One => {
                word.glob = true;
                word.pattern.push(Pat::One);
            }
        }
    }
    if bang && text.contains(&b'^') {
        word.dynamic = true;
        word.split = true;
    }
    word.text = String::from_utf8_lossy(&text).into_owned();
    word
}

fn star(pattern: &mut Vec<Pat>) {
    if pattern.last() != Some(&Pat::Star) {
        pattern.push(Pat::Star);
    }
}

impl Reader<'_, '_> {
    pub(super) fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    pub(super) fn peek_at(&self, ahead: usize) -> Option<u8> {
        self.bytes.get(self.pos + ahead).copied()
    }

    /// Consumes one byte into the cooked text.
    pub(super) fn take(&mut self) -> Option<u8> {
        let byte = self.peek()?;
        self.pos += 1;
        self.cooked.push(byte);
        Some(byte)
    }

    pub(super) fn skip_blanks(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t')) {
            self.take();
        }
    }

    /// What cmd.exe skips before a command: delimiters and `@` (echo off).
    pub(super) fn skip_leading(&mut self) {
        while self.peek().is_some_and(|b| is_delimiter(b) || b == b'@') {
            self.take();
        }
    }

    pub(super) fn at_redirection(&self) -> bool {
        match self.peek() {
            Some(b'<' | b'>') => true,
            Some(digit) if digit.is_ascii_digit() => matches!(self.peek_at(1), Some(b'<' | b'>')),
            _ => false,
        }
    }

    /// One word up to unquoted whitespace, an operator, a redirection or (inside a block) `)`;
    /// `None` when none starts here. In a `header` (of `if` and `for`), `,`, `;` and `=` end
    /// a word too and `==` is a word of its own.
    pub(super) fn word(&mut self, header: bool) -> Result<Option<CWord>, CommandDenial> {
        let start = self.pos;
        let mut evs: Vec<Ev> = Vec::new();
        let mut quoted = false;
        let mut var: Option<u8> = None;
        while let Some(byte) = self.peek() {
            if !quoted {
                match byte {
                    b' ' | b'\t' | b'&' | b'|' | b'<' | b'>' => break,
                    b',' | b';' | b'(' if header => break,
                    b'=' if header => {
                        if evs.is_empty() && self.peek_at(1) == Some(b'=') {
                            for _ in 0..2 {
                                let from = self.cooked.len();
                                self.take();
                                evs.push(plain(b'=', from));
                            }
                        }
                        break;
                    }
                    b')' if self.open > 0 => break,
                    b')' => {
                        return Err(opaque(
                            "Cannot tell which commands run: unbalanced parenthesis",
                        ));
                    }
                    b'^' if self.carets => {
                        self.pos += 1;
                        let from = self.cooked.len();
                        let Some(next) = self.take() else { break };
                        self.push(&mut evs, &mut var, next, false, from);
                        continue;
                    }
                    _ => {}
                }
            }
            let from = self.cooked.len();
            self.take();
            if byte == b'"' {
                quoted = !quoted;
                evs.push(Ev {
                    kind: Kind::Quote,
                    quoted: true,
                    from,
                    to: from + 1,
                });
                continue;
            }
            self.push(&mut evs, &mut var, byte, quoted, from);
        }
        if quoted {
            return Err(unbalanced(
                "double quote",
                self.src.get(start..).unwrap_or_default(),
            ));
        }
        if evs.is_empty() {
            return Ok(None);
        }
        Ok(Some(CWord {
            evs,
            raw: self.src.get(start..self.pos).unwrap_or_default().to_owned(),
        }))
    }

    /// One character of a word: inside `%…%` or `!…!` it is part of an unknown value.
    fn push(&self, evs: &mut Vec<Ev>, var: &mut Option<u8>, byte: u8, quoted: bool, from: usize) {
        let to = self.cooked.len();
        if let Some(open) = *var {
            if let Some(last) = evs.last_mut() {
                last.to = to;
            }
            if byte == open {
                *var = None;
            }
            return;
        }
        let kind = match byte {
            b'%' | b'!' => {
                *var = Some(byte);
                Kind::Unknown
            }
            b'*' => Kind::Star,
            b'?' => Kind::One,
            _ => Kind::Byte(byte),
        };
        evs.push(Ev {
            kind,
            quoted,
            from,
            to,
        });
    }

    /// A redirection (`>`, `>>`, `<`, `2>`, `>&2`, `<&0`): a target written is recorded.
    pub(super) fn redirection(&mut self) -> Result<(), CommandDenial> {
        if self.peek().is_some_and(|b| b.is_ascii_digit()) {
            self.take();
        }
        let writes = self.take() == Some(b'>');
        if writes && self.peek() == Some(b'>') {
            self.take();
        }
        if self.peek() == Some(b'&') {
            self.take();
            self.skip_blanks();
            if !self.peek().is_some_and(|b| b.is_ascii_digit()) {
                return Err(opaque(
                    "Cannot tell which commands run: a redirection to a handle that is not a number",
                ));
            }
            while self.peek().is_some_and(|b| b.is_ascii_digit()) {
                self.take();
            }
            return Ok(());
        }
        self.skip_blanks();
        let Some(target) = self.word(false)? else {
            return Err(opaque(
                "Cannot tell which commands run: a redirection has no target",
            ));
        };
        if writes {
            self.out.writes.push(target.word(self.bang));
        }
        Ok(())
    }

    /// The next word of an `if` or `for` header, or why the header is not analysed.
    pub(super) fn header(&mut self, what: &str) -> Result<CWord, CommandDenial> {
        if let Some(pending) = self.pending.take() {
            return Ok(pending);
        }
        loop {
            match self.peek() {
                Some(b' ' | b'\t' | b',' | b';') => {}
                Some(b'=') if self.peek_at(1) != Some(b'=') => {}
                _ => break,
            }
            self.take();
        }
        match self.word(true)? {
            Some(word) => Ok(word),
            None => Err(opaque(format!(
                "Cannot tell which commands run: {what} is incomplete or not analysed"
            ))),
        }
    }
}

fn plain(byte: u8, from: usize) -> Ev {
    Ev {
        kind: Kind::Byte(byte),
        quoted: false,
        from,
        to: from + 1,
    }
}
