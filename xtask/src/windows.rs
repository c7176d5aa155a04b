//! `cargo xtask windows`: cross-build the runtime for `x86_64-pc-windows-gnu` with Debian's
//! packaged toolchain (no rustup target is downloaded: std is built from `rust-web-src` with
//! `-Zbuild-std`), prepare a Wine prefix under the target dir, run the agent-tools and
//! agent-host tests under Wine, and certify the `.exe` with the Linux kit driving it through
//! Wine.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use anyhow::Context;

pub(crate) const TARGET: &str = "x86_64-pc-windows-gnu";

/// What runs under Wine: the pure path rules, the resolution beneath a folder, the host and
/// the tool runtime, and the runtime's stdio test binary (stdio, the named pipe transport,
/// the path rules' agreement).
const TESTED: &[&str] = &[
    "-p",
    "agent-path-rules",
    "-p",
    "agent-beneath",
    "-p",
    "agent-tools",
    "-p",
    "agent-host",
    "-p",
    "agent-runtime",
    "--lib",
    "--bins",
    "--test",
    "stdio",
];

/// Debian's `wine64` package installs the loader here (`/usr/bin/wine64` comes with `wine`).
const WINE: &str = "/usr/lib/wine/wine64";

/// The Debian packages the lane needs, and the files that show each is installed.
const PACKAGES: &[(&str, &str)] = &[
    ("rustc-web", "/usr/bin/rustc"),
    ("cargo-web", "/usr/bin/cargo"),
    (
        "rust-web-src",
        "/usr/lib/rustlib/src/rust/library/Cargo.lock",
    ),
    ("gcc-mingw-w64-x86-64", "/usr/bin/x86_64-w64-mingw32-gcc"),
    ("wine64", "/usr/lib/wine/wine64"),
];

#[derive(clap::Args)]
pub(crate) struct Args {
    /// Install the missing Debian packages with apt-get first (needs root).
    #[arg(long)]
    install: bool,
    /// Build only: no tests under Wine, no certification.
    #[arg(long)]
    build_only: bool,
    /// Skip the agent-tools/agent-host tests under Wine.
    #[arg(long)]
    skip_tests: bool,
    /// Skip the certification of the `.exe`.
    #[arg(long)]
    skip_certify: bool,
    /// Further options for the conformance kit (after `--`), e.g. `-- --tags @core`.
    #[arg(last = true)]
    rest: Vec<String>,
}

pub(crate) fn run(args: Args) -> anyhow::Result<ExitCode> {
    let missing = missing_packages();
    if !missing.is_empty() {
        if args.install {
            install(&missing)?;
        } else {
            anyhow::bail!(
                "the Windows lane needs Debian packages that are not installed: {}. Install them \
                 with `apt-get install -y --no-install-recommends {}` or run `cargo xtask windows \
                 --install` as root.",
                missing.join(", "),
                PACKAGES
                    .iter()
                    .map(|(name, _)| *name)
                    .collect::<Vec<_>>()
                    .join(" ")
            );
        }
    }
    let root = crate::workspace_root();
    let target_dir = crate::certify::target_dir();
    let exe = target_dir
        .join(TARGET)
        .join("debug")
        .join("agent-runtime.exe");
    let started = std::time::Instant::now();
    let mut ok = true;
    if args.build_only || args.skip_tests {
        build(
            &root,
            &["build", "-p", "agent-runtime", "--bin", "agent-runtime"],
        )?;
        println!(
            "xtask: built {} in {:.0} s",
            exe.display(),
            started.elapsed().as_secs_f64()
        );
        if args.build_only {
            return Ok(ExitCode::SUCCESS);
        }
    }
    let prefix = prepare_prefix(&root, &target_dir)?;
    if !args.skip_tests {
        // One build for the tests and the `.exe` the kit certifies (the stdio test binary
        // runs it): building them apart would compile the dependencies twice, once per
        // feature set.
        println!("xtask: cargo test {} under Wine", TESTED.join(" "));
        let status = windows_cargo(&root)
            .args(["test", "--no-fail-fast"])
            .args(TESTED)
            .args(build_std_args())
            .env(runner_variable(), WINE)
            .env("WINEPREFIX", &prefix)
            .env("WINEDEBUG", "-all")
            .status()
            .context("cannot run cargo for the tests under Wine")?;
        println!(
            "xtask: built and ran the tests in {:.0} s",
            started.elapsed().as_secs_f64()
        );
        if !status.success() {
            println!("xtask: the tests under Wine failed ({status})");
            ok = false;
        }
        if !exe.exists() {
            anyhow::bail!("the Windows build made no {}", exe.display());
        }
    }
    if !args.skip_certify {
        let wrapper = write_wrapper(&target_dir, &prefix, &exe)?;
        let started = std::time::Instant::now();
        let certified = crate::certify::run_kit(
            &wrapper.display().to_string(),
            &root.join("conformance/manifests/windows.toml"),
            &target_dir.join("conformance-report-windows"),
            &kit_options(&args.rest),
        )?;
        println!(
            "xtask: the kit ran under Wine for {:.0} s",
            started.elapsed().as_secs_f64()
        );
        ok &= certified;
    }
    Ok(if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// Wine adds a round trip to its server for every system call: a debug `.exe` under Wine
/// answers a 10 MB request line in 4–8 s on a loaded two-core machine, past the kit's 5 s
/// default. The kit waits longer unless told otherwise.
const WINE_TIMEOUT_MS: &str = "20000";

fn kit_options(rest: &[String]) -> Vec<String> {
    let mut options = rest.to_vec();
    if !rest.iter().any(|option| option.starts_with("--timeout-ms")) {
        options.extend(["--timeout-ms".to_owned(), WINE_TIMEOUT_MS.to_owned()]);
    }
    options
}

fn missing_packages() -> Vec<&'static str> {
    PACKAGES
        .iter()
        .filter(|(_, file)| !Path::new(file).exists())
        .map(|(name, _)| *name)
        .collect()
}

fn install(missing: &[&str]) -> anyhow::Result<()> {
    println!("xtask: apt-get install {}", missing.join(" "));
    let update = Command::new("apt-get")
        .arg("update")
        .status()
        .context("cannot run apt-get")?;
    if !update.success() {
        anyhow::bail!("apt-get update failed ({update})");
    }
    let status = Command::new("apt-get")
        .args(["install", "-y", "--no-install-recommends"])
        .args(missing)
        .env("DEBIAN_FRONTEND", "noninteractive")
        .status()
        .context("cannot run apt-get")?;
    if !status.success() {
        anyhow::bail!("apt-get install {} failed ({status})", missing.join(" "));
    }
    Ok(())
}

/// Debian's cargo and rustc (not rustup's, which has no Windows std here), with the nightly
/// switch that `-Zbuild-std` needs.
fn windows_cargo(root: &Path) -> Command {
    let mut command = Command::new("/usr/bin/cargo");
    let path = std::env::var("PATH").unwrap_or_default();
    command
        .current_dir(root)
        .env("PATH", format!("/usr/bin:{path}"))
        .env("RUSTC", "/usr/bin/rustc")
        .env("RUSTDOC", "/usr/bin/rustdoc")
        .env("RUSTC_BOOTSTRAP", "1")
        .env_remove("RUSTUP_TOOLCHAIN")
        .env_remove("CARGO")
        // `.ci/run` lints with rustup's clippy-driver as the workspace's rustc wrapper: it
        // cannot stand in for Debian's rustc.
        .env_remove("RUSTC_WORKSPACE_WRAPPER")
        .env_remove("CLIPPY_ARGS")
        // `.ci/run`'s Linux venv for the MCP interop test: no interpreter Wine can start.
        .env_remove("AGENT_RUNTIME_MCP_PYTHON");
    // Line tables are all the debug info a Windows build needs here (backtraces under Wine),
    // and full debug info makes its std-from-source build much slower to compile and link.
    if std::env::var_os("CARGO_PROFILE_DEV_DEBUG").is_none() {
        command.env("CARGO_PROFILE_DEV_DEBUG", "line-tables-only");
    }
    command
}

/// The dependencies that cost the most to compile and that the runtime does not run hot,
/// unoptimised here. The workspace's `opt-level = 1` for dependencies keeps the Linux kit fast;
/// in this lane the same crates cost 2.5 times the compile work of `opt-level = 0` (`jsonschema`
/// 110 s of units against 20, `rmcp` 97 against 28), and the lane's tests and the kit do not
/// wait on them: MCP (rmcp, its schemas' validation), diffs, TLS (the fakes speak plain HTTP),
/// the command line, the benchmarks' harness, and the proc-macros that only run at compile
/// time. Not `"*"`: with std and the regex engines optimised, the redaction tests still ran 4
/// to 6 times slower under Wine than with the workspace's levels.
const UNOPTIMISED: &[&str] = &[
    "jsonschema",
    "referencing",
    "rmcp",
    "rmcp-macros",
    "similar",
    "rustls",
    "clap_builder",
    "clap_derive",
    "criterion",
    "syn",
    "darling_core",
    "serde_derive",
    "serde_derive_internals",
    "async-trait",
    "zerofrom-derive",
    "yoke-derive",
    "zerocopy-derive",
    "strum_macros",
    "schemars_derive",
    "thiserror-impl",
    "tracing-attributes",
];

fn build_std_args() -> Vec<String> {
    let mut args: Vec<String> = [
        "--locked",
        "--target",
        TARGET,
        "-Zbuild-std=std,panic_abort",
    ]
    .map(str::to_owned)
    .into();
    for package in UNOPTIMISED {
        args.extend([
            "--config".to_owned(),
            format!("profile.dev.package.{package}.opt-level=0"),
        ]);
    }
    args
}

fn runner_variable() -> &'static str {
    "CARGO_TARGET_X86_64_PC_WINDOWS_GNU_RUNNER"
}

fn build(root: &Path, command: &[&str]) -> anyhow::Result<()> {
    println!("xtask: cargo {} --target {TARGET}", command.join(" "));
    let status = windows_cargo(root)
        .args(command)
        .args(build_std_args())
        .status()
        .context("cannot run /usr/bin/cargo")?;
    if !status.success() {
        anyhow::bail!("the Windows build failed ({status})");
    }
    Ok(())
}

/// A Wine prefix under the target dir (never the user's home) with the stand-in
/// `bcryptprimitives.dll` that Wine 8.0 lacks.
fn prepare_prefix(root: &Path, target_dir: &Path) -> anyhow::Result<PathBuf> {
    let prefix = target_dir.join("wine-prefix");
    let system32 = prefix.join("drive_c/windows/system32");
    if !system32.join("kernel32.dll").exists() {
        println!("xtask: creating the Wine prefix {}", prefix.display());
        let status = Command::new(WINE)
            .args(["wineboot", "--init"])
            .env("WINEPREFIX", &prefix)
            .env("WINEDEBUG", "-all")
            .status()
            .context("cannot run wine64")?;
        if !status.success() {
            anyhow::bail!("wineboot failed ({status})");
        }
    }
    let source = root.join("xtask/windows");
    let status = Command::new("x86_64-w64-mingw32-gcc")
        .args(["-shared", "-O2", "-o"])
        .arg(system32.join("bcryptprimitives.dll"))
        .arg(source.join("bcryptprimitives.c"))
        .arg(source.join("bcryptprimitives.def"))
        .arg("-ladvapi32")
        .status()
        .context("cannot run x86_64-w64-mingw32-gcc")?;
    if !status.success() {
        anyhow::bail!("building the stand-in bcryptprimitives.dll failed ({status})");
    }
    Ok(prefix)
}

/// The kit starts runtimes by command line; this wrapper makes the `.exe` one.
fn write_wrapper(target_dir: &Path, prefix: &Path, exe: &Path) -> anyhow::Result<PathBuf> {
    let wrapper = target_dir.join("agent-runtime-wine");
    let script = format!(
        "#!/bin/sh\nWINEPREFIX='{}' WINEDEBUG=-all exec {} '{}' \"$@\"\n",
        prefix.display(),
        WINE,
        exe.display()
    );
    std::fs::write(&wrapper, script)
        .with_context(|| format!("cannot write {}", wrapper.display()))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755))
            .with_context(|| format!("cannot make {} executable", wrapper.display()))?;
    }
    Ok(wrapper)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kit_waits_longer_under_wine_unless_told_otherwise() {
        assert_eq!(kit_options(&[]), ["--timeout-ms", WINE_TIMEOUT_MS]);
        let given = ["--timeout-ms".to_owned(), "9000".to_owned()];
        assert_eq!(kit_options(&given), given);
        let inline = ["--timeout-ms=9000".to_owned()];
        assert_eq!(kit_options(&inline), inline);
    }
}
