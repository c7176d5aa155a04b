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
pub mod baseline;
pub mod builtin;
pub mod cli;
pub mod config;
pub mod contract;
pub mod crash;
pub mod driver;
pub mod env;
pub mod ledger;
pub mod mutant;
pub mod proxy;
pub mod report;
pub mod runner;
pub mod runtime_manifest;
pub mod selection;
pub mod steps;
pub mod validation;
pub mod variance;
pub mod world;

pub use conformance_catalogue as catalogue;
pub use driver::{RuntimeCommand, RuntimeDriver, Transport};
pub use report::Outcome;
pub use runner::{RunOptions, run};
pub use world::ConformanceWorld;
