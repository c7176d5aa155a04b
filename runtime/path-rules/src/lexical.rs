//! Lexical path handling per platform (local-tool-runtime.md §6.1, §8.1): separators, drive
//! letters and UNC shares, `~`, `.`/`..`, length limits and case-folding containment. Every
//! function takes the [`Os`] as a parameter and works on strings, so the Windows rules are
//! unit-tested on Linux too.

use std::path::{Component, Path, PathBuf};

use crate::{Os, home};

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PathError {
    #[error("the path contains a NUL byte")]
    NulByte,
    #[error(
        "the path \"{0}\" is relative and the session has no project folder to resolve it against; use an absolute path"
    )]
    RelativeWithoutRoot(String),
    #[error("the path is empty")]
    Empty,
    #[error(
        "the path is {length} characters long, more than this system's limit of {limit}; use a shorter path"
    )]
    TooLong { length: usize, limit: usize },
    #[error(
        "the path \"{raw}\" uses \"..\" to leave the project folder {root}; name the file by its absolute path instead"
    )]
    EscapesWorkspace { raw: String, root: String },
    #[error(
        "the path \"{0}\" starts like a network share (\\\\server\\share) but names no server or no share"
    )]
    IncompleteShare(String),
}

/// Where an absolute path is anchored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Anchor {
    /// No anchor: relative to the project folder.
    Relative,
    /// `/` on unix; on Windows `\` without a drive (the project folder's drive).
    Root,
    /// `C:\` (the letter upper-cased).
    Drive(char),
    /// `\\server\share\`.
    Unc { server: String, share: String },
}

/// A path split into its anchor and its plain components (no empty ones).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Lexical {
    pub(crate) anchor: Anchor,
    /// Whether the input carried the `\\?\` long-path prefix (Windows).
    pub(crate) verbatim: bool,
    pub(crate) components: Vec<String>,
}

pub(crate) fn parse(os: Os, raw: &str) -> Lexical {
    let mut verbatim = false;
    let mut rest = raw;
    let mut anchor = Anchor::Relative;
    if os == Os::Windows {
        if let Some(after) = rest
            .strip_prefix(r"\\?\")
            .or_else(|| rest.strip_prefix("//?/"))
        {
            verbatim = true;
            rest = after;
            if let Some(unc) = strip_prefix_ignore_case(rest, r"UNC\") {
                rest = unc;
                anchor = unc_anchor(os, &mut rest);
            }
        } else if rest.len() > 2
            && rest.chars().take(2).all(|c| os.is_separator(c))
            && !rest[2..].starts_with(|c| os.is_separator(c))
        {
            // `\server\share`; two separators with no server after them name no share
            // and are read as the drive's root, like one.
            rest = &rest[2..];
            anchor = unc_anchor(os, &mut rest);
        }
        if anchor == Anchor::Relative {
            let mut chars = rest.chars();
            if let (Some(letter), Some(':')) = (chars.next(), chars.next())
                && letter.is_ascii_alphabetic()
            {
                // `C:foo` (relative to the drive's current folder) is read as `C:\foo`: the
                // runtime has no per-drive current folder to honour.
                anchor = Anchor::Drive(letter.to_ascii_uppercase());
                rest = &rest[2..];
            }
        }
    }
    if anchor == Anchor::Relative && rest.starts_with(|c| os.is_separator(c)) {
        anchor = Anchor::Root;
    }
    let components = rest
        .split(|c| os.is_separator(c))
        .filter(|part| !part.is_empty())
        .map(str::to_owned)
        .collect();
    Lexical {
        anchor,
        verbatim,
        components,
    }
}

fn strip_prefix_ignore_case<'a>(text: &'a str, prefix: &str) -> Option<&'a str> {
    let head = text.get(..prefix.len())?;
    head.eq_ignore_ascii_case(prefix)
        .then(|| &text[prefix.len()..])
}

/// Takes `server\share` off the front of `rest`.
fn unc_anchor(os: Os, rest: &mut &str) -> Anchor {
    let mut parts = rest.splitn(3, |c| os.is_separator(c));
    let server = parts.next().unwrap_or_default().to_owned();
    let share = parts.next().unwrap_or_default().to_owned();
    *rest = parts.next().unwrap_or_default();
    Anchor::Unc { server, share }
}

impl Lexical {
    /// `.` dropped, `..` removing the previous component; never above the anchor.
    pub(crate) fn normalized(mut self) -> Self {
        let mut out: Vec<String> = Vec::with_capacity(self.components.len());
        for component in self.components.drain(..) {
            match component.as_str() {
                "." => {}
                ".." => {
                    if out.pop().is_none() && self.anchor == Anchor::Relative {
                        out.push(component);
                    }
                }
                _ => out.push(component),
            }
        }
        self.components = out;
        self
    }

    fn render(&self, os: Os) -> String {
        let sep = os.separator();
        let mut text = String::new();
        if self.verbatim {
            text.push_str(r"\\?\");
        }
        match &self.anchor {
            Anchor::Relative => {}
            Anchor::Root => text.push(sep),
            Anchor::Drive(letter) => {
                text.push(*letter);
                text.push(':');
                text.push(sep);
            }
            Anchor::Unc { server, share } => {
                if self.verbatim {
                    text.push_str(r"UNC\");
                } else {
                    text.push_str(r"\\");
                }
                text.push_str(server);
                text.push(sep);
                text.push_str(share);
                text.push(sep);
            }
        }
        text.push_str(&self.components.join(&sep.to_string()));
        text
    }
}

/// §6.1's normalisation for `os`, lexically: `~` expanded from `home` (an empty one is
/// unset), a relative path
/// joined to `root`, `.` and `..` resolved, separators made the OS's, the length checked.
/// On Windows a path anchored at `\` takes the drive or share of `root`.
pub fn resolve_for(
    os: Os,
    raw: &str,
    root: Option<&str>,
    home: Option<&str>,
) -> Result<String, PathError> {
    if raw.is_empty() {
        return Err(PathError::Empty);
    }
    if raw.contains('\0') {
        return Err(PathError::NulByte);
    }
    // One rule for an empty home, whoever read it: unset (see [`crate::home`]).
    let home = home.filter(|home| !home.is_empty());
    let mut path = match (home::tilde_rest(os, raw), home) {
        (Some(rest), Some(home)) => {
            let mut home = parse(os, home);
            home.components.extend(parse(os, rest).components);
            home
        }
        _ => parse(os, raw),
    };
    // Windows would read what such a path renders to differently from these rules (a
    // server alone is no share), so what is judged might not be what is opened.
    if let Anchor::Unc { server, share } = &path.anchor
        && (server.is_empty() || share.is_empty())
    {
        return Err(PathError::IncompleteShare(raw.to_owned()));
    }
    match path.anchor {
        Anchor::Relative => {
            let Some(root) = root else {
                return Err(PathError::RelativeWithoutRoot(raw.to_owned()));
            };
            let mut joined = parse(os, root);
            joined.components.append(&mut path.components);
            path = joined;
        }
        Anchor::Root if os == Os::Windows => {
            if let Some(root) = root.map(|root| parse(os, root)) {
                path.anchor = root.anchor;
                path.verbatim = root.verbatim;
            }
        }
        _ => {}
    }
    let resolved = path.normalized().render(os);
    let length = match os {
        Os::Windows => resolved.encode_utf16().count(),
        Os::MacOs | Os::OtherUnix => resolved.len(),
    };
    let limit = os.max_path_len(resolved.starts_with(r"\\?\"));
    if length > limit {
        return Err(PathError::TooLong { length, limit });
    }
    Ok(resolved)
}

/// Whether `raw` names a parent folder (`..`) anywhere, in `os`'s spelling.
pub fn climbs(os: Os, raw: &str) -> bool {
    parse(os, raw).components.iter().any(|part| part == "..")
}

/// Whether the resolved `path` lies at or below the resolved `root`, comparing whole
/// components, drive letters and share names, folding case where `os` does.
pub fn is_within(os: Os, path: &str, root: &str) -> bool {
    let (path, root) = (parse(os, path).normalized(), parse(os, root).normalized());
    let same = |a: &str, b: &str| {
        if os.folds_case() {
            a.to_lowercase() == b.to_lowercase()
        } else {
            a == b
        }
    };
    let anchors_match = match (&path.anchor, &root.anchor) {
        (
            Anchor::Unc {
                server: s1,
                share: h1,
            },
            Anchor::Unc {
                server: s2,
                share: h2,
            },
        ) => s1.eq_ignore_ascii_case(s2) && same(h1, h2),
        (a, b) => a == b,
    };
    anchors_match
        && path.components.len() >= root.components.len()
        && root
            .components
            .iter()
            .zip(&path.components)
            .all(|(want, got)| same(want, got))
}

/// `.` dropped and `..` folded, by the components of the OS this binary runs on (for paths
/// already absolute and in the OS's own spelling, e.g. a folder handed over by the OS).
pub fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// A path as people read it: on Windows without the verbatim prefix `canonicalize` adds
/// (`\\?\C:\x` → `C:\x`, `\\?\UNC\server\share` → `\\server\share`); elsewhere unchanged.
pub fn shown(os: Os, path: &str) -> std::borrow::Cow<'_, str> {
    if os != Os::Windows {
        return path.into();
    }
    if let Some(share) = path.strip_prefix(r"\\?\UNC\") {
        return format!(r"\\{share}").into();
    }
    path.strip_prefix(r"\\?\").unwrap_or(path).into()
}

#[cfg(test)]
#[path = "lexical_tests.rs"]
mod tests;
