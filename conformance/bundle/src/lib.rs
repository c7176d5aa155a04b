//! The kit's files built into the `conformance` binary, so that a kit installed with
//! `cargo install` certifies from any directory of a machine without this repository:
//! `features/` (the scenarios, `requirements.toml`, `not-certified.toml`), the runtime
//! manifests of `conformance/manifests/` and the examples of `conformance/examples/`. The JSON
//! Schemas are built into `agent-schemas` already.

use std::io;
use std::path::Path;

include!(concat!(env!("OUT_DIR"), "/bundle.rs"));

/// The bytes of one bundled file, e.g. `manifests/reference.toml`.
pub fn file(name: &str) -> Option<&'static [u8]> {
    FILES
        .binary_search_by(|(path, _)| (*path).cmp(name))
        .ok()
        .map(|at| FILES[at].1)
}

/// The bundled files under `dir/` (e.g. `manifests`), as (name without `dir/`, bytes).
pub fn files_under(dir: &str) -> impl Iterator<Item = (&'static str, &'static [u8])> {
    let prefix = format!("{dir}/");
    FILES.iter().filter_map(move |(path, bytes)| {
        path.strip_prefix(prefix.as_str())
            .map(|rest| (rest, *bytes))
    })
}

/// Writes the bundled files under `dir/` into `target` (created), keeping their tree.
pub fn extract(dir: &str, target: &Path) -> io::Result<()> {
    for (name, bytes) in files_under(dir) {
        let path = target.join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(&path, bytes)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bundle_holds_the_catalogue_the_features_and_the_manifests() {
        assert!(file("features/requirements.toml").is_some());
        assert!(file("manifests/reference.toml").is_some());
        assert!(files_under("features").any(|(name, _)| name.ends_with(".feature")));
        assert!(VERSION.contains(CATALOGUE_FINGERPRINT));
        const { assert!(CATALOGUE_REQUIREMENTS > 0) };
        let dir = std::env::temp_dir().join(format!("bundle-test-{}", std::process::id()));
        extract("manifests", &dir).unwrap();
        assert!(dir.join("reference.toml").is_file());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
