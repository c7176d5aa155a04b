//! Git that runs nothing from the repository.
//!
//! A repository's own files are writable by the model (File.Write, or `echo >> .git/config`),
//! and git executes programs its config names: `core.fsmonitor`, hooks, filter and diff
//! drivers, `core.sshCommand`, credential helpers, pagers, editors, signing programs. So every
//! run ignores the system and global config, forces each executing setting off with `-c`
//! (command-line config wins over every file), and neutralises the drivers the repository's
//! config declares under names only it knows (`filter.<name>.clean`). The repository itself
//! is found here, not by git's upward search: it must lie inside the folder the call was
//! granted, and a `.git` file (or link) must not lead out of it.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use tokio::process::Command;

use crate::platform::{self, Os, paths};

/// Where git finds no hooks and no config: a path that is not a folder.
const NOWHERE: &str = if cfg!(windows) { "NUL" } else { "/dev/null" };

/// Settings forced on every run, each naming something git would execute (or a prompt that
/// nobody could answer). `git help config` lists them; see also `core.gitProxy` and
/// `core.alternateRefsCommand`, which are easy to miss.
const FORCED: &[(&str, &str)] = &[
    ("core.fsmonitor", "false"),
    ("core.hooksPath", NOWHERE),
    ("core.pager", "cat"),
    ("core.editor", ":"),
    ("sequence.editor", ":"),
    ("core.askPass", ""),
    ("core.sshCommand", "ssh"),
    ("core.gitProxy", "none"),
    ("core.alternateRefsCommand", ""),
    ("core.attributesFile", NOWHERE),
    ("diff.external", ""),
    ("credential.helper", ""),
    ("gpg.program", "gpg"),
    ("commit.gpgSign", "false"),
    ("tag.gpgSign", "false"),
    ("push.gpgSign", "false"),
    ("protocol.ext.allow", "never"),
    ("gc.auto", "0"),
    ("maintenance.auto", "false"),
    // Submodules carry their own config (in `.git/modules/…`), which is never listed here.
    ("diff.ignoreSubmodules", "all"),
    ("submodule.recurse", "false"),
    ("push.recurseSubmodules", "no"),
    ("status.submoduleSummary", "false"),
    // Readable, stable output.
    ("color.ui", "never"),
    ("core.quotePath", "off"),
];

/// Per-name settings of the repository's config that run a program, as `(section, key)`:
/// `filter.<name>.clean` and the like. An empty value switches each off.
const NAMED_PROGRAMS: &[(&str, &str)] = &[
    ("filter", "clean"),
    ("filter", "smudge"),
    ("filter", "process"),
    ("diff", "command"),
    ("diff", "textconv"),
    ("merge", "driver"),
    ("remote", "receivepack"),
    ("remote", "uploadpack"),
    ("remote", "vcs"),
    ("credential", "helper"),
    ("hook", "command"),
];

/// The arguments that list every key of the repository's config (includes followed).
pub(crate) const LIST_CONFIG: &[&str] = &["config", "--list", "--includes", "--name-only", "-z"];

/// Where git runs: the work tree and its git directory, both checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Repository {
    pub work_tree: PathBuf,
    pub git_dir: PathBuf,
}

/// `git` with the environment and the forced settings, before any subcommand argument.
/// `neutral` are the extra `-c` overrides from [`neutralise`].
pub(crate) fn command(repository: Option<&Repository>, neutral: &[String]) -> Command {
    let mut builder = Command::new("git");
    // Nothing the runtime inherited decides where git looks or what it runs.
    let inherited: Vec<OsString> = std::env::vars_os()
        .map(|(name, _)| name)
        .filter(|name| name.to_string_lossy().starts_with("GIT_"))
        .collect();
    for name in inherited {
        builder.env_remove(name);
    }
    builder
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", NOWHERE)
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_PAGER", "cat")
        .env("GIT_EDITOR", ":")
        .env("GIT_ATTR_NOSYSTEM", "1")
        // Every `files` entry names a file: no glob, no `:(magic)` reaches git's matcher.
        .env("GIT_LITERAL_PATHSPECS", "1")
        // A partial clone's missing objects stay missing: no tool but GitPush reaches a
        // server (git ≥ 2.44; older versions ignore it).
        .env("GIT_NO_LAZY_FETCH", "1")
        .env("LC_ALL", "C");
    if let Some(repository) = repository {
        builder
            .env("GIT_DIR", &repository.git_dir)
            .env("GIT_WORK_TREE", &repository.work_tree);
    }
    builder.arg("--no-pager");
    for (key, value) in FORCED {
        builder.arg("-c").arg(format!("{key}={value}"));
    }
    for setting in neutral {
        builder.arg("-c").arg(setting);
    }
    builder
}

/// The `-c` overrides that switch off every named program of the listed config (`key\0`
/// entries, as [`LIST_CONFIG`] prints them). `Err` for such a key that could not be named to
/// override it: `-c key=value` splits at the first `=`, and a key that is not UTF-8 cannot be
/// passed either, so the program it names would run.
pub(crate) fn neutralise(listed: &[u8]) -> Result<Vec<String>, String> {
    let mut settings = Vec::new();
    for key in listed.split(|byte| *byte == 0) {
        let key = key.trim_ascii();
        let lower = String::from_utf8_lossy(key).to_ascii_lowercase();
        let (Some((section, _)), Some((_, last))) = (lower.split_once('.'), lower.rsplit_once('.'))
        else {
            continue;
        };
        let named = NAMED_PROGRAMS
            .iter()
            .any(|(want_section, want_key)| section == *want_section && last == *want_key);
        let required = section == "filter" && last == "required";
        if !named && !required {
            continue;
        }
        let (Ok(key), false) = (std::str::from_utf8(key), lower.contains('=')) else {
            return Err(format!(
                "the repository's git config sets \"{}\", which names a program git would run, under a name the runtime cannot switch off (not UTF-8, or holding \"=\"); git tools refuse this repository until it is removed from its config",
                String::from_utf8_lossy(key)
            ));
        };
        let setting = if named {
            format!("{key}=")
        } else {
            format!("{key}=false")
        };
        if !settings.contains(&setting) {
            settings.push(setting);
        }
    }
    Ok(settings)
}

/// Where a push's HTTP transport connects, which the repository's config must not decide:
/// the scheme of the server pushed to, and the config keys that would choose a proxy for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Route {
    pub scheme: String,
    pub keys: Vec<String>,
}

/// The listed keys (as [`LIST_CONFIG`] prints them) that decide where git's HTTP transport
/// connects: `http.proxy` and `http.<url>.proxy` (a URL-specific one outranks even a `-c
/// http.proxy`), `remote.<name>.proxy` (outranks both), and `http.<url>.curloptResolve`
/// (pins the address a host name connects to). `Err` for such a key that could not be
/// named to override it.
pub(crate) fn route_keys(listed: &[u8]) -> Result<Vec<String>, String> {
    let mut keys: Vec<String> = Vec::new();
    for key in listed.split(|byte| *byte == 0) {
        let key = key.trim_ascii();
        let lower = key.to_ascii_lowercase();
        let routes = (lower.starts_with(b"http.")
            && (lower.ends_with(b".proxy") || lower.ends_with(b".curloptresolve")))
            || (lower.starts_with(b"remote.") && lower.ends_with(b".proxy"));
        if !routes {
            continue;
        }
        let name = String::from_utf8_lossy(key);
        // `key=value` is split at the first `=`, so a name holding one cannot be set.
        let (Ok(key), false) = (std::str::from_utf8(key), name.contains('=')) else {
            return Err(format!(
                "the repository's git config sets \"{name}\", which decides where a push connects, under a name the runtime cannot override (not UTF-8, or holding \"=\"); remove it from the repository's config to push"
            ));
        };
        if !keys.iter().any(|seen| seen == key) {
            keys.push(key.to_owned());
        }
    }
    Ok(keys)
}

/// The settings (name, value) that send a push through `proxy` (empty: straight to the
/// server), whatever the repository's config says: every proxy key of `route` set to it,
/// every pinned address list emptied. Given as command-line settings, read after every
/// file, so each wins over the same key there.
pub(crate) fn forced_route(route: &Route, proxy: &str) -> Vec<(String, String)> {
    let mut settings = vec![
        ("http.proxy".to_owned(), proxy.to_owned()),
        ("http.curloptResolve".to_owned(), String::new()),
    ];
    for key in &route.keys {
        let value = if key.to_ascii_lowercase().ends_with(".curloptresolve") {
            String::new()
        } else {
            proxy.to_owned()
        };
        if !settings.iter().any(|(seen, _)| seen == key) {
            settings.push((key.clone(), value));
        }
    }
    settings
}

/// `settings` in the form of git's `GIT_CONFIG_PARAMETERS` (where git keeps its `-c`
/// settings): each `name=value` single-quoted, a quote inside written `'\''`.
pub(crate) fn config_parameters(settings: &[(String, String)]) -> String {
    settings
        .iter()
        .map(|(key, value)| format!("'{}'", format!("{key}={value}").replace('\'', "'\\''")))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The proxy git itself would take from its environment for a server reached over `scheme`
/// when no config names one (git's `http.c`): `https_proxy`, then `HTTPS_PROXY` for https,
/// `http_proxy` for anything else, else `all_proxy`, then `ALL_PROXY`; a variable set empty
/// counts. Empty when there is none, which `http.proxy` reads as "no proxy".
pub(crate) fn environment_proxy(scheme: &str, var: impl Fn(&str) -> Option<String>) -> String {
    let first = |names: &[&str]| names.iter().find_map(|name| var(name));
    let by_scheme = if scheme.eq_ignore_ascii_case("https") {
        first(&["https_proxy", "HTTPS_PROXY"])
    } else {
        first(&["http_proxy"])
    };
    by_scheme
        .or_else(|| first(&["all_proxy", "ALL_PROXY"]))
        .unwrap_or_default()
}

/// The repository of `dir`: the nearest folder from `dir` up to `top` (inclusive) holding a
/// `.git`. `Ok(None)` when there is none, so git reports "not a git repository". A `.git`
/// file or link whose git directory lies outside `top` is refused, as is a worktree's
/// `commondir` outside it.
pub(crate) fn find_repository(dir: &Path, top: &Path) -> Result<Option<Repository>, String> {
    let os = Os::current();
    let within = |path: &Path| {
        paths::is_within(os, &path.to_string_lossy(), &top.to_string_lossy())
            || real(top).is_some_and(|real_top| {
                paths::is_within(os, &path.to_string_lossy(), &real_top.to_string_lossy())
            })
    };
    let mut folder = Some(dir);
    while let Some(current) = folder {
        let dot_git = current.join(".git");
        if let Ok(metadata) = std::fs::symlink_metadata(&dot_git) {
            let git_dir = if metadata.is_file() {
                let text = read_small(&dot_git)?;
                let target = text
                    .lines()
                    .next()
                    .and_then(|line| line.strip_prefix("gitdir:"))
                    .map(str::trim)
                    .filter(|target| !target.is_empty())
                    .ok_or_else(|| {
                        format!(
                            "{} is a .git file without a \"gitdir:\" line, so it names no repository",
                            dot_git.display()
                        )
                    })?;
                platform::normalize(&current.join(target))
            } else {
                dot_git.clone()
            };
            // Links anywhere on the way count: judge where the git directory really is.
            let resolved = real(&git_dir).unwrap_or_else(|| git_dir.clone());
            if !within(&resolved) {
                return Err(format!(
                    "{} leads to the git directory {}, outside the folder this call may use ({}); git tools only work on repositories inside it",
                    dot_git.display(),
                    resolved.display(),
                    top.display()
                ));
            }
            let common = resolved.join("commondir");
            if std::fs::symlink_metadata(&common).is_ok_and(|metadata| metadata.is_file()) {
                let target = read_small(&common)?;
                let common_dir = platform::normalize(&resolved.join(target.trim()));
                let common_dir = real(&common_dir).unwrap_or(common_dir);
                if !within(&common_dir) {
                    return Err(format!(
                        "the worktree {} shares the git directory {}, outside the folder this call may use ({})",
                        current.display(),
                        common_dir.display(),
                        top.display()
                    ));
                }
            }
            return Ok(Some(Repository {
                work_tree: current.to_path_buf(),
                git_dir: resolved,
            }));
        }
        if current == top {
            break;
        }
        folder = current.parent().filter(|parent| within(parent));
    }
    Ok(None)
}

fn real(path: &Path) -> Option<PathBuf> {
    std::fs::canonicalize(path).ok()
}

/// A `.git` or `commondir` file: a line of text, read up to 4 KiB.
fn read_small(path: &Path) -> Result<String, String> {
    use std::io::Read;
    let mut text = String::new();
    std::fs::File::open(path)
        .and_then(|file| file.take(4096).read_to_string(&mut text))
        .map_err(|error| format!("Cannot read {}: {error}", path.display()))?;
    Ok(text)
}

/// A commit's `files` entry must name files, not patterns: pathspec magic (`:(glob)…`,
/// `:!…`, any leading `:`) and glob characters are refused, since what they stage cannot be
/// judged against the policy's paths before git expands them.
pub(crate) fn plain_pathspec(tool: &str, file: &str) -> Result<(), String> {
    if file.starts_with(':') {
        return Err(format!(
            "{tool}: \"files\" entry \"{file}\" starts with \":\" (git pathspec magic); name each file by its path"
        ));
    }
    // On Windows `\\` is a separator; elsewhere git reads it as a wildcard escape.
    let wildcard = |c: char| matches!(c, '*' | '?' | '[' | ']') || (c == '\\' && !cfg!(windows));
    if let Some(glob) = file.chars().find(|c| wildcard(*c)) {
        return Err(format!(
            "{tool}: \"files\" entry \"{file}\" contains \"{glob}\" (a git wildcard); name each file by its path"
        ));
    }
    if file.starts_with('-') {
        return Err(format!(
            "{tool}: \"files\" entry \"{file}\" must not start with \"-\""
        ));
    }
    Ok(())
}

/// Whether a push destination (a remote's URL, or the `remote` argument itself) names a
/// folder on this machine rather than a server: `file://…`, an absolute or relative path.
/// `host:path` (scp-like) and `scheme://` are servers.
pub(crate) fn local_destination(url: &str) -> Option<&str> {
    if let Some(path) = url.strip_prefix("file://") {
        return Some(path);
    }
    if url.contains("://") {
        return None;
    }
    let is_drive =
        url.len() >= 2 && url.as_bytes()[1] == b':' && url.as_bytes()[0].is_ascii_alphabetic();
    match url.find(':') {
        // git reads `host:path` as ssh unless a slash comes before the colon.
        Some(colon) if !is_drive && !url[..colon].contains('/') => None,
        _ => Some(url),
    }
}

/// A server remote as a URL with its host where a URL parser finds it: `scheme://…` as it
/// is, scp-like `[user@]host:path` as `ssh://[user@]host/path`.
pub(crate) fn server_url(url: &str) -> String {
    if url.contains("://") {
        return url.to_owned();
    }
    // An IPv6 host is bracketed, and its colons are not the separator.
    let split = match url.find("]:") {
        Some(end) => Some((&url[..=end], &url[end + 2..])),
        None => url.split_once(':'),
    };
    match split {
        Some((host, path)) => format!("ssh://{host}/{}", path.trim_start_matches('/')),
        None => format!("ssh://{url}/"),
    }
}

/// The scheme of a server URL (as [`server_url`] spells it) that the egress proxy does not
/// carry: anything but `http` and `https` (`ssh`, `git`, `git+ssh`, …).
pub(crate) fn unproxied_scheme(server: &str) -> Option<&str> {
    let scheme = server.split_once("://").map_or("ssh", |(scheme, _)| scheme);
    let proxied = ["http", "https"]
        .iter()
        .any(|carried| scheme.eq_ignore_ascii_case(carried));
    (!proxied).then_some(scheme)
}

#[cfg(test)]
#[path = "confine_tests.rs"]
mod tests;
