//! Embeds the kit's files: every file under the repository's `features/` and the kit's
//! `manifests/` and `examples/`, as `$OUT_DIR/bundle.rs` (a sorted table of
//! `(path, include_bytes!(file))`), with the catalogue's fingerprint and size for
//! `conformance --version`. A separate crate so that editing a feature file rebuilds only
//! this table, not the kit.

use std::env;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};

/// (directory relative to this crate, the name it has in the bundle)
const ROOTS: [(&str, &str); 3] = [
    ("../../features", "features"),
    ("../manifests", "manifests"),
    ("../examples", "examples"),
];

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let here = PathBuf::from(env::var("CARGO_MANIFEST_DIR")?);
    let mut files = Vec::new();
    for (dir, name) in ROOTS {
        let root = here.join(dir);
        println!("cargo:rerun-if-changed={}", root.display());
        collect(&root, &root, name, &mut files)?;
    }
    files.sort();
    let mut out = String::from("/// Every bundled file: its path in the bundle and its bytes.\n");
    out.push_str("pub static FILES: &[(&str, &[u8])] = &[\n");
    for (name, path) in &files {
        writeln!(out, "    ({name:?}, include_bytes!({:?})),", path.display())?;
    }
    out.push_str("];\n");
    let catalogue = fs::read(here.join("../../features/requirements.toml"))?;
    let text = String::from_utf8_lossy(&catalogue);
    let requirements = text
        .lines()
        .filter(|line| line.trim() == "[[requirement]]")
        .count();
    let fingerprint = format!("fnv1a64:{:016x}", fnv1a64(&catalogue));
    writeln!(
        out,
        "/// `fnv1a64:<hex>` of `features/requirements.toml` as built in.\n\
         pub const CATALOGUE_FINGERPRINT: &str = {fingerprint:?};\n\
         /// How many requirements the built-in catalogue has.\n\
         pub const CATALOGUE_REQUIREMENTS: usize = {requirements};\n\
         /// `conformance --version`: the kit's version and the catalogue it certifies against.\n\
         pub const VERSION: &str = {:?};",
        format!(
            "{} (catalogue {fingerprint}, {requirements} requirements)",
            env::var("CARGO_PKG_VERSION")?
        )
    )?;
    fs::write(PathBuf::from(env::var("OUT_DIR")?).join("bundle.rs"), out)?;
    Ok(())
}

fn collect(
    root: &Path,
    dir: &Path,
    name: &str,
    files: &mut Vec<(String, PathBuf)>,
) -> std::io::Result<()> {
    for entry in fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            collect(root, &path, name, files)?;
        } else if path.is_file() {
            let relative = path.strip_prefix(root).unwrap_or(&path);
            let parts: Vec<String> = relative
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            files.push((format!("{name}/{}", parts.join("/")), path.canonicalize()?));
        }
    }
    Ok(())
}

/// FNV-1a, 64 bit, as `conformance::report::manifest` fingerprints the catalogue.
fn fnv1a64(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, byte| {
        (hash ^ u64::from(*byte)).wrapping_mul(0x0100_0000_01b3)
    })
}
