//! What the sandbox refused, said in the tool result (INTEROP.md §10: "a command the
//! sandbox refused says so"). A program reports a refused access as a bare "Read-only file
//! system" or "Permission denied" naming a path; read against the plan, such a line becomes
//! a sentence that says which path was refused and why, so neither the model nor the user
//! is left guessing. Lines the plan does not explain (a file the user cannot read anyway)
//! are left alone.

use std::path::{Path, PathBuf};

use super::Plan;

/// The most sentences one result carries.
const MAX_NOTES: usize = 5;

/// Errors a program prints when the sandbox refused an access.
const REFUSALS: &[&str] = &[
    "Read-only file system",
    "Permission denied",
    "Operation not permitted",
];

/// Errors a program prints when it has no network.
const NO_NETWORK: &[&str] = &[
    "Network is unreachable",
    "Could not resolve host",
    "Temporary failure in name resolution",
    "Name or service not known",
];

/// Sentences for the refusals in `stderr` of a command run in `cwd` under `plan`.
pub(crate) fn refusals(plan: &Plan, cwd: &Path, stderr: &str) -> Vec<String> {
    let mut notes: Vec<String> = Vec::new();
    for line in stderr.lines() {
        if notes.len() >= MAX_NOTES {
            break;
        }
        if !plan.network && NO_NETWORK.iter().any(|error| line.contains(error)) {
            push(
                &mut notes,
                "The sandbox gave this command no network: the policy does not grant Network.Http (or the task switched it off).".to_owned(),
            );
            continue;
        }
        let Some(error) = REFUSALS.iter().find(|error| line.contains(*error)) else {
            continue;
        };
        for path in candidate_paths(line) {
            let path = if path.is_absolute() {
                path
            } else {
                cwd.join(path)
            };
            if let Some(note) = explain_path(plan, &path, error) {
                push(&mut notes, note);
            }
        }
    }
    notes
}

fn push(notes: &mut Vec<String>, note: String) {
    if !notes.contains(&note) {
        notes.push(note);
    }
}

fn explain_path(plan: &Plan, path: &Path, error: &str) -> Option<String> {
    let shown = path.display();
    if plan.hidden.iter().any(|hidden| path.starts_with(hidden)) {
        return Some(format!(
            "The sandbox refused {shown}: the policy blocks it (or it holds credentials), so commands may neither read nor write it."
        ));
    }
    if let Some(git) = plan
        .read_only
        .iter()
        .find(|read_only| path.starts_with(read_only))
    {
        let why = if git.components().any(|part| part.as_os_str() == ".git") {
            "git would run code from it later, outside the sandbox"
        } else {
            "the policy blocks writing it"
        };
        return Some(format!(
            "The sandbox refused to write {shown}: it is read-only for commands ({why})."
        ));
    }
    let writable = plan
        .writable()
        .iter()
        .chain(&plan.tmp)
        .any(|tree| path.starts_with(tree))
        || path.starts_with("/tmp")
        || path.starts_with("/dev");
    // A write outside the grants fails as a read-only file system; a plain "Permission
    // denied" there may be the machine's own permissions.
    (!writable && error == "Read-only file system").then(|| {
        let granted: Vec<String> = plan
            .write
            .iter()
            .filter(|tree| Some(*tree) != plan.tmp.as_ref())
            .map(|tree| tree.display().to_string())
            .collect();
        format!(
            "The sandbox refused to write {shown}: commands write only in {} and the temporary folder.",
            if granted.is_empty() {
                "no granted folder".to_owned()
            } else {
                granted.join(", ")
            }
        )
    })
}

/// The paths an error line names: quoted text (`'…'`, `"…"`, `‘…’`, `` `…' ``), else words
/// that look like paths, stripped of the punctuation around them.
fn candidate_paths(line: &str) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for (open, close) in [('\'', '\''), ('"', '"'), ('‘', '’'), ('`', '\'')] {
        let mut rest = line;
        while let Some(start) = rest.find(open) {
            let after = &rest[start + open.len_utf8()..];
            let Some(end) = after.find(close) else {
                break;
            };
            let quoted = &after[..end];
            if looks_like_path(quoted) {
                found.push(PathBuf::from(quoted));
            }
            rest = &after[end + close.len_utf8()..];
        }
    }
    if found.is_empty() {
        for word in line.split_whitespace() {
            let word = word.trim_matches(|c: char| matches!(c, ':' | ',' | ';' | '(' | ')'));
            if looks_like_path(word) {
                found.push(PathBuf::from(word));
            }
        }
    }
    found
}

fn looks_like_path(text: &str) -> bool {
    !text.is_empty()
        && !text.contains(char::is_whitespace)
        && (text.starts_with('/')
            || text.starts_with("./")
            || text.starts_with('.')
            || text.contains('/'))
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    fn plan() -> Plan {
        Plan {
            write: vec![PathBuf::from("/w"), PathBuf::from("/t")],
            read_only: vec![PathBuf::from("/w/.git/config")],
            hidden: vec![PathBuf::from("/w/.env"), PathBuf::from("/home/u/.ssh")],
            tmp: Some(PathBuf::from("/t")),
            ..Plan::default()
        }
    }

    #[test]
    fn refused_writes_and_reads_are_named_with_their_reason() {
        let stderr = "sh: 1: cannot create /home/u/.bashrc: Read-only file system\n\
                      error: could not lock config file .git/config: Read-only file system\n\
                      cat: /home/u/.ssh/id_rsa: Permission denied\n\
                      touch: cannot touch '/w/ok.txt': Permission denied\n\
                      curl: (6) Could not resolve host: example.com\n";
        let notes = refusals(&plan(), Path::new("/w"), stderr);
        assert_eq!(notes.len(), 4, "{notes:#?}");
        assert!(notes[0].contains("/home/u/.bashrc") && notes[0].contains("write only in /w"));
        assert!(notes[1].contains("/w/.git/config") && notes[1].contains("git would run code"));
        assert!(notes[2].contains("/home/u/.ssh/id_rsa") && notes[2].contains("policy blocks"));
        assert!(notes[3].contains("no network"));
    }

    #[test]
    fn lines_the_plan_does_not_explain_are_left_alone() {
        let stderr = "ls: cannot open directory '/root': Permission denied\nall good\n";
        assert!(refusals(&plan(), Path::new("/w"), stderr).is_empty());
        let mut online = plan();
        online.network = true;
        assert!(refusals(&online, Path::new("/w"), "Could not resolve host: x").is_empty());
    }

    #[test]
    fn quoted_and_bare_paths_are_found() {
        assert_eq!(
            candidate_paths("touch: cannot touch '/a/c': Permission denied"),
            [PathBuf::from("/a/c")]
        );
        assert_eq!(
            candidate_paths("open ‘/x/y’ failed"),
            [PathBuf::from("/x/y")]
        );
        assert_eq!(
            candidate_paths("sh: 1: cannot create /x/y: Read-only file system"),
            [PathBuf::from("/x/y")]
        );
    }
}
