//! Lexical path handling per platform (local-tool-runtime.md §6.1, §8.1): separators, drive
//! letters and UNC shares, `~`, `.`/`..`, length limits and case-folding containment. Every
//! function takes the [`Os`] as a parameter and works on strings, so the Windows rules are
//! unit-tested on Linux too; [`super::resolve`] applies them for the current OS.

use super::PathError;
use super::shell::Os;

/// Where an absolute path is anchored.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Anchor {
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
struct Lexical {
    anchor: Anchor,
    /// Whether the input carried the `\\?\` long-path prefix (Windows).
    verbatim: bool,
    components: Vec<String>,
}

impl Os {
    /// The separator paths are rendered with (§6.1: Windows accepts `/` as input).
    pub fn separator(self) -> char {
        match self {
            Os::Windows => '\\',
            Os::MacOs | Os::OtherUnix => '/',
        }
    }

    /// Whether the platform's default volumes compare names case-insensitively (§6.1).
    pub fn folds_case(self) -> bool {
        matches!(self, Os::MacOs | Os::Windows)
    }

    /// The longest path the OS accepts (§6.1): 1024 bytes on macOS, 4096 on Linux (PATH_MAX),
    /// 260 UTF-16 units on Windows, 32,767 with the `\\?\` long-path prefix.
    pub fn max_path_len(self, long_path_prefix: bool) -> usize {
        match (self, long_path_prefix) {
            (Os::Windows, true) => 32_767,
            (Os::Windows, false) => 260,
            (Os::MacOs, _) => 1024,
            (Os::OtherUnix, _) => 4096,
        }
    }

    fn is_separator(self, c: char) -> bool {
        c == '/' || (self == Os::Windows && c == '\\')
    }
}

fn parse(os: Os, raw: &str) -> Lexical {
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
        } else if rest.len() >= 2
            && rest.chars().take(2).all(|c| os.is_separator(c))
            && !rest[2..].starts_with(|c| os.is_separator(c))
        {
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
    fn normalized(mut self) -> Self {
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

/// §6.1's normalisation for `os`, lexically: `~` expanded from `home`, a relative path
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
    let tilde_rest = raw
        .strip_prefix('~')
        .filter(|rest| rest.is_empty() || rest.starts_with(|c| os.is_separator(c)));
    let mut path = match (tilde_rest, home) {
        (Some(rest), Some(home)) => {
            let mut home = parse(os, home);
            home.components.extend(parse(os, rest).components);
            home
        }
        _ => parse(os, raw),
    };
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

#[cfg(test)]
mod tests {
    use super::*;

    fn win(raw: &str, root: Option<&str>) -> Result<String, PathError> {
        resolve_for(Os::Windows, raw, root, Some(r"C:\Users\ada"))
    }

    #[test]
    fn windows_accepts_both_separators_and_renders_backslashes() {
        let root = Some(r"C:\work\proj");
        let cases = [
            (r"src\main.rs", r"C:\work\proj\src\main.rs"),
            ("src/main.rs", r"C:\work\proj\src\main.rs"),
            (r"C:/work/proj/./a\..\b.txt", r"C:\work\proj\b.txt"),
            (r"d:\data\x.csv", r"D:\data\x.csv"),
            (r"\tmp\x", r"C:\tmp\x"),
            (r"~\notes.txt", r"C:\Users\ada\notes.txt"),
            ("~/notes.txt", r"C:\Users\ada\notes.txt"),
            (r"C:\..\..\x", r"C:\x"),
            (r"\\server\share\dir\..\f.txt", r"\\server\share\f.txt"),
            ("//server/share/f.txt", r"\\server\share\f.txt"),
            (r"\\?\C:\very\long\..\p", r"\\?\C:\very\p"),
            (r"\\?\UNC\srv\sh\a", r"\\?\UNC\srv\sh\a"),
        ];
        for (raw, want) in cases {
            assert_eq!(win(raw, root).as_deref(), Ok(want), "{raw}");
        }
        // A path anchored at `\` takes the project folder's share.
        assert_eq!(
            win(r"\x", Some(r"\\srv\sh\proj")).as_deref(),
            Ok(r"\\srv\sh\x")
        );
        assert_eq!(
            win("a", None),
            Err(PathError::RelativeWithoutRoot("a".into()))
        );
    }

    #[test]
    fn unix_treats_backslashes_as_ordinary_characters() {
        let root = Some("/work/proj");
        let unix = |raw| resolve_for(Os::OtherUnix, raw, root, Some("/home/ada"));
        assert_eq!(unix(r"a\b").as_deref(), Ok(r"/work/proj/a\b"));
        assert_eq!(unix("C:/x").as_deref(), Ok("/work/proj/C:/x"));
        assert_eq!(unix("~/n.txt").as_deref(), Ok("/home/ada/n.txt"));
        assert_eq!(unix("~other/n").as_deref(), Ok("/work/proj/~other/n"));
        assert_eq!(unix("/../../etc").as_deref(), Ok("/etc"));
        assert_eq!(unix("./").as_deref(), Ok("/work/proj"));
    }

    #[test]
    fn paths_over_the_os_limit_are_refused() {
        let name = "a".repeat(250);
        let long = format!(r"C:\{name}\{name}");
        assert!(matches!(
            win(&long, None),
            Err(PathError::TooLong { limit: 260, .. })
        ));
        let verbatim = format!(r"\\?\{long}");
        assert_eq!(win(&verbatim, None).as_deref(), Ok(verbatim.as_str()));
        let mac = format!("/{}", "b/".repeat(600));
        assert!(matches!(
            resolve_for(Os::MacOs, &mac, None, None),
            Err(PathError::TooLong { limit: 1024, .. })
        ));
        assert!(resolve_for(Os::OtherUnix, &mac, None, None).is_ok());
        let error = win(&long, None).unwrap_err().to_string();
        assert!(error.contains("260"), "{error}");
    }

    #[test]
    fn containment_compares_whole_components_and_folds_case_on_windows_and_macos() {
        let cases: [(Os, &str, &str, bool); 14] = [
            (Os::Windows, r"C:\Work\Proj\a.txt", r"c:\work\proj", true),
            (Os::Windows, "c:/work/proj", r"C:\work\proj", true),
            (Os::Windows, r"C:\work\proj2\a", r"C:\work\proj", false),
            (Os::Windows, r"D:\work\proj\a", r"C:\work\proj", false),
            (Os::Windows, r"\\SRV\Share\p\a", r"\\srv\share\p", true),
            (Os::Windows, r"\\srv\other\p\a", r"\\srv\share\p", false),
            (Os::Windows, r"C:\work\proj\..\x", r"C:\work\proj", false),
            (Os::MacOs, "/Users/ada/Proj/a", "/Users/ada/proj", true),
            (Os::MacOs, "/Users/ada/proj2", "/Users/ada/proj", false),
            (Os::OtherUnix, "/home/ada/Proj/a", "/home/ada/proj", false),
            (Os::OtherUnix, "/home/ada/proj/a", "/home/ada/proj", true),
            (Os::OtherUnix, "/home/ada/proj", "/home/ada/proj", true),
            (Os::OtherUnix, "/home/ada", "/home/ada/proj", false),
            (Os::OtherUnix, r"/p\q", "/p", false),
        ];
        for (os, path, root, want) in cases {
            assert_eq!(is_within(os, path, root), want, "{os:?}: {path} in {root}");
        }
    }

    #[test]
    fn climbing_is_spotted_in_either_spelling_on_windows_only() {
        assert!(climbs(Os::Windows, r"..\x"));
        assert!(climbs(Os::Windows, "a/../x"));
        assert!(!climbs(Os::OtherUnix, r"..\x"));
        assert!(climbs(Os::OtherUnix, "../x"));
        assert!(!climbs(Os::Windows, r"a\..b\x"));
    }
}
