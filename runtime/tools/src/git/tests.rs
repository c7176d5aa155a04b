//! The git tools against real repositories in temp folders (the `git` binary must be on the
//! PATH); GitPush pushes to a local bare repository as its remote.

use std::path::Path;

use agent_protocol::ToolStatus;
use serde_json::{Value, json};

use super::*;
use crate::testing::{decoded, request};
use crate::tool::Tool;

/// Whether a test that needs the `git` binary must skip: only where git may be absent
/// (Windows; Wine has no git.exe). On Unix a missing git fails the test instead, so CI never
/// skips these silently.
pub(super) fn git_missing() -> bool {
    let found = std::process::Command::new("git")
        .arg("--version")
        .output()
        .is_ok();
    assert!(found || !cfg!(unix), "the git tests need git on the PATH");
    if !found {
        eprintln!("skipped: no git on the PATH");
    }
    !found
}

/// Runs git synchronously to set a repository up.
pub(super) fn sh_git(dir: &Path, args: &[&str]) -> String {
    let out = std::process::Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_TERMINAL_PROMPT", "0")
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {out:?}");
    String::from_utf8(out.stdout).unwrap()
}

/// A repository on branch `main` with one commit of `a.txt`.
pub(super) fn repo() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path();
    sh_git(path, &["init", "-q", "-b", "main"]);
    sh_git(path, &["config", "user.name", "Test User"]);
    sh_git(path, &["config", "user.email", "test@example.com"]);
    sh_git(path, &["config", "commit.gpgsign", "false"]);
    std::fs::write(path.join("a.txt"), "one\n").unwrap();
    sh_git(path, &["add", "a.txt"]);
    sh_git(path, &["commit", "-q", "-m", "first"]);
    dir
}

pub(super) async fn call(tool: &dyn Tool, dir: &Path, args: Value) -> ToolResult {
    let name = tool.definition().tool_name;
    let mut request = request(&name, dir, args);
    request.limits.timeout_ms = Some(20_000);
    tokio::time::timeout(std::time::Duration::from_secs(30), tool.run(&request))
        .await
        .expect("the git call hung")
}

pub(super) fn text(result: &ToolResult) -> &str {
    result.output_text.as_deref().unwrap_or_default()
}

pub(super) fn failure(result: &ToolResult) -> (ErrorCode, &str) {
    let error = result.error.as_ref().unwrap();
    (error.code.clone(), error.message.as_str())
}

#[tokio::test]
async fn status_shows_the_branch_and_each_changed_file_or_a_clean_tree() {
    if git_missing() {
        return;
    }
    let dir = repo();
    let clean = call(&GitStatus::default(), dir.path(), json!({})).await;
    assert_eq!(clean.status, ToolStatus::Succeeded, "{clean:?}");
    assert_eq!(
        text(&clean),
        "Branch: main\nNothing to commit, working tree clean\n"
    );
    std::fs::write(dir.path().join("a.txt"), "two\n").unwrap();
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    std::fs::write(dir.path().join("sub/new.txt"), "new\n").unwrap();
    let changed = call(&GitStatus::default(), dir.path(), json!({"path": "."})).await;
    let shown = text(&changed);
    assert!(shown.starts_with("Branch: main\nChanges ("), "{shown}");
    assert!(shown.contains("\n M a.txt\n"), "{shown}");
    assert!(shown.contains("\n?? sub/new.txt\n"), "{shown}");
}

#[tokio::test]
async fn a_folder_outside_any_repository_is_a_readable_failure() {
    let dir = tempfile::tempdir().unwrap();
    // The temp folder's parents are no repository either.
    let result = call(&GitStatus::default(), dir.path(), json!({})).await;
    assert_eq!(result.status, ToolStatus::Failed);
    let (code, message) = failure(&result);
    assert_eq!(code, ErrorCode::ToolExecutionFailed);
    assert_eq!(
        message,
        format!(
            "{} is not a git repository (nor is any folder above it)",
            dir.path().display()
        )
    );
}

#[tokio::test]
async fn paths_are_resolved_checked_and_named_in_errors() {
    if git_missing() {
        return;
    }
    let dir = repo();
    let missing = call(&GitStatus::default(), dir.path(), json!({"path": "nope"})).await;
    let (code, message) = failure(&missing);
    assert_eq!(code, ErrorCode::FileNotFound);
    assert!(
        message.starts_with("Repository folder not found"),
        "{message}"
    );
    let escaping = call(&GitStatus::default(), dir.path(), json!({"path": "../x"})).await;
    let (code, message) = failure(&escaping);
    assert_eq!(code, ErrorCode::InvalidRequest);
    assert!(message.contains("GitStatus: path:"), "{message}");
    let unknown = call(&GitStatus::default(), dir.path(), json!({"force": true})).await;
    let (code, message) = failure(&unknown);
    assert_eq!(code, ErrorCode::InvalidRequest);
    assert!(message.contains("unknown argument \"force\""), "{message}");
}

#[tokio::test]
async fn diff_shows_unstaged_staged_and_named_changes() {
    if git_missing() {
        return;
    }
    let dir = repo();
    let none = call(&GitDiff::default(), dir.path(), json!({})).await;
    assert_eq!(text(&none), "No unstaged changes.\n");
    std::fs::write(dir.path().join("a.txt"), "two\n").unwrap();
    let unstaged = call(&GitDiff::default(), dir.path(), json!({})).await;
    assert!(text(&unstaged).contains("-one\n+two\n"), "{unstaged:?}");
    assert!(unstaged.artifacts.is_empty());
    let staged = call(&GitDiff::default(), dir.path(), json!({"staged": true})).await;
    assert_eq!(text(&staged), "No staged changes.\n");
    sh_git(dir.path(), &["add", "a.txt"]);
    let staged = call(&GitDiff::default(), dir.path(), json!({"staged": true})).await;
    assert!(text(&staged).contains("+two\n"), "{staged:?}");
    let head = call(
        &GitDiff::default(),
        dir.path(),
        json!({"ref": "HEAD", "files": ["a.txt"]}),
    )
    .await;
    assert!(
        text(&head).contains("diff --git a/a.txt b/a.txt"),
        "{head:?}"
    );
}

#[tokio::test]
async fn diff_refuses_option_like_refs_and_keeps_large_diffs_as_artifacts() {
    if git_missing() {
        return;
    }
    let dir = repo();
    let injected = call(
        &GitDiff::default(),
        dir.path(),
        json!({"ref": "--output=/tmp/x"}),
    )
    .await;
    let (code, message) = failure(&injected);
    assert_eq!(code, ErrorCode::InvalidRequest);
    assert!(
        message.contains("\"ref\" must not start with \"-\""),
        "{message}"
    );
    let bad_files = call(&GitDiff::default(), dir.path(), json!({"files": "a.txt"})).await;
    assert!(failure(&bad_files).1.contains("\"files\" must be an array"));

    let big: String = (0..2000).map(|n| format!("line {n}\n")).collect();
    std::fs::write(dir.path().join("a.txt"), &big).unwrap();
    let mut request = request("GitDiff", dir.path(), json!({}));
    request.limits.max_output_bytes = Some(1000);
    let result = GitDiff::default().run(&request).await;
    let shown = text(&result);
    assert!(shown.len() < 1100, "{}", shown.len());
    assert!(shown.contains("[... truncated "), "{shown}");
    assert_eq!(result.artifacts.len(), 1);
    let artifact = &result.artifacts[0];
    assert_eq!(artifact.artifact_type, "tool_output");
    assert!(decoded(artifact).contains("+line 1999\n"));
}

#[tokio::test]
async fn commit_stages_named_files_and_reports_the_commit() {
    if git_missing() {
        return;
    }
    let dir = repo();
    std::fs::write(dir.path().join("b.txt"), "bee\n").unwrap();
    let result = call(
        &GitCommit::default(),
        dir.path(),
        json!({"message": "Add b", "files": ["b.txt"]}),
    )
    .await;
    assert_eq!(result.status, ToolStatus::Succeeded, "{result:?}");
    assert!(text(&result).contains("[main "), "{result:?}");
    assert!(text(&result).contains("Add b"), "{result:?}");
    assert_eq!(sh_git(dir.path(), &["log", "-1", "--format=%s"]), "Add b\n");
    assert_eq!(
        sh_git(dir.path(), &["show", "--name-only", "--format=", "HEAD"]),
        "b.txt\n"
    );
}

#[tokio::test]
async fn commit_with_nothing_staged_or_without_a_message_fails_readably() {
    if git_missing() {
        return;
    }
    let dir = repo();
    std::fs::write(dir.path().join("a.txt"), "changed\n").unwrap();
    let nothing = call(&GitCommit::default(), dir.path(), json!({"message": "x"})).await;
    let (code, message) = failure(&nothing);
    assert_eq!(code, ErrorCode::ToolExecutionFailed);
    assert!(message.starts_with("Nothing to commit"), "{message}");
    let all = call(
        &GitCommit::default(),
        dir.path(),
        json!({"message": "-starts with a dash", "all": true}),
    )
    .await;
    assert_eq!(all.status, ToolStatus::Succeeded, "{all:?}");
    assert_eq!(
        sh_git(dir.path(), &["log", "-1", "--format=%s"]),
        "-starts with a dash\n"
    );
    let missing = call(&GitCommit::default(), dir.path(), json!({})).await;
    let (code, message) = failure(&missing);
    assert_eq!(code, ErrorCode::InvalidRequest);
    assert!(
        message.contains("missing required argument \"message\""),
        "{message}"
    );
}

#[tokio::test]
async fn push_sends_commits_to_a_bare_remote_and_reports_a_rejection() {
    if git_missing() {
        return;
    }
    let dir = repo();
    let remote = dir.path().join("remote.git");
    std::fs::create_dir(&remote).unwrap();
    sh_git(&remote, &["init", "-q", "--bare", "-b", "main"]);
    let url = remote.display().to_string();
    sh_git(dir.path(), &["remote", "add", "origin", &url]);
    let pushed = call(
        &GitPush::default(),
        dir.path(),
        json!({"remote": "origin", "branch": "main", "setUpstream": true}),
    )
    .await;
    assert_eq!(pushed.status, ToolStatus::Succeeded, "{pushed:?}");
    assert!(
        text(&pushed).starts_with("git push succeeded."),
        "{pushed:?}"
    );
    let local = sh_git(dir.path(), &["rev-parse", "HEAD"]);
    assert_eq!(sh_git(&remote, &["rev-parse", "main"]), local);

    // A remote that moved on rejects a push that is not a fast-forward; never forced.
    sh_git(dir.path(), &["commit", "-q", "--amend", "-m", "rewritten"]);
    let rejected = call(&GitPush::default(), dir.path(), json!({})).await;
    let (code, message) = failure(&rejected);
    assert_eq!(code, ErrorCode::ToolExecutionFailed);
    assert!(message.starts_with("git push failed"), "{message}");
    assert!(message.contains("rejected"), "{message}");
    assert_eq!(sh_git(&remote, &["rev-parse", "main"]), local);
    let forced = call(&GitPush::default(), dir.path(), json!({"branch": "+main"})).await;
    assert_eq!(failure(&forced).0, ErrorCode::InvalidRequest);
    let option = call(
        &GitPush::default(),
        dir.path(),
        json!({"remote": "--force"}),
    )
    .await;
    assert_eq!(failure(&option).0, ErrorCode::InvalidRequest);
}

#[tokio::test]
async fn a_git_run_past_its_timeout_is_ended() {
    if git_missing() {
        return;
    }
    // A server that accepts the connection and never answers: git waits for it. (Hooks,
    // which could hang a run too, never run: see `hostile_tests`.)
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("git://{}/r.git", silent.local_addr().unwrap());
    let dir = repo();
    sh_git(dir.path(), &["remote", "add", "silent", &url]);
    let tool = GitPush {
        settings: GitSettings {
            timeout: std::time::Duration::from_millis(300),
            kill_grace: std::time::Duration::from_millis(200),
            ..GitSettings::default()
        },
    };
    let result = call(
        &tool,
        dir.path(),
        json!({"remote": "silent", "branch": "main"}),
    )
    .await;
    let (code, message) = failure(&result);
    assert_eq!(code, ErrorCode::ToolExecutionTimeout, "{message}");
    assert_eq!(message, "git push timed out after 0.3 seconds");
}

#[test]
fn porcelain_status_reads_as_a_branch_and_a_file_list() {
    assert_eq!(
        tools::format_status("## main...origin/main [ahead 1]\nM  a.txt\n?? b.txt\n"),
        "Branch: main...origin/main [ahead 1]\nChanges (XY PATH: X = staged, Y = not staged; M modified, A added, D deleted, R renamed, ?? untracked):\nM  a.txt\n?? b.txt\n"
    );
}
