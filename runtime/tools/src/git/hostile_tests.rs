//! The git tools against a repository the model wrote: nothing its config, hooks or
//! attributes name may run, and nothing outside the granted folder may be reached. Each
//! attack leaves a marker file when it works.

// The attacks that need a POSIX shell are Unix-only; so are some helpers.
#![cfg_attr(not(unix), allow(unused_imports, dead_code))]

use std::path::Path;

use agent_protocol::{ErrorCode, ToolStatus};
use serde_json::json;

use super::tests::{call, failure, repo, sh_git, text};
use super::*;

/// A shell command that creates `marker` (and prints nothing git could mistake for data).
fn touch(marker: &Path) -> String {
    format!("touch '{}'; cat", marker.display())
}

fn append_config(repo: &Path, text: &str) {
    use std::io::Write;
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(repo.join(".git/config"))
        .unwrap();
    file.write_all(text.as_bytes()).unwrap();
}

#[cfg(unix)]
#[tokio::test]
async fn nothing_the_repository_config_names_is_executed() {
    let dir = repo();
    let marker = dir.path().join("ran");
    let command = touch(&marker);
    append_config(
        dir.path(),
        &format!(
            "[core]\n\tfsmonitor = \"{command}\"\n\tpager = \"{command}\"\n[diff]\n\texternal = \"{command}\"\n[diff \"evil\"]\n\ttextconv = \"{command}\"\n\tcommand = \"{command}\"\n[filter \"evil\"]\n\tclean = \"{command}\"\n\tsmudge = \"{command}\"\n\tprocess = \"{command}\"\n\trequired = true\n[commit]\n\tgpgSign = true\n[gpg]\n\tprogram = \"{command}\"\n"
        ),
    );
    std::fs::write(
        dir.path().join(".gitattributes"),
        "*.txt filter=evil diff=evil\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("a.txt"), "changed\n").unwrap();
    for hook in [
        "pre-commit",
        "commit-msg",
        "post-commit",
        "prepare-commit-msg",
    ] {
        let path = dir.path().join(".git/hooks").join(hook);
        std::fs::write(&path, format!("#!/bin/sh\ntouch '{}'\n", marker.display())).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }

    let status = call(&GitStatus::default(), dir.path(), json!({})).await;
    assert_eq!(status.status, ToolStatus::Succeeded, "{status:?}");
    let diff = call(&GitDiff::default(), dir.path(), json!({})).await;
    assert_eq!(diff.status, ToolStatus::Succeeded, "{diff:?}");
    assert!(text(&diff).contains("+changed"), "{diff:?}");
    let commit = call(
        &GitCommit::default(),
        dir.path(),
        json!({"message": "m", "files": ["a.txt", ".gitattributes"]}),
    )
    .await;
    assert_eq!(commit.status, ToolStatus::Succeeded, "{commit:?}");
    assert!(!marker.exists(), "a program named by the repository ran");
}

/// `-c filter.a=b.clean=` sets `filter.a`, not the driver `a=b`: git tools refuse such a
/// repository rather than run its program (the OS sandbox would still hold it).
#[cfg(unix)]
#[tokio::test]
async fn a_program_under_a_name_no_override_reaches_is_not_executed() {
    let dir = repo();
    let marker = dir.path().join("ran");
    let command = touch(&marker);
    append_config(
        dir.path(),
        &format!("[filter \"a=b\"]\n\tclean = \"{command}\"\n"),
    );
    std::fs::write(dir.path().join(".gitattributes"), "* filter=a=b\n").unwrap();
    std::fs::write(dir.path().join("a.txt"), "changed\n").unwrap();
    for (tool, arguments) in [
        (&GitStatus::default() as &dyn crate::tool::Tool, json!({})),
        (&GitDiff::default(), json!({})),
        (
            &GitCommit::default(),
            json!({"message": "m", "files": ["a.txt"]}),
        ),
    ] {
        let result = call(tool, dir.path(), arguments).await;
        let (code, message) = failure(&result);
        assert_eq!(code, ErrorCode::PermissionDenied, "{result:?}");
        assert!(message.contains("cannot switch off"), "{result:?}");
    }
    assert!(!marker.exists(), "a program named by the repository ran");
}

#[tokio::test]
async fn a_dot_git_file_pointing_outside_the_project_is_refused() {
    if super::tests::git_missing() {
        return;
    }
    let outside = repo();
    let project = tempfile::tempdir().unwrap();
    std::fs::write(
        project.path().join(".git"),
        format!("gitdir: {}\n", outside.path().join(".git").display()),
    )
    .unwrap();
    for tool in [
        &GitStatus::default() as &dyn crate::tool::Tool,
        &GitDiff::default(),
    ] {
        let result = call(tool, project.path(), json!({})).await;
        let (code, message) = failure(&result);
        assert_eq!(code, ErrorCode::PermissionDenied, "{message}");
        assert!(
            message.contains("outside the folder this call may use"),
            "{message}"
        );
    }
}

#[tokio::test]
async fn a_repository_above_the_project_folder_is_not_used() {
    if super::tests::git_missing() {
        return;
    }
    let outer = repo();
    let project = outer.path().join("project");
    std::fs::create_dir(&project).unwrap();
    let result = call(&GitStatus::default(), &project, json!({})).await;
    let (code, message) = failure(&result);
    assert_eq!(code, ErrorCode::ToolExecutionFailed);
    assert!(message.contains("is not a git repository"), "{message}");
}

#[tokio::test]
async fn commit_files_must_be_plain_paths() {
    if super::tests::git_missing() {
        return;
    }
    let dir = repo();
    std::fs::write(dir.path().join(".env"), "SECRET=1\n").unwrap();
    for spec in [":(glob)*", ":!a.txt", "*", ".e?v", "[.]env"] {
        let result = call(
            &GitCommit::default(),
            dir.path(),
            json!({"message": "m", "files": [spec]}),
        )
        .await;
        let (code, message) = failure(&result);
        assert_eq!(code, ErrorCode::InvalidRequest, "{spec}: {message}");
        assert!(message.contains(spec), "{message}");
    }
    assert_eq!(sh_git(dir.path(), &["status", "--porcelain"]), "?? .env\n");
}

#[tokio::test]
async fn a_push_to_a_folder_outside_the_project_is_refused() {
    if super::tests::git_missing() {
        return;
    }
    let outside = tempfile::tempdir().unwrap();
    sh_git(outside.path(), &["init", "-q", "--bare", "-b", "main"]);
    let dir = repo();
    let url = outside.path().display().to_string();
    sh_git(dir.path(), &["remote", "add", "origin", &url]);
    for args in [
        json!({}),
        json!({"remote": "origin", "branch": "main"}),
        json!({"remote": url.as_str(), "branch": "main"}),
        json!({"remote": format!("file://{url}"), "branch": "main"}),
    ] {
        let result = call_granted(&GitPush::default(), dir.path(), args.clone()).await;
        let (code, message) = failure(&result);
        assert_eq!(code, ErrorCode::PermissionDenied, "{args}: {message}");
        assert!(
            message.contains("outside the paths the policy grants"),
            "{message}"
        );
    }
    let refs = sh_git(outside.path(), &["for-each-ref"]);
    assert_eq!(refs, "", "the push reached the folder outside");

    // A folder the policy grants may be pushed to.
    let inside = dir.path().join("inside.git");
    std::fs::create_dir(&inside).unwrap();
    sh_git(&inside, &["init", "-q", "--bare", "-b", "main"]);
    let url = inside.display().to_string();
    let pushed = call_granted(
        &GitPush::default(),
        dir.path(),
        json!({"remote": url, "branch": "main"}),
    )
    .await;
    assert_eq!(pushed.status, ToolStatus::Succeeded, "{pushed:?}");
}

/// Under the OS sandbox a push reaches servers through the egress proxy, which carries
/// HTTP(S) only: an ssh or git:// remote is refused before git starts, saying why and what
/// to do; unconfined, the same remote is tried (and here fails to connect).
#[tokio::test]
async fn a_push_over_ssh_is_refused_while_the_sandbox_confines_processes() {
    if super::tests::git_missing() {
        return;
    }
    let dir = repo();
    let request = crate::testing::request("GitPush", dir.path(), json!({}));
    let settings = GitSettings::default();
    sh_git(
        dir.path(),
        &["remote", "add", "origin", "https://example.com/x.git"],
    );
    for url in [
        "git@example.com:team/repo.git",
        "ssh://git@example.com/team/repo.git",
        "git://example.com/team/repo.git",
    ] {
        sh_git(dir.path(), &["remote", "set-url", "origin", url]);
        let refused = tools::check_destination(&request, settings, dir.path(), "origin", true)
            .await
            .unwrap_err();
        let (code, message) = failure(&refused);
        assert_eq!(code, ErrorCode::PermissionDenied, "{url}: {message}");
        assert!(message.contains("AGENT_RUNTIME_SANDBOX=off"), "{message}");
        assert!(
            tools::check_destination(&request, settings, dir.path(), "origin", false)
                .await
                .is_ok(),
            "{url}"
        );
    }
    sh_git(
        dir.path(),
        &[
            "remote",
            "set-url",
            "origin",
            "https://example.com/team/repo.git",
        ],
    );
    assert!(
        tools::check_destination(&request, settings, dir.path(), "origin", true)
            .await
            .is_ok()
    );
}

/// A push is routed by the runtime, never by the repository: the proxy the repository's
/// config names (`http.proxy`, `http.<url>.proxy`, `remote.<name>.proxy`) and the addresses
/// it pins (`http.curloptResolve`) are overridden, so they cannot carry the push to a host
/// the policy does not grant. Here the runtime has no proxy, so git goes straight to the
/// server (where nothing listens) and never to the repository's proxy.
#[tokio::test]
async fn the_proxy_the_repository_names_is_never_used_for_a_push() {
    if super::tests::git_missing() {
        return;
    }
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};
    let proxy = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let proxy_url = format!("http://{}", proxy.local_addr().unwrap());
    let contacted = Arc::new(AtomicBool::new(false));
    let seen = Arc::clone(&contacted);
    // Each connection is noted, then dropped, so git fails at once instead of waiting.
    let listening = tokio::spawn(async move {
        while let Ok((stream, _)) = proxy.accept().await {
            seen.store(true, Ordering::SeqCst);
            drop(stream);
        }
    });
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let server = format!("http://{}/team/repo.git", closed.local_addr().unwrap());
    drop(closed);
    // Each way of naming a proxy on its own, then all of them with a pinned address.
    let server_proxy = format!("http.{server}.proxy");
    let keys = ["http.proxy", server_proxy.as_str(), "remote.origin.proxy"];
    let mut cases: Vec<Vec<(&str, &str)>> = keys
        .iter()
        .map(|key| vec![(*key, proxy_url.as_str())])
        .collect();
    let mut all: Vec<(&str, &str)> = keys.iter().map(|key| (*key, proxy_url.as_str())).collect();
    all.push(("http.curloptResolve", "nowhere.invalid:80:127.0.0.1"));
    cases.push(all);
    for settings in cases {
        let dir = repo();
        sh_git(dir.path(), &["remote", "add", "origin", &server]);
        for (key, value) in &settings {
            sh_git(dir.path(), &["config", key, value]);
        }
        let result = call_granted(
            &GitPush::default(),
            dir.path(),
            json!({"remote": "origin", "branch": "main"}),
        )
        .await;
        let (code, message) = failure(&result);
        assert_eq!(
            code,
            ErrorCode::ToolExecutionFailed,
            "{settings:?}: {message}"
        );
        assert!(
            !contacted.load(Ordering::SeqCst),
            "the push went through the repository's proxy ({settings:?}): {message}"
        );
    }
    listening.abort();
}

/// A call whose policy grants only the project folder.
async fn call_granted(
    tool: &dyn crate::tool::Tool,
    dir: &Path,
    args: serde_json::Value,
) -> agent_protocol::ToolResult {
    let name = tool.definition().tool_name;
    let mut request = crate::testing::request(&name, dir, args);
    request.limits.timeout_ms = Some(20_000);
    let real = std::fs::canonicalize(dir).unwrap();
    request.granted_paths = Some(vec![real.display().to_string()]);
    tool.run(&request).await
}

#[test]
fn the_user_identity_is_read_from_the_global_config_only_for_commits() {
    // Covered end to end by the commit tests (the repository sets its own identity); here
    // only that a global config is never read by an ordinary run.
    let command = confine::command(None, &[]);
    let std = command.as_std();
    let envs: Vec<_> = std.get_envs().collect();
    assert!(envs.iter().any(|(name, value)| {
        *name == "GIT_CONFIG_GLOBAL" && value.is_some_and(|value| !value.is_empty())
    }));
    assert!(
        envs.iter()
            .any(|(name, value)| *name == "GIT_CONFIG_NOSYSTEM" && *value == Some("1".as_ref()))
    );
}
