//! Steps for the agent loop, both state machines, cancellation and the thread
//! (local-agent-host.md §3–§5).
