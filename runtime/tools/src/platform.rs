//! OS primitives the tools share (local-tool-runtime.md §6): path resolution today; shell
//! resolution and process-tree kill come with the shell tool.

use std::path::{Component, Path, PathBuf};

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
}

/// Expands `~`, makes the path absolute against `root`, and normalises `.` and `..`
/// (local-tool-runtime.md §6.1). Symlinks are left for the file system to follow.
pub fn resolve(raw: &str, root: Option<&Path>) -> Result<PathBuf, PathError> {
    if raw.is_empty() {
        return Err(PathError::Empty);
    }
    if raw.contains('\0') {
        return Err(PathError::NulByte);
    }
    let expanded = match (raw.strip_prefix("~/"), home()) {
        (Some(rest), Some(home)) => home.join(rest),
        _ if raw == "~" => home().unwrap_or_else(|| PathBuf::from(raw)),
        _ => PathBuf::from(raw),
    };
    let absolute = if expanded.is_absolute() {
        expanded
    } else {
        match root {
            Some(root) => root.join(expanded),
            None => return Err(PathError::RelativeWithoutRoot(raw.to_owned())),
        }
    };
    Ok(normalize(&absolute))
}

fn home() -> Option<PathBuf> {
    std::env::var_os(if cfg!(windows) { "USERPROFILE" } else { "HOME" }).map(PathBuf::from)
}

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
}
