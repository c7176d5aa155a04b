//! Builtins that run or re-evaluate text the analyser would otherwise take for data:
//! `trap` (its action is a command line), `alias` (a later word becomes another program),
//! `let` and variable names with subscripts (`unset 'a[$(cmd)]'`: bash evaluates the
//! subscript as arithmetic, which runs command substitutions), callbacks (`mapfile -C`,
//! `compgen -C`/`-F`, `bind -x`), and builtins that change what a name runs (`hash -p`,
//! `enable -f`).

use super::CommandDenial;
use super::expand;
use super::parse::Parser;
use super::word::Word;

/// The builtins [`judge`] knows; `trap` is analysed instead (its action is read as a line).
pub(super) const RE_EVALUATING: &[&str] = &[
    "alias",
    "shopt",
    "let",
    "unset",
    "declare",
    "typeset",
    "local",
    "export",
    "readonly",
    "read",
    "printf",
    "mapfile",
    "readarray",
    "wait",
    "getopts",
    "test",
    "[",
    "[[",
    "hash",
    "enable",
    "compgen",
    "complete",
    "bind",
    "fc",
];

fn refuse(why: String) -> Result<(), CommandDenial> {
    Err(CommandDenial::Unanalysable(why))
}

/// Refuses a call of one of [`RE_EVALUATING`] that could run something not judged.
pub(super) fn judge(name: &str, args: &[Word]) -> Result<(), CommandDenial> {
    let literal = |flag: &str| {
        args.iter()
            .any(|w| w.is_literal() && w.text.starts_with('-') && w.text.contains(flag))
    };
    match name {
        "alias" if !args.is_empty() => {
            return refuse(
                "alias is not allowed: an alias makes a later word run another program".to_owned(),
            );
        }
        "shopt"
            if args
                .iter()
                .any(|w| !w.is_literal() || w.text == "expand_aliases") =>
        {
            return refuse(
                "shopt expand_aliases is not allowed: aliases are not analysed".to_owned(),
            );
        }
        "let" => {
            if let Some(word) = args
                .iter()
                .find(|w| expand::arithmetic(&w.text).is_some() || !w.is_literal())
            {
                return refuse(format!(
                    "let is not analysed unless its expressions are literal numbers (bash evaluates a variable's value as code): {}",
                    word.raw
                ));
            }
        }
        "hash" if literal("p") => {
            return refuse(
                "hash -p is not allowed: it makes a name run another program".to_owned(),
            );
        }
        "enable" if literal("f") => {
            return refuse("enable -f is not allowed: it loads code into the shell".to_owned());
        }
        "mapfile" | "readarray" if literal("C") => {
            return refuse(format!(
                "{name} -C is not allowed: its callback is a command line"
            ));
        }
        "compgen" | "complete" if literal("C") || literal("F") => {
            return refuse(format!(
                "{name} -C/-F is not allowed: it runs a command or function"
            ));
        }
        "bind" if literal("x") => {
            return refuse("bind -x is not allowed: it binds a command line".to_owned());
        }
        "fc" => return refuse("fc is not allowed: it runs commands from the history".to_owned()),
        _ => {}
    }
    // Names with a subscript: bash evaluates the subscript as arithmetic.
    for word in args {
        if let Some(open) = word.raw.find('[')
            && let Some(close) = word.raw[open..].find(']')
        {
            let index = word.raw[open + 1..open + close].trim_matches(['\'', '"']);
            if !matches!(index, "@" | "*") && expand::arithmetic(index).is_some() {
                return refuse(format!(
                    "{name} is not analysed with a subscript that is not a literal number (bash evaluates it as arithmetic): {}",
                    word.raw
                ));
            }
        }
    }
    if name == "[[" {
        // `[[ X -eq 1 ]]` evaluates both operands as arithmetic.
        for (at, word) in args.iter().enumerate() {
            if matches!(
                word.text.as_str(),
                "-eq" | "-ne" | "-lt" | "-le" | "-gt" | "-ge"
            ) {
                let operands = [
                    at.checked_sub(1).and_then(|i| args.get(i)),
                    args.get(at + 1),
                ];
                if let Some(operand) = operands
                    .into_iter()
                    .flatten()
                    .find(|w| !w.is_literal() || expand::arithmetic(&w.text).is_some())
                {
                    return refuse(format!(
                        "[[ … {} … ]] is not analysed unless its operands are literal numbers (bash evaluates them as arithmetic): {}",
                        word.text, operand.raw
                    ));
                }
            }
        }
    }
    Ok(())
}

impl Parser<'_, '_> {
    /// `trap ACTION SIGNAL…`: the action is a command line run later, read like `eval`'s.
    pub(super) fn trap(&mut self, args: &[Word]) -> Result<(), CommandDenial> {
        let mut rest = args;
        while let Some((first, tail)) = rest.split_first() {
            match first.text.as_str() {
                "-p" | "-l" if first.is_literal() => rest = tail,
                "--" if first.is_literal() => {
                    rest = tail;
                    break;
                }
                _ => break,
            }
        }
        match rest.first() {
            None => Ok(()),
            Some(action) if action.is_literal() => {
                if action.text == "-" {
                    return Ok(());
                }
                self.nested(&action.text)
            }
            Some(action) => refuse(format!(
                "Cannot tell which command trap runs: its action {} is not a literal string",
                action.raw
            )),
        }
    }
}
