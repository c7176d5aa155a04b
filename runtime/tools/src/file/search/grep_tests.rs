//! GrepFiles' unit tests: the result lines, the bounds, and what is never searched.

use super::*;
use crate::testing::{assert_failed, request};
use agent_protocol::ToolStatus;
use serde_json::Value;
use std::fs;

const GREP: GrepFiles = GrepFiles {
    max_file_bytes: 1024 * 1024,
};

async fn run(dir: &Path, args: Value) -> ToolResult {
    GREP.run(&request("GrepFiles", dir, args)).await
}

fn write(dir: &Path, path: &str, text: &str) {
    let path = dir.join(path);
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, text).unwrap();
}

/// `text` with the platform's separator: results spell paths as the platform does.
fn native(text: &str) -> String {
    text.replace('/', std::path::MAIN_SEPARATOR_STR)
}

#[tokio::test]
async fn matching_lines_come_as_path_line_text_honouring_gitignore() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "src/a.rs", "fn main() {\n    todo!()\n}\n");
    write(dir.path(), "src/b.py", "# todo: later\n");
    write(dir.path(), "build/c.rs", "todo!()\n");
    write(dir.path(), ".gitignore", "build/\n");
    let result = run(dir.path(), json!({"directory": ".", "pattern": "todo"})).await;
    assert_eq!(result.status, ToolStatus::Succeeded, "{result:?}");
    assert_eq!(
        result.output_text.as_deref(),
        Some(native("src/a.rs:2:    todo!()\nsrc/b.py:1:# todo: later\n").as_str())
    );
    let only_rs = run(
        dir.path(),
        json!({"directory": "src", "pattern": "todo", "file_glob": "*.rs", "context_lines": 1}),
    )
    .await;
    assert_eq!(
        only_rs.output_text.as_deref(),
        Some(native("src/a.rs-1-fn main() {\nsrc/a.rs:2:    todo!()\nsrc/a.rs-3-}\n").as_str())
    );
    let none = run(
        dir.path(),
        json!({"directory": ".", "pattern": "nothing here"}),
    )
    .await;
    assert!(none.output_text.unwrap().starts_with("No matches"));
}

#[tokio::test]
async fn results_stop_at_max_results_and_say_more_exist() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "a.txt", &"hit\n".repeat(20));
    let result = run(
        dir.path(),
        json!({"directory": ".", "pattern": "hit", "max_results": 5}),
    )
    .await;
    let text = result.output_text.unwrap();
    assert_eq!(text.matches("a.txt:").count(), 5, "{text}");
    assert!(text.contains("(more results exist;"), "{text}");
}

#[tokio::test]
async fn blocked_binary_and_oversized_files_are_not_shown() {
    let dir = tempfile::tempdir().unwrap();
    let root = fs::canonicalize(dir.path()).unwrap();
    write(&root, ".env", "TOKEN=secret\n");
    write(&root, "keys/id.pem", "secret\n");
    write(&root, "ok.txt", "no secret here\n");
    fs::write(root.join("blob.bin"), b"secret\0secret").unwrap();
    write(&root, "big.log", &"secret\n".repeat(1000));
    let mut call = request(
        "GrepFiles",
        &root,
        json!({"directory": ".", "pattern": "secret"}),
    );
    call.blocked_paths = Some(vec![
        root.join(".env").display().to_string(),
        "*.pem".into(),
    ]);
    call.limits.max_file_size_bytes = Some(1000);
    let text = GREP.run(&call).await.output_text.unwrap();
    assert!(text.starts_with("ok.txt:1:no secret here\n"), "{text}");
    assert!(!text.contains(".env") && !text.contains("id.pem"), "{text}");
    assert!(
        text.contains("big.log (7000 bytes, larger than 1000)"),
        "{text}"
    );
    assert!(!text.contains("blob.bin:"), "{text}");
}

#[tokio::test]
async fn long_lines_are_cut_and_bad_arguments_refused() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "min.js",
        &format!("{}needle\n", "x".repeat(1000)),
    );
    let text = run(dir.path(), json!({"directory": ".", "pattern": "x+"}))
        .await
        .output_text
        .unwrap();
    assert!(text.len() < 400 && text.contains('…'), "{text}");
    for (args, says) in [
        (
            json!({"directory": ".", "pattern": "("}),
            "not a valid regular expression",
        ),
        (
            json!({"directory": ".", "pattern": "a", "context_lines": 6}),
            "between 0 and 5",
        ),
        (
            json!({"directory": ".", "pattern": "a", "max_results": 201}),
            "between 1 and 200",
        ),
        (
            json!({"directory": ".", "pattern": "a", "file_glob": "../*"}),
            "relative",
        ),
        (json!({"directory": ".", "regex": "a"}), "\"regex\""),
    ] {
        let result = run(dir.path(), args).await;
        assert_failed(&result, ErrorCode::InvalidRequest, says);
    }
}

/// A link back up the tree is not followed, so the search ends with each match once.
#[cfg(unix)]
#[tokio::test]
async fn a_directory_loop_is_searched_once() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "a/x.txt", "needle\n");
    std::os::unix::fs::symlink("..", dir.path().join("a/loop")).unwrap();
    let result = run(dir.path(), json!({"directory": ".", "pattern": "needle"})).await;
    assert_eq!(result.output_text.as_deref(), Some("a/x.txt:1:needle\n"));
}
