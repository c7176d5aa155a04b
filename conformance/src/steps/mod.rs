//! Step definitions, in the domain's words. The plumbing (ids, JSON, fakes) lives here so
//! the `.feature` files can read like the spec.
//!
//! Every step returns [`StepResult`]: a failure carries its whole context chain, which
//! cucumber prints as the step's error (a panic in a step loses its file, line and context).

/// `ensure!` for steps: fails with a formatted message, converting with `.into()` so it works
/// in functions returning [`StepResult`] as well as `anyhow::Result` (anyhow's own macros
/// return `anyhow::Error` unconverted).
macro_rules! check {
    ($cond:expr, $($arg:tt)+) => {
        if !$cond {
            return Err(::anyhow::anyhow!($($arg)+).into());
        }
    };
}

/// `bail!` for steps (see [`check!`]).
macro_rules! fail {
    ($($arg:tt)+) => {
        return Err(::anyhow::anyhow!($($arg)+).into())
    };
}

pub mod agent_loop;
pub mod approval;
pub mod audit;
pub mod errors;
pub mod events;
pub mod extensions;
pub mod faults;
pub mod hardening;
pub mod llm;
pub mod policy;
pub mod recovery;
pub mod redaction;
pub mod rpc;
pub mod runtime;
pub mod sandbox_host;
pub mod session;
pub mod support;
pub mod task;
pub mod tools;
