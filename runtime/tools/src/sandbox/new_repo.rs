//! A repository a command makes at the root of a writable tree (INTEROP.md §10: nothing a
//! command does may make git run code later, outside the sandbox). An existing repository's
//! config and hooks are read-only in the command's view; a new one is the command's own
//! making, so what would run code is taken out once the command has ended, and the tool
//! result says so:
//!
//! - hooks (every file in `.git/hooks` but git's own `*.sample` files);
//! - every config setting outside a short list of inert ones (`core.fsmonitor`,
//!   `core.hooksPath`, `filter.*`, `alias.*`, `include.path`… are dropped), read by git's
//!   own parser (`git config --file … --list`, which runs nothing and follows no include)
//!   and written back as plain sections;
//! - what points git at another repository's settings: a `.git` file (`gitdir: …`),
//!   `commondir`, `config.worktree`.
//!
//! Repositories made deeper in the tree are not looked for (that needs a walk of the tree
//! after every command).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Settings git reads without running anything, kept in a new repository's config.
const INERT: &[&str] = &[
    "core.repositoryformatversion",
    "core.filemode",
    "core.bare",
    "core.logallrefupdates",
    "core.ignorecase",
    "core.precomposeunicode",
    "core.symlinks",
    "core.autocrlf",
    "core.eol",
    "core.safecrlf",
    "core.quotepath",
    "extensions.objectformat",
    "extensions.refstorage",
    "init.defaultbranch",
    "user.name",
    "user.email",
    "pull.rebase",
    "push.default",
    "fetch.prune",
];

/// Inert settings of a named section (`remote.<name>.url`, `branch.<name>.merge`).
const INERT_NAMED: &[(&str, &str)] = &[
    ("remote", "url"),
    ("remote", "fetch"),
    ("remote", "pushurl"),
    ("branch", "remote"),
    ("branch", "merge"),
    ("branch", "rebase"),
];

/// The roots of `write` without a `.git` now (watched for one after the command).
pub(super) fn watched(write: &[PathBuf]) -> Vec<PathBuf> {
    write
        .iter()
        .filter(|root| root.is_dir() && root.join(".git").symlink_metadata().is_err())
        .cloned()
        .collect()
}

/// Takes out of `root`'s new `.git` what would run code; one sentence per change.
pub(super) fn settle(root: &Path) -> Vec<String> {
    let git = root.join(".git");
    let Ok(meta) = git.symlink_metadata() else {
        return Vec::new();
    };
    let why = "git would run code from it outside the sandbox";
    let removed = |path: &Path, result: std::io::Result<()>| match result {
        Ok(()) => format!(
            "The sandbox removed {} from the repository the command made: {why}.",
            path.display()
        ),
        Err(error) => format!(
            "The command made {} in a new repository ({why}), and it could not be removed: {error}.",
            path.display()
        ),
    };
    if !meta.is_dir() {
        return vec![removed(&git, std::fs::remove_file(&git))];
    }
    let mut notes = Vec::new();
    for name in ["commondir", "config.worktree"] {
        let path = git.join(name);
        if path.symlink_metadata().is_ok() {
            notes.push(removed(&path, remove(&path)));
        }
    }
    if let Ok(entries) = std::fs::read_dir(git.join("hooks")) {
        for entry in entries.flatten() {
            let path = entry.path();
            if !path.to_string_lossy().ends_with(".sample") {
                notes.push(removed(&path, remove(&path)));
            }
        }
    }
    let config = git.join("config");
    if config.symlink_metadata().is_ok() {
        notes.extend(settle_config(&config));
    }
    notes
}

fn remove(path: &Path) -> std::io::Result<()> {
    match path.symlink_metadata() {
        Ok(meta) if meta.is_dir() => std::fs::remove_dir_all(path),
        _ => std::fs::remove_file(path),
    }
}

/// Rewrites `config` with its inert settings only, when it holds any other (or cannot be
/// read as git reads it).
fn settle_config(config: &Path) -> Option<String> {
    let listed = std::process::Command::new("git")
        .args(["config", "--null", "--list", "--file"])
        .arg(config)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output()
        .ok()
        .filter(|output| output.status.success() && config.is_file());
    let entries: Vec<(String, String)> = listed
        .map(|output| parse_list(&String::from_utf8_lossy(&output.stdout)))
        .unwrap_or_default();
    let dropped: Vec<&str> = entries
        .iter()
        .filter(|(key, _)| !inert(key))
        .map(|(key, _)| key.as_str())
        .collect();
    if !dropped.is_empty() || entries.is_empty() {
        let kept: Vec<&(String, String)> = entries.iter().filter(|(key, _)| inert(key)).collect();
        let written =
            std::fs::remove_file(config).and_then(|()| std::fs::write(config, render(&kept)));
        let what = if dropped.is_empty() {
            "settings git could not read".to_owned()
        } else {
            dropped.join(", ")
        };
        return Some(match written {
            Ok(()) => format!(
                "The sandbox took {what} out of {} in the repository the command made: git would run code from it outside the sandbox.",
                config.display()
            ),
            Err(error) => format!(
                "The command set {what} in {} of a new repository, and it could not be taken out: {error}.",
                config.display()
            ),
        });
    }
    None
}

/// `git config --null --list`: `key\nvalue\0` per entry.
fn parse_list(text: &str) -> Vec<(String, String)> {
    text.split('\0')
        .filter(|entry| !entry.is_empty())
        .map(|entry| match entry.split_once('\n') {
            Some((key, value)) => (key.to_owned(), value.to_owned()),
            None => (entry.to_owned(), String::new()),
        })
        .collect()
}

fn inert(key: &str) -> bool {
    let key = key.to_ascii_lowercase();
    if INERT.contains(&key.as_str()) {
        return true;
    }
    let (Some((section, _)), Some((_, name))) = (key.split_once('.'), key.rsplit_once('.')) else {
        return false;
    };
    key.matches('.').count() >= 2 && INERT_NAMED.contains(&(section, name))
}

/// A config section: its name and subsection.
type Section = (String, Option<String>);

/// Plain sections, values quoted and escaped as git writes them.
fn render(entries: &[&(String, String)]) -> String {
    let mut sections: BTreeMap<Section, Vec<(String, String)>> = BTreeMap::new();
    for (key, value) in entries {
        let (Some((section, rest)), Some((middle, name))) =
            (key.split_once('.'), key.rsplit_once('.'))
        else {
            continue;
        };
        let subsection = (rest != name).then(|| middle[section.len() + 1..].to_owned());
        sections
            .entry((section.to_owned(), subsection))
            .or_default()
            .push((name.to_owned(), value.clone()));
    }
    let quote = |text: &str| {
        text.replace('\\', "\\\\")
            .replace('"', "\\\"")
            .replace('\n', "\\n")
            .replace('\t', "\\t")
    };
    let mut out = String::new();
    for ((section, subsection), values) in sections {
        match subsection {
            Some(sub) => out.push_str(&format!("[{section} \"{}\"]\n", quote(&sub))),
            None => out.push_str(&format!("[{section}]\n")),
        }
        for (name, value) in values {
            out.push_str(&format!("\t{name} = \"{}\"\n", quote(&value)));
        }
    }
    out
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[allow(clippy::unwrap_used)]
    fn git(dir: &Path, args: &[&str]) -> std::process::Output {
        std::process::Command::new("git")
            .args(args)
            .current_dir(dir)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("HOME", dir)
            .output()
            .unwrap()
    }

    #[test]
    fn a_new_repository_keeps_its_inert_settings_and_loses_hooks_and_code_running_ones() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().to_path_buf();
        assert_eq!(watched(std::slice::from_ref(&root)), vec![root.clone()]);
        git(&root, &["init", "-q"]);
        git(&root, &["config", "core.fsmonitor", "touch /tmp/owned"]);
        git(&root, &["config", "filter.x.clean", "evil"]);
        git(
            &root,
            &[
                "config",
                "remote.my.origin.url",
                "https://example.com/a \"b\".git",
            ],
        );
        git(&root, &["config", "user.name", "Kit"]);
        std::fs::write(root.join(".git/hooks/post-checkout"), "#!/bin/sh\nevil\n").unwrap();
        std::fs::write(root.join(".git/commondir"), "../elsewhere").unwrap();
        let notes = settle(&root);
        assert_eq!(notes.len(), 3, "{notes:?}");
        assert!(
            notes
                .iter()
                .any(|note| note.contains("core.fsmonitor") && note.contains("filter.x.clean"))
        );
        assert!(!root.join(".git/hooks/post-checkout").exists());
        assert!(root.join(".git/hooks/pre-commit.sample").exists());
        assert!(!root.join(".git/commondir").exists());
        let listed =
            String::from_utf8(git(&root, &["config", "--list", "--local"]).stdout).unwrap();
        assert!(
            !listed.contains("fsmonitor") && !listed.contains("filter"),
            "{listed}"
        );
        assert!(
            listed.contains("remote.my.origin.url=https://example.com/a \"b\".git"),
            "{listed}"
        );
        assert!(listed.contains("user.name=Kit"), "{listed}");
        assert!(
            listed.contains("core.repositoryformatversion=0"),
            "{listed}"
        );
        assert!(git(&root, &["status", "--short"]).status.success());
        assert!(
            settle(&root).is_empty(),
            "a settled repository needs nothing more"
        );
    }

    #[test]
    fn a_git_file_pointing_elsewhere_is_removed_and_existing_repositories_are_not_watched() {
        let dir = tempfile::tempdir().unwrap();
        let (fresh, existing) = (dir.path().join("fresh"), dir.path().join("existing"));
        std::fs::create_dir_all(&fresh).unwrap();
        std::fs::create_dir_all(existing.join(".git")).unwrap();
        assert_eq!(watched(&[fresh.clone(), existing]), vec![fresh.clone()]);
        std::fs::write(fresh.join(".git"), "gitdir: ../elsewhere\n").unwrap();
        let notes = settle(&fresh);
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(!fresh.join(".git").exists());
    }
}
