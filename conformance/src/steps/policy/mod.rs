//! Steps of the policy enforcer (local-agent-host.md §8): the grants a scenario starts from and
//! the rules and attacks on them. Policy steps edit the Session Service fake's bundle template,
//! so they come before "a running session".

pub(crate) mod grants;
pub(crate) mod rules;
