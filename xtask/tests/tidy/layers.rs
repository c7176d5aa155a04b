//! The agent host's layers point one way: the methods (`host`) and the transports (`rpc`)
//! sit on the agent loop, which sits on the session, policy, approval, events and service
//! modules. A lower module that names a higher one (`crate::host`, `crate::rpc`,
//! `crate::agent_loop`) is an upward arrow: it can no longer be read or tested without
//! what is built on it.

use super::{assert_clean, read, repo_files};

const HOST_SRC: &str = "runtime/host/src/";

/// The higher layers of the host, outermost first; a module may name those after its own.
const LAYERS: [&str; 3] = ["rpc", "host", "agent_loop"];

/// The layer a file of the host belongs to: its top module when that is one of
/// [`LAYERS`], else the base (everything below the loop).
fn layer_of(path: &str) -> Option<usize> {
    let module = path.strip_prefix(HOST_SRC)?;
    let top = module.split('/').next()?.trim_end_matches(".rs");
    Some(
        LAYERS
            .iter()
            .position(|layer| *layer == top)
            .unwrap_or(LAYERS.len()),
    )
}

fn violations(path: &str, text: &str) -> Vec<String> {
    let Some(own) = layer_of(path) else {
        return Vec::new();
    };
    if path == "runtime/host/src/lib.rs" {
        return Vec::new();
    }
    LAYERS
        .iter()
        .enumerate()
        .filter(|(index, _)| *index < own)
        .flat_map(|(_, layer)| {
            let needle = format!("crate::{layer}");
            text.lines()
                .enumerate()
                .filter(move |(_, line)| {
                    line.contains(&needle)
                        && !line.trim_start().starts_with("//")
                        && line[line.find(&needle).unwrap_or(0) + needle.len()..]
                            .starts_with([':', ';', ' ', ','])
                })
                .map(move |(number, _)| {
                    format!(
                        "{path}:{}: names `crate::{layer}`, a layer above it",
                        number + 1
                    )
                })
                .collect::<Vec<_>>()
        })
        .collect()
}

#[test]
fn the_hosts_lower_modules_never_name_a_higher_layer() {
    let found: Vec<String> = repo_files()
        .iter()
        .filter(|path| path.starts_with(HOST_SRC) && path.ends_with(".rs"))
        .flat_map(|path| violations(path, &read(path)))
        .collect();
    assert_clean("upward arrows in the agent host", &found);
}

#[test]
fn an_upward_arrow_is_named() {
    let session = "runtime/host/src/session/records.rs";
    assert!(violations(session, "use crate::thread::Thread;\n").is_empty());
    let found = violations(session, "use crate::agent_loop::Backends;\n");
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].starts_with("runtime/host/src/session/records.rs:1: "));
    // The loop may name what is below it but not the methods above it.
    let looped = "runtime/host/src/agent_loop/tools.rs";
    assert!(violations(looped, "use crate::session::Session;\n").is_empty());
    assert_eq!(violations(looped, "crate::host::Host::new();\n").len(), 1);
    // A comment that mentions a layer is not an arrow.
    assert!(violations(session, "// see crate::host::create\n").is_empty());
}
