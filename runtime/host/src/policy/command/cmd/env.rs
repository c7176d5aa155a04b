//! What the analyser knows of variables when cmd.exe expands text a second time (`call`,
//! both sides of a pipe, `cmd /c`, `start`, `for /f ('…')`): there `%NAME%` and `!NAME!` are
//! replaced *before* operators are read, so a value holding `&` runs what follows it. A value
//! is safe when it is the one the line started with (the user's environment, taken as data
//! like at the top level) or was set by the line to text without special characters, or to a
//! number by `set /a`; anything else (`set /p`, a value with specials, a program that may be a
//! batch file changing variables, a loop running the text again) is unknown.

use std::collections::HashSet;

use super::super::CommandDenial;
use super::opaque;

/// Characters that change how cmd.exe reads a line when a value holds them.
const SPECIAL: &[char] = &['&', '|', '<', '>', '(', ')', '^', '"', '%', '!', '\r', '\n'];

/// Variables cmd.exe computes from what the model chooses: the working directory (a folder
/// may be called `a&calc`) and the command line itself, whose substrings can be any text.
const DYNAMIC: &[&str] = &["cd", "__cd__", "cmdcmdline"];

#[derive(Debug, Clone, Default)]
pub(super) struct Env {
    /// Set by the line, for certain, to a safe value.
    safe: HashSet<String>,
    /// Possibly set by the line to an unknown value.
    unknown: HashSet<String>,
    /// Something ran that could have set any variable (a batch file, `call`).
    tainted: bool,
}

impl Env {
    fn safe(&self, name: &str) -> bool {
        let name = name.to_ascii_lowercase();
        self.safe.contains(&name) || !(self.tainted || self.unknown.contains(&name))
    }

    pub(super) fn taint(&mut self) {
        self.tainted = true;
        self.safe.clear();
    }

    fn assign(&mut self, name: &str, safe: bool, certain: bool) {
        let name = name.to_ascii_lowercase();
        if !safe {
            self.safe.remove(&name);
            self.unknown.insert(name);
        } else if certain {
            self.unknown.remove(&name);
            self.safe.insert(name);
        }
        // A safe value that may not be set leaves whatever was known.
    }

    /// `set …` with its text after `set` (cooked). `certain`: the command surely runs once.
    pub(super) fn set(&mut self, tail: &str, certain: bool) {
        let text = tail.trim_start_matches([' ', '\t', ',', ';', '=']);
        let switch = text.get(..2).map(str::to_ascii_lowercase);
        match switch.as_deref() {
            Some("/a") => self.arithmetic(&text[2..], certain),
            Some("/p") => {
                let rest = text[2..].trim_start().trim_start_matches('"');
                match rest.split_once('=') {
                    Some((name, _)) => self.assign(name, false, certain),
                    None => self.taint(),
                }
            }
            _ => {
                let (text, quoted) = match text.strip_prefix('"') {
                    Some(inner) => (inner.rsplit_once('"').map_or(inner, |(v, _)| v), true),
                    None => (text, false),
                };
                let Some((name, value)) = text.split_once('=') else {
                    return; // lists variables
                };
                if name.contains(SPECIAL) {
                    self.taint();
                    return;
                }
                // Unquoted, the value runs to the end of the command: the cooked tail may
                // still hold a redirection, which does not matter for safety.
                let value = if quoted { value } else { value.trim_end() };
                self.assign(name, !value.contains(SPECIAL), certain);
            }
        }
    }

    /// `set /a`: every name an assignment operator follows becomes a number.
    fn arithmetic(&mut self, expression: &str, certain: bool) {
        if expression.contains(['%', '!']) {
            self.taint();
            return;
        }
        let bytes = expression.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            if bytes[i].is_ascii_alphabetic() || bytes[i] == b'_' {
                let start = i;
                while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                    i += 1;
                }
                let name = &expression[start..i];
                let rest = expression[i..].trim_start_matches([' ', '\t', '"']);
                let assigns = [
                    "=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>=",
                ]
                .iter()
                .any(|op| rest.starts_with(op) && !rest.starts_with("=="));
                if assigns {
                    self.assign(name, true, certain);
                }
            } else {
                i += 1;
            }
        }
    }
}

/// Checks the spans a `%` or `!` pair encloses in `text`. Always denied: substrings and
/// substitutions (`%X:~3,1%`, `%X:a=b%` pick any character of a value, quotes and operators
/// included) and the variables of [`DYNAMIC`]. When `again` holds the variables of a second
/// expansion, a span naming one that is not safe (or any span inside a loop) is returned as
/// the reason the text may run anything.
pub(super) fn spans(
    text: &str,
    again: Option<(&Env, bool, &str)>,
) -> Result<Option<String>, CommandDenial> {
    let mut reason = None;
    for marker in ['%', '!'] {
        let at: Vec<usize> = text.match_indices(marker).map(|(i, _)| i).collect();
        for pair in at.windows(2) {
            let name = &text[pair[0] + 1..pair[1]];
            if let Some((before, _)) = name.split_once(':')
                && !before.is_empty()
                && !before.contains([' ', '\t', '&', '|', '<', '>', '(', ')', '"', '^'])
            {
                return Err(opaque(format!(
                    "Cannot tell which commands run: substrings and substitutions of variables are not analysed: {marker}{name}{marker}"
                )));
            }
            let lower = name.to_ascii_lowercase();
            if DYNAMIC.contains(&lower.as_str()) || lower.starts_with('=') {
                return Err(opaque(format!(
                    "Cannot tell which commands run: {marker}{name}{marker} holds text the command chooses"
                )));
            }
            if let Some((env, false, what)) = again
                && reason.is_none()
                && !env.safe(name)
            {
                reason = Some(format!(
                    "Cannot tell which commands run: {what} expands {marker}{name}{marker} again, and its value could hold operators"
                ));
            }
        }
        if let Some((_, true, what)) = again
            && !at.is_empty()
        {
            reason = Some(format!(
                "Cannot tell which commands run: {what} inside a loop expands {marker} again, and its value could hold operators"
            ));
        }
    }
    Ok(reason)
}
