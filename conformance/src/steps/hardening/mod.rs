//! Steps of the hardening profile: what a hostile model cannot reach even where the spec is
//! silent, judged from outside the runtime.

pub mod analyser;
pub mod files;
pub mod sandbox;
