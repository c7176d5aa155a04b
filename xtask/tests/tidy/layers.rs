//! Layers point one way. The agent host stands on seven floors, outermost first: the
//! transports (`rpc`), the methods (`host`), the agent loop, the approval flow, the
//! session, the clients (`llm`, `services`, `backends`), the stores (`state`, `thread`,
//! `json_splice`) and the leaves. A module may name its own floor and those below it; one
//! that names a higher floor is an upward arrow: it can no longer be read or tested without
//! what is built on it. Every top module of the host must have a floor, so a new one is
//! placed on purpose.
//!
//! In the tool runtime (local-tool-runtime.md §2) the router sits on the tools, and each
//! tool (`file`, `shell`, `git`, `network`, `mcp`, `backend`) sits on the base (`tool`,
//! `args`, `output`, `platform`, `sandbox`) alone: no module but the router names the
//! router, no tool names another, and the base names no tool. Test code may reach across.

use super::{assert_clean, read, repo_files};

const HOST_SRC: &str = "runtime/host/src/";

/// The host's floors, outermost first (ARCHITECTURE.md, "arrows point down").
const FLOORS: [&[&str]; 8] = [
    &["rpc"],
    &["host"],
    &["agent_loop"],
    &["approval"],
    &["session"],
    &["llm", "services", "backends"],
    &["state", "thread", "json_splice"],
    &[
        "policy",
        "routing",
        "events",
        "audit",
        "redact",
        "outbound",
        "config",
        "error",
        "time",
        "workspace_files",
        "workspace_stream",
    ],
];

/// The crate root and the test helpers stand outside the floors.
const UNFLOORED: [&str; 2] = ["lib", "testing"];

fn floor_of(module: &str) -> Option<usize> {
    FLOORS.iter().position(|floor| floor.contains(&module))
}

fn violations(path: &str, text: &str) -> Vec<String> {
    let Some(module) = path.strip_prefix(HOST_SRC) else {
        return Vec::new();
    };
    if module.ends_with("tests.rs") {
        return Vec::new();
    }
    let top = module
        .split('/')
        .next()
        .unwrap_or_default()
        .trim_end_matches(".rs");
    if UNFLOORED.contains(&top) {
        return Vec::new();
    }
    let Some(own) = floor_of(top) else {
        return vec![format!(
            "{path}: the module `{top}` has no floor in tidy's FLOORS (layers.rs)"
        )];
    };
    let above: Vec<&str> = FLOORS[..own]
        .iter()
        .flat_map(|floor| floor.iter().copied())
        .collect();
    production_lines(path, text)
        .into_iter()
        .flat_map(|(number, line)| {
            above
                .iter()
                .filter(|module| names(&line, module))
                .map(|module| {
                    format!("{path}:{number}: `{top}` names `crate::{module}`, a floor above it")
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
    assert!(
        violations(
            session,
            "use crate::thread::Thread;\nuse crate::llm::ToolCall;\n"
        )
        .is_empty()
    );
    let found = violations(session, "use crate::agent_loop::Backends;\n");
    assert_eq!(
        found,
        [
            "runtime/host/src/session/records.rs:1: `session` names `crate::agent_loop`, a floor above it"
        ]
    );
    // The session sits below the approval flow; the clients below the session.
    assert_eq!(violations(session, "use crate::approval::ask;\n").len(), 1);
    let services = "runtime/host/src/services/mod.rs";
    assert_eq!(
        violations(services, "crate::session::Session::new();\n").len(),
        1
    );
    // One floor's modules may name each other.
    assert!(violations(services, "use crate::llm::LlmClient;\n").is_empty());
    let looped = "runtime/host/src/agent_loop/tools.rs";
    assert!(violations(looped, "use crate::session::Session;\n").is_empty());
    assert_eq!(violations(looped, "crate::host::Host::new();\n").len(), 1);
    // A leaf names no store.
    let leaf = "runtime/host/src/audit/envelope.rs";
    assert_eq!(violations(leaf, "use crate::thread::Thread;\n").len(), 1);
    // A comment is no arrow, test code may reach across, and a new module needs a floor.
    assert!(violations(session, "// see crate::host::create\n").is_empty());
    assert!(
        violations(
            "runtime/host/src/session/history_tests.rs",
            "use crate::host::Host;\n"
        )
        .is_empty()
    );
    assert_eq!(
        violations("runtime/host/src/gadgets.rs", "fn f() {}\n"),
        [
            "runtime/host/src/gadgets.rs: the module `gadgets` has no floor in tidy's FLOORS (layers.rs)"
        ]
    );
}
