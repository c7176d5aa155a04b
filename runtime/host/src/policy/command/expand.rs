//! Expansions that make bash evaluate text again: arithmetic (`$((X))`, `$[X]`, array
//! subscripts, substring offsets) evaluates a variable's *value* as an expression, and an
//! expression such as `a[$(cmd)]` runs `cmd`; prompt expansion (`${X@P}`) and indirection
//! (`${!X}`) do the same with other syntax. The analyser cannot know a variable's value, so
//! only literal numbers are admitted where bash evaluates arithmetic, and the re-evaluating
//! forms of `${…}` are refused.

/// Operators and punctuation of shell arithmetic (no `$`, quotes, brackets or braces).
const ARITH_PUNCT: &[u8] = b"+-*/%<>=!&|^~?:,() \t\n";

/// Why an arithmetic expression is refused, or `None` when it only holds literal numbers
/// (`1 + 2`, `0x1f`, `16#ff`, `(3) * 4`).
pub(super) fn arithmetic(body: &str) -> Option<String> {
    let bytes = body.as_bytes();
    let mut i = 0;
    while let Some(&byte) = bytes.get(i) {
        if byte.is_ascii_digit() {
            // A number: digits, then letters, digits, `#`, `@`, `_` of a base or hex literal.
            while bytes
                .get(i)
                .is_some_and(|b| b.is_ascii_alphanumeric() || matches!(b, b'#' | b'@' | b'_'))
            {
                i += 1;
            }
        } else if ARITH_PUNCT.contains(&byte) {
            i += 1;
        } else {
            return Some(format!(
                "Arithmetic on anything but literal numbers is not analysed (bash evaluates a \
                 variable's value as code): {body}"
            ));
        }
    }
    None
}

/// Why the body of `${…}` is refused, or `None` when it only reads a parameter.
pub(super) fn parameter(body: &str) -> Option<String> {
    let refuse = |why: &str| Some(format!("{why}: ${{{body}}}"));
    if body.starts_with('!') {
        return refuse("Indirect expansion is not analysed");
    }
    let rest = match body.strip_prefix('#') {
        Some("") => return None, // `${#}`: the number of arguments
        Some(rest) => rest,
        None => body,
    };
    let bytes = rest.as_bytes();
    let name_len = match bytes.first() {
        Some(b) if b.is_ascii_alphabetic() || *b == b'_' => bytes
            .iter()
            .position(|b| !(b.is_ascii_alphanumeric() || *b == b'_'))
            .unwrap_or(bytes.len()),
        Some(b) if b.is_ascii_digit() => bytes
            .iter()
            .position(|b| !b.is_ascii_digit())
            .unwrap_or(bytes.len()),
        Some(b'@' | b'*' | b'#' | b'?' | b'$' | b'!' | b'-') => 1,
        _ => return refuse("Cannot tell what this expansion is"),
    };
    let mut rest = &rest[name_len..];
    if let Some(subscript) = rest.strip_prefix('[') {
        let Some(end) = subscript.find(']') else {
            return refuse("Cannot tell what this expansion is");
        };
        let index = &subscript[..end];
        if !matches!(index, "@" | "*") && arithmetic(index).is_some() {
            return refuse(
                "An array subscript that is not a literal number is not analysed (bash \
                 evaluates it as arithmetic)",
            );
        }
        rest = &subscript[end + 1..];
    }
    let op = rest.bytes().next()?;
    match op {
        b':' => match rest.as_bytes().get(1) {
            Some(b'-' | b'=' | b'?' | b'+') => operand(&rest[2..]),
            // `${X:offset:length}`: both are arithmetic.
            _ => arithmetic(&rest[1..]).map(|_| {
                format!(
                    "A substring offset that is not a literal number is not analysed (bash \
                     evaluates it as arithmetic): ${{{body}}}"
                )
            }),
        },
        b'-' | b'=' | b'?' | b'+' | b'#' | b'%' | b'/' | b'^' | b',' => operand(&rest[1..]),
        b'@' => match &rest[1..] {
            "Q" | "U" | "u" | "L" | "a" => None,
            _ => refuse(
                "Parameter transformations other than @Q, @U, @u, @L and @a are not analysed",
            ),
        },
        _ => refuse("Cannot tell what this expansion is"),
    }
}

/// The word after an operator of `${X:-word}`, `${X/pat/rep}`, …: nested expansions in it are
/// judged by the same rules (command substitutions were refused before).
fn operand(word: &str) -> Option<String> {
    let unbalanced = || Some(format!("Cannot tell what this expansion is: {word}"));
    let bytes = word.as_bytes();
    let mut i = 0;
    while let Some(&byte) = bytes.get(i) {
        i += 1;
        match byte {
            b'\\' => i += 1,
            b'$' => match bytes.get(i) {
                Some(b'{') => {
                    let Some(end) = closing(&bytes[i + 1..], b'{', b'}') else {
                        return unbalanced();
                    };
                    let inner = word.get(i + 1..i + 1 + end).unwrap_or("!");
                    if let Some(why) = parameter(inner) {
                        return Some(why);
                    }
                    i += end + 2;
                }
                Some(b'[') => {
                    let Some(end) = closing(&bytes[i + 1..], b'[', b']') else {
                        return unbalanced();
                    };
                    if let Some(why) = arithmetic(word.get(i + 1..i + 1 + end).unwrap_or("`")) {
                        return Some(why);
                    }
                    i += end + 2;
                }
                Some(b'(') => {
                    // `$((…))`; a `$(…)` was refused already.
                    let Some(end) = closing(&bytes[i + 1..], b'(', b')') else {
                        return unbalanced();
                    };
                    let inner = word.get(i + 1..i + 1 + end).unwrap_or("`");
                    let inner = inner.strip_prefix('(').and_then(|i| i.strip_suffix(')'));
                    if let Some(why) = arithmetic(inner.unwrap_or("`")) {
                        return Some(why);
                    }
                    i += end + 2;
                }
                _ => {}
            },
            _ => {}
        }
    }
    None
}

/// The offset of the `close` matching an already-opened `open`, counting nesting.
fn closing(bytes: &[u8], open: u8, close: u8) -> Option<usize> {
    let mut depth = 1usize;
    for (at, &byte) in bytes.iter().enumerate() {
        if byte == open {
            depth += 1;
        } else if byte == close {
            depth -= 1;
            if depth == 0 {
                return Some(at);
            }
        }
    }
    None
}

/// `${NAME:=word}` or `${NAME=word}`: the variable it may set and the value.
pub(super) fn assignment(body: &str) -> Option<(&str, &str)> {
    let end = body
        .bytes()
        .position(|b| !(b.is_ascii_alphanumeric() || b == b'_'))?;
    let (name, rest) = body.split_at(end);
    if !name
        .bytes()
        .next()
        .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
    {
        return None;
    }
    let value = rest.strip_prefix(":=").or_else(|| rest.strip_prefix('='))?;
    Some((name, value))
}
