//! ReadFile (local-tool-runtime.md §4.1).

use std::path::PathBuf;

use agent_protocol::{ErrorCode, ToolDefinition, ToolRequest, ToolResult};
use async_trait::async_trait;
use serde_json::json;

use super::io_failure;
use crate::args::Args;
use crate::platform::{self, Os, encoding::DecodeError};
use crate::router::Tool;

/// How much of the start of a file is inspected for NUL bytes to call it binary.
const BINARY_SNIFF_BYTES: usize = 8000;

pub struct ReadFile;

#[async_trait]
impl Tool for ReadFile {
    fn definition(&self) -> ToolDefinition {
        ToolDefinition {
            tool_name: "ReadFile".to_owned(),
            description: "Read the contents of a file at the given path".to_owned(),
            input_schema: json!({
                "type": "object",
                "required": ["path"],
                "additionalProperties": false,
                "properties": {
                    "path": { "type": "string", "description": "Absolute file path to read (relative paths resolve against the project folder)" },
                    "offset": { "type": "integer", "minimum": 1, "description": "Line number to start reading from (1-based). Default: 1" },
                    "limit": { "type": "integer", "minimum": 1, "description": "Maximum number of lines to return. Default: all" },
                    "encoding": { "type": "string", "description": "File encoding (a standard label such as utf-8, utf-16le, windows-1252, latin-1). Default: utf-8, falling back to the OS default encoding, then latin-1; a byte order mark wins" }
                }
            }),
        }
    }

    async fn run(&self, request: &ToolRequest) -> ToolResult {
        let args = Args::new("ReadFile", &request.arguments);
        let parsed = args
            .only(&["path", "offset", "limit", "encoding"])
            .and_then(|()| {
                Ok((
                    args.required_str("path")?,
                    args.optional_u64("offset", 1)?,
                    args.optional_u64("limit", 1)?,
                    args.optional_str("encoding")?,
                ))
            });
        let (raw_path, offset, limit, encoding) = match parsed {
            Ok(parsed) => parsed,
            Err(error) => return ToolResult::failed(request, ErrorCode::InvalidRequest, error.0),
        };
        // §8.1: every file tool, not only those that change files, refuses a path that
        // climbs out of the project folder with `..` (defense in depth behind the enforcer).
        let path = match super::resolve_path("ReadFile", raw_path, request) {
            Ok(path) => path,
            Err(failure) => return *failure,
        };
        let request_owned = request.clone();
        let encoding = encoding.map(str::to_owned);
        let outcome = tokio::task::spawn_blocking(move || {
            read(&request_owned, &path, offset, limit, encoding.as_deref())
        })
        .await;
        outcome.unwrap_or_else(|error| {
            ToolResult::failed(
                request,
                ErrorCode::ToolExecutionFailed,
                format!("ReadFile stopped unexpectedly: {error}"),
            )
        })
    }
}

fn read(
    request: &ToolRequest,
    path: &PathBuf,
    offset: Option<u64>,
    limit: Option<u64>,
    encoding: Option<&str>,
) -> ToolResult {
    let metadata = match std::fs::metadata(path) {
        Ok(metadata) => metadata,
        Err(error) => return io_failure(request, path, &error),
    };
    if metadata.is_dir() {
        return ToolResult::failed(
            request,
            ErrorCode::InvalidRequest,
            format!("{} is a directory, not a file", path.display()),
        );
    }
    // A FIFO, socket or device has no end to read to (and a FIFO without a writer blocks
    // its reader, a blocking-pool thread, forever).
    if !metadata.is_file() {
        return ToolResult::failed(
            request,
            ErrorCode::InvalidRequest,
            format!(
                "{} is not a regular file (a pipe, socket or device); ReadFile reads files",
                path.display()
            ),
        );
    }
    if let Some(limit) = request.limits.max_file_size_bytes
        && metadata.len() > limit
    {
        return ToolResult::failed(
            request,
            ErrorCode::FileTooLarge,
            format!(
                "{} is {} bytes, more than the limit of {limit} bytes",
                path.display(),
                metadata.len()
            ),
        );
    }
    let bytes = match std::fs::read(path) {
        Ok(bytes) => bytes,
        Err(error) => return io_failure(request, path, &error),
    };
    // UTF-16 text is full of NUL bytes: a BOM or an explicit encoding says it is text.
    if encoding.is_none()
        && platform::encoding::bom(&bytes).is_none()
        && bytes[..bytes.len().min(BINARY_SNIFF_BYTES)].contains(&0)
    {
        return ToolResult::succeeded(request, format!("Binary file, {} bytes", bytes.len()));
    }
    let text = match platform::encoding::decode(Os::current(), &bytes, encoding) {
        Ok(text) => text,
        Err(error @ DecodeError::UnknownEncoding(_)) => {
            return ToolResult::failed(
                request,
                ErrorCode::InvalidRequest,
                format!("ReadFile: {error}"),
            );
        }
        Err(error @ DecodeError::Malformed(_)) => {
            return ToolResult::failed(
                request,
                ErrorCode::ToolExecutionFailed,
                format!("ReadFile: {} {error}", path.display()),
            );
        }
    };
    ToolResult::succeeded(request, select_lines(&text, offset, limit))
}

/// Lines `offset..offset+limit` (1-based), keeping their line endings.
fn select_lines(text: &str, offset: Option<u64>, limit: Option<u64>) -> String {
    if offset.is_none() && limit.is_none() {
        return text.to_owned();
    }
    let skip = usize::try_from(offset.unwrap_or(1).saturating_sub(1)).unwrap_or(usize::MAX);
    let take = limit.map_or(usize::MAX, |limit| {
        usize::try_from(limit).unwrap_or(usize::MAX)
    });
    text.split_inclusive('\n').skip(skip).take(take).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_protocol::ToolStatus;
    use serde_json::{Value, json};
    use std::path::Path;

    fn request(dir: &Path, args: Value) -> ToolRequest {
        ToolRequest {
            tool_name: "ReadFile".into(),
            arguments: args.as_object().unwrap().clone(),
            session_id: "s".into(),
            task_id: "t".into(),
            step_id: "step_001".into(),
            capability: Some("File.Read".into()),
            tool_call_id: Some("c1".into()),
            workspace_root: Some(dir.display().to_string()),
            limits: Default::default(),
            sandbox: None,
        }
    }

    async fn run(dir: &Path, args: Value) -> ToolResult {
        ReadFile.run(&request(dir, args)).await
    }

    #[tokio::test]
    async fn reads_whole_files_and_line_ranges() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "one\ntwo\nthree\nfour\n").unwrap();
        let whole = run(dir.path(), json!({"path": "a.txt"})).await;
        assert_eq!(
            whole.output_text.as_deref(),
            Some("one\ntwo\nthree\nfour\n")
        );
        let range = run(
            dir.path(),
            json!({"path": dir.path().join("a.txt"), "offset": 2, "limit": 2}),
        )
        .await;
        assert_eq!(range.output_text.as_deref(), Some("two\nthree\n"));
        assert_eq!(range.tool_call_id.as_deref(), Some("c1"));
    }

    #[tokio::test]
    async fn errors_carry_the_spec_codes() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("big"), vec![b'x'; 100]).unwrap();
        let missing = run(dir.path(), json!({"path": "nope.txt"})).await;
        assert_eq!(missing.error.unwrap().code, ErrorCode::FileNotFound);
        let mut big = request(dir.path(), json!({"path": "big"}));
        big.limits.max_file_size_bytes = Some(10);
        assert_eq!(
            ReadFile.run(&big).await.error.unwrap().code,
            ErrorCode::FileTooLarge
        );
        let bad = run(dir.path(), json!({"path": "big", "offset": 0})).await;
        let error = bad.error.unwrap();
        assert_eq!(error.code, ErrorCode::InvalidRequest);
        assert!(error.message.contains("offset"), "{}", error.message);
        let typo = run(dir.path(), json!({"pth": "big"})).await;
        assert!(typo.error.unwrap().message.contains("pth"));
        let directory = run(dir.path(), json!({"path": "."})).await;
        assert_eq!(directory.status, ToolStatus::Failed);
    }

    /// A FIFO without a writer would block its reader forever; it is refused at once.
    #[cfg(unix)]
    #[tokio::test]
    async fn a_fifo_is_refused_not_read() {
        let dir = tempfile::tempdir().unwrap();
        crate::testing::fifo(dir.path(), "pipe");
        let result = run(dir.path(), json!({"path": "pipe"})).await;
        crate::testing::assert_failed(&result, ErrorCode::InvalidRequest, "not a regular file");
    }

    #[tokio::test]
    async fn binary_files_are_described_and_bom_and_latin1_are_decoded() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("bin"), [1u8, 0, 2, 3]).unwrap();
        std::fs::write(dir.path().join("bom"), b"\xEF\xBB\xBFhi").unwrap();
        std::fs::write(dir.path().join("latin"), b"caf\xE9").unwrap();
        assert_eq!(
            run(dir.path(), json!({"path": "bin"}))
                .await
                .output_text
                .as_deref(),
            Some("Binary file, 4 bytes")
        );
        assert_eq!(
            run(dir.path(), json!({"path": "bom"}))
                .await
                .output_text
                .as_deref(),
            Some("hi")
        );
        assert_eq!(
            run(dir.path(), json!({"path": "latin"}))
                .await
                .output_text
                .as_deref(),
            Some("café")
        );
    }

    #[tokio::test]
    async fn utf16_files_are_text_and_an_explicit_encoding_is_honoured() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("u16"), b"\xFF\xFEo\0k\0\n\0").unwrap();
        std::fs::write(dir.path().join("cp"), b"\x80 5").unwrap();
        std::fs::write(dir.path().join("le"), b"h\0i\0").unwrap();
        let text = |result: ToolResult| result.output_text.unwrap_or_default();
        assert_eq!(text(run(dir.path(), json!({"path": "u16"})).await), "ok\n");
        assert_eq!(
            text(
                run(
                    dir.path(),
                    json!({"path": "cp", "encoding": "windows-1252"})
                )
                .await
            ),
            "€ 5"
        );
        assert_eq!(
            text(run(dir.path(), json!({"path": "le", "encoding": "utf-16le"})).await),
            "hi"
        );
        let unknown = run(dir.path(), json!({"path": "cp", "encoding": "klingon"})).await;
        assert_eq!(unknown.error.unwrap().code, ErrorCode::InvalidRequest);
        let malformed = run(dir.path(), json!({"path": "cp", "encoding": "utf-16le"})).await;
        assert_eq!(
            malformed.error.unwrap().code,
            ErrorCode::ToolExecutionFailed
        );
    }
}
