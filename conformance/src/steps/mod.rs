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

pub(crate) mod agent_loop;
pub(crate) mod approval;
pub(crate) mod audit;
pub(crate) mod errors;
pub(crate) mod events;
pub(crate) mod extensions;
pub(crate) mod faults;
pub(crate) mod hardening;
pub(crate) mod llm;
pub(crate) mod policy;
pub(crate) mod recovery;
pub(crate) mod redaction;
pub(crate) mod rpc;
pub(crate) mod runtime;
pub(crate) mod sandbox_host;
pub(crate) mod session;
pub(crate) mod support;
pub(crate) mod task;
pub(crate) mod tools;
