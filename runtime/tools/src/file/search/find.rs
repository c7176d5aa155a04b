//! FindFiles (INTEROP.md §11): the files under a folder whose path matches a glob, sorted,
//! at most `max_results` (default 100, at most 500).

use std::sync::Mutex;

use agent_protocol::{ErrorCode, ToolDefinition, ToolRequest, ToolResult};
use async_trait::async_trait;
use ignore::WalkState;
use serde_json::json;

use super::{Scope, Stop, compile_glob, glob_takes, run_search};
use crate::args::Args;
use crate::tool::Tool;

const DEFAULT_RESULTS: u64 = 100;
const MAX_RESULTS: u64 = 500;

pub(crate) struct FindFiles;

#[async_trait]
impl Tool for FindFiles {
    fn definition(&self) -> ToolDefinition {
        ToolDefinition {
            tool_name: "FindFiles".to_owned(),
            description: "Find files whose path matches a glob pattern, honouring .gitignore"
                .to_owned(),
            input_schema: json!({
                "type": "object",
                "required": ["directory", "pattern"],
                "additionalProperties": false,
                "properties": {
                    "directory": { "type": "string", "description": "Directory to search (relative paths resolve against the project folder)" },
                    "pattern": { "type": "string", "minLength": 1, "description": "Glob such as *.rs or src/**/test_*.py; a pattern without / matches file names at any depth" },
                    "max_results": { "type": "integer", "minimum": 1, "maximum": MAX_RESULTS, "default": DEFAULT_RESULTS, "description": "Most paths to return. Default: 100" }
                }
            }).into(),
        }
    }

    async fn run(&self, request: &ToolRequest) -> ToolResult {
        let args = Args::new("FindFiles", &request.arguments);
        let parsed = args
            .only(&["directory", "pattern", "max_results"])
            .and_then(|()| {
                Ok((
                    args.required_str("directory")?,
                    args.required_str("pattern")?,
                    args.optional_u64_between("max_results", 1, MAX_RESULTS)?
                        .unwrap_or(DEFAULT_RESULTS),
                ))
            });
        let (directory, pattern, max) = match parsed {
            Ok(parsed) => parsed,
            Err(error) => return ToolResult::failed(request, ErrorCode::InvalidRequest, error.0),
        };
        let matcher = match compile_glob("FindFiles", "pattern", pattern) {
            Ok(matcher) => matcher,
            Err(message) => return ToolResult::failed(request, ErrorCode::InvalidRequest, message),
        };
        let pattern = pattern.to_owned();
        let max = usize::try_from(max).unwrap_or(usize::MAX);
        run_search("FindFiles", request, directory, move |request, scope| {
            let mut found = find(scope, &matcher, max);
            found.sort();
            let mut text = String::new();
            if found.is_empty() {
                text.push_str(&format!(
                    "No files matching {pattern:?} in {}\n",
                    scope.dir.display()
                ));
            }
            for path in found.iter().take(max) {
                text.push_str(path);
                text.push('\n');
            }
            if let Some(note) = scope.note("narrow the pattern or the directory") {
                text.push_str(&note);
                text.push('\n');
            }
            ToolResult::succeeded(request, text)
        })
        .await
    }
}

/// The matching files' paths as results show them, up to `max` (the walk stops there).
pub(crate) fn find(scope: &Scope, matcher: &globset::GlobMatcher, max: usize) -> Vec<String> {
    let found = Mutex::new(Vec::new());
    scope.walker().run(|| {
        Box::new(|entry| {
            if scope.should_stop() {
                return WalkState::Quit;
            }
            let Ok(entry) = entry else {
                return WalkState::Continue;
            };
            if entry.file_type().is_none_or(|kind| kind.is_dir()) {
                return WalkState::Continue;
            }
            if glob_takes(matcher, &scope.relative(entry.path())) {
                let Ok(mut found) = found.lock() else {
                    return WalkState::Quit;
                };
                if found.len() >= max {
                    scope.stop(Stop::Results);
                    return WalkState::Quit;
                }
                found.push(scope.shown(entry.path()));
            }
            WalkState::Continue
        })
    });
    found.into_inner().unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{assert_failed, request};
    use agent_protocol::ToolStatus;
    use serde_json::Value;
    use std::fs;
    use std::path::Path;

    async fn run(dir: &Path, args: Value) -> ToolResult {
        FindFiles.run(&request("FindFiles", dir, args)).await
    }

    fn tree(dir: &Path) {
        for (path, text) in [
            ("src/main.rs", "fn main() {}"),
            ("src/deep/lib.rs", ""),
            ("README.md", ""),
            ("target/debug/out.rs", ""),
            (".gitignore", "target/\n"),
        ] {
            let path = dir.join(path);
            fs::create_dir_all(path.parent().unwrap()).unwrap();
            fs::write(path, text).unwrap();
        }
    }

    /// `text` with the platform's separator: results spell paths as the platform does.
    fn native(text: &str) -> String {
        text.replace('/', std::path::MAIN_SEPARATOR_STR)
    }

    #[tokio::test]
    async fn finds_by_name_at_any_depth_honouring_gitignore() {
        let dir = tempfile::tempdir().unwrap();
        tree(dir.path());
        let result = run(dir.path(), json!({"directory": ".", "pattern": "*.rs"})).await;
        assert_eq!(result.status, ToolStatus::Succeeded, "{result:?}");
        assert_eq!(
            result.output_text.as_deref(),
            Some(native("src/deep/lib.rs\nsrc/main.rs\n").as_str())
        );
        let anchored = run(dir.path(), json!({"directory": ".", "pattern": "src/*.rs"})).await;
        assert_eq!(
            anchored.output_text.as_deref(),
            Some(native("src/main.rs\n").as_str())
        );
        let none = run(dir.path(), json!({"directory": "src", "pattern": "*.py"})).await;
        assert!(none.output_text.unwrap().starts_with("No files matching"));
    }

    #[tokio::test]
    async fn results_stop_at_max_results_and_say_more_exist() {
        let dir = tempfile::tempdir().unwrap();
        for n in 0..10 {
            fs::write(dir.path().join(format!("f{n}.txt")), "").unwrap();
        }
        let result = run(
            dir.path(),
            json!({"directory": ".", "pattern": "*.txt", "max_results": 3}),
        )
        .await;
        let text = result.output_text.unwrap();
        assert_eq!(text.lines().count(), 4, "{text}");
        assert!(text.ends_with("(more results exist; narrow the pattern or the directory)\n"));
    }

    #[tokio::test]
    async fn blocked_paths_are_never_found() {
        let dir = tempfile::tempdir().unwrap();
        let root = fs::canonicalize(dir.path()).unwrap();
        fs::create_dir_all(root.join("secrets")).unwrap();
        fs::write(root.join("secrets/a.txt"), "").unwrap();
        fs::write(root.join("b.txt"), "").unwrap();
        fs::write(root.join("c.pem"), "").unwrap();
        let mut call = request(
            "FindFiles",
            &root,
            json!({"directory": ".", "pattern": "*"}),
        );
        call.blocked_paths = Some(vec![
            root.join("secrets").display().to_string(),
            "*.pem".into(),
        ]);
        let result = FindFiles.run(&call).await;
        assert_eq!(result.output_text.as_deref(), Some("b.txt\n"));
    }

    #[tokio::test]
    async fn bad_patterns_and_arguments_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        for (args, says) in [
            (json!({"directory": ".", "pattern": "/**"}), "relative"),
            (json!({"directory": ".", "pattern": "../*"}), "relative"),
            (
                json!({"directory": ".", "pattern": "a[b"}),
                "not a valid glob",
            ),
            (
                json!({"directory": ".", "pattern": "*", "max_results": 501}),
                "between 1 and 500",
            ),
            (json!({"pattern": "*"}), "\"directory\""),
            (json!({"directory": "..", "pattern": "*"}), "project folder"),
        ] {
            let result = run(dir.path(), args).await;
            assert_failed(&result, ErrorCode::InvalidRequest, says);
        }
        let missing = run(dir.path(), json!({"directory": "nope", "pattern": "*"})).await;
        assert_failed(&missing, ErrorCode::FileNotFound, "nope");
    }

    /// A link back up the tree is not followed: the walk ends.
    #[cfg(unix)]
    #[tokio::test]
    async fn a_directory_loop_is_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir(dir.path().join("a")).unwrap();
        fs::write(dir.path().join("a/x.txt"), "").unwrap();
        std::os::unix::fs::symlink("..", dir.path().join("a/up")).unwrap();
        let result = run(dir.path(), json!({"directory": ".", "pattern": "*.txt"})).await;
        assert_eq!(result.output_text.as_deref(), Some("a/x.txt\n"));
    }

    #[tokio::test]
    async fn an_expired_time_limit_returns_what_was_found_and_says_so() {
        let dir = tempfile::tempdir().unwrap();
        tree(dir.path());
        let mut call = request(
            "FindFiles",
            dir.path(),
            json!({"directory": ".", "pattern": "*"}),
        );
        call.limits.timeout_ms = Some(0);
        let result = FindFiles.run(&call).await;
        assert!(result.output_text.unwrap().contains("stopped after 0 s"));
    }
}
