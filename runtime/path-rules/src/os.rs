//! The operating-system families the spec distinguishes, and what each means for paths.

/// The operating-system families the spec distinguishes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Os {
    MacOs,
    Windows,
    /// Linux and the other unixes: not in the spec, treated like macOS without zsh as default.
    OtherUnix,
}

impl Os {
    /// The OS this binary was built for: the only place the rules learn it.
    pub fn current() -> Self {
        if cfg!(target_os = "macos") {
            Os::MacOs
        } else if cfg!(windows) {
            Os::Windows
        } else {
            Os::OtherUnix
        }
    }

    /// The separator paths are rendered with (local-tool-runtime.md §6.1: Windows accepts
    /// `/` as input).
    pub fn separator(self) -> char {
        match self {
            Os::Windows => '\\',
            Os::MacOs | Os::OtherUnix => '/',
        }
    }

    /// Whether `c` separates components: `/` everywhere, `\` on Windows too.
    pub fn is_separator(self, c: char) -> bool {
        c == '/' || (self == Os::Windows && c == '\\')
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

    /// The environment variable naming the user's home folder, where `~` points.
    pub fn home_variable(self) -> &'static str {
        match self {
            Os::Windows => "USERPROFILE",
            Os::MacOs | Os::OtherUnix => "HOME",
        }
    }
}
