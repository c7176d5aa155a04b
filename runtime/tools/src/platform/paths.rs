//! Lexical path handling per platform (local-tool-runtime.md §6.1, §8.1) lives in
//! `agent-path-rules`, shared with the policy enforcer so both judge the same file;
//! [`super::resolve`] applies it for the current OS.

pub(crate) use agent_path_rules::{climbs, is_within, resolve_for};
