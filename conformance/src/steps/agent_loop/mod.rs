//! Steps of the agent loop (local-agent-host.md §4): step accounting and limits, cancellation,
//! parallel tool calls, and the message thread.

pub mod cancel;
pub mod parallel;
pub mod steps;
pub mod thread;
