//! The sandbox launcher (`agent-runtime --sandbox-exec <plan> -- program args…`):
//! a command it starts writes only where the plan says, leaves read-only folders alone and,
//! without network, reaches no listener. Linux only (Landlock, seccomp, namespaces).
#![cfg(target_os = "linux")]

use std::net::TcpListener;
use std::path::Path;
use std::process::{Command, Output};

fn launch(dir: &Path, plan: &serde_json::Value, script: &str) -> std::io::Result<Output> {
    Command::new(env!("CARGO_BIN_EXE_agent-runtime"))
        .arg("--sandbox-exec")
        .arg(plan.to_string())
        .args(["--", "/bin/bash", "-c", script])
        .current_dir(dir)
        .output()
}

fn plan(workspace: &Path, network: bool) -> serde_json::Value {
    serde_json::json!({
        "write": [workspace],
        "read_only": [workspace.join(".git")],
        "network": network,
        "required": true,
        "namespaces": true,
    })
}

/// Landlock and seccomp alone (a kernel without user namespaces): nothing inside the grant
/// to keep read-only, which that wall cannot do.
fn wall_only_plan(workspace: &Path) -> serde_json::Value {
    serde_json::json!({
        "write": [workspace, "/dev/null"],
        "network": false,
        "required": true,
        "namespaces": false,
    })
}

#[test]
fn a_sandboxed_command_writes_only_in_its_folders_and_not_in_git() {
    let root = tempfile::tempdir().unwrap();
    let (workspace, outside) = (root.path().join("ws"), root.path().join("out"));
    std::fs::create_dir_all(workspace.join(".git")).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(workspace.join(".git/config"), "[core]\n").unwrap();
    let script = format!(
        "echo in > inside.txt; echo x > {}/f; echo '\tfsmonitor = x' >> .git/config; echo done",
        outside.display()
    );
    let output = launch(&workspace, &plan(&workspace, false), &script).unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(
        String::from_utf8_lossy(&output.stdout),
        "done\n",
        "{stderr}"
    );
    assert_eq!(
        std::fs::read_to_string(workspace.join("inside.txt")).unwrap(),
        "in\n"
    );
    assert!(!outside.join("f").exists(), "{stderr}");
    assert_eq!(
        std::fs::read_to_string(workspace.join(".git/config")).unwrap(),
        "[core]\n"
    );
    assert!(stderr.contains("Read-only file system"), "{stderr}");
}

#[test]
fn a_tool_cache_is_written_through_a_private_layer_that_ends_with_the_command() {
    // Outside `/tmp`, which the view replaces with the private temporary folder: caches
    // live in the home folder.
    let root = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let (workspace, cache, tmp) = (
        root.path().join("ws"),
        root.path().join("cache"),
        root.path().join("tmp"),
    );
    for folder in [&workspace, &cache, &tmp] {
        std::fs::create_dir_all(folder).unwrap();
    }
    std::fs::write(cache.join("index"), "kept\n").unwrap();
    let plan = serde_json::json!({
        "write": [workspace, tmp],
        "caches": [cache],
        "tmp": tmp,
        "network": false,
        "required": true,
        "namespaces": true,
    });
    let script = format!(
        "echo new > {cache}/entry && echo changed > {cache}/index && cat {cache}/index {cache}/entry",
        cache = cache.display()
    );
    let output = launch(&workspace, &plan, &script).unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(
        String::from_utf8_lossy(&output.stdout),
        "changed\nnew\n",
        "the command writes its cache: {stderr}"
    );
    assert_eq!(
        std::fs::read_to_string(cache.join("index")).unwrap(),
        "kept\n"
    );
    assert!(!cache.join("entry").exists());
    let left: Vec<_> = std::fs::read_dir(&tmp).unwrap().flatten().collect();
    assert!(left.is_empty(), "nothing is left behind: {left:?}");
}

#[test]
fn without_namespaces_the_wall_alone_keeps_writes_in_the_grant() {
    let root = tempfile::tempdir().unwrap();
    let (workspace, outside) = (root.path().join("ws"), root.path().join("out"));
    std::fs::create_dir_all(&workspace).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    let script = format!(
        "echo in > inside.txt; echo x > {}/f; echo done",
        outside.display()
    );
    let output = launch(&workspace, &wall_only_plan(&workspace), &script).unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(
        String::from_utf8_lossy(&output.stdout),
        "done\n",
        "{stderr}"
    );
    assert!(workspace.join("inside.txt").exists(), "{stderr}");
    assert!(!outside.join("f").exists(), "{stderr}");
    assert!(stderr.contains("Permission denied"), "{stderr}");
}

#[test]
fn without_namespaces_a_hidden_path_outside_the_grants_is_unreadable() {
    let root = tempfile::tempdir().unwrap();
    let (workspace, home) = (root.path().join("ws"), root.path().join("home"));
    std::fs::create_dir_all(&workspace).unwrap();
    std::fs::create_dir_all(home.join(".ssh")).unwrap();
    std::fs::write(home.join(".ssh/id_ed25519"), "private key").unwrap();
    std::fs::write(home.join(".gitconfig"), "settings").unwrap();
    let plan = serde_json::json!({
        "write": [workspace, "/dev/null"],
        "hidden": [home.join(".ssh")],
        "network": false,
        "required": true,
        "namespaces": false,
    });
    let script = format!(
        "cat {home}/.gitconfig; echo; cat {home}/.ssh/id_ed25519; ls {home}/.ssh; echo written > mine && cat mine",
        home = home.display()
    );
    let output = launch(&workspace, &plan, &script).unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(
        String::from_utf8_lossy(&output.stdout),
        "settings\nwritten\n",
        "{stderr}"
    );
    assert!(stderr.contains("Permission denied"), "{stderr}");
}

#[test]
fn without_network_no_socket_reaches_a_loopback_listener_and_with_it_one_does() {
    let root = tempfile::tempdir().unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let script = format!("echo hi > /dev/tcp/127.0.0.1/{port}");
    let denied = launch(root.path(), &plan(root.path(), false), &script).unwrap();
    assert!(!denied.status.success());
    assert_eq!(
        listener.accept().map(|_| ()).unwrap_err().kind(),
        std::io::ErrorKind::WouldBlock
    );
    let allowed = launch(root.path(), &plan(root.path(), true), &script).unwrap();
    assert!(
        allowed.status.success(),
        "{}",
        String::from_utf8_lossy(&allowed.stderr)
    );
    assert!(listener.accept().is_ok());
}

#[test]
fn a_malformed_plan_is_refused_with_a_readable_message() {
    let output = Command::new(env!("CARGO_BIN_EXE_agent-runtime"))
        .args(["--sandbox-exec", "{not json", "--", "/bin/true"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(126));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("the sandbox plan is malformed"), "{stderr}");
}
