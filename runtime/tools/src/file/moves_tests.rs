//! MoveFile's unit tests: renames with their patch-preview record, and the refusals that
//! leave both ends as they were.

use super::*;
use crate::testing::{assert_failed, request};
use agent_protocol::ToolStatus;
use serde_json::Value;
use std::fs;

async fn run(dir: &Path, args: Value) -> ToolResult {
    MoveFile.run(&request("MoveFile", dir, args)).await
}

#[tokio::test]
async fn a_file_moves_into_new_folders_recorded_as_deleted_and_added() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("a.txt"), "hello\n").unwrap();
    let result = run(
        dir.path(),
        json!({"source": "a.txt", "destination": "sub/b.txt"}),
    )
    .await;
    assert_eq!(result.status, ToolStatus::Succeeded, "{result:?}");
    assert!(!dir.path().join("a.txt").exists());
    assert_eq!(
        fs::read_to_string(dir.path().join("sub/b.txt")).unwrap(),
        "hello\n"
    );
    let statuses: Vec<_> = result
        .file_changes
        .iter()
        .map(|change| (change.status, change.hunks.as_str()))
        .collect();
    assert_eq!(
        statuses,
        [
            (FileChangeStatus::Deleted, "@@ -1 +0,0 @@\n-hello\n"),
            (FileChangeStatus::Added, "@@ -0,0 +1 @@\n+hello\n"),
        ]
    );
    assert_eq!(result.artifacts.len(), 1);
    assert_eq!(result.artifacts[0].artifact_type, "file_diff");
}

#[tokio::test]
async fn an_existing_destination_needs_overwrite_and_a_folder_is_never_replaced() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("a"), "new\n").unwrap();
    fs::write(dir.path().join("b"), "old\n").unwrap();
    fs::create_dir(dir.path().join("d")).unwrap();
    let kept = run(dir.path(), json!({"source": "a", "destination": "b"})).await;
    assert_failed(&kept, ErrorCode::InvalidRequest, "overwrite");
    assert_eq!(fs::read_to_string(dir.path().join("b")).unwrap(), "old\n");
    let folder = run(
        dir.path(),
        json!({"source": "a", "destination": "d", "overwrite": true}),
    )
    .await;
    assert_failed(&folder, ErrorCode::InvalidRequest, "is a directory");
    let replaced = run(
        dir.path(),
        json!({"source": "a", "destination": "b", "overwrite": true}),
    )
    .await;
    assert_eq!(replaced.status, ToolStatus::Succeeded, "{replaced:?}");
    assert_eq!(fs::read_to_string(dir.path().join("b")).unwrap(), "new\n");
    assert_eq!(replaced.file_changes[1].status, FileChangeStatus::Modified);
    assert_eq!(replaced.file_changes[1].hunks, "@@ -1 +1 @@\n-old\n+new\n");
}

#[tokio::test]
async fn missing_sources_escapes_and_bad_arguments_have_the_spec_codes() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("a"), "x").unwrap();
    let missing = run(dir.path(), json!({"source": "nope", "destination": "b"})).await;
    assert_failed(&missing, ErrorCode::FileNotFound, "nope");
    let out = run(dir.path(), json!({"source": "a", "destination": "../a"})).await;
    assert_eq!(out.error.unwrap().code, ErrorCode::InvalidRequest);
    let typo = run(dir.path(), json!({"source": "a", "dest": "b"})).await;
    assert_failed(&typo, ErrorCode::InvalidRequest, "\"dest\"");
    assert!(dir.path().join("a").exists());
}

#[tokio::test]
async fn a_folder_holding_a_blocked_path_does_not_move() {
    let dir = tempfile::tempdir().unwrap();
    let root = fs::canonicalize(dir.path()).unwrap();
    fs::create_dir_all(root.join("conf")).unwrap();
    fs::write(root.join("conf/server.pem"), "key").unwrap();
    fs::create_dir_all(root.join("plain")).unwrap();
    fs::write(root.join("plain/a.txt"), "a").unwrap();
    let mut call = request(
        "MoveFile",
        &root,
        json!({"source": "conf", "destination": "moved"}),
    );
    call.blocked_paths = Some(vec![
        "*.pem".into(),
        root.join("vault").display().to_string(),
    ]);
    let refused = MoveFile.run(&call).await;
    assert_failed(&refused, ErrorCode::PermissionDenied, "blocked path");
    assert!(root.join("conf/server.pem").exists());
    call.arguments = json!({"source": "plain", "destination": "vault"})
        .as_object()
        .unwrap()
        .clone();
    let into = MoveFile.run(&call).await;
    assert_failed(&into, ErrorCode::PermissionDenied, "blocked path");
    call.arguments = json!({"source": "plain", "destination": "other"})
        .as_object()
        .unwrap()
        .clone();
    let moved = MoveFile.run(&call).await;
    assert_eq!(moved.status, ToolStatus::Succeeded, "{moved:?}");
    assert!(root.join("other/a.txt").exists());
    assert!(moved.file_changes.is_empty());
}

#[cfg(target_os = "linux")]
#[tokio::test]
async fn a_link_out_of_the_project_folder_is_not_moved_into() {
    let dir = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("a"), "x").unwrap();
    std::os::unix::fs::symlink(outside.path(), dir.path().join("out")).unwrap();
    let result = run(dir.path(), json!({"source": "a", "destination": "out/a"})).await;
    assert_failed(
        &result,
        ErrorCode::PermissionDenied,
        "leads out of the project folder",
    );
    assert!(dir.path().join("a").exists());
    assert!(!outside.path().join("a").exists());
}
