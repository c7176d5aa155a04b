//! The path rules of the runtime, in one place: the policy enforcer (agent host) judges a
//! path and the tool runtime acts on it by the same functions, since any difference between
//! the two is a file the policy never judged.
//!
//! - [`resolve_for`]: lexical normalisation (local-tool-runtime.md §6.1) — `~` from the home
//!   folder ([`home`]: an empty one is unset), a relative path joined to the project folder,
//!   `.`/`..` folded, the OS's separators, its length limit;
//! - [`is_within`]: whether a path lies under a granted root, on whole components, folding
//!   case where the OS does;
//! - [`glob`]: `allowedPaths`/`blockedPaths` glob entries.
//!
//! Every rule takes the [`Os`] as an argument and never asks the machine, so the Windows
//! and POSIX rules are both tested anywhere; only [`Os::current`] and [`home::home`] read
//! the machine, for callers to pass in. Symlinks are the callers' business (the enforcer
//! resolves them, the tools open beneath a folder handle).

pub mod glob;
pub mod home;
mod lexical;
mod os;

pub use lexical::{PathError, climbs, is_within, normalize, resolve_for, shown};
pub use os::Os;
