//! The defaults are written twice in code: as the clap declarations the binary runs with
//! (`--help` shows them) and as `HostConfig::with_endpoints` and `AuditConfig::default`,
//! which tests and benches build configurations from. This test holds the two equal; the
//! README's default column is held to the clap declarations by tidy (`config_vars.rs`).

use clap::{CommandFactory, FromArgMatches};

use super::Cli;

/// The configuration the binary builds from its declared defaults alone: the environment
/// of the test process is ignored, so a developer's exported variable changes nothing.
fn from_declared_defaults() -> agent_host::HostConfig {
    let command = Cli::command().mut_args(|arg| arg.env(None));
    let matches = command
        .try_get_matches_from([
            "agent-runtime",
            "--llm-gateway-endpoint",
            "http://gateway/v1",
            "--llm-gateway-auth-token",
            "token",
            "--session-service-url",
            "http://session",
            "--workspace-service-url",
            "http://workspace",
        ])
        .unwrap();
    Cli::from_arg_matches(&matches)
        .unwrap()
        .to_host_config()
        .unwrap()
}

#[test]
fn the_declared_defaults_are_the_host_configs_defaults() {
    let mut declared = from_declared_defaults();
    let library = agent_host::HostConfig::with_endpoints(
        "http://gateway/v1",
        "token",
        "http://session",
        "http://workspace",
    );
    // The one default that differs by design: the binary puts checkpoints in the
    // platform's data folder, the library (tests, benches) in the temporary folder.
    declared.checkpoint_dir = library.checkpoint_dir.clone();
    assert_eq!(format!("{declared:#?}"), format!("{library:#?}"));
}
