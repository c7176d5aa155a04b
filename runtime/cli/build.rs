//! Release builds for x86_64 Linux link the functions a session runs — start-up,
//! CreateSession, steps, streaming — next to each other (`hot-symbols.txt`, made by
//! `cargo xtask hot-symbols` from an instruction profile of `cargo xtask bench`). The kernel
//! maps code in 64 KiB windows around each page it faults in, so hot code scattered over
//! the binary kept about three times its size resident (BENCHMARKS.md).
//!
//! The ordering needs LLD, the default linker of that target since Rust 1.90 (rust-lld).
//! It is left out with an older compiler and when another linker may be in use: a
//! configured `target.….linker`, or flags that name a linker or `-fuse-ld`. Names it
//! no longer finds (renamed or inlined code) are skipped silently, so a stale list costs
//! only memory; set `AGENT_RUNTIME_NO_SYMBOL_ORDER=1` to link without it.
//!
//! The same builds pack their relative relocations when the glibc allows (see
//! [`relr_wanted`]).

// A build script talks to Cargo through stdout.
#![allow(clippy::print_stdout)]

fn main() {
    println!("cargo:rerun-if-changed=hot-symbols.txt");
    println!("cargo:rerun-if-env-changed=AGENT_RUNTIME_NO_SYMBOL_ORDER");
    println!("cargo:rerun-if-env-changed=RUSTC_LINKER");
    let release = std::env::var("PROFILE").is_ok_and(|profile| profile == "release");
    let lld_target =
        std::env::var("TARGET").is_ok_and(|target| target == "x86_64-unknown-linux-gnu");
    let disabled = std::env::var_os("AGENT_RUNTIME_NO_SYMBOL_ORDER").is_some();
    // Cargo tells build scripts about a configured linker; flags may choose one too.
    let other_linker = std::env::var_os("RUSTC_LINKER").is_some()
        || std::env::var("CARGO_ENCODED_RUSTFLAGS")
            .is_ok_and(|flags| flags.contains("linker") || flags.contains("fuse-ld"));
    if !(release && lld_target) || disabled || other_linker || !rust_lld_by_default() {
        return;
    }
    let Some(dir) = std::env::var_os("CARGO_MANIFEST_DIR") else {
        return;
    };
    let list = std::path::Path::new(&dir).join("hot-symbols.txt");
    println!(
        "cargo:rustc-link-arg-bins=-Wl,--symbol-ordering-file={}",
        list.display()
    );
    println!("cargo:rustc-link-arg-bins=-Wl,--no-warn-symbol-ordering");
    if relr_wanted() {
        println!("cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    }
}

/// Packed relative relocations (RELR): the loader reads a few KiB instead of ~600 KiB of
/// `.rela.dyn` at every start, which kept those pages resident. The binary then needs
/// glibc 2.36 or later (`GLIBC_ABI_DT_RELR`), so it is packed only when built natively on
/// such a glibc; `AGENT_RUNTIME_NO_RELR=1` builds for glibc 2.34–2.35 (Ubuntu 22.04).
fn relr_wanted() -> bool {
    println!("cargo:rerun-if-env-changed=AGENT_RUNTIME_NO_RELR");
    if std::env::var_os("AGENT_RUNTIME_NO_RELR").is_some()
        || std::env::var("HOST").ok() != std::env::var("TARGET").ok()
    {
        return false;
    }
    let Ok(output) = std::process::Command::new("getconf")
        .arg("GNU_LIBC_VERSION")
        .output()
    else {
        return false;
    };
    let text = String::from_utf8_lossy(&output.stdout);
    let Some(version) = text.trim().strip_prefix("glibc ") else {
        return false;
    };
    let mut parts = version.split('.').map(str::parse::<u32>);
    matches!(
        (parts.next(), parts.next()),
        (Some(Ok(major)), Some(Ok(minor))) if (major, minor) >= (2, 36)
    )
}

/// Whether this compiler links x86_64 Linux with rust-lld by default (Rust 1.90 and later).
fn rust_lld_by_default() -> bool {
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let Ok(output) = std::process::Command::new(rustc).arg("-vV").output() else {
        return false;
    };
    let text = String::from_utf8_lossy(&output.stdout);
    let Some(release) = text.lines().find_map(|line| line.strip_prefix("release: ")) else {
        return false;
    };
    let mut parts = release.split(['.', '-']).map(str::parse::<u32>);
    matches!(
        (parts.next(), parts.next()),
        (Some(Ok(major)), Some(Ok(minor))) if (major, minor) >= (1, 90)
    )
}
