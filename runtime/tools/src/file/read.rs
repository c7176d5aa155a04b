//! ReadFile (local-tool-runtime.md §4.1).

use std::io::{BufRead, Read};
use std::path::Path;

use agent_protocol::{ErrorCode, ToolDefinition, ToolRequest, ToolResult};
use async_trait::async_trait;
use serde_json::json;

use super::io_failure;
use crate::args::Args;
use crate::platform::{self, Os, beneath, encoding::DecodeError};
use crate::tool::Tool;

/// How much of the start of a file is inspected for NUL bytes to call it binary.
const BINARY_SNIFF_BYTES: usize = 8000;

/// The most ReadFile holds of one file when nothing smaller is set: 10 MiB.
pub(crate) const DEFAULT_MAX_READ_BYTES: u64 = 10 * 1024 * 1024;

/// ReadFile, holding at most `max_bytes` of a file in memory whatever the bundle allows.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ReadFile {
    pub max_bytes: u64,
}

impl Default for ReadFile {
    fn default() -> Self {
        Self {
            max_bytes: DEFAULT_MAX_READ_BYTES,
        }
    }
}

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
            }).into(),
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
        let cap = self.max_bytes;
        let outcome = tokio::task::spawn_blocking(move || {
            let wanted = Wanted {
                offset,
                limit,
                encoding: encoding.as_deref(),
                cap,
            };
            read(&request_owned, &path, &wanted)
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

/// What a call asks of the file, and the most it may hold.
struct Wanted<'a> {
    offset: Option<u64>,
    limit: Option<u64>,
    encoding: Option<&'a str>,
    cap: u64,
}

fn read(request: &ToolRequest, path: &Path, wanted: &Wanted<'_>) -> ToolResult {
    // One handle for every question: the file judged is the file read, opened beneath the
    // project folder so a link swapped in after the policy check cannot lead out of it.
    let root = request.workspace_root.as_deref().map(Path::new);
    let file = match beneath::open(root, path, beneath::Access::Read) {
        Ok(file) => file,
        Err(error) => return super::open_failure(request, "ReadFile", path, &error),
    };
    let metadata = match file.metadata() {
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
    let size = metadata.len();
    if let Some(limit) = request.limits.max_file_size_bytes
        && size > limit
    {
        return ToolResult::failed(
            request,
            ErrorCode::FileTooLarge,
            format!(
                "{} is {size} bytes, more than the limit of {limit} bytes",
                path.display()
            ),
        );
    }
    let mut reader = std::io::BufReader::with_capacity(64 * 1024, file);
    let head = match reader.fill_buf() {
        Ok(head) => head[..head.len().min(BINARY_SNIFF_BYTES)].to_vec(),
        Err(error) => return io_failure(request, path, &error),
    };
    let bom = platform::encoding::bom(&head);
    // UTF-16 text is full of NUL bytes: a BOM or an explicit encoding says it is text.
    if wanted.encoding.is_none() && bom.is_none() && head.contains(&0) {
        return ToolResult::succeeded(request, format!("Binary file, {size} bytes"));
    }
    let bytes = if size <= wanted.cap {
        // Read no more than the cap even if the file grew since it was measured.
        let mut bytes = Vec::new();
        match reader.take(wanted.cap).read_to_end(&mut bytes) {
            Ok(_) => bytes,
            Err(error) => return io_failure(request, path, &error),
        }
    } else {
        let too_large = |what: String| {
            ToolResult::failed(
                request,
                ErrorCode::FileTooLarge,
                format!(
                    "{} is {size} bytes; {what} (ReadFile holds at most {} bytes at once, AGENT_RUNTIME_MAX_READ_BYTES)",
                    path.display(),
                    wanted.cap
                ),
            )
        };
        if wanted.offset.is_none() && wanted.limit.is_none() {
            return too_large("read it in parts with \"offset\" and \"limit\"".to_owned());
        }
        let wide = bom.is_some_and(|(encoding, _)| encoding != encoding_rs::UTF_8)
            || wanted
                .encoding
                .is_some_and(|label| label.to_ascii_lowercase().contains("16"));
        if wide {
            return too_large("a UTF-16 file that large cannot be read in parts".to_owned());
        }
        match lines_of(reader, wanted.offset, wanted.limit, wanted.cap) {
            Ok(Some(bytes)) => bytes,
            Ok(None) => return too_large("the lines asked for are more than that".to_owned()),
            Err(error) => return io_failure(request, path, &error),
        }
    };
    let text = match platform::encoding::decode(Os::current(), &bytes, wanted.encoding) {
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
    if size > wanted.cap {
        // `bytes` already holds exactly the lines asked for.
        return ToolResult::succeeded(request, text);
    }
    ToolResult::succeeded(request, select_lines(&text, wanted.offset, wanted.limit))
}

/// The bytes of lines `offset..offset+limit` (1-based) of an ASCII-compatible file, read
/// line by line, so a file larger than memory can be read in parts. `None` when they add
/// up to more than `cap` bytes.
fn lines_of(
    mut reader: impl BufRead,
    offset: Option<u64>,
    limit: Option<u64>,
    cap: u64,
) -> std::io::Result<Option<Vec<u8>>> {
    let skip = offset.unwrap_or(1).saturating_sub(1);
    let mut line = 0u64;
    // Skipping reads through the buffer without keeping any of it.
    while line < skip {
        let buffer = reader.fill_buf()?;
        if buffer.is_empty() {
            return Ok(Some(Vec::new()));
        }
        let (used, ended) = match buffer.iter().position(|byte| *byte == b'\n') {
            Some(at) => (at + 1, true),
            None => (buffer.len(), false),
        };
        reader.consume(used);
        if ended {
            line += 1;
        }
    }
    let mut out = Vec::new();
    let mut taken = 0u64;
    let cap = usize::try_from(cap).unwrap_or(usize::MAX);
    while limit.is_none_or(|limit| taken < limit) {
        // Never more than one byte past the cap, however long the line.
        let room = u64::try_from(cap.saturating_sub(out.len()) + 1).unwrap_or(u64::MAX);
        let read = (&mut reader).take(room).read_until(b'\n', &mut out)?;
        if out.len() > cap {
            return Ok(None);
        }
        if read == 0 {
            break;
        }
        if out.last() == Some(&b'\n') {
            taken += 1;
        }
    }
    Ok(Some(out))
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
            granted_paths: None,
            blocked_paths: None,
            sandbox: None,
        }
    }

    async fn run(dir: &Path, args: Value) -> ToolResult {
        ReadFile::default().run(&request(dir, args)).await
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
            ReadFile::default().run(&big).await.error.unwrap().code,
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

    /// A ReadFile that holds at most `cap` bytes.
    async fn run_capped(dir: &Path, cap: u64, args: Value) -> ToolResult {
        ReadFile { max_bytes: cap }.run(&request(dir, args)).await
    }

    #[tokio::test]
    async fn a_huge_sparse_file_is_called_binary_from_its_first_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let file = std::fs::File::create(dir.path().join("sparse")).unwrap();
        // 64 GiB of holes: reading it whole would exhaust any machine.
        file.set_len(64 << 30).unwrap();
        let result = run(dir.path(), json!({"path": "sparse"})).await;
        assert_eq!(result.status, ToolStatus::Succeeded, "{result:?}");
        assert_eq!(
            result.output_text.as_deref(),
            Some("Binary file, 68719476736 bytes")
        );
    }

    #[tokio::test]
    async fn text_larger_than_the_cap_is_refused_whole_and_served_in_parts() {
        let dir = tempfile::tempdir().unwrap();
        let text: String = (1..=1000).map(|n| format!("line {n}\n")).collect();
        std::fs::write(dir.path().join("big.txt"), &text).unwrap();
        let whole = run_capped(dir.path(), 100, json!({"path": "big.txt"})).await;
        let error = whole.error.unwrap();
        assert_eq!(error.code, ErrorCode::FileTooLarge);
        assert!(error.message.contains("offset"), "{}", error.message);
        assert!(
            error.message.contains("at most 100 bytes"),
            "{}",
            error.message
        );

        let part = run_capped(
            dir.path(),
            100,
            json!({"path": "big.txt", "offset": 998, "limit": 2}),
        )
        .await;
        assert_eq!(part.output_text.as_deref(), Some("line 998\nline 999\n"));
        let to_end = run_capped(dir.path(), 100, json!({"path": "big.txt", "offset": 999})).await;
        assert_eq!(to_end.output_text.as_deref(), Some("line 999\nline 1000\n"));
        let past = run_capped(dir.path(), 100, json!({"path": "big.txt", "offset": 5000})).await;
        assert_eq!(past.output_text.as_deref(), Some(""));
        let many = run_capped(
            dir.path(),
            100,
            json!({"path": "big.txt", "offset": 1, "limit": 50}),
        )
        .await;
        assert_eq!(many.error.unwrap().code, ErrorCode::FileTooLarge);

        // Under the cap nothing changes.
        let small = run_capped(
            dir.path(),
            1 << 20,
            json!({"path": "big.txt", "offset": 2, "limit": 1}),
        )
        .await;
        assert_eq!(small.output_text.as_deref(), Some("line 2\n"));
    }

    #[test]
    fn one_endless_line_holds_no_more_than_the_cap() {
        let endless = std::io::repeat(b'x');
        let reader = std::io::BufReader::new(endless);
        assert_eq!(lines_of(reader, Some(1), Some(1), 1000).unwrap(), None);
        let reader = std::io::BufReader::new(&b"a\nb\nc"[..]);
        assert_eq!(
            lines_of(reader, Some(2), None, 1000).unwrap(),
            Some(b"b\nc".to_vec())
        );
    }
}
