//! EditFile's and MultiEdit's unit tests: the replacement rules, the diff they record, and
//! the refusals that leave the file as it was.

use super::*;
use crate::testing::{assert_failed, request};
use agent_protocol::ToolStatus;
use std::fs;

const CAP: u64 = 1024 * 1024;

async fn edit_file(dir: &Path, args: Value) -> ToolResult {
    EditFile { max_bytes: CAP }
        .run(&request("EditFile", dir, args))
        .await
}

async fn multi_edit(dir: &Path, args: Value) -> ToolResult {
    MultiEdit { max_bytes: CAP }
        .run(&request("MultiEdit", dir, args))
        .await
}

#[tokio::test]
async fn a_unique_text_is_replaced_with_a_modified_diff() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.txt");
    fs::write(&path, "one\ntwo\nthree\n").unwrap();
    let result = edit_file(
        dir.path(),
        json!({"path": "a.txt", "old_text": "two", "new_text": "TWO"}),
    )
    .await;
    assert_eq!(result.status, ToolStatus::Succeeded, "{result:?}");
    assert_eq!(fs::read_to_string(&path).unwrap(), "one\nTWO\nthree\n");
    crate::testing::assert_file_diff(
        &result,
        &path,
        FileChangeStatus::Modified,
        (&path.display().to_string(), &path.display().to_string()),
        "@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n",
    );
}

#[tokio::test]
async fn text_that_occurs_twice_or_never_is_refused_naming_how_often() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.txt");
    fs::write(&path, "x = 1\nx = 1\n").unwrap();
    let twice = edit_file(
        dir.path(),
        json!({"path": "a.txt", "old_text": "x = 1", "new_text": "x = 2"}),
    )
    .await;
    assert_failed(&twice, ErrorCode::InvalidRequest, "occurs 2 times");
    let never = edit_file(
        dir.path(),
        json!({"path": "a.txt", "old_text": "y", "new_text": "z"}),
    )
    .await;
    assert_failed(&never, ErrorCode::InvalidRequest, "occurs 0 times");
    assert_eq!(fs::read_to_string(&path).unwrap(), "x = 1\nx = 1\n");
}

#[tokio::test]
async fn multi_edit_applies_in_order_and_all_or_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.rs");
    fs::write(&path, "fn a() {}\nfn b() {}\n").unwrap();
    let chained = multi_edit(
        dir.path(),
        json!({"path": "a.rs", "edits": [
            {"old_text": "fn a()", "new_text": "fn c()"},
            {"old_text": "fn c() {}", "new_text": "fn c() { b() }"}
        ]}),
    )
    .await;
    assert_eq!(chained.status, ToolStatus::Succeeded, "{chained:?}");
    assert_eq!(
        chained.output_text,
        Some(format!("Applied 2 edits to {}", path.display()))
    );
    assert_eq!(
        fs::read_to_string(&path).unwrap(),
        "fn c() { b() }\nfn b() {}\n"
    );
    let broken = multi_edit(
        dir.path(),
        json!({"path": "a.rs", "edits": [
            {"old_text": "fn b() {}", "new_text": "fn b() { 1 }"},
            {"old_text": "missing", "new_text": "x"}
        ]}),
    )
    .await;
    assert_failed(
        &broken,
        ErrorCode::InvalidRequest,
        "edit 2: old_text occurs 0 times",
    );
    assert_eq!(
        fs::read_to_string(&path).unwrap(),
        "fn c() { b() }\nfn b() {}\n",
        "the first edit is not kept when the second fails"
    );
}

#[tokio::test]
async fn bad_arguments_missing_files_and_limits_have_the_spec_codes() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("a.txt"), "0123456789").unwrap();
    let code = |result: ToolResult| result.error.unwrap().code;
    let missing = edit_file(
        dir.path(),
        json!({"path": "nope.txt", "old_text": "a", "new_text": "b"}),
    )
    .await;
    assert_eq!(code(missing), ErrorCode::FileNotFound);
    let empty = edit_file(
        dir.path(),
        json!({"path": "a.txt", "old_text": "", "new_text": "b"}),
    )
    .await;
    assert_failed(&empty, ErrorCode::InvalidRequest, "empty");
    let typo = edit_file(
        dir.path(),
        json!({"path": "a.txt", "old": "1", "new_text": "b"}),
    )
    .await;
    assert_failed(&typo, ErrorCode::InvalidRequest, "unknown argument \"old\"");
    let no_edits = multi_edit(dir.path(), json!({"path": "a.txt", "edits": []})).await;
    assert_failed(&no_edits, ErrorCode::InvalidRequest, "non-empty array");
    let bad_edit = multi_edit(
        dir.path(),
        json!({"path": "a.txt", "edits": [{"old_text": "1"}]}),
    )
    .await;
    assert_failed(&bad_edit, ErrorCode::InvalidRequest, "edit 1");
    let mut limited = request(
        "EditFile",
        dir.path(),
        json!({"path": "a.txt", "old_text": "1", "new_text": "one-too-many"}),
    );
    limited.limits.max_file_size_bytes = Some(12);
    let grown = EditFile { max_bytes: CAP }.run(&limited).await;
    assert_failed(&grown, ErrorCode::FileTooLarge, "12 bytes");
    limited.limits.max_file_size_bytes = Some(5);
    let too_big = EditFile { max_bytes: CAP }.run(&limited).await;
    assert_failed(&too_big, ErrorCode::FileTooLarge, "10 bytes");
    assert_eq!(
        fs::read_to_string(dir.path().join("a.txt")).unwrap(),
        "0123456789"
    );
    let escape = edit_file(
        dir.path(),
        json!({"path": "../a.txt", "old_text": "1", "new_text": "2"}),
    )
    .await;
    assert_eq!(code(escape), ErrorCode::InvalidRequest);
}

/// A link that leads out of the project folder is not edited through, and the file it
/// points to stays as it was.
#[cfg(target_os = "linux")]
#[tokio::test]
async fn a_link_out_of_the_project_folder_is_not_edited_through() {
    let dir = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    fs::write(outside.path().join("precious"), "keep me").unwrap();
    std::os::unix::fs::symlink(outside.path().join("precious"), dir.path().join("p")).unwrap();
    std::os::unix::fs::symlink(outside.path(), dir.path().join("out")).unwrap();
    for path in ["p", "out/precious"] {
        let result = edit_file(
            dir.path(),
            json!({"path": path, "old_text": "keep", "new_text": "lost"}),
        )
        .await;
        assert_failed(
            &result,
            ErrorCode::PermissionDenied,
            "leads out of the project folder",
        );
    }
    assert_eq!(
        fs::read_to_string(outside.path().join("precious")).unwrap(),
        "keep me"
    );
}

/// The file was judged as a file; swapped for a link (to a file outside) between the
/// resolution and the edit, it is refused in the folder handle and nothing changes.
#[cfg(unix)]
#[test]
fn a_file_swapped_for_a_link_mid_edit_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.txt");
    fs::write(&path, "old text").unwrap();
    fs::write(outside.path().join("secret"), "old text").unwrap();
    let request = request(
        "EditFile",
        dir.path(),
        json!({"path": "a.txt", "old_text": "old", "new_text": "new"}),
    );
    let target = fs::canonicalize(&path).unwrap();
    let (folder, name) = Folder::of(Some(dir.path()), &path, &target).unwrap();
    // The swap, after the folder was opened and before the edit reads the file.
    fs::remove_file(&path).unwrap();
    std::os::unix::fs::symlink(outside.path().join("secret"), &path).unwrap();
    assert_eq!(folder.find(&name).unwrap(), Found::Link);
    let edits = [Edit {
        old: "old".into(),
        new: "new".into(),
    }];
    let result = edit("EditFile", &request, &path, &edits, CAP);
    assert_eq!(result.status, ToolStatus::Failed, "{result:?}");
    assert_eq!(
        fs::read_to_string(outside.path().join("secret")).unwrap(),
        "old text"
    );
}
