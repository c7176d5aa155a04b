//! OS primitives the tools share (local-tool-runtime.md §6): path resolution here, shell
//! resolution in [`shell`], running a program as its own bounded process tree in [`run`]
//! (its output kept by [`capture`], the tree ended by [`process`]), the addresses a
//! connection may reach in [`ssrf`], the image formats sent to the model in [`image`].

pub(crate) mod beneath;
pub(crate) mod capture;
pub mod child_env;
pub(crate) mod encoding;
pub(crate) mod image;
pub(crate) mod paths;
pub(crate) mod process;
pub(crate) mod replace;
pub(crate) mod run;
pub(crate) mod shell;
pub(crate) mod ssrf;

pub(crate) use shell::Os;

use std::path::{Path, PathBuf};

pub(crate) use agent_path_rules::{PathError, normalize};

/// Expands `~`, makes the path absolute against `root`, normalises `.`, `..` and the
/// separators, and checks the OS's length limit (local-tool-runtime.md §6.1,
/// `agent-path-rules`, the rules the policy enforcer judges by). Symlinks are left for the
/// file system to follow.
pub(crate) fn resolve(raw: &str, root: Option<&Path>) -> Result<PathBuf, PathError> {
    resolve_in(raw, root, home().as_deref())
}

/// [`resolve`] with `~` pointing at `home` (an empty one is unset). Public only for the test
/// that holds the enforcer's path decisions equal to the tools' (`runtime/cli/tests/
/// path_rules`); not an API.
#[doc(hidden)]
pub fn resolve_in(
    raw: &str,
    root: Option<&Path>,
    home: Option<&Path>,
) -> Result<PathBuf, PathError> {
    let root = root.map(Path::to_string_lossy);
    let home = home.map(Path::to_string_lossy);
    paths::resolve_for(Os::current(), raw, root.as_deref(), home.as_deref()).map(PathBuf::from)
}

/// [`resolve`] plus the defence-in-depth rule of local-tool-runtime.md §8.1.2 for the file
/// tools: a path that climbs out of the project folder with `..` is refused (an
/// absolute path elsewhere is the policy enforcer's call, not ours). Containment folds case
/// where the OS does, so `..\PROJ\x` stays inside `C:\work\proj` on Windows.
pub(crate) fn resolve_within(raw: &str, root: Option<&Path>) -> Result<PathBuf, PathError> {
    let os = Os::current();
    let resolved = resolve(raw, root)?;
    let Some(root) = root.filter(|_| paths::climbs(os, raw)) else {
        return Ok(resolved);
    };
    let root = normalize(root);
    if paths::is_within(os, &resolved.to_string_lossy(), &root.to_string_lossy()) {
        Ok(resolved)
    } else {
        Err(PathError::EscapesWorkspace {
            raw: raw.to_owned(),
            root: root.display().to_string(),
        })
    }
}

/// The user's home directory, where a command runs when the session has no project folder
/// (an empty home variable is unset, as for `~`: [`agent_path_rules::home`]).
pub(crate) fn home() -> Option<PathBuf> {
    agent_path_rules::home::home()
}

/// Why a folder a call names cannot be worked in.
#[derive(Debug)]
pub(crate) enum DirError {
    NotADirectory,
    NotFound,
    /// It exists but cannot be looked at (permissions, a broken mount, …).
    Unusable(std::io::Error),
}

/// Whether `dir` is an existing directory (links followed), and if not, why: the check
/// behind a git repository folder and a RunCommand `cwd`.
pub(crate) fn existing_dir(dir: &Path) -> Result<(), DirError> {
    match std::fs::metadata(dir) {
        Ok(metadata) if metadata.is_dir() => Ok(()),
        Ok(_) => Err(DirError::NotADirectory),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Err(DirError::NotFound),
        Err(error) => Err(DirError::Unusable(error)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_paths_resolve_against_the_root_and_dots_collapse() {
        let root = Path::new("/work/proj");
        assert_eq!(
            resolve("src/../a.txt", Some(root)).unwrap(),
            PathBuf::from("/work/proj/a.txt")
        );
        assert_eq!(
            resolve("/etc/./hosts", None).unwrap(),
            PathBuf::from("/etc/hosts")
        );
        assert_eq!(
            resolve("a", None),
            Err(PathError::RelativeWithoutRoot("a".into()))
        );
        assert_eq!(resolve("a\0b", Some(root)), Err(PathError::NulByte));
        assert_eq!(resolve("", Some(root)), Err(PathError::Empty));
    }

    #[test]
    fn only_dot_dot_paths_that_leave_the_project_folder_are_refused() {
        let root = Path::new("/work/proj");
        assert_eq!(
            resolve_within("src/../a.txt", Some(root)).unwrap(),
            PathBuf::from("/work/proj/a.txt")
        );
        assert_eq!(
            resolve_within("/etc/hosts", Some(root)).unwrap(),
            PathBuf::from("/etc/hosts")
        );
        assert_eq!(
            resolve_within("/work/proj/../../etc/x", None).unwrap(),
            PathBuf::from("/etc/x")
        );
        let error = resolve_within("../other/a.txt", Some(root)).unwrap_err();
        assert!(matches!(error, PathError::EscapesWorkspace { .. }));
        assert!(error.to_string().contains("../other/a.txt"), "{error}");
        assert!(matches!(
            resolve_within("/work/proj/../projX/a", Some(root)),
            Err(PathError::EscapesWorkspace { .. })
        ));
    }
}
