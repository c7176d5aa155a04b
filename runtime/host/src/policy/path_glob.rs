//! Glob entries in `allowedPaths`/`blockedPaths` (`*.pem`, `secrets/**/*.key`), which the
//! real service sends next to plain prefixes (they used to match nothing).
//!
//! - A pattern without `/` names a file or folder anywhere: it is matched against every
//!   component of the path, so `*.pem` covers `/proj/certs/server.pem` and everything inside
//!   a folder `keys.pem/`.
//! - A pattern with `/` is a path pattern: a relative one is anchored at the workspace root
//!   (no root: it matches nothing, like a relative prefix); it covers what it matches and
//!   everything below. `*` and `?` stay inside one component, `**` crosses them.
//! - Case folds where the platform's file systems do ([`path_match::FOLDS_CASE`]).
//!
//! A pattern that does not compile matches nothing here; [`invalid`] lets session start
//! report it, and lets the enforcer fail closed on it: such a `blockedPaths` entry blocks
//! every path of its capability (a mistyped block must not open what it meant to close).

use std::path::Path;

use globset::{GlobBuilder, GlobMatcher};

use super::path_match::FOLDS_CASE;

/// Whether an entry is a glob pattern rather than a path prefix.
pub fn is_glob(entry: &str) -> bool {
    entry.contains(['*', '?', '['])
}

fn compile(pattern: &str) -> Result<GlobMatcher, globset::Error> {
    GlobBuilder::new(pattern)
        .literal_separator(true)
        .case_insensitive(FOLDS_CASE)
        .backslash_escape(!cfg!(windows))
        .build()
        .map(|glob| glob.compile_matcher())
}

/// Why `entry` cannot be used as a glob, if it is one and does not compile.
pub fn invalid(entry: &str) -> Option<String> {
    if !is_glob(entry) {
        return None;
    }
    compile(entry).err().map(|error| error.to_string())
}

/// A readable message per glob entry of the bundle's path lists that cannot be used.
pub fn problems(bundle: &agent_protocol::policy::PolicyBundle) -> Vec<String> {
    let mut found = Vec::new();
    for entry in &bundle.capabilities {
        let lists = [
            ("allowedPaths", &entry.allowed_paths, "it matches nothing"),
            (
                "blockedPaths",
                &entry.blocked_paths,
                "it blocks every path until the policy is corrected",
            ),
        ];
        for (field, list, effect) in lists {
            for pattern in list.iter().flatten() {
                if let Some(error) = invalid(pattern) {
                    found.push(format!(
                        "{} {field} entry {pattern:?} is not a usable glob pattern ({error}); {effect}.",
                        entry.name
                    ));
                }
            }
        }
    }
    found
}

/// Whether `path` (absolute, resolved) is matched by the glob `entry`.
pub fn matches(path: &Path, entry: &str, root: Option<&Path>) -> bool {
    let entry = entry.trim();
    let separated = entry.contains('/') || (cfg!(windows) && entry.contains('\\'));
    if !separated {
        let Ok(glob) = compile(entry) else {
            return false;
        };
        return path
            .components()
            .any(|component| glob.is_match(Path::new(component.as_os_str())));
    }
    let anchored = if Path::new(entry).is_absolute() {
        entry.to_owned()
    } else {
        match root {
            Some(root) => format!(
                "{}/{}",
                root.to_string_lossy().trim_end_matches('/'),
                entry.trim_start_matches("./")
            ),
            None => return false,
        }
    };
    let Ok(glob) = compile(&anchored) else {
        return false;
    };
    path.ancestors().any(|ancestor| glob.is_match(ancestor))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn glob_entries_match_files_anywhere_or_anchored_paths() {
        let root = Some(Path::new("/proj"));
        let cases = [
            ("/proj/certs/server.pem", "*.pem", true),
            ("/proj/server.pem.txt", "*.pem", false),
            ("/proj/keys.pem/inner", "*.pem", true),
            ("/home/u/.ssh/id_rsa", "id_*", true),
            ("/proj/src/main.rs", "*.pem", false),
            ("/proj/secrets/a/b.key", "secrets/**/*.key", true),
            ("/proj/other/secrets/b.key", "secrets/**/*.key", false),
            ("/proj/secrets/dir/file", "secrets/*", true),
            ("/etc/ssl/x.crt", "/etc/**/*.crt", true),
            ("/proj/.env.local", ".env*", true),
        ];
        for (path, entry, want) in cases {
            assert_eq!(
                matches(Path::new(path), entry, root),
                want,
                "{path} ~ {entry}"
            );
        }
        assert!(!matches(Path::new("/proj/a/b.key"), "a/*.key", None));
        assert!(invalid("[unclosed").is_some());
        assert!(invalid("*.pem").is_none());
        assert!(invalid("/plain/prefix").is_none());
    }
}
