//! FindFiles and GrepFiles (INTEROP.md §11): searches of a folder of the project, walked
//! with `ignore` (which honours `.gitignore`, `.ignore` and `.git/info/exclude`, and never
//! follows a link, so a link loop cannot trap the walk) and matched with `globset` and
//! ripgrep's `grep-searcher`. What they find that the capability blocks is left out, like
//! the enforcer leaves out what a call names. Every search is bounded: by its
//! `max_results`, by the call's time limit (the results so far are returned, saying so),
//! and it stops when the call is cancelled.

pub(crate) mod find;
pub(crate) mod grep;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::time::{Duration, Instant};

use agent_protocol::{ErrorCode, ToolRequest, ToolResult};

use crate::file::blocked::Blocked;
use crate::file::{open_failure, resolve_path};
use crate::platform::beneath::{self, Access};

/// How long a search may run when the call carries no time limit.
const DEFAULT_SEARCH_TIME: Duration = Duration::from_secs(30);

/// Why a walk ended early.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum Stop {
    /// It did not: it walked everything.
    None = 0,
    /// `max_results` were found.
    Results = 1,
    /// The time limit passed.
    Time = 2,
    /// The call was cancelled.
    Cancelled = 3,
}

/// One search's folder, bounds and stop signal, shared by the walking threads.
pub(crate) struct Scope {
    /// The folder searched, resolved (no link in it).
    pub dir: PathBuf,
    pub blocked: Arc<Blocked>,
    /// The project folder, resolved: results are shown relative to it.
    root: Option<PathBuf>,
    deadline: Instant,
    limit: Duration,
    stop: AtomicU8,
    cancelled: Arc<AtomicBool>,
}

impl Scope {
    /// Whether the walk should end now (and why, the first time it notices).
    pub(crate) fn should_stop(&self) -> bool {
        if self.stop.load(Ordering::Relaxed) != Stop::None as u8 {
            return true;
        }
        if self.cancelled.load(Ordering::Relaxed) {
            self.stop(Stop::Cancelled);
            return true;
        }
        if Instant::now() >= self.deadline {
            self.stop(Stop::Time);
            return true;
        }
        false
    }

    pub(crate) fn stop(&self, why: Stop) {
        let _ = self.stop.compare_exchange(
            Stop::None as u8,
            why as u8,
            Ordering::Relaxed,
            Ordering::Relaxed,
        );
    }

    pub(crate) fn stopped(&self) -> Stop {
        match self.stop.load(Ordering::Relaxed) {
            1 => Stop::Results,
            2 => Stop::Time,
            3 => Stop::Cancelled,
            _ => Stop::None,
        }
    }

    /// A note on why the results are incomplete, if they are.
    pub(crate) fn note(&self, more: &str) -> Option<String> {
        match self.stopped() {
            Stop::None => None,
            Stop::Results => Some(format!("(more results exist; {more})")),
            Stop::Time => Some(format!(
                "(the search stopped after {} s, so results may be missing; search a smaller directory or narrow the pattern)",
                self.limit.as_secs()
            )),
            Stop::Cancelled => Some("(the search was cancelled)".to_owned()),
        }
    }

    /// `path` as results show it: relative to the project folder when inside it.
    pub(crate) fn shown(&self, path: &Path) -> String {
        match self
            .root
            .as_deref()
            .and_then(|root| path.strip_prefix(root).ok())
        {
            Some(relative) if !relative.as_os_str().is_empty() => {
                relative.to_string_lossy().into_owned()
            }
            _ => path.to_string_lossy().into_owned(),
        }
    }

    /// `path` relative to the searched folder, in `/` spelling, for glob matching.
    pub(crate) fn relative(&self, path: &Path) -> String {
        let relative = path.strip_prefix(&self.dir).unwrap_or(path);
        let text = relative.to_string_lossy();
        if std::path::MAIN_SEPARATOR == '/' {
            text.into_owned()
        } else {
            text.replace(std::path::MAIN_SEPARATOR, "/")
        }
    }

    /// The walker over the folder: ignore files honoured, hidden files included, `.git`
    /// and blocked paths left out, no link followed.
    pub(crate) fn walker(&self) -> ignore::WalkParallel {
        let blocked = Arc::clone(&self.blocked);
        let mut builder = ignore::WalkBuilder::new(&self.dir);
        builder
            .hidden(false)
            .follow_links(false)
            .require_git(false)
            .git_global(false)
            .filter_entry(move |entry| {
                let is_dir = entry.file_type().is_some_and(|kind| kind.is_dir());
                if is_dir && entry.file_name() == ".git" {
                    return false;
                }
                !blocked.hides_entry(entry.path(), entry.path_is_symlink())
            });
        builder.build_parallel()
    }
}

/// Sets the flag when dropped: the call's future dropped (cancelled or timed out by the
/// host) stops the walk running on the blocking pool.
struct CancelOnDrop(Arc<AtomicBool>);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// Resolves the `directory` argument, checks it is a folder reachable beneath the project
/// folder, and runs `search` over it on the blocking pool.
pub(crate) async fn run_search<F>(
    tool: &'static str,
    request: &ToolRequest,
    raw_dir: &str,
    search: F,
) -> ToolResult
where
    F: FnOnce(&ToolRequest, &Scope) -> ToolResult + Send + 'static,
{
    let dir = match resolve_path(tool, raw_dir, request) {
        Ok(dir) => dir,
        Err(failure) => return *failure,
    };
    let cancelled = Arc::new(AtomicBool::new(false));
    let _guard = CancelOnDrop(Arc::clone(&cancelled));
    let limit = request
        .limits
        .timeout_ms
        .map_or(DEFAULT_SEARCH_TIME, Duration::from_millis);
    let request_owned = request.clone();
    tokio::task::spawn_blocking(move || {
        let request = &request_owned;
        let root = request.workspace_root.as_deref().map(Path::new);
        if let Err(error) = beneath::open(root, &dir, Access::Directory) {
            return match error.kind() {
                std::io::ErrorKind::NotADirectory => ToolResult::failed(
                    request,
                    ErrorCode::InvalidRequest,
                    format!("{tool}: {} is a file, not a directory", dir.display()),
                ),
                _ => open_failure(request, tool, &dir, &error),
            };
        }
        let real = match std::fs::canonicalize(&dir) {
            Ok(real) => real,
            Err(error) => return crate::file::io_failure(request, &dir, &error),
        };
        let blocked = Blocked::of(request);
        let scope = Scope {
            dir: real,
            root: blocked.root(),
            blocked: Arc::new(blocked),
            deadline: Instant::now() + limit,
            limit,
            stop: AtomicU8::new(Stop::None as u8),
            cancelled,
        };
        search(request, &scope)
    })
    .await
    .unwrap_or_else(|error| {
        ToolResult::failed(
            request,
            ErrorCode::ToolExecutionFailed,
            format!("{tool} stopped unexpectedly: {error}"),
        )
    })
}

/// A glob argument compiled, or the readable refusal. A pattern that climbs out of the
/// folder (`..`) or is absolute is refused: it is matched against paths inside the folder.
pub(crate) fn compile_glob(
    tool: &str,
    name: &str,
    pattern: &str,
) -> Result<globset::GlobMatcher, String> {
    if pattern.starts_with('/') || pattern.split(['/', '\\']).any(|part| part == "..") {
        return Err(format!(
            "{tool}: \"{name}\" {pattern:?} must be relative to the directory searched (no leading / and no ..)"
        ));
    }
    globset::GlobBuilder::new(pattern)
        .literal_separator(true)
        .build()
        .map(|glob| glob.compile_matcher())
        .map_err(|error| format!("{tool}: \"{name}\" is not a valid glob: {error}"))
}

/// Whether `matcher` (from [`compile_glob`]) takes the file at `relative` (`/` spelling):
/// a pattern without `/` looks at the file name only, at any depth.
pub(crate) fn glob_takes(matcher: &globset::GlobMatcher, relative: &str) -> bool {
    if matcher.glob().glob().contains('/') {
        matcher.is_match(relative)
    } else {
        matcher.is_match(relative.rsplit('/').next().unwrap_or(relative))
    }
}
