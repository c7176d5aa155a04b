//! `cargo xtask hot-symbols`: regenerates `runtime/cli/hot-symbols.txt`, the functions a
//! session runs, which release builds link next to each other (`runtime/cli/build.rs`).
//!
//! The release runtime runs the quick bench plan (start-up, CreateSession, tool steps, a
//! 150-step session well past the context window, streaming) under
//! `valgrind --tool=callgrind`; every function callgrind saw
//! executing in the runtime binary goes into the list, by its linker (mangled) name, sorted
//! so the file diffs well. Re-run it after large changes: names that no longer exist are
//! ignored by the linker, so a stale list only costs resident memory.
//!
//! The names carry their crates' hashes, which change with any dependency's version, so
//! `hot-symbols.deps` beside the list records the runtime's dependencies it was profiled
//! with, and a test fails when they differ from today's: the stale list is then seen in
//! `cargo test`, not in a memory benchmark (a compiler update changes the hashes too; the
//! `--memory-parts` report says how many names the binary still defines).

use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Command, ExitCode};
use std::time::Duration;

use anyhow::{Context, bail};

#[derive(clap::Args)]
pub(crate) struct Args {
    /// Bound on every wait for the runtime (valgrind is slow), in seconds.
    #[arg(long, default_value_t = 300)]
    timeout_secs: u64,
}

pub(crate) fn run(args: Args) -> anyhow::Result<ExitCode> {
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
    let deps = root.join(DEPS_FILE);
    std::fs::write(&deps, deps_text(&runtime_dependencies(&root)?))
        .with_context(|| format!("cannot write {}", deps.display()))?;
    println!("xtask: {} hot functions → {}", symbols.len(), out.display());
    Ok(ExitCode::SUCCESS)
}

/// Where the dependencies the list was profiled with are recorded.
const DEPS_FILE: &str = "runtime/cli/hot-symbols.deps";

/// The runtime binary's dependencies (normal edges, this machine's target) as `name
/// version`, sorted: what the crates' hashes in the list's names depend on.
fn runtime_dependencies(root: &Path) -> anyhow::Result<Vec<String>> {
    let output = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
        .current_dir(root)
        .args([
            "tree",
            "-p",
            "agent-runtime",
            "-e",
            "normal",
            "--prefix",
            "none",
        ])
        .args(["--offline", "--locked", "-f", "{p}"])
        .output()
        .context("cannot run cargo tree")?;
    if !output.status.success() {
        bail!(
            "cargo tree failed: {}",
            String::from_utf8_lossy(&output.stderr).trim()
        );
    }
    let text = String::from_utf8(output.stdout).context("cargo tree printed non-UTF-8")?;
    Ok(package_lines(&text))
}

/// `cargo tree -f {p}` lines as `name version`: a workspace crate's path and the `(*)`
/// and `(proc-macro)` marks left out, each package once.
fn package_lines(tree: &str) -> Vec<String> {
    let packages: BTreeSet<String> = tree
        .lines()
        .filter_map(|line| {
            let mut words = line.split_whitespace();
            Some(format!("{} {}", words.next()?, words.next()?))
        })
        .collect();
    packages.into_iter().collect()
}

fn deps_text(packages: &[String]) -> String {
    let mut text = String::from(
        "# The runtime's dependencies hot-symbols.txt was profiled with (`cargo xtask hot-symbols`\n\
         # writes this file; a test compares it with today's).\n",
    );
    for package in packages {
        text.push_str(package);
        text.push('\n');
    }
    text
}

/// What differs between the recorded dependencies and today's: added `+`, gone `-` (the
/// test that holds the list to today's dependencies reports it).
#[cfg(test)]
fn changed(recorded: &str, today: &[String]) -> Vec<String> {
    let recorded: BTreeSet<&str> = recorded
        .lines()
        .filter(|line| !line.starts_with('#') && !line.trim().is_empty())
        .collect();
    let today: BTreeSet<&str> = today.iter().map(String::as_str).collect();
    let added = today
        .difference(&recorded)
        .map(|package| format!("+{package}"));
    let gone = recorded
        .difference(&today)
        .map(|package| format!("-{package}"));
    added.chain(gone).collect()
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

    /// The list orders symbols only in x86_64 Linux release builds (`runtime/cli/build.rs`),
    /// and the dependencies are this target's.
    #[cfg(all(target_os = "linux", target_arch = "x86_64"))]
    #[test]
    fn the_hot_symbols_were_profiled_with_todays_dependencies() {
        let root = crate::workspace_root();
        let recorded = std::fs::read_to_string(root.join(DEPS_FILE)).unwrap_or_default();
        let difference = changed(&recorded, &runtime_dependencies(&root).unwrap());
        assert!(
            difference.is_empty(),
            "runtime/cli/hot-symbols.txt was profiled with other dependencies ({}): its names \
             no longer match, so release builds keep hot code scattered (megabytes of resident \
             memory). Run `cargo xtask hot-symbols` (it needs valgrind) and commit both files.",
            difference.join(", ")
        );
    }

    #[test]
    fn dependency_lines_name_each_package_once_without_paths_or_marks() {
        let tree = "agent-runtime v0.1.0 (/w/runtime/cli)\nserde v1.0.1\nserde_derive v1.0.1 (proc-macro)\nserde v1.0.1 (*)\n\n";
        let lines = package_lines(tree);
        assert_eq!(
            lines,
            [
                "agent-runtime v0.1.0",
                "serde v1.0.1",
                "serde_derive v1.0.1"
            ]
        );
        let recorded = deps_text(&["serde v1.0.0".to_owned(), "agent-runtime v0.1.0".to_owned()]);
        assert_eq!(
            changed(&recorded, &lines),
            ["+serde v1.0.1", "+serde_derive v1.0.1", "-serde v1.0.0"]
        );
        assert!(changed(&deps_text(&lines), &lines).is_empty());
    }

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
