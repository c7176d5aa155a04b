//! Steps of the hardening profile: what a hostile model cannot reach even where the spec is
//! silent, judged from outside the runtime.

pub(crate) mod analyser;
#[cfg(target_os = "linux")]
pub(crate) mod escapes;
pub(crate) mod files;
pub(crate) mod sandbox;
