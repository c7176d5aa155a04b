//! Layers point one way. In the agent host, the methods (`host`) and the transports (`rpc`)
//! sit on the agent loop, which sits on the session, policy, approval, events and service
//! modules. A lower module that names a higher one (`crate::host`, `crate::rpc`,
//! `crate::agent_loop`) is an upward arrow: it can no longer be read or tested without
//! what is built on it.
//!
//! In the tool runtime (local-tool-runtime.md §2) the router sits on the tools, and each
//! tool (`file`, `shell`, `git`, `network`, `mcp`, `backend`) sits on the base (`tool`,
//! `args`, `output`, `platform`, `sandbox`) alone: no module but the router names the
//! router, no tool names another, and the base names no tool. Test code may reach across.

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

const TOOLS_SRC: &str = "runtime/tools/src/";

/// The tool runtime's tools; the router and the crate root (`lib`) stand above them.
const TOOLS: [&str; 6] = ["file", "shell", "git", "network", "mcp", "backend"];

/// The lines of `text` that are not test code: a file whose name ends in `tests.rs` is all
/// test code, and so is what follows a `#[cfg(test)]` module declaration.
fn production_lines(path: &str, text: &str) -> Vec<(usize, String)> {
    if path.ends_with("tests.rs") {
        return Vec::new();
    }
    let lines: Vec<&str> = text.lines().collect();
    let end = lines
        .windows(2)
        .position(|pair| pair[0].trim() == "#[cfg(test)]" && pair[1].starts_with("mod "))
        .unwrap_or(lines.len());
    lines[..end]
        .iter()
        .enumerate()
        .filter(|(_, line)| !line.trim_start().starts_with("//"))
        .map(|(number, line)| (number + 1, (*line).to_owned()))
        .collect()
}

/// Whether `line` names the module `crate::{module}` (or an item of it).
fn names(line: &str, module: &str) -> bool {
    let needle = format!("crate::{module}");
    line.match_indices(&needle).any(|(at, _)| {
        line[at + needle.len()..].starts_with([':', ';', ' ', ',', '}', ')'])
            || at + needle.len() == line.len()
    })
}

fn tool_violations(path: &str, text: &str) -> Vec<String> {
    let Some(module) = path.strip_prefix(TOOLS_SRC) else {
        return Vec::new();
    };
    let own = module
        .split('/')
        .next()
        .unwrap_or_default()
        .trim_end_matches(".rs");
    if own == "router" || own == "lib" {
        return Vec::new();
    }
    // The crate root's re-exports of the router count as the router.
    let forbidden: Vec<&str> = ["router", "LocalToolRouter", "ToolOptions"]
        .into_iter()
        .chain(TOOLS.into_iter().filter(|tool| *tool != own))
        .collect();
    let what = if TOOLS.contains(&own) {
        "tool"
    } else {
        "base module"
    };
    production_lines(path, text)
        .into_iter()
        .flat_map(|(number, line)| {
            forbidden
                .iter()
                .filter(|module| names(&line, module))
                .map(|module| {
                    format!("{path}:{number}: the {what} `{own}` names `crate::{module}`")
                })
                .collect::<Vec<_>>()
        })
        .collect()
}

#[test]
fn the_tools_name_neither_the_router_nor_each_other() {
    let found: Vec<String> = repo_files()
        .iter()
        .filter(|path| path.starts_with(TOOLS_SRC) && path.ends_with(".rs"))
        .flat_map(|path| tool_violations(path, &read(path)))
        .collect();
    assert_clean("arrows between the tool runtime's modules", &found);
}

#[test]
fn an_arrow_between_tools_is_named() {
    let git = "runtime/tools/src/git/mod.rs";
    assert!(tool_violations(git, "use crate::platform::run;\nuse super::confine;\n").is_empty());
    let found = tool_violations(git, "use crate::shell::exec;\nuse crate::tool::Tool;\n");
    assert_eq!(
        found,
        ["runtime/tools/src/git/mod.rs:1: the tool `git` names `crate::shell`"]
    );
    assert_eq!(tool_violations(git, "use crate::router::Tool;\n").len(), 1);
    // The base names no tool; the router names them all.
    let sandbox = "runtime/tools/src/sandbox/egress.rs";
    assert_eq!(
        tool_violations(sandbox, "use crate::network::ssrf;\n").len(),
        1
    );
    let router = "runtime/tools/src/router.rs";
    assert!(tool_violations(router, "use crate::git::GitPush;\n").is_empty());
    // Test code may reach across; a comment is no arrow.
    let test_code = "fn f() {}\n#[cfg(test)]\nmod tests {\n    use crate::LocalToolRouter;\n}\n";
    assert!(tool_violations("runtime/tools/src/backend.rs", test_code).is_empty());
    assert!(
        tool_violations("runtime/tools/src/network/tests.rs", "use crate::router;\n").is_empty()
    );
    assert!(tool_violations(git, "// see crate::shell::exec\n").is_empty());
    // `crate::file` is not `crate::files`.
    assert!(tool_violations(git, "crate::filesystem::x();\n").is_empty());
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
