//! Whole-component path prefix matching (local-agent-host.md §8.3): `/proj` admits
//! `/proj/a`, never `/proj2`. Case-insensitive where the platform's default volumes are
//! (macOS, Windows), so `/Proj/.ENV` cannot slip past a blocked `/proj/.env`; case-sensitive
//! elsewhere (Linux), where those are different files.

use std::path::Path;

/// Whether this platform's default file systems fold case.
pub const FOLDS_CASE: bool = cfg!(any(target_os = "macos", target_os = "windows"));

/// `path` lies at or below `prefix`, comparing whole components, folding case when
/// `fold_case` is set.
pub fn starts_with(path: &Path, prefix: &Path, fold_case: bool) -> bool {
    if !fold_case {
        return path.starts_with(prefix);
    }
    let mut components = path.components();
    prefix.components().all(|want| {
        components.next().is_some_and(|got| {
            got.as_os_str().to_string_lossy().to_lowercase()
                == want.as_os_str().to_string_lossy().to_lowercase()
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixes_match_whole_components_with_or_without_folding() {
        let cases: [(&str, &str, bool, bool); 10] = [
            ("/proj/a.txt", "/proj", false, true),
            ("/proj/a.txt", "/proj", true, true),
            ("/proj2/a.txt", "/proj", false, false),
            ("/proj2/a.txt", "/proj", true, false),
            ("/Proj/.ENV", "/proj/.env", false, false),
            ("/Proj/.ENV", "/proj/.env", true, true),
            ("/PROJ", "/proj", true, true),
            ("/pro", "/proj", true, false),
            ("/proj/sub/x", "/proj/sub", true, true),
            ("/other/proj", "/proj", true, false),
        ];
        for (path, prefix, fold, want) in cases {
            assert_eq!(
                starts_with(Path::new(path), Path::new(prefix), fold),
                want,
                "{path} under {prefix} (fold {fold})"
            );
        }
    }
}
