//! Steps of the hardening profile: what a hostile model cannot reach even where the spec is
//! silent, judged from outside the runtime.

pub mod analyser;
#[cfg(target_os = "linux")]
pub mod escapes;
pub mod files;
pub mod sandbox;
