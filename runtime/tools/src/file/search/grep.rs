//! GrepFiles (INTEROP.md §11): the lines of the files under a folder that match a regular
//! expression, with optional context, as `path:line:text` (context lines `path-line-text`,
//! groups apart `--`), at most `max_results` matching lines (default 50, at most 200).
//! Searched by ripgrep's searcher: binary files are left at their first NUL byte, a file
//! larger than the size limit is skipped (and named), a line longer than the searcher's
//! memory bound ends that file's search, and every file is opened beneath the project folder.

use std::fs::File;
use std::path::Path;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use agent_protocol::{ErrorCode, ToolDefinition, ToolRequest, ToolResult};
use async_trait::async_trait;
use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder, Sink, SinkContext, SinkMatch};
use ignore::WalkState;
use serde_json::json;

use super::{Scope, Stop, compile_glob, glob_takes, run_search};
use crate::args::Args;
use crate::output;
use crate::platform::beneath::{self, Access};
use crate::tool::Tool;

const DEFAULT_RESULTS: u64 = 50;
const MAX_RESULTS: u64 = 200;
const MAX_CONTEXT: u64 = 5;
/// A line shown longer than this is cut (minified files hold megabyte lines).
const MAX_LINE_CHARS: usize = 300;
/// The most memory the searcher may take for one line.
const HEAP_LIMIT: usize = 8 * 1024 * 1024;

/// GrepFiles, skipping files larger than `max_file_bytes` (or the call's size limit).
pub(crate) struct GrepFiles {
    pub max_file_bytes: u64,
}

#[async_trait]
impl Tool for GrepFiles {
    fn definition(&self) -> ToolDefinition {
        ToolDefinition {
            tool_name: "GrepFiles".to_owned(),
            description: "Search file contents for a regular expression, honouring .gitignore"
                .to_owned(),
            input_schema: json!({
                "type": "object",
                "required": ["directory", "pattern"],
                "additionalProperties": false,
                "properties": {
                    "directory": { "type": "string", "description": "Directory to search (relative paths resolve against the project folder)" },
                    "pattern": { "type": "string", "minLength": 1, "description": "Regular expression (Rust regex syntax; (?i) for case-insensitive)" },
                    "file_glob": { "type": "string", "description": "Only files matching this glob, such as *.py; without / it matches file names" },
                    "max_results": { "type": "integer", "minimum": 1, "maximum": MAX_RESULTS, "default": DEFAULT_RESULTS, "description": "Most matching lines to return. Default: 50" },
                    "context_lines": { "type": "integer", "minimum": 0, "maximum": MAX_CONTEXT, "default": 0, "description": "Lines of context before and after each match. Default: 0" }
                }
            }).into(),
        }
    }

    async fn run(&self, request: &ToolRequest) -> ToolResult {
        let args = Args::new("GrepFiles", &request.arguments);
        let parsed = args
            .only(&[
                "directory",
                "pattern",
                "file_glob",
                "max_results",
                "context_lines",
            ])
            .and_then(|()| {
                Ok(Query {
                    directory: args.required_str("directory")?.to_owned(),
                    pattern: args.required_str("pattern")?.to_owned(),
                    file_glob: args.optional_str("file_glob")?.map(str::to_owned),
                    max: usize::try_from(
                        args.optional_u64_between("max_results", 1, MAX_RESULTS)?
                            .unwrap_or(DEFAULT_RESULTS),
                    )
                    .unwrap_or(usize::MAX),
                    context: usize::try_from(
                        args.optional_u64_between("context_lines", 0, MAX_CONTEXT)?
                            .unwrap_or(0),
                    )
                    .unwrap_or(0),
                })
            });
        let query = match parsed {
            Ok(query) => query,
            Err(error) => return ToolResult::failed(request, ErrorCode::InvalidRequest, error.0),
        };
        let invalid =
            |message: String| ToolResult::failed(request, ErrorCode::InvalidRequest, message);
        let matcher = match RegexMatcherBuilder::new()
            .line_terminator(Some(b'\n'))
            .build(&query.pattern)
        {
            Ok(matcher) => matcher,
            Err(error) => {
                return invalid(format!(
                    "GrepFiles: \"pattern\" is not a valid regular expression: {error}"
                ));
            }
        };
        let glob = match query
            .file_glob
            .as_deref()
            .map(|glob| compile_glob("GrepFiles", "file_glob", glob))
        {
            Some(Err(message)) => return invalid(message),
            Some(Ok(glob)) => Some(glob),
            None => None,
        };
        let max_file_bytes = request
            .limits
            .max_file_size_bytes
            .map_or(self.max_file_bytes, |limit| limit.min(self.max_file_bytes));
        let max_output = output::max_output_bytes(request.limits.max_output_bytes);
        let directory = query.directory.clone();
        run_search("GrepFiles", request, &directory, move |request, scope| {
            let search = Search {
                scope,
                matcher: &matcher,
                glob: glob.as_ref(),
                query: &query,
                max_file_bytes,
                matches: AtomicUsize::new(0),
                files: Mutex::new(Vec::new()),
                skipped: Mutex::new(Vec::new()),
            };
            let text = search.run();
            ToolResult::succeeded(request, output::truncate(&text, max_output).into_owned())
        })
        .await
    }
}

struct Query {
    directory: String,
    pattern: String,
    file_glob: Option<String>,
    max: usize,
    context: usize,
}

/// One line of a file's results.
enum Line {
    Match(u64, String),
    Context(u64, String),
    Break,
}

struct Search<'a> {
    scope: &'a Scope,
    matcher: &'a RegexMatcher,
    glob: Option<&'a globset::GlobMatcher>,
    query: &'a Query,
    max_file_bytes: u64,
    /// Matching lines found so far, across threads.
    matches: AtomicUsize,
    files: Mutex<Vec<(String, Vec<Line>)>>,
    /// Files left out, with why.
    skipped: Mutex<Vec<String>>,
}

impl Search<'_> {
    fn run(&self) -> String {
        self.scope.walker().run(|| {
            let mut searcher = SearcherBuilder::new()
                .binary_detection(BinaryDetection::quit(0))
                .line_number(true)
                .before_context(self.query.context)
                .after_context(self.query.context)
                .heap_limit(Some(HEAP_LIMIT))
                .build();
            Box::new(move |entry| {
                if self.scope.should_stop() {
                    return WalkState::Quit;
                }
                let Ok(entry) = entry else {
                    return WalkState::Continue;
                };
                // Regular files only: a link is not followed (ripgrep's default).
                if !entry.file_type().is_some_and(|kind| kind.is_file()) {
                    return WalkState::Continue;
                }
                if let Some(glob) = self.glob
                    && !glob_takes(glob, &self.scope.relative(entry.path()))
                {
                    return WalkState::Continue;
                }
                self.search_file(&mut searcher, entry.path());
                WalkState::Continue
            })
        });
        self.render()
    }

    fn skip(&self, path: &Path, why: String) {
        if let Ok(mut skipped) = self.skipped.lock() {
            skipped.push(format!("{} ({why})", self.scope.shown(path)));
        }
    }

    fn search_file(&self, searcher: &mut Searcher, path: &Path) {
        let root = self.scope.root.as_deref();
        let Ok(file) = beneath::open(root, path, Access::Read) else {
            return;
        };
        let Ok(metadata) = file.metadata() else {
            return;
        };
        // Opened by name after the walk saw it: a file swapped since (for a link, say) is
        // not the one the walk judged.
        if !metadata.is_file() || !same_file(&file, path) {
            return;
        }
        if metadata.len() > self.max_file_bytes {
            self.skip(
                path,
                format!(
                    "{} bytes, larger than {}",
                    metadata.len(),
                    self.max_file_bytes
                ),
            );
            return;
        }
        let mut sink = Collect {
            search: self,
            lines: Vec::new(),
        };
        if let Err(error) = searcher.search_file(self.matcher, &file, &mut sink) {
            self.skip(path, format!("not searched to its end: {error}"));
        }
        if sink
            .lines
            .iter()
            .any(|line| matches!(line, Line::Match(..)))
            && let Ok(mut files) = self.files.lock()
        {
            files.push((self.scope.shown(path), sink.lines));
        }
    }

    fn render(&self) -> String {
        let mut files = self
            .files
            .lock()
            .map(|mut files| std::mem::take(&mut *files))
            .unwrap_or_default();
        files.sort_by(|a, b| a.0.cmp(&b.0));
        let mut text = String::new();
        let mut shown = 0usize;
        'files: for (index, (path, lines)) in files.iter().enumerate() {
            if shown >= self.query.max {
                break;
            }
            if index > 0 && self.query.context > 0 {
                text.push_str("--\n");
            }
            for line in lines {
                match line {
                    Line::Match(number, content) => {
                        if shown >= self.query.max {
                            break 'files;
                        }
                        shown += 1;
                        text.push_str(&format!("{path}:{number}:{content}\n"));
                    }
                    Line::Context(number, content) => {
                        text.push_str(&format!("{path}-{number}-{content}\n"));
                    }
                    Line::Break => text.push_str("--\n"),
                }
            }
        }
        if shown == 0 {
            text.push_str(&format!(
                "No matches for {:?} in {}\n",
                self.query.pattern,
                self.scope.dir.display()
            ));
        }
        if let Some(note) = self
            .scope
            .note("narrow the pattern, the directory or file_glob")
        {
            text.push_str(&note);
            text.push('\n');
        }
        let skipped = self.skipped.lock().map(|s| s.clone()).unwrap_or_default();
        if !skipped.is_empty() {
            let mut skipped = skipped;
            skipped.sort();
            text.push_str(&format!(
                "(skipped {} file(s): {})\n",
                skipped.len(),
                skipped.join(", ")
            ));
        }
        text
    }
}

/// Whether the open `file` is the entry the walk saw at `path` (not followed).
#[cfg(unix)]
fn same_file(file: &File, path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (file.metadata(), std::fs::symlink_metadata(path)) {
        (Ok(open), Ok(seen)) => open.dev() == seen.dev() && open.ino() == seen.ino(),
        _ => false,
    }
}

#[cfg(not(unix))]
fn same_file(_file: &File, path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|seen| seen.is_file())
}

/// A line as shown: without its line ending, cut at [`MAX_LINE_CHARS`].
fn shown_line(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let text = text.trim_end_matches(['\n', '\r']);
    match text.char_indices().nth(MAX_LINE_CHARS) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_owned(),
    }
}

/// Gathers one file's lines, stopping the search once enough matches are found overall.
struct Collect<'a, 'b> {
    search: &'a Search<'b>,
    lines: Vec<Line>,
}

impl Sink for Collect<'_, '_> {
    type Error = std::io::Error;

    fn matched(
        &mut self,
        _searcher: &Searcher,
        found: &SinkMatch<'_>,
    ) -> Result<bool, Self::Error> {
        let first = found.line_number().unwrap_or(0);
        for (offset, line) in (0u64..).zip(found.lines()) {
            let before = self.search.matches.fetch_add(1, Ordering::Relaxed);
            if before >= self.search.query.max {
                self.search.scope.stop(Stop::Results);
                return Ok(false);
            }
            self.lines
                .push(Line::Match(first + offset, shown_line(line)));
        }
        Ok(!self.search.scope.should_stop())
    }

    fn context(
        &mut self,
        _searcher: &Searcher,
        context: &SinkContext<'_>,
    ) -> Result<bool, Self::Error> {
        self.lines.push(Line::Context(
            context.line_number().unwrap_or(0),
            shown_line(context.bytes()),
        ));
        Ok(true)
    }

    fn context_break(&mut self, _searcher: &Searcher) -> Result<bool, Self::Error> {
        self.lines.push(Line::Break);
        Ok(true)
    }
}

#[cfg(test)]
#[path = "grep_tests.rs"]
mod tests;
