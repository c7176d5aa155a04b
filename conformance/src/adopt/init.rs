//! `conformance init`: a starter runtime manifest for a team's runtime — the profiles and
//! transports to claim, and every knob the kit knows, commented out with the runtime's own
//! variable name left to fill. It is valid as written (core + interop over stdio, no knob),
//! so the first run can happen before any of it is filled.

use std::fmt::Write as _;
use std::path::Path;

use crate::runtime_manifest::{KNOBS, RuntimeManifest};

/// The manifest text for a runtime called `name`.
pub fn render(name: &str) -> String {
    let mut text = format!(
        "# What {name} declares to the conformance kit (conformance/README.md, \"The runtime\n\
         # manifest\"). Certify with: conformance --runtime \"<command>\" --manifest THIS_FILE\n\
         # Scenarios needing what is not declared here are reported not applicable, never failed.\n\n\
         name = {}\n\n\
         # core (the design documents), interop (INTEROP.md's decisions for the real app and\n\
         # services), reference (the reference runtime's extensions), hardening, policy.\n\
         profiles = [\"core\", \"interop\"]\n\n\
         # stdio (default); socket and http need `--listen PATH|http://IP:PORT`; sandbox: INTEROP.md §9.\n\
         transports = [\"stdio\"]\n\n\
         # os = \"windows\"      # the runtime's OS (default unix)\n\
         # git = false          # no git on the runtime's machine\n\
         # home = false         # the kit's HOME does not reach the runtime\n\n\
         [env]\n\
         # Set for every scenario, as your runtime parses them, e.g. short retry delays:\n\
         # LLM_RETRY_BASE_DELAY = \"0.05\"\n\n\
         # The knobs: a scenario that sets one runs only when it is declared here. `env` is the\n\
         # variable your runtime reads (default: the kit's name); `fractional = false` when it\n\
         # reads whole seconds only. Uncomment what your runtime honours.\n",
        toml_string(name)
    );
    for knob in KNOBS {
        let _ = write!(
            text,
            "\n# [knobs.{knob}]\n# env = \"{knob}\"   # your runtime's variable\n# fractional = true\n"
        );
    }
    text
}

/// Writes the starter manifest to `file` unless it exists (or `force`).
pub fn write(name: &str, file: &Path, force: bool) -> anyhow::Result<()> {
    if file.exists() && !force {
        anyhow::bail!("{} exists; pass --force to overwrite it", file.display());
    }
    let text = render(name);
    RuntimeManifest::parse(&text, "the starter manifest")?;
    std::fs::write(file, text)
        .map_err(|error| anyhow::anyhow!("cannot write {}: {error}", file.display()))
}

fn toml_string(text: &str) -> String {
    serde_json::to_string(text).unwrap_or_else(|_| "\"\"".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_starter_manifest_is_valid_and_names_every_knob() {
        let text = render("my \"runtime\" 1.0");
        let manifest = RuntimeManifest::parse(&text, "test").unwrap();
        assert_eq!(manifest.profiles_label(), "core+interop");
        for knob in KNOBS {
            assert!(text.contains(&format!("[knobs.{knob}]")), "{knob}");
        }
        // Uncommenting a knob's block gives a manifest that declares it.
        let filled = text.replace(
            "# [knobs.APPROVAL_TIMEOUT_SECONDS]\n# env = \"APPROVAL_TIMEOUT_SECONDS\"",
            "[knobs.APPROVAL_TIMEOUT_SECONDS]\nenv = \"APPROVAL_TIMEOUT\"",
        );
        let manifest = RuntimeManifest::parse(&filled, "test").unwrap();
        assert!(manifest.knobs.contains_key("APPROVAL_TIMEOUT_SECONDS"));
    }
}
