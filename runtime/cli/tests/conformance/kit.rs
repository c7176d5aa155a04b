//! The kit's runs of the reference runtime (see the target's header).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use conformance::{RunOptions, RuntimeCommand, Transport};

// The harness's list of runs, one block each.
#[allow(clippy::too_many_lines)]
pub(crate) fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    if let Some(at) = args.iter().position(|arg| arg == VARIANCE_WRAP) {
        return variance_wrapper(&args[at + 1..]);
    }
    if args.iter().skip(1).any(|arg| arg == "--list") {
        return ExitCode::SUCCESS;
    }
    let runtime = runtime_command();
    let mut options = RunOptions::new(runtime);
    options.manifest = match conformance::runtime_manifest::RuntimeManifest::load(
        &conformance::runtime_manifest::reference_manifest_path(),
    ) {
        Ok(manifest) => manifest,
        Err(error) => {
            eprintln!("{error:#}");
            return ExitCode::FAILURE;
        }
    };
    options.features = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../features"));
    options.tags = std::env::var("CONFORMANCE_TAGS")
        .ok()
        .filter(|t| !t.trim().is_empty());
    options.report_dir = std::env::var_os("CONFORMANCE_REPORT_DIR").map(PathBuf::from);
    match std::env::var("CONFORMANCE_TRANSPORT").as_deref() {
        Ok("socket") => options.transport = Transport::Socket,
        Ok("http") => options.transport = Transport::Http,
        _ => {}
    }
    let mut runs = vec![("full suite", options.clone())];
    let mut tags: Vec<String> = (1..=13)
        .chain([17])
        .map(|n| format!("@REQ-RPC-{n:03}"))
        .collect();
    tags.push("@REQ-SES-017".to_owned());
    if cfg!(unix) && options.transport == Transport::Stdio {
        let mut socket = options.clone();
        socket.transport = Transport::Socket;
        socket.report_dir = socket.report_dir.map(|dir| dir.join("socket"));
        socket.tags = Some(tags.join(" or "));
        runs.push((
            "JSON-RPC framing and end of input over the socket transport",
            socket,
        ));
    }
    if options.transport == Transport::Stdio && options.tags.is_none() {
        // The permissible-variance runtime: this runtime behind a wrapper that changes what
        // the documents leave open, declaring core + interop and none of our knobs. The kit
        // must certify it: what it judges is the spec, not this runtime's choices.
        match variance_options(&options) {
            Ok(variance) => runs.push((
                "the permissible-variance runtime (core + interop, no reference knob)",
                variance,
            )),
            Err(error) => {
                eprintln!("conformance: {error:#}");
                return ExitCode::FAILURE;
            }
        }
    }
    if options.transport == Transport::Stdio {
        let mut http = options.clone();
        http.transport = Transport::Http;
        http.report_dir = http.report_dir.map(|dir| dir.join("http"));
        tags.push("@REQ-EVT-001".to_owned());
        http.tags = Some(tags.join(" or "));
        runs.push((
            "JSON-RPC framing, events and end of input over the HTTP transport",
            http,
        ));
    }

    if options.transport == Transport::Stdio {
        // The runtime as the Session Service's sandbox (INTEROP.md §9), the kit playing the
        // service: §9's own scenarios, plus a task, the event envelope and the OS sandbox of
        // commands through the proxy (the full suite: `conformance --transport sandbox`).
        let mut sandbox = options.clone();
        sandbox.transport = Transport::Sandbox;
        sandbox.report_dir = sandbox.report_dir.map(|dir| dir.join("sandbox"));
        // Every §9 requirement the catalogue lists, so a new one is run without an edit here.
        let catalogue = match conformance::catalogue::Catalogue::load(
            &options.features.join("requirements.toml"),
        ) {
            Ok(catalogue) => catalogue,
            Err(error) => {
                eprintln!("{error:#}");
                return ExitCode::FAILURE;
            }
        };
        let mut tags: Vec<String> = catalogue
            .requirements
            .iter()
            .filter(|requirement| requirement.id.starts_with("REQ-SBX-"))
            .map(|requirement| format!("@{}", requirement.id))
            .collect();
        tags.extend(
            [
                "@REQ-EVT-001",
                "@REQ-TASK-001",
                "@REQ-CAN-001",
                "@REQ-HARD-050",
                "@REQ-HARD-052",
                "@REQ-HARD-053",
                "@REQ-HARD-054",
            ]
            .map(str::to_owned),
        );
        sandbox.tags = Some(tags.join(" or "));
        runs.push((
            "the Sandbox Agent Host behind the Session Service (sandbox transport)",
            sandbox,
        ));
    }
    let tokio = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(tokio) => tokio,
        Err(error) => {
            eprintln!("conformance: cannot start tokio: {error}");
            return ExitCode::from(2);
        }
    };
    let mut code = ExitCode::SUCCESS;
    for (what, options) in runs {
        match tokio.block_on(conformance::run(options)) {
            Ok(outcome) => {
                println!("\n{what}: {}", outcome.summary());
                if !outcome.passed {
                    code = ExitCode::FAILURE;
                }
            }
            Err(error) => {
                eprintln!("conformance ({what}): {error:#}");
                tokio.shutdown_timeout(std::time::Duration::from_secs(2));
                return ExitCode::from(2);
            }
        }
    }
    // The kit against a runtime that breaks one thing on purpose (conformance/examples/): its
    // baseline names exactly what it breaks, a stale entry fails, no baseline fails.
    if cfg!(unix) {
        match tokio.block_on(nonconforming_example()) {
            Ok(()) => println!("\nnon-conforming example: its baseline holds exactly"),
            Err(error) => {
                eprintln!("FAILED non-conforming example: {error:#}");
                code = ExitCode::FAILURE;
            }
        }
    }
    // A short crash campaign (SIGKILL at random moments, resume in a new process); the
    // long one is `cargo xtask crash`. CONFORMANCE_CRASH_RUNS=0 skips it.
    let crash_runs = std::env::var("CONFORMANCE_CRASH_RUNS")
        .ok()
        .and_then(|runs| runs.parse().ok())
        .unwrap_or(8);
    if crash_runs > 0 && cfg!(unix) {
        let mut crash = conformance::crash::CrashOptions::new(runtime_command());
        crash.runs = crash_runs;
        let report = tokio.block_on(conformance::crash::run_campaign(&crash));
        for failure in &report.failures {
            eprintln!("FAILED {failure}");
        }
        println!("\n{}", report.summary());
        if !report.passed() {
            code = ExitCode::FAILURE;
        }
    }
    tokio.shutdown_timeout(std::time::Duration::from_secs(2));
    code
}

/// The argument that makes this test binary act as the variance wrapper (so the kit can
/// start it as a runtime without another binary to build).
const VARIANCE_WRAP: &str = "--variance-wrap";

fn variance_wrapper(command: &[String]) -> ExitCode {
    let Some((program, args)) = command.split_first() else {
        eprintln!("{VARIANCE_WRAP} needs the wrapped runtime's command");
        return ExitCode::from(2);
    };
    let tokio = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(tokio) => tokio,
        Err(error) => {
            eprintln!("variance wrapper: cannot start tokio: {error}");
            return ExitCode::from(2);
        }
    };
    let code = tokio.block_on(conformance::variance::run(program, args));
    tokio.shutdown_timeout(std::time::Duration::from_millis(200));
    match code {
        Ok(code) => ExitCode::from(u8::try_from(code).unwrap_or(1)),
        Err(error) => {
            eprintln!("variance wrapper: {error:#}");
            ExitCode::from(2)
        }
    }
}

/// The full suite against the variance runtime, with its own manifest.
fn variance_options(reference: &RunOptions) -> anyhow::Result<RunOptions> {
    let exe = std::env::current_exe()?;
    let mut options = reference.clone();
    options.runtime = RuntimeCommand {
        program: exe.display().to_string(),
        args: vec![
            VARIANCE_WRAP.to_owned(),
            env!("CARGO_BIN_EXE_agent-runtime").to_owned(),
        ],
        display: "variance-runtime (agent-runtime behind conformance::variance)".to_owned(),
    };
    options.manifest = conformance::runtime_manifest::RuntimeManifest::load(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("../../conformance/manifests/variance.toml"),
    )?;
    options.report_dir = options.report_dir.map(|dir| dir.join("variance"));
    Ok(options)
}

/// Certifies `conformance/examples/nonconforming-runtime.sh` three times: with its baseline
/// (passes, with exactly its two known failures), with a baseline holding a stale entry and
/// with none (both fail).
async fn nonconforming_example() -> anyhow::Result<()> {
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../conformance/examples");
    let runtime = RuntimeCommand {
        program: examples
            .join("nonconforming-runtime.sh")
            .display()
            .to_string(),
        args: vec![env!("CARGO_BIN_EXE_agent-runtime").to_owned()],
        display: "nonconforming-runtime.sh".to_owned(),
    };
    let certify = |baseline: Option<&str>| {
        let mut options = RunOptions::new(runtime.clone());
        options.features = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../features"));
        options.tags = Some("@REQ-RPC-005 or @REQ-RPC-006 or @REQ-RPC-010".to_owned());
        options.baseline = baseline.map(|file| examples.join(file));
        conformance::run(options)
    };
    let with = certify(Some("nonconforming.baseline.toml")).await?;
    let known = with.baseline.as_ref().map_or(0, |b| b.known_failures.len());
    anyhow::ensure!(
        with.passed && known == 2,
        "with its baseline the example must pass with 2 known failures: {}",
        with.summary()
    );
    let stale = certify(Some("stale.baseline.toml")).await?;
    let stale_entries = stale.baseline.as_ref().map_or(0, |b| b.stale.len());
    anyhow::ensure!(
        !stale.passed && stale_entries == 1,
        "a stale baseline entry must fail the run: {}",
        stale.summary()
    );
    let bare = certify(None).await?;
    anyhow::ensure!(
        !bare.passed,
        "without a baseline the example's failures must fail the run: {}",
        bare.summary()
    );
    Ok(())
}

fn runtime_command() -> RuntimeCommand {
    RuntimeCommand::from_program(Path::new(env!("CARGO_BIN_EXE_agent-runtime")))
}
