//! Glob entries in `allowedPaths`/`blockedPaths` (`*.pem`, `secrets/**/*.key`), which the
//! real service sends next to plain prefixes.
//!
//! - A pattern without a separator names a file or folder anywhere: it is matched against
//!   every component of the path, so `*.pem` covers `/proj/certs/server.pem` and everything
//!   inside a folder `keys.pem/`.
//! - A pattern with a separator is a path pattern: a relative one is anchored at the project
//!   folder (no folder: it matches nothing, like a relative prefix); it covers what it
//!   matches and everything below. `*` and `?` stay inside one component, `**` crosses them.
//! - Case folds where the OS's file systems do; on Windows `\` separates (it escapes
//!   elsewhere).
//!
//! Paths and patterns are matched in one spelling with `/` separators, so the outcome does
//! not depend on the OS the matcher runs on (globset reads `\` as a separator on Windows
//! only). A pattern that does not compile matches nothing here; [`invalid`] lets callers
//! report it and fail closed on it.

use globset::{GlobBuilder, GlobMatcher};

use crate::Os;
use crate::lexical::{Anchor, Lexical, parse};

/// Whether an entry is a glob pattern rather than a path prefix.
pub fn is_glob(entry: &str) -> bool {
    entry.contains(['*', '?', '['])
}

fn compile(os: Os, pattern: &str) -> Result<GlobMatcher, globset::Error> {
    let windows = os == Os::Windows;
    let pattern = if windows {
        pattern.replace('\\', "/")
    } else {
        pattern.to_owned()
    };
    GlobBuilder::new(&pattern)
        .literal_separator(true)
        .case_insensitive(os.folds_case())
        .backslash_escape(!windows)
        .build()
        .map(|glob| glob.compile_matcher())
}

/// Why `entry` cannot be used as a glob on `os`, if it is one and does not compile.
pub fn invalid(os: Os, entry: &str) -> Option<String> {
    if !is_glob(entry) {
        return None;
    }
    compile(os, entry).err().map(|error| error.to_string())
}

/// The anchor and the first `count` components in `/` spelling.
fn slashed(path: &Lexical, count: usize) -> String {
    let mut text = String::new();
    if path.verbatim {
        text.push_str("//?/");
    }
    match &path.anchor {
        Anchor::Relative => {}
        Anchor::Root => text.push('/'),
        Anchor::Drive(letter) => {
            text.push(*letter);
            text.push_str(":/");
        }
        Anchor::Unc { server, share } => {
            text.push_str(if path.verbatim { "UNC/" } else { "//" });
            text.push_str(server);
            text.push('/');
            text.push_str(share);
            text.push('/');
        }
    }
    text.push_str(&path.components[..count].join("/"));
    text
}

/// Whether `path` (absolute and normalised, in `os`'s spelling) is matched by the glob
/// `entry`; a relative path pattern is anchored at `root`.
pub fn matches(os: Os, path: &str, entry: &str, root: Option<&str>) -> bool {
    let entry = entry.trim();
    let path = parse(os, path).normalized();
    if !entry.contains(|c| os.is_separator(c)) {
        let Ok(glob) = compile(os, entry) else {
            return false;
        };
        return path
            .components
            .iter()
            .any(|component| glob.is_match(component));
    }
    let anchored = if parse(os, entry).anchor == Anchor::Relative {
        let Some(root) = root else {
            return false;
        };
        let root = parse(os, root).normalized();
        let relative = entry.trim_start_matches("./");
        let relative = if os == Os::Windows {
            relative.trim_start_matches(r".\")
        } else {
            relative
        };
        format!(
            "{}/{relative}",
            slashed(&root, root.components.len()).trim_end_matches('/')
        )
    } else {
        entry.to_owned()
    };
    let Ok(glob) = compile(os, &anchored) else {
        return false;
    };
    (0..=path.components.len())
        .rev()
        .any(|count| glob.is_match(slashed(&path, count)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn glob_entries_match_files_anywhere_or_anchored_paths() {
        let root = Some("/proj");
        let cases = [
            ("/proj/certs/server.pem", "*.pem", true),
            ("/proj/server.pem.txt", "*.pem", false),
            ("/proj/keys.pem/inner", "*.pem", true),
            ("/home/u/.ssh/id_rsa", "id_*", true),
            ("/proj/src/main.rs", "*.pem", false),
            ("/proj/secrets/a/b.key", "secrets/**/*.key", true),
            ("/proj/other/secrets/b.key", "secrets/**/*.key", false),
            ("/proj/secrets/dir/file", "secrets/*", true),
            ("/proj/secrets/dir/file", "./secrets/*", true),
            ("/etc/ssl/x.crt", "/etc/**/*.crt", true),
            ("/proj/.env.local", ".env*", true),
            ("/proj/KEY.PEM", "*.pem", false),
        ];
        for (path, entry, want) in cases {
            assert_eq!(
                matches(Os::OtherUnix, path, entry, root),
                want,
                "{path} ~ {entry}"
            );
        }
        assert!(!matches(Os::OtherUnix, "/proj/a/b.key", "a/*.key", None));
        assert!(invalid(Os::OtherUnix, "[unclosed").is_some());
        assert!(invalid(Os::OtherUnix, "*.pem").is_none());
        assert!(invalid(Os::OtherUnix, "/plain/prefix").is_none());
    }

    #[test]
    fn windows_globs_fold_case_and_take_either_separator() {
        let root = Some(r"C:\Work\Proj");
        let cases = [
            (r"C:\work\proj\certs\SERVER.PEM", "*.pem", true),
            (r"C:\work\proj\secrets\a\b.key", r"secrets\**\*.key", true),
            (r"C:\work\proj\Secrets\a\b.KEY", "secrets/**/*.key", true),
            (
                r"C:\work\proj\other\secrets\b.key",
                r"secrets\**\*.key",
                false,
            ),
            (r"c:\etc\ssl\x.crt", r"C:\etc\**\*.crt", true),
            (r"D:\etc\ssl\x.crt", r"C:\etc\**\*.crt", false),
            (r"\\srv\share\p\id_rsa", "id_*", true),
            (r"\\SRV\share\p\k.pem", "//srv/share/**/*.pem", true),
        ];
        for (path, entry, want) in cases {
            assert_eq!(
                matches(Os::Windows, path, entry, root),
                want,
                "{path} ~ {entry}"
            );
        }
        // `\` escapes on unix, so the same text names one odd component there.
        assert!(!matches(
            Os::OtherUnix,
            "/proj/secrets/a/b.key",
            r"secrets\**\*.key",
            Some("/proj")
        ));
        assert!(matches(Os::MacOs, "/Proj/KEY.PEM", "*.pem", None));
    }
}
