//! Shell words as the policy sees them: the value after quote removal, and what is unknown
//! about it (expansions, globs, brace expansion).

/// One piece of a word's shape, for asking "could this word be that string?".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Pat {
    Byte(u8),
    /// `?` or a bracket class: exactly one character.
    One,
    /// `*`, or an expansion whose value is unknown.
    Star,
}

/// A shell word after quote removal, with what is known about its value.
#[derive(Debug, Clone, Default)]
pub(super) struct Word {
    /// The value with quotes removed; expansions contribute nothing.
    pub text: String,
    /// The source text, for messages.
    pub raw: String,
    pub pattern: Vec<Pat>,
    /// Holds a parameter, command or arithmetic expansion.
    pub dynamic: bool,
    /// May become zero or several words (unquoted expansion, `"$@"`).
    pub split: bool,
    /// Holds an unquoted `*`, `?` or bracket class.
    pub glob: bool,
    /// Looks like a brace expansion (`{a,b}`, `{1..3}`).
    pub brace: bool,
    /// Starts with an unquoted `NAME=` or `NAME+=`.
    pub assignment: bool,
    /// Any quoting at all (a quoted `if` is no reserved word).
    pub quoted: bool,
}

impl Word {
    /// A word whose value is exactly `text`.
    pub(super) fn is_literal(&self) -> bool {
        !self.dynamic && !self.split && !self.glob && !self.brace
    }

    /// An unknown value standing for data inserted at run time (xargs input, find's `{}`).
    pub(super) fn unknown(raw: &str) -> Self {
        Word {
            raw: raw.to_owned(),
            pattern: vec![Pat::Star],
            dynamic: true,
            split: true,
            ..Word::default()
        }
    }

    pub(super) fn literal(text: &str) -> Self {
        Word {
            text: text.to_owned(),
            raw: text.to_owned(),
            pattern: text.bytes().map(Pat::Byte).collect(),
            ..Word::default()
        }
    }
}

#[derive(Default)]
pub(super) struct Builder {
    text: Vec<u8>,
    pub(super) word: Word,
    /// Everything so far was unquoted literal text (for `NAME=`).
    plain: bool,
    braces: (bool, bool, bool),
    /// Its shape is unknown as a whole (a bracket class holding an expansion).
    wild: bool,
}

impl Builder {
    pub(super) fn new() -> Self {
        Builder {
            plain: true,
            ..Builder::default()
        }
    }

    pub(super) fn byte(&mut self, byte: u8, quoted: bool) {
        if quoted {
            self.plain = false;
            self.word.quoted = true;
        } else {
            match byte {
                b'=' if self.plain
                    && (is_name(&self.text)
                        || self.text.strip_suffix(b"+").is_some_and(is_name)) =>
                {
                    self.word.assignment = true;
                    self.plain = false;
                }
                b'{' => self.braces.0 = true,
                b'}' => self.braces.1 = true,
                b',' => self.braces.2 = true,
                b'.' if self.text.last() == Some(&b'.') => self.braces.2 = true,
                _ => {}
            }
        }
        self.text.push(byte);
        self.word.pattern.push(Pat::Byte(byte));
    }

    pub(super) fn expansion(&mut self, quoted: bool) {
        self.plain = false;
        self.word.dynamic = true;
        self.word.split |= !quoted;
        self.word.quoted |= quoted;
        self.pattern(Pat::Star);
    }

    pub(super) fn glob(&mut self, pat: Pat) {
        self.plain = false;
        self.word.glob = true;
        self.pattern(pat);
    }

    /// A glob whose extent is unknown: the whole word could be anything.
    pub(super) fn wild(&mut self) {
        self.plain = false;
        self.word.glob = true;
        self.wild = true;
    }

    /// Runs of `*` collapse, which keeps matching linear in practice.
    fn pattern(&mut self, pat: Pat) {
        if !(pat == Pat::Star && self.word.pattern.last() == Some(&Pat::Star)) {
            self.word.pattern.push(pat);
        }
    }

    pub(super) fn finish(mut self, raw: &str) -> Word {
        self.word.text = String::from_utf8_lossy(&self.text).into_owned();
        self.word.raw = raw.to_owned();
        let (open, close, list) = self.braces;
        self.word.brace = open && close && list;
        if self.wild {
            self.word.pattern = vec![Pat::Star];
        }
        self.word
    }
}

pub(super) fn is_name(text: &[u8]) -> bool {
    match text.split_first() {
        Some((first, rest)) => {
            (first.is_ascii_alphabetic() || *first == b'_')
                && rest.iter().all(|b| b.is_ascii_alphanumeric() || *b == b'_')
        }
        None => false,
    }
}

/// Whether `word` could be exactly `value` (expansions and globs may be anything they match).
pub(super) fn could_be(word: &Word, value: &str) -> bool {
    fn go(pattern: &[Pat], value: &[u8]) -> bool {
        match pattern.split_first() {
            None => value.is_empty(),
            Some((Pat::Byte(b), rest)) => value.first() == Some(b) && go(rest, &value[1..]),
            Some((Pat::One, rest)) => match value.first() {
                Some(&first) => {
                    let len = match first {
                        0xF0.. => 4,
                        0xE0.. => 3,
                        0xC0.. => 2,
                        _ => 1,
                    };
                    go(rest, value.get(len..).unwrap_or_default())
                }
                None => false,
            },
            Some((Pat::Star, rest)) => (0..=value.len()).any(|skip| go(rest, &value[skip..])),
        }
    }
    go(&word.pattern, value.as_bytes())
}

/// Whether `word` could begin with `prefix` (`/dev/tcp/` behind an expansion, say).
pub(super) fn could_start_with(word: &Word, prefix: &str) -> bool {
    fn go(pattern: &[Pat], prefix: &[u8]) -> bool {
        if prefix.is_empty() {
            return true;
        }
        match pattern.split_first() {
            None => false,
            Some((Pat::Byte(b), rest)) => prefix.first() == Some(b) && go(rest, &prefix[1..]),
            Some((Pat::One, rest)) => go(rest, &prefix[1..]),
            Some((Pat::Star, _)) => true,
        }
    }
    go(&word.pattern, prefix.as_bytes())
}
