//! Redirections: their targets are never commands, but a target that is written is a file
//! the enforcer judges (File.Write), and `/dev/tcp/…`, `/dev/udp/…` are network connections.

use super::super::CommandDenial;
use super::super::word::{Word, could_start_with};
use super::{Parser, is_meta, opaque};

impl Parser<'_, '_> {
    pub(super) fn redirection(&mut self) -> Result<(), CommandDenial> {
        let start = self.pos;
        let mut writes = self.peek() == Some(b'>');
        let mut dup = false;
        if self.eat(b'<') {
            if self.eat(b'<') {
                if !self.eat(b'<') {
                    return Err(opaque(format!(
                        "Here-documents are not analysed: {}",
                        self.excerpt(start)
                    )));
                }
            } else if self.eat(b'&') {
                dup = true;
            } else {
                writes = self.eat(b'>');
            }
        } else {
            self.pos += 1;
            dup = self.peek() == Some(b'&');
            let _ = self.eat(b'>') || self.eat(b'&') || self.eat(b'|');
        }
        if self.peek() == Some(b'(') {
            return Err(opaque(format!(
                "Process substitution is not analysed: {}",
                self.excerpt(start)
            )));
        }
        let target = self.target(writes)?;
        // `>&2`, `<&-`: a descriptor, not a file (`>&name` is bash's `&>name`).
        let descriptor = target.is_literal()
            && (target.text == "-" || target.text.bytes().all(|b| b.is_ascii_digit()));
        if dup && descriptor {
            self.out.writes.pop_if(|last| last.raw == target.raw);
        }
        Ok(())
    }

    /// The word a redirection names: read for the substitutions in it, never a command;
    /// kept when it is written to. Bash opens `/dev/tcp/HOST/PORT` as a network connection.
    pub(super) fn target(&mut self, writes: bool) -> Result<Word, CommandDenial> {
        self.skip_blanks();
        let target = match self.peek() {
            Some(byte) if !is_meta(byte) => self.word()?,
            _ => {
                return Err(opaque(
                    "Cannot tell which commands run: a redirection has no target",
                ));
            }
        };
        if could_start_with(&target, "/dev/tcp/") || could_start_with(&target, "/dev/udp/") {
            return Err(opaque(format!(
                "Redirections to /dev/tcp or /dev/udp open network connections and are not \
                 allowed: {}",
                target.raw
            )));
        }
        if writes {
            self.out.writes.push(target.clone());
        }
        Ok(target)
    }
}
