//! The enforcer's unit tests: scopes, paths, risk.

use std::path::PathBuf;

use serde_json::json;

use super::paths::resolve;
use super::*;

/// `~` is judged where the tool runtime expands it; an empty home is unset on both sides,
/// so `~/…` is then a folder named `~` in the project, for the enforcer as for the tools.
#[test]
fn a_leading_tilde_is_the_home_folder_and_an_empty_home_is_unset() {
    let dir = tempfile::tempdir().unwrap();
    let root = resolve(dir.path());
    let home = root.join("home");
    let policy = |home: Option<PathBuf>| enforcer(&root, json!([])).with_home(home);
    let judged = |home: Option<PathBuf>, raw: &str| policy(home).judged_path(raw).unwrap();
    assert_eq!(judged(Some(home.clone()), "~"), home);
    assert_eq!(
        judged(Some(home.clone()), "~/.ssh/id_rsa"),
        home.join(".ssh/id_rsa")
    );
    assert_eq!(
        judged(Some(home.clone()), "~other/x"),
        root.join("~other/x")
    );
    assert_eq!(judged(Some(home.clone()), "a/~/x"), root.join("a/~/x"));
    assert_eq!(judged(None, "~/x"), root.join("~/x"));
    assert_eq!(judged(Some(PathBuf::new()), "~/x"), root.join("~/x"));
}

use crate::testing::enforcer;

fn args(path: &str) -> Map<String, Value> {
    json!({ "path": path }).as_object().unwrap().clone()
}

#[test]
fn relative_entries_resolve_against_the_workspace_and_blocked_wins() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "x").unwrap();
    std::fs::write(dir.path().join(".env"), "x").unwrap();
    let policy = enforcer(
        dir.path(),
        json!([{"name": "File.Read", "allowedPaths": ["."], "blockedPaths": [".env"]}]),
    );
    assert_eq!(
        policy.check_tool("File.Read", &args("a.txt")),
        Verdict::Allowed
    );
    assert!(
        matches!(policy.check_tool("File.Read", &args(".env")), Verdict::Denied(r) if r.contains("blocked"))
    );
    assert!(
        matches!(policy.check_tool("File.Read", &args("../outside")), Verdict::Denied(r) if r.contains("not in allowed"))
    );
    assert!(
        matches!(policy.check_tool("File.Write", &args("a.txt")), Verdict::Denied(r) if r.contains("not granted"))
    );
}

/// A blocked pattern that does not compile must not block nothing: it blocks everything of
/// its capability, saying which entry; an unusable allowed pattern admits nothing.
#[test]
fn an_unusable_blocked_pattern_fails_closed() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("key.pem"), "x").unwrap();
    let policy = enforcer(
        dir.path(),
        json!([
            {"name": "File.Read", "allowedPaths": ["."], "blockedPaths": ["[*.pem"]},
            {"name": "File.Write", "allowedPaths": ["[unclosed"]}
        ]),
    );
    for path in ["key.pem", "a.txt"] {
        assert!(
            matches!(policy.check_tool("File.Read", &args(path)), Verdict::Denied(r) if r.contains("\"[*.pem\" is not a usable pattern")),
            "{path}"
        );
    }
    assert!(
        matches!(policy.check_tool("File.Write", &args("a.txt")), Verdict::Denied(r) if r.contains("not in allowed"))
    );
    let bundle = policy.bundle();
    let problems = super::path_glob::problems(bundle);
    assert_eq!(problems.len(), 2, "{problems:?}");
    assert!(problems[0].contains("blocks every path"), "{problems:?}");
    assert!(problems[1].contains("matches nothing"), "{problems:?}");
}

#[test]
fn without_a_workspace_relative_entries_admit_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a.txt");
    std::fs::write(&file, "x").unwrap();
    let bundle: PolicyBundle = serde_json::from_value(json!({
        "policyBundleVersion": "v", "schemaVersion": "1.0", "sessionId": "s",
        "expiresAt": "2999-01-01T00:00:00Z",
        "capabilities": [{"name": "File.Read", "allowedPaths": ["."]}],
        "llmPolicy": {"allowedModels": ["m"]}
    }))
    .unwrap();
    let policy = PolicyEnforcer::new(bundle, None);
    let absolute = file.display().to_string();
    assert!(matches!(
        policy.check_tool("File.Read", &args(&absolute)),
        Verdict::Denied(_)
    ));
    assert!(matches!(
        policy.check_tool("File.Read", &args("/etc/hostname")),
        Verdict::Denied(_)
    ));
}

#[test]
fn prefixes_match_whole_components_only() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("proj")).unwrap();
    std::fs::create_dir(dir.path().join("proj2")).unwrap();
    let policy = enforcer(
        dir.path(),
        json!([{"name": "File.Read", "allowedPaths": ["proj"]}]),
    );
    assert_eq!(
        policy.check_tool("File.Read", &args("proj/x")),
        Verdict::Allowed
    );
    assert!(matches!(
        policy.check_tool("File.Read", &args("proj2/x")),
        Verdict::Denied(_)
    ));
}

fn object(value: Value) -> Map<String, Value> {
    value.as_object().unwrap().clone()
}

fn denied(verdict: Verdict) -> String {
    match verdict {
        Verdict::Denied(reason) => reason,
        other => panic!("expected a denial, got {other:?}"),
    }
}

fn risk(verdict: Verdict) -> RiskLevel {
    match verdict {
        Verdict::ApprovalRequired { risk, .. } => risk,
        other => panic!("expected an approval, got {other:?}"),
    }
}

#[test]
fn shell_commands_are_judged_whole() {
    let dir = tempfile::tempdir().unwrap();
    let mut policy = enforcer(
        dir.path(),
        json!([{"name": "Shell.Exec", "allowedCommands": ["ls", "cargo"],
                "blockedCommands": ["rm -rf /", "sudo"]}]),
    );
    // POSIX lines, whatever the OS the test runs on (cmd.exe's are judged below).
    policy.os = Os::OtherUnix;
    let run =
        |command: Value| policy.check_tool("Shell.Exec", &object(json!({"command": command})));
    assert_eq!(run(json!("ls -la | cargo fmt")), Verdict::Allowed);
    assert_eq!(
        denied(run(json!("ls; rm -rf /"))),
        "Command is blocked: rm -rf /"
    );
    assert_eq!(
        denied(run(json!("ls && curl x"))),
        "Command not in allowed commands: curl"
    );
    assert_eq!(
        denied(run(json!("$CMD"))),
        "Cannot tell which command runs: $CMD"
    );
    assert_eq!(
        denied(run(json!(["ls"]))),
        "RunCommand needs a command string"
    );
    assert_eq!(
        denied(policy.check_tool("Shell.Exec", &Map::new())),
        "RunCommand needs a command string"
    );
}

#[test]
fn shell_risk_is_high_unless_commands_are_allowlisted() {
    let dir = tempfile::tempdir().unwrap();
    let args = object(json!({"command": "cargo test"}));
    let listed = enforcer(
        dir.path(),
        json!([{"name": "Shell.Exec", "allowedCommands": ["cargo"], "requiresApproval": true,
                "approvalRuleId": "r"}]),
    );
    assert_eq!(
        risk(listed.check_tool("Shell.Exec", &args)),
        RiskLevel::Medium
    );
    let open = enforcer(
        dir.path(),
        json!([{"name": "Shell.Exec", "blockedCommands": ["sudo"], "requiresApproval": true}]),
    );
    assert_eq!(risk(open.check_tool("Shell.Exec", &args)), RiskLevel::High);
}

#[test]
fn git_repository_folders_and_staged_files_obey_the_paths_when_set() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("repo")).unwrap();
    let scoped = enforcer(
        dir.path(),
        json!([{"name": "Git.Commit", "allowedPaths": ["repo"], "blockedPaths": ["repo/.env"]},
               {"name": "Git.Status", "allowedPaths": ["."]}]),
    );
    let commit = |args: Value| scoped.check_tool("Git.Commit", &object(args));
    assert_eq!(
        commit(json!({"message": "m", "path": "repo", "files": ["a.txt"]})),
        Verdict::Allowed
    );
    assert!(denied(commit(json!({"message": "m"}))).contains("not in allowed paths"));
    assert!(
        denied(commit(
            json!({"message": "m", "path": "repo", "files": [".env"]})
        ))
        .contains("blocked")
    );
    assert!(
        denied(commit(
            json!({"message": "m", "path": "repo", "files": ["../x"]})
        ))
        .contains("not in allowed paths")
    );
    let status = |args: Value| scoped.check_tool("Git.Status", &object(args));
    assert_eq!(status(json!({})), Verdict::Allowed);
    assert!(denied(status(json!({"path": ".."}))).contains("not in allowed paths"));
}

#[test]
fn the_working_directory_obeys_shell_paths_when_set() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("src")).unwrap();
    let scoped = enforcer(
        dir.path(),
        json!([{"name": "Shell.Exec", "allowedPaths": ["src"]}]),
    );
    let run = |args: Value| scoped.check_tool("Shell.Exec", &object(args));
    assert_eq!(
        run(json!({"command": "ls", "cwd": "src"})),
        Verdict::Allowed
    );
    assert!(denied(run(json!({"command": "ls", "cwd": ".."}))).contains("not in allowed paths"));
    assert!(denied(run(json!({"command": "ls"}))).contains("not in allowed paths"));
    let unscoped = enforcer(dir.path(), json!([{"name": "Shell.Exec"}]));
    assert_eq!(
        unscoped.check_tool("Shell.Exec", &object(json!({"command": "ls", "cwd": "/"}))),
        Verdict::Allowed
    );
}

#[test]
fn http_hosts_are_judged_and_rated() {
    let dir = tempfile::tempdir().unwrap();
    let policy = enforcer(
        dir.path(),
        json!([{"name": "Network.Http", "allowedDomains": ["example.com"],
                "blockedDomains": ["10.*"], "requiresApproval": true}]),
    );
    let get = |url: Value| policy.check_tool("Network.Http", &object(json!({"url": url})));
    assert_eq!(
        risk(get(json!("https://api.example.com/x"))),
        RiskLevel::Medium
    );
    assert_eq!(
        denied(get(json!("https://example.com.evil.net/"))),
        "Domain not allowed: example.com.evil.net"
    );
    assert_eq!(
        denied(get(json!("http://10.0.0.5/"))),
        "Domain is blocked: 10.0.0.5"
    );
    assert!(denied(get(json!("ftp://example.com/"))).contains("Only http and https"));
    assert_eq!(denied(get(json!(5))), "HttpRequest needs a url string");
    let open = enforcer(
        dir.path(),
        json!([{"name": "Network.Http", "requiresApproval": true}]),
    );
    let url = object(json!({"url": "https://example.com/"}));
    assert_eq!(risk(open.check_tool("Network.Http", &url)), RiskLevel::High);
}

#[test]
fn every_path_argument_counts_and_writes_outside_are_high_risk() {
    let dir = tempfile::tempdir().unwrap();
    let policy = enforcer(
        dir.path(),
        json!([{"name": "File.Write", "blockedPaths": [".git/"], "requiresApproval": true},
               {"name": "File.Read", "allowedPaths": ["."]}]),
    );
    let write = |args: Value| policy.check_tool("File.Write", &object(args));
    assert_eq!(risk(write(json!({"path": "a.txt"}))), RiskLevel::Medium);
    assert_eq!(risk(write(json!({"path": "../a.txt"}))), RiskLevel::High);
    assert!(
        denied(write(
            json!({"path": "a.txt", "destination": ".git/config"})
        ))
        .contains("blocked")
    );
    assert!(denied(write(json!({"source": ".git/HEAD"}))).contains("blocked"));
    assert!(denied(write(json!({"path": "a", "cwd": ".git/"}))).contains("blocked"));
    let read = |args: Value| policy.check_tool("File.Read", &object(args));
    assert!(denied(read(json!({"path": "a", "source": "/etc/passwd"}))).contains("not in allowed"));
    let rootless = PolicyEnforcer::new(policy.bundle().clone(), None);
    let inside = dir.path().join("a.txt");
    assert_eq!(
        risk(rootless.check_tool("File.Write", &object(json!({"path": inside})))),
        RiskLevel::High
    );
}

#[cfg(unix)]
#[test]
fn a_symlink_into_a_blocked_directory_is_denied() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("secrets")).unwrap();
    std::fs::write(dir.path().join("secrets/key"), "k").unwrap();
    std::os::unix::fs::symlink(dir.path().join("secrets"), dir.path().join("link")).unwrap();
    let policy = enforcer(
        dir.path(),
        json!([{"name": "File.Read", "allowedPaths": ["."], "blockedPaths": ["secrets/"]}]),
    );
    assert!(matches!(
        policy.check_tool("File.Read", &args("link/key")),
        Verdict::Denied(_)
    ));
}

#[test]
fn granted_paths_are_the_allowed_paths_resolved_or_none() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let policy = enforcer(
        &root,
        json!([
            {"name": "Git.Push", "allowedPaths": [".", "/srv/../opt/repos"]},
            {"name": "Git.Status"}
        ]),
    );
    let push = policy.capability("Git.Push").unwrap();
    assert_eq!(
        policy.granted_paths(push),
        Some(vec![
            root.display().to_string(),
            policy
                .judged_path("/opt/repos")
                .unwrap()
                .display()
                .to_string()
        ])
    );
    let status = policy.capability("Git.Status").unwrap();
    assert_eq!(policy.granted_paths(status), None);
}

/// A path the shared rules cannot resolve is the tool's to refuse as an invalid request
/// (local-tool-runtime.md §6.1); a redirection target, which a shell opens by its own rules,
/// is denied instead.
#[test]
fn an_unresolvable_path_is_left_to_the_tool_but_an_unresolvable_redirection_is_denied() {
    let dir = tempfile::tempdir().unwrap();
    let policy = enforcer(
        dir.path(),
        json!([
            {"name": "File.Read", "allowedPaths": ["."]},
            {"name": "File.Write", "allowedPaths": ["."]},
            {"name": "Shell.Exec", "allowedCommands": ["echo"]}
        ]),
    );
    let long = "a/".repeat(2500);
    assert_eq!(
        policy.check_tool("File.Read", &args(&long)),
        Verdict::Allowed
    );
    assert_eq!(policy.check_tool("File.Read", &args("")), Verdict::Allowed);
    let command = json!({"command": format!("echo x > {long}")});
    assert!(
        matches!(policy.check_tool("Shell.Exec", command.as_object().unwrap()), Verdict::Denied(r) if r.contains("characters long")),
    );
}

/// A share the model names is judged as written, never opened to resolve it: on Windows that
/// would contact the server with the user's credentials before the policy said yes. (Wine
/// maps no share, so only the classification below can show a difference there.)
#[cfg(windows)]
#[test]
fn a_network_path_is_judged_as_written() {
    for remote in [r"\\srv\share\x", r"\\?\UNC\srv\share\x", r"\\.\pipe\x"] {
        assert!(
            super::paths::is_remote(std::path::Path::new(remote)),
            "{remote}"
        );
    }
    for local in [r"C:\x", r"\\?\C:\x", r"\x", "x"] {
        assert!(
            !super::paths::is_remote(std::path::Path::new(local)),
            "{local}"
        );
    }
    let dir = tempfile::tempdir().unwrap();
    let policy = enforcer(
        dir.path(),
        json!([{"name": "File.Read", "allowedPaths": ["."]}]),
    );
    let raw = r"\\attacker.invalid\share\x";
    assert_eq!(policy.judged_path(raw).unwrap(), PathBuf::from(raw));
    assert!(matches!(
        policy.check_tool("File.Read", &args(raw)),
        Verdict::Denied(_)
    ));
}

/// The enforcer reads a command as the shell of the OS it judges for runs it: cmd.exe on
/// Windows, where `for`, `if`, `do` and blocks are syntax and builtins are commands.
#[test]
fn on_windows_commands_are_read_as_cmd_exe_reads_them() {
    let dir = tempfile::tempdir().unwrap();
    let mut policy = enforcer(
        dir.path(),
        json!([{"name": "Shell.Exec", "allowedCommands": ["echo", "type"],
                "blockedCommands": ["del"]}]),
    );
    policy.os = Os::Windows;
    let run = |command: &str| policy.check_tool("Shell.Exec", &object(json!({"command": command})));
    assert_eq!(run("for /L %i in (1,1,3) do @echo %i"), Verdict::Allowed);
    assert_eq!(run("(echo a & type b) >nul"), Verdict::Allowed);
    assert_eq!(
        denied(run("for /L %i in (1,1,3) do @d^el %i")),
        "Command is blocked: del"
    );
    assert_eq!(
        denied(run("echo a& cmd /c \"echo\" \"&calc\"")),
        "Command not in allowed commands: cmd"
    );
    assert_eq!(
        denied(run("echo a& set X=1")),
        "Command not in allowed commands: set"
    );
    assert_eq!(
        denied(run("echo a > started")),
        "The command writes started by redirection, but File.Write is not granted"
    );
    policy.os = Os::OtherUnix;
    let line = json!({"command": "for /L %i in (1,1,3) do @echo %i"});
    assert!(matches!(
        policy.check_tool("Shell.Exec", &object(line)),
        Verdict::Denied(_)
    ));
}

/// INTEROP.md §11: the searches' `directory` and MoveFile's two ends are judged like a file
/// tool's `path`, and the tool runtime is told the entry's blocked paths (prefixes resolved,
/// globs as written) to leave them out of what a search finds.
#[test]
fn coding_tools_have_every_path_argument_judged_and_are_told_the_blocked_paths() {
    let dir = tempfile::tempdir().unwrap();
    let root = resolve(dir.path());
    std::fs::create_dir(root.join("secrets")).unwrap();
    let policy = enforcer(
        &root,
        json!([
            {"name": "File.Read", "allowedPaths": ["."], "blockedPaths": ["secrets", "*.pem"]},
            {"name": "File.Write", "allowedPaths": ["."], "blockedPaths": [".git/"]}
        ]),
    );
    let call = |capability: &str, arguments: Value| {
        policy.check_tool(capability, arguments.as_object().unwrap())
    };
    let denied =
        |verdict: Verdict| matches!(verdict, Verdict::Denied(reason) if reason.contains("blocked"));
    assert!(denied(call(
        "File.Read",
        json!({"directory": "secrets", "pattern": "*"})
    )));
    assert_eq!(
        call("File.Read", json!({"directory": ".", "pattern": "*"})),
        Verdict::Allowed
    );
    assert!(matches!(
        call("File.Read", json!({"directory": "/", "pattern": "*"})),
        Verdict::Denied(reason) if reason.contains("not in allowed")
    ));
    assert!(denied(call(
        "File.Write",
        json!({"source": "a.txt", "destination": ".git/hooks/pre-commit"})
    )));
    assert!(denied(call(
        "File.Write",
        json!({"source": ".git/config", "destination": "config"})
    )));
    let read = policy.capability("File.Read").unwrap();
    assert_eq!(
        policy.blocked_paths(read),
        Some(vec![
            root.join("secrets").display().to_string(),
            "*.pem".to_owned()
        ])
    );
    assert_eq!(
        policy.blocked_paths(&agent_protocol::policy::CapabilityEntry::default()),
        None
    );
}
