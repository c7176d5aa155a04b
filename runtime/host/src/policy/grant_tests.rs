//! What the tools are granted, one capability at a time.

use std::time::Duration;

use agent_protocol::methods::TaskOptions;
use serde_json::json;

use crate::policy::paths::resolve;
use crate::testing::enforcer;

fn no_options() -> TaskOptions {
    TaskOptions::default()
}

fn root() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = resolve(dir.path());
    (dir, root)
}

fn text(path: std::path::PathBuf) -> String {
    path.display().to_string()
}

#[test]
fn a_call_of_no_capability_is_granted_nothing() {
    let (_dir, root) = root();
    let policy = enforcer(&root, json!([{"name": "Network.Http"}]));
    let grant = policy.grant(None, Some("Shell.Exec"), &no_options());
    assert!(grant.granted_paths.is_none() && grant.blocked_paths.is_none());
    assert!(grant.sandbox.is_none() && grant.max_time.is_none());
    assert!(grant.limits.url_check.is_none());
}

#[test]
fn file_read_gets_its_paths_and_size_limit_and_no_process() {
    let (_dir, root) = root();
    let policy = enforcer(
        &root,
        json!([{"name": "File.Read", "allowedPaths": ["."], "blockedPaths": [".env", "*.pem"],
                "maxFileSizeBytes": 1000}]),
    );
    let grant = policy.grant(Some("File.Read"), Some("File.Read"), &no_options());
    assert_eq!(grant.granted_paths, Some(vec![text(root.clone())]));
    let blocked = grant.blocked_paths.unwrap();
    assert!(blocked.contains(&text(root.join(".env"))), "{blocked:?}");
    assert!(
        blocked.iter().any(|entry| entry.ends_with("*.pem")),
        "{blocked:?}"
    );
    assert_eq!(grant.limits.max_file_size_bytes, Some(1000));
    assert_eq!(grant.limits.timeout_ms, None);
    assert!(grant.sandbox.is_none());
    assert!(
        grant.limits.url_check.is_none(),
        "no Network.Http, no URL rules"
    );
}

#[test]
fn file_write_gets_its_own_entry_not_file_read_s() {
    let (_dir, root) = root();
    let policy = enforcer(
        &root,
        json!([{"name": "File.Read", "allowedPaths": ["/"]},
               {"name": "File.Write", "allowedPaths": ["src"], "maxFileSizeBytes": 7}]),
    );
    let grant = policy.grant(Some("File.Write"), Some("File.Write"), &no_options());
    assert_eq!(grant.granted_paths, Some(vec![text(root.join("src"))]));
    assert_eq!(grant.blocked_paths, None);
    assert_eq!(grant.limits.max_file_size_bytes, Some(7));
    assert!(grant.sandbox.is_none());
}

#[test]
fn shell_exec_gets_a_sandbox_and_its_output_limit() {
    let (_dir, root) = root();
    let policy = enforcer(
        &root,
        json!([{"name": "Shell.Exec", "maxOutputBytes": 500}, {"name": "Network.Http"}]),
    );
    let grant = policy.grant(Some("Shell.Exec"), Some("Shell.Exec"), &no_options());
    assert_eq!(grant.limits.max_output_bytes, Some(500));
    let sandbox = grant.sandbox.unwrap();
    assert_eq!(sandbox.write_paths, vec![text(root.clone())]);
    assert!(sandbox.network, "Network.Http is granted");
    // What the process asks the egress proxy for is judged by Network.Http's rules.
    assert!(grant.limits.url_check.is_some());
    let offline = policy.grant(
        Some("Shell.Exec"),
        Some("Shell.Exec"),
        &TaskOptions {
            allow_network: Some(false),
            ..TaskOptions::default()
        },
    );
    assert!(!offline.sandbox.unwrap().network, "allowNetwork: false");
}

#[test]
fn network_http_redirects_are_held_to_its_domains() {
    let (_dir, root) = root();
    let policy = enforcer(
        &root,
        json!([{"name": "Network.Http", "allowedDomains": ["example.com"]}]),
    );
    let grant = policy.grant(Some("Network.Http"), Some("Network.Http"), &no_options());
    let check = grant.limits.url_check.unwrap();
    assert!(check.check("https://example.com/a").is_ok());
    assert!(check.check("https://elsewhere.org/").is_err());
    assert!(grant.sandbox.is_none());
}

#[test]
fn git_push_reaches_only_its_remote_allowlist() {
    let (_dir, root) = root();
    let policy = enforcer(
        &root,
        json!([{"name": "Git.Push", "allowedDomains": ["git.example.com"]},
               {"name": "Network.Http", "allowedDomains": ["elsewhere.org"]}]),
    );
    let grant = policy.grant(Some("Git.Push"), Some("Git.Push"), &no_options());
    let check = grant.limits.url_check.unwrap();
    assert!(check.check("https://git.example.com/repo.git").is_ok());
    assert!(
        check.check("https://elsewhere.org/").is_err(),
        "Network.Http's domains are not the push's"
    );
    assert!(grant.sandbox.unwrap().network);
}

#[test]
fn a_git_tool_judged_as_a_file_tool_still_gets_git_s_sandbox() {
    let (_dir, root) = root();
    let policy = enforcer(
        &root,
        json!([{"name": "File.Write", "blockedPaths": [".git/"]}]),
    );
    let grant = policy.grant(Some("File.Write"), Some("Git.Commit"), &no_options());
    let sandbox = grant.sandbox.unwrap();
    assert!(
        sandbox.blocked_paths.contains(&text(root.join(".git"))),
        "{sandbox:?}"
    );
}

#[test]
fn code_execute_is_bounded_by_its_time_and_its_own_network_switch() {
    let (_dir, root) = root();
    let policy = enforcer(
        &root,
        json!([{"name": "Code.Execute", "maxExecutionTimeSeconds": 30, "allowCodeNetwork": false},
               {"name": "Network.Http"}]),
    );
    let grant = policy.grant(Some("Code.Execute"), Some("Code.Execute"), &no_options());
    assert_eq!(grant.max_time, Some(Duration::from_secs(30)));
    assert!(!grant.sandbox.unwrap().network);
    let other = policy.grant(Some("Shell.Exec"), Some("Shell.Exec"), &no_options());
    assert_eq!(other.max_time, None, "only Code.Execute has a policy time");
}
