//! Steps of the agent loop (local-agent-host.md §4): step accounting and limits, cancellation,
//! parallel tool calls, and the message thread.

pub(crate) mod cancel;
pub(crate) mod parallel;
pub(crate) mod steps;
pub(crate) mod thread;
