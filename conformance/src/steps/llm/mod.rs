//! Steps about the model (local-agent-host.md §6; INTEROP.md §2): scripting its answers, the
//! gateway's failures, the requests it received and the system prompt.

pub(crate) mod gateway;
pub(crate) mod prompt;
pub(crate) mod requests;
pub(crate) mod script;
