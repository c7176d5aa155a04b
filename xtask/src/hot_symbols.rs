//! `cargo xtask hot-symbols`: regenerates `runtime/cli/hot-symbols.txt`, the functions a
//! session runs, which release builds link next to each other (`runtime/cli/build.rs`).
//!
//! The release runtime runs the quick bench plan (start-up, CreateSession, tool steps, a
//! 150-step session well past the context window, streaming) under
//! `valgrind --tool=callgrind`; every function callgrind saw
//! executing in the runtime binary goes into the list, by its linker (mangled) name, sorted
//! so the file diffs well. Re-run it after large changes: names that no longer exist are
//! ignored by the linker, so a stale list only costs resident memory.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Command, ExitCode};
use std::time::Duration;

use anyhow::{Context, bail};

#[derive(clap::Args)]
pub struct Args {
    /// Bound on every wait for the runtime (valgrind is slow), in seconds.
    #[arg(long, default_value_t = 300)]
    timeout_secs: u64,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let root = crate::workspace_root();
    let valgrind = Command::new("valgrind").arg("--version").output();
    if !valgrind.is_ok_and(|output| output.status.success()) {
        bail!("valgrind is needed (Debian: apt-get install valgrind)");
    }
    let binary = crate::certify::build_release_runtime()?;
    let profiles = tempfile::tempdir()?;
    let line = format!(
        "valgrind --tool=callgrind --demangle=no --callgrind-out-file={}/callgrind.%p {}",
        profiles.path().display(),
        binary.display()
    );
    println!("xtask: running the quick bench plan under callgrind (a few minutes)");
    crate::bench::exercise(&line, Duration::from_secs(args.timeout_secs))?;
    let mut symbols = BTreeSet::new();
    for entry in std::fs::read_dir(profiles.path())? {
        let text = std::fs::read_to_string(entry?.path())?;
        symbols.extend(executed_in(&text, "agent-runtime"));
    }
    if symbols.is_empty() {
        bail!("callgrind recorded no function of the runtime");
    }
    let out = root.join("runtime/cli/hot-symbols.txt");
    write_list(&out, &symbols)?;
    println!("xtask: {} hot functions → {}", symbols.len(), out.display());
    Ok(ExitCode::SUCCESS)
}

fn write_list(path: &Path, symbols: &BTreeSet<String>) -> anyhow::Result<()> {
    let mut text = String::new();
    for symbol in symbols {
        text.push_str(symbol);
        text.push('\n');
    }
    std::fs::write(path, text).with_context(|| format!("cannot write {}", path.display()))
}

/// The functions a callgrind profile saw executing in the object whose path ends with
/// `object`. Callgrind names each object and function once, `ob=(1) /path` or `fn=(7) name`,
/// and refers to it later by number alone; `cob=`/`cfn=` name call targets, which execute
/// too and are listed under their own `fn=` block. Addresses without a symbol (`0x…`) are
/// left out.
fn executed_in(profile: &str, object: &str) -> BTreeSet<String> {
    let mut objects = std::collections::HashMap::new();
    let mut functions = std::collections::HashMap::new();
    let mut in_object = false;
    let mut executed = BTreeSet::new();
    for line in profile.lines() {
        let (key, rest) = match line.split_once('=') {
            Some((key @ ("ob" | "cob" | "fn" | "cfn"), rest)) => (key, rest),
            _ => continue,
        };
        let Some((id, name)) = rest.strip_prefix('(').and_then(|rest| rest.split_once(')')) else {
            continue;
        };
        let name = name.trim();
        let table = if key.ends_with("ob") {
            &mut objects
        } else {
            &mut functions
        };
        if !name.is_empty() {
            table.insert(id.to_owned(), name.to_owned());
        }
        match key {
            "ob" => {
                in_object = objects
                    .get(id)
                    .is_some_and(|path: &String| path.ends_with(object));
            }
            "fn" if in_object => {
                if let Some(name) = functions.get(id)
                    && !name.starts_with("0x")
                {
                    executed.insert(name.clone());
                }
            }
            _ => {}
        }
    }
    executed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn functions_of_the_object_are_collected_by_their_first_naming() {
        let profile = "\
version: 1
ob=(1) /usr/lib/libc.so.6
fn=(1) malloc
0 5
ob=(2) /work/target/release/agent-runtime
fn=(2) _RNvCs1_4main4main
0 3
cob=(1)
cfn=(1)
calls=1 0
0 9
cfn=(3) _RNvCs1_4main6helper
calls=1 0
0 4
fn=(3)
0 4
fn=(4) 0x0000000000401000
0 1
ob=(1)
fn=(1)
0 2
ob=(2)
fn=(5) _RNvCs1_4main5other
0 1
";
        let found: Vec<String> = executed_in(profile, "agent-runtime").into_iter().collect();
        assert_eq!(
            found,
            [
                "_RNvCs1_4main4main",
                "_RNvCs1_4main5other",
                "_RNvCs1_4main6helper"
            ]
        );
    }
}
