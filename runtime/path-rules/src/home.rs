//! `~`: the one rule for where it points. An empty home variable counts as unset, so `~`
//! then stays an ordinary name: read as a path, the empty value would turn `~/x` into the
//! relative `x`, a different file from the one a reader of `~/x` expects — and, when the two
//! sides of the runtime read it differently, a file other than the one the policy judged.

use std::ffi::OsStr;
use std::path::PathBuf;

use crate::Os;

/// The home folder a value of the home variable names; `None` when unset or empty.
pub fn home_from(value: Option<&OsStr>) -> Option<PathBuf> {
    value.filter(|value| !value.is_empty()).map(PathBuf::from)
}

/// This process's home folder (`HOME`; `USERPROFILE` on Windows), by [`home_from`]'s rule.
pub fn home() -> Option<PathBuf> {
    home_from(std::env::var_os(Os::current().home_variable()).as_deref())
}

/// `rest` when `raw` is `~` or starts with `~` and a separator of `os` (`~user/…` is an
/// ordinary relative name).
pub fn tilde_rest(os: Os, raw: &str) -> Option<&str> {
    raw.strip_prefix('~')
        .filter(|rest| rest.is_empty() || rest.starts_with(|c| os.is_separator(c)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_home_counts_as_unset() {
        assert_eq!(home_from(None), None);
        assert_eq!(home_from(Some(OsStr::new(""))), None);
        assert_eq!(
            home_from(Some(OsStr::new("/home/ada"))),
            Some(PathBuf::from("/home/ada"))
        );
    }

    #[test]
    fn only_a_leading_tilde_alone_or_before_a_separator_is_home() {
        assert_eq!(tilde_rest(Os::OtherUnix, "~"), Some(""));
        assert_eq!(tilde_rest(Os::OtherUnix, "~/.ssh"), Some("/.ssh"));
        assert_eq!(tilde_rest(Os::OtherUnix, r"~\x"), None);
        assert_eq!(tilde_rest(Os::Windows, r"~\x"), Some(r"\x"));
        assert_eq!(tilde_rest(Os::Windows, "~other/x"), None);
        assert_eq!(tilde_rest(Os::OtherUnix, "a/~/x"), None);
    }
}
