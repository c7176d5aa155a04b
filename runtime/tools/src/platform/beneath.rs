//! Opening beneath the project folder, so a path judged inside stays inside: the shared
//! resolution of `agent-beneath` (the sandbox host's file operations use the same one).

pub(crate) use agent_beneath::{Access, Escaped, escaped, open, remove_file};
