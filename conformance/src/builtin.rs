//! The kit's own files as built into the binary (`conformance-bundle`): without
//! `--features DIR` a run certifies against the built-in `features/` and catalogue, written
//! once per process into a temp dir (cucumber and the catalogue read files), and
//! `--manifest NAME` finds a built-in runtime manifest (`reference`, `variance`, `windows`)
//! when no file of that name exists. So an installed kit needs nothing of this repository.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use anyhow::Context;

use crate::runtime_manifest::RuntimeManifest;

pub use conformance_bundle::{CATALOGUE_FINGERPRINT, CATALOGUE_REQUIREMENTS, VERSION};

/// The extracted `features/`, kept for the life of the process (see [`cleanup`]).
static FEATURES: Mutex<Option<tempfile::TempDir>> = Mutex::new(None);

/// Where a built-in features tree is written: its name says what it is in reports.
const DIR_PREFIX: &str = "conformance-builtin-";

/// The built-in `features/` directory, written on first use.
pub fn features_dir() -> anyhow::Result<PathBuf> {
    let mut slot = FEATURES
        .lock()
        .map_err(|_| anyhow::anyhow!("the built-in features' lock is poisoned"))?;
    if let Some(dir) = slot.as_ref() {
        return Ok(dir.path().join("features"));
    }
    let dir = tempfile::Builder::new()
        .prefix(DIR_PREFIX)
        .tempdir()
        .context("cannot create a temp dir for the built-in features")?;
    let features = dir.path().join("features");
    conformance_bundle::extract("features", &features).with_context(|| {
        format!(
            "cannot write the built-in features to {}",
            features.display()
        )
    })?;
    *slot = Some(dir);
    Ok(features)
}

/// Removes the written features (statics are never dropped). Call at the end of `main`.
pub fn cleanup() {
    if let Ok(mut slot) = FEATURES.lock() {
        slot.take();
    }
}

/// Whether `path` lies in the built-in features written by [`features_dir`].
pub fn is_builtin(path: &Path) -> bool {
    path.components().any(|c| {
        c.as_os_str()
            .to_str()
            .is_some_and(|name| name.starts_with(DIR_PREFIX))
    })
}

/// The names of the built-in runtime manifests (`reference`, …).
pub fn manifest_names() -> Vec<&'static str> {
    conformance_bundle::files_under("manifests")
        .filter_map(|(name, _)| name.strip_suffix(".toml"))
        .collect()
}

/// `--manifest ARG`: the file ARG, or else the built-in manifest named ARG.
pub fn load_manifest(arg: &Path) -> anyhow::Result<RuntimeManifest> {
    if arg.exists() {
        return RuntimeManifest::load(arg);
    }
    let name = arg.to_string_lossy();
    let bundled = conformance_bundle::file(&format!("manifests/{name}.toml"));
    match bundled {
        Some(bytes) => RuntimeManifest::parse(
            &String::from_utf8_lossy(bytes),
            &format!("built-in manifest {name}"),
        ),
        None => anyhow::bail!(
            "no manifest {} (neither a file nor a built-in manifest: {})",
            arg.display(),
            manifest_names().join(", ")
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_built_in_features_are_the_repository_s_and_carry_its_catalogue() {
        let dir = features_dir().unwrap();
        assert!(is_builtin(&dir));
        let written = std::fs::read(dir.join("requirements.toml")).unwrap();
        let repository = std::fs::read(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../features/requirements.toml"
        ))
        .unwrap();
        assert_eq!(written, repository);
        let spec = crate::report::manifest::SpecInfo::of_catalogue(
            &dir.join("requirements.toml"),
            CATALOGUE_REQUIREMENTS,
        );
        assert_eq!(spec.fingerprint, CATALOGUE_FINGERPRINT);
        assert!(VERSION.starts_with(env!("CARGO_PKG_VERSION")));
    }

    #[test]
    fn a_manifest_is_a_file_or_a_built_in_name() {
        assert_eq!(
            load_manifest(Path::new("reference")).unwrap().source,
            "built-in manifest reference"
        );
        let error = load_manifest(Path::new("no-such-manifest")).unwrap_err();
        assert!(format!("{error:#}").contains("reference"), "{error:#}");
    }
}
