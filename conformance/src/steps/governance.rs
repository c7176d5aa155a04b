//! Steps for the LLM Gateway client, the policy enforcer and approvals
//! (local-agent-host.md §6, §8, §10).
