//! `cargo xtask mutants [--area NAME] [--file GLOB]… [--shard I/N] [--tags EXPR]`: behaviour
//! mutants of the reference runtime with cargo-mutants, the conformance kit (and only the
//! kit: `agent-runtime`'s `conformance` test) as the test. Not in CI: every mutant is a
//! build and a kit run, far too slow for two cores. Results go to `target/mutants/`
//! (cargo-mutants' `mutants.out/`: `caught.txt`, `missed.txt`, `outcomes.json`), and a
//! kill rate per area is printed from them.

use std::path::Path;
use std::process::ExitCode;

use anyhow::{Context, bail};

use crate::certify::cargo;

/// The areas issue-level goals name, as globs of `agent-host` source files (tests excluded),
/// each with the kit's requirements that exercise it (the default `--tags`).
pub(crate) const AREAS: &[(&str, &[&str], &str)] = &[
    (
        "state machines",
        &[
            "runtime/host/src/session/machine.rs",
            "runtime/host/src/session/task_state.rs",
        ],
        "@REQ-SES-012 or @REQ-SES-016 or @REQ-TASK-012 or @REQ-LOOP-019 or @REQ-LOOP-020 or @REQ-LOOP-027 or @REQ-LOOP-300 or @REQ-LOOP-001 or @REQ-LOOP-103 or @REQ-CAN-006 or @REQ-LOOP-009 or @REQ-LLM-012 or @REQ-REC-005 or @REQ-THR-001 or @REQ-TASK-009 or @REQ-SES-101 or @REQ-RST-006 or @REQ-RST-008 or @REQ-CAN-007 or @REQ-RST-015 or @REQ-LOOP-003",
    ),
    (
        "agent loop",
        &["runtime/host/src/agent_loop/*.rs"],
        "@REQ-TASK-008 or @REQ-LOOP-012 or @REQ-LOOP-015 or @REQ-LOOP-016 or @REQ-LOOP-021 or @REQ-LOOP-023 or @REQ-CAN-003 or @REQ-LOOP-010 or @REQ-TASK-004 or @REQ-TASK-005 or @REQ-TASK-009 or @REQ-LOOP-014 or @REQ-LOOP-019 or @REQ-LOOP-027 or @REQ-LOOP-300 or @REQ-LLM-001 or @REQ-LLM-007 or @REQ-LLM-009 or @REQ-LLM-017 or @REQ-LLM-018 or @REQ-POL-019 or @REQ-POL-101 or @REQ-REC-002 or @REQ-RST-010 or @REQ-RST-018 or @REQ-RED-001 or @REQ-TOOL-265 or @REQ-HARD-005 or @REQ-HARD-006 or @REQ-HARD-009 or @REQ-HARD-010 or @REQ-APR-003",
    ),
    (
        "policy enforcer",
        &["runtime/host/src/policy/*.rs"],
        "@REQ-POL-001 or @REQ-POL-002 or @REQ-POL-003 or @REQ-POL-004 or @REQ-POL-005 or @REQ-POL-006 or @REQ-POL-008 or @REQ-POL-013 or @REQ-POL-014 or @REQ-POL-018 or @REQ-POL-019 or @REQ-POL-021 or @REQ-POL-103 or @REQ-POL-020 or @REQ-POL-022 or @REQ-APR-001 or @REQ-TOOL-238 or @REQ-TOOL-265 or @REQ-HARD-010 or @REQ-EXT-006 or @REQ-EXT-001 or @REQ-EXT-003 or @REQ-EXT-204 or @REQ-TOOL-263 or @REQ-TOOL-264 or @REQ-TOOL-266 or @REQ-TOOL-267 or @REQ-TOOL-270 or @REQ-TOOL-271 or @REQ-TOOL-272 or @REQ-POL-023 or @REQ-HARD-102 or @REQ-HARD-050 or @REQ-HARD-052 or @REQ-HARD-053 or @REQ-HARD-056 or @REQ-HARD-060 or @REQ-HARD-061 or @REQ-HARD-062 or @REQ-HARD-063 or @REQ-HARD-069 or @REQ-HARD-005 or @REQ-TOOL-022",
    ),
    (
        "command analyser",
        &["runtime/host/src/policy/command/**/*.rs"],
        "@REQ-POL-010 or @REQ-POL-011 or @REQ-POL-012 or @REQ-POL-017 or @REQ-TOOL-011 or @REQ-TOOL-034 or @REQ-HARD-100 or @REQ-HARD-101 or @REQ-HARD-102 or @REQ-HARD-110 or @REQ-HARD-111 or @REQ-POL-018 or @REQ-POL-021",
    ),
    (
        "approval flow",
        &[
            "runtime/host/src/approval/*.rs",
            "runtime/host/src/session/approvals.rs",
        ],
        "@REQ-APR-001 or @REQ-APR-002 or @REQ-APR-003 or @REQ-APR-004 or @REQ-APR-005 or @REQ-APR-006 or @REQ-APR-007 or @REQ-APR-008 or @REQ-APR-009 or @REQ-APR-010 or @REQ-APR-011 or @REQ-APR-012 or @REQ-APR-013 or @REQ-REC-013",
    ),
];

#[derive(clap::Args)]
pub(crate) struct Args {
    /// One area (`state machines`, `agent loop`, `policy enforcer`, `command analyser`,
    /// `approval flow`); default: all of them.
    #[arg(long, value_name = "NAME")]
    area: Option<String>,
    /// Mutate only these files (globs, relative to the workspace root) instead of the
    /// areas' own.
    #[arg(long, value_name = "GLOB")]
    file: Vec<String>,
    /// The i-th of n parts of the mutants (1-based), e.g. `--shard 2/4` on the second machine.
    #[arg(long, value_name = "I/N")]
    shard: Option<String>,
    /// How `--shard` parts the mutants: `round-robin` (every n-th mutant, so one part is a
    /// sample spread over all the files) or `slice` (consecutive runs of mutants).
    #[arg(long, value_name = "METHOD", default_value = "round-robin", value_parser = ["round-robin", "slice"])]
    sharding: String,
    /// The kit's tag expression for each mutant's run (default: the area's requirements;
    /// `all` runs the whole suite per mutant).
    #[arg(long, value_name = "EXPR")]
    tags: Option<String>,
    /// Seconds before a mutant's test run counts as a timeout.
    #[arg(long, default_value_t = 600)]
    timeout: u64,
    /// Seconds before a mutant's build counts as a timeout.
    #[arg(long, default_value_t = 900)]
    build_timeout: u64,
    /// Test again only the mutants the last run in `target/mutants/` did not catch (after a
    /// new scenario or a wider tag selection), keeping its other outcomes.
    #[arg(long)]
    iterate: bool,
    /// Only list the mutants cargo-mutants would try.
    #[arg(long)]
    list: bool,
    /// Mutate the working tree itself and build in its target dir (warm: no cold build of
    /// the copy); cargo-mutants puts each file back, so do not interrupt it.
    #[arg(long)]
    in_place: bool,
}

pub(crate) fn run(args: Args) -> anyhow::Result<ExitCode> {
    let root = crate::workspace_root();
    let areas: Vec<&(&str, &[&str], &str)> = match &args.area {
        Some(name) => {
            let area = AREAS.iter().find(|(n, _, _)| n == name).with_context(|| {
                format!(
                    "no area {name:?}; the areas are: {}",
                    AREAS
                        .iter()
                        .map(|(n, _, _)| *n)
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            })?;
            vec![area]
        }
        None => AREAS.iter().collect(),
    };
    let files: Vec<String> = if args.file.is_empty() {
        areas
            .iter()
            .flat_map(|(_, globs, _)| globs.iter().map(|g| (*g).to_owned()))
            .collect()
    } else {
        args.file.clone()
    };
    let tags = match args.tags.as_deref() {
        Some("all") => None,
        Some(expr) => Some(expr.to_owned()),
        None => Some(
            areas
                .iter()
                .map(|(_, _, tags)| *tags)
                .collect::<Vec<_>>()
                .join(" or "),
        ),
    };
    let shard = args.shard.as_deref().map(zero_based_shard).transpose()?;
    let output = crate::certify::target_dir().join("mutants");
    std::fs::create_dir_all(&output)
        .with_context(|| format!("cannot create {}", output.display()))?;

    let mut command = cargo();
    command
        .current_dir(&root)
        .args([
            "mutants",
            "--package",
            "agent-host",
            "--test-package",
            "agent-runtime",
        ])
        .arg("--output")
        .arg(&output)
        .args(["--timeout", &args.timeout.to_string()])
        .args(["--exclude", "**/*tests.rs", "--exclude", "**/tests/**"]);
    for file in &files {
        command.args(["--file", file]);
    }
    if let Some(shard) = &shard {
        command.args(["--shard", shard, "--sharding", &args.sharding]);
    }
    if args.list {
        command.arg("--list");
    }
    if args.in_place {
        command.arg("--in-place");
    }
    if args.iterate {
        command.arg("--iterate");
    }
    // The kit and only the kit: the `conformance` test target of agent-runtime, for the
    // build as well as the test (a trailing `-- --test conformance` reaches only the test
    // phase, so every mutant would link all of agent-runtime's test targets).
    command.arg("--cargo-arg=--test=conformance");
    // cargo-mutants' own baseline tests the mutated package (agent-host), whatever
    // `--test-package` says, and agent-host has no `conformance` target: the baseline is
    // the kit run below instead.
    command.args(["--baseline", "skip"]);
    command.args(["--build-timeout", &args.build_timeout.to_string()]);
    command.env("CONFORMANCE_CRASH_RUNS", "0");
    match &tags {
        Some(tags) => command.env("CONFORMANCE_TAGS", tags),
        None => command.env_remove("CONFORMANCE_TAGS"),
    };
    println!(
        "xtask: cargo-mutants over {} with the kit ({}) as the test, results in {}",
        files.join(", "),
        tags.as_deref().unwrap_or("every scenario"),
        output.display()
    );
    if !args.list {
        baseline(&root, tags.as_deref())?;
    }
    let status = command.status().context(
        "cannot run cargo-mutants: install it with `cargo install cargo-mutants` (crates.io)",
    )?;
    if args.list {
        return Ok(if status.success() {
            ExitCode::SUCCESS
        } else {
            ExitCode::FAILURE
        });
    }
    let summary = summarise(&output.join("mutants.out"))?;
    println!("{summary}");
    // cargo-mutants exits 2 when mutants were missed: the summary says which.
    Ok(match status.code() {
        Some(0) => ExitCode::SUCCESS,
        _ => ExitCode::FAILURE,
    })
}

/// The kit on the unmutated tree, with the tags each mutant is judged by: it must pass, or
/// every mutant would count as caught.
fn baseline(root: &Path, tags: Option<&str>) -> anyhow::Result<()> {
    let mut command = cargo();
    command
        .current_dir(root)
        .args([
            "test",
            "--package",
            "agent-runtime",
            "--test",
            "conformance",
        ])
        .env("CONFORMANCE_CRASH_RUNS", "0");
    match tags {
        Some(tags) => command.env("CONFORMANCE_TAGS", tags),
        None => command.env_remove("CONFORMANCE_TAGS"),
    };
    println!("xtask: baseline: the kit on the unmutated tree");
    let status = command
        .status()
        .context("cannot run cargo test for the baseline")?;
    if !status.success() {
        bail!(
            "the kit fails on the unmutated tree ({status}): fix that first, every mutant would count as caught"
        );
    }
    Ok(())
}

/// `2/4` (1-based, like the kit's `--shard`) as cargo-mutants' `1/4` (0-based).
fn zero_based_shard(text: &str) -> anyhow::Result<String> {
    let parsed = text
        .split_once('/')
        .and_then(|(i, n)| Some((i.trim().parse::<u32>().ok()?, n.trim().parse::<u32>().ok()?)));
    match parsed {
        Some((index, count)) if count >= 1 && (1..=count).contains(&index) => {
            Ok(format!("{}/{count}", index - 1))
        }
        _ => bail!("a shard is written i/n with 1 <= i <= n, e.g. 2/4, not {text:?}"),
    }
}

/// Kill rate per area from cargo-mutants' lists (`caught.txt`, `missed.txt`, `timeout.txt`,
/// `unviable.txt`: one mutant a line, starting with its file).
pub(crate) fn summarise(out: &Path) -> anyhow::Result<String> {
    let read = |name: &str| -> Vec<String> {
        std::fs::read_to_string(out.join(name))
            .map(|text| text.lines().map(str::to_owned).collect())
            .unwrap_or_default()
    };
    let (caught, missed, timeout, unviable) = (
        read("caught.txt"),
        read("missed.txt"),
        read("timeout.txt"),
        read("unviable.txt"),
    );
    if caught.is_empty() && missed.is_empty() && timeout.is_empty() {
        bail!(
            "no cargo-mutants results in {} (did the run start?)",
            out.display()
        );
    }
    let mut text =
        String::from("area                caught  missed  timeout  unviable  kill rate\n");
    for (name, globs, _) in AREAS {
        let of = |list: &[String]| list.iter().filter(|m| in_area(m, globs)).count();
        let (c, m, t, u) = (of(&caught), of(&missed), of(&timeout), of(&unviable));
        if c + m + t + u == 0 {
            continue;
        }
        // A timeout is a caught mutant (the kit did not pass), as cargo-mutants counts it.
        let viable = c + m + t;
        let rate = if viable == 0 {
            "-".to_owned()
        } else {
            format!("{:.0}%", 100.0 * (c + t) as f64 / viable as f64)
        };
        text.push_str(&format!(
            "{name:<19} {c:>6}  {m:>6}  {t:>7}  {u:>8}  {rate:>9}\n"
        ));
    }
    if !missed.is_empty() {
        text.push_str(
            "\nmissed (each needs a scenario that kills it, or a reason it is equivalent):\n",
        );
        for mutant in &missed {
            text.push_str(&format!("  {mutant}\n"));
        }
    }
    Ok(text)
}

/// Whether a cargo-mutants line (the file, then `:line:column: replace …`) is in the globs.
fn in_area(line: &str, globs: &[&str]) -> bool {
    let file = line.split(':').next().unwrap_or("");
    globs.iter().any(|glob| glob_matches(glob, file))
}

/// `*` within one path segment, `**/` any number of directories.
fn glob_matches(glob: &str, path: &str) -> bool {
    let pattern = regex::escape(glob)
        .replace(r"\*\*/", "(?:.*/)?")
        .replace(r"\*", "[^/]*");
    regex::Regex::new(&format!("^{pattern}$")).is_ok_and(|re| re.is_match(path))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_place_mutants_in_their_area() {
        assert!(glob_matches(
            "runtime/host/src/policy/command/**/*.rs",
            "runtime/host/src/policy/command/parse/lexer.rs"
        ));
        assert!(glob_matches(
            "runtime/host/src/policy/command/**/*.rs",
            "runtime/host/src/policy/command/cmd.rs"
        ));
        assert!(!glob_matches(
            "runtime/host/src/policy/*.rs",
            "runtime/host/src/policy/command/cmd.rs"
        ));
        assert!(in_area(
            "runtime/host/src/approval/broker.rs:40:9: replace Broker::resolve -> bool with true",
            &["runtime/host/src/approval/*.rs"]
        ));
    }

    #[test]
    fn the_areas_name_real_requirements() {
        let catalogue =
            crate::catalogue::Catalogue::load(&crate::features_dir().join("requirements.toml"))
                .unwrap();
        for (area, _, tags) in AREAS {
            for tag in tags.split(" or ") {
                let id = tag.trim().trim_start_matches('@');
                assert!(catalogue.get(id).is_some(), "{area}: {id} is unknown");
            }
        }
    }

    #[test]
    fn shards_are_written_from_one_and_handed_on_from_zero() {
        assert_eq!(zero_based_shard("2/4").unwrap(), "1/4");
        assert!(zero_based_shard("0/4").is_err());
        assert!(zero_based_shard("5/4").is_err());
    }

    #[test]
    fn the_summary_counts_each_area() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("caught.txt"),
            "runtime/host/src/approval/broker.rs:1:1: a\nruntime/host/src/approval/mod.rs:2:1: b\n",
        )
        .unwrap();
        std::fs::write(
            dir.path().join("missed.txt"),
            "runtime/host/src/approval/broker.rs:3:1: c\n",
        )
        .unwrap();
        let text = summarise(dir.path()).unwrap();
        assert!(text.contains("approval flow"), "{text}");
        assert!(text.contains("67%"), "{text}");
        assert!(text.contains("broker.rs:3:1: c"), "{text}");
    }
}
