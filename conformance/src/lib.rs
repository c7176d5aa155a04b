//! The conformance kit: certifies any agent runtime — the reference one or another team's,
//! in any language — from outside its process boundary.
//!
//! - [`driver`] spawns a runtime with the contract environment and speaks JSON-RPC over its
//!   stdio, validating every line it writes against `agent-schemas`;
//! - [`world`] and [`steps`] are the cucumber World and step vocabulary the `features/` use;
//! - [`runner::run`] runs the features and writes the reports ([`report`]);
//! - [`catalogue`] reads the requirement catalogue (shared verbatim with `xtask`).
//!
//! The kit never depends on the reference runtime's crates: it sees a runtime only as a
//! process, and messages only as JSON checked against the schemas.

pub mod adopt;
mod baseline;
pub mod builtin;
pub mod cli;
mod config;
mod contract;
pub mod crash;
mod driver;
mod env;
mod ledger;
pub mod mutant;
mod proxy;
pub mod report;
pub mod runner;
pub mod runtime_manifest;
mod selection;
mod steps;
mod validation;
pub mod variance;
mod world;

pub use conformance_catalogue as catalogue;
pub use driver::launch::{RuntimeCommand, Transport};
pub use report::Outcome;
pub use runner::{RunOptions, run};
