//! Per-task file changes for GetPatchPreview (INTEROP.md §1): every write and delete a
//! task's tools reported, folded into one entry per file.

use std::collections::HashMap;
use std::path::Path;

use agent_protocol::FileChange;
use agent_protocol::methods::{FileChangeStatus, FilePatch};

#[derive(Debug, Default)]
pub(crate) struct Patches {
    by_task: HashMap<String, Vec<FileChange>>,
}

impl Patches {
    pub(crate) fn record(&mut self, task_id: &str, changes: &[FileChange]) {
        if !changes.is_empty() {
            self.by_task
                .entry(task_id.to_owned())
                .or_default()
                .extend_from_slice(changes);
        }
    }

    /// The changes recorded for a task, in order (for its checkpoint).
    pub(crate) fn changes(&self, task_id: &str) -> &[FileChange] {
        self.by_task.get(task_id).map_or(&[], Vec::as_slice)
    }

    /// One entry per file, in the order files were first touched. The status is the net
    /// effect (added then modified is added; added then deleted disappears; deleted then
    /// written again is modified); the hunks of successive changes follow each other, each
    /// against the content before it. A file inside `root` (the project folder) is named
    /// relative to it, as the model named it; `hunks` ends without an empty line (the app
    /// draws one per line break, INTEROP.md §8).
    pub(crate) fn preview(&self, task_id: &str, root: Option<&Path>) -> Vec<FilePatch> {
        let mut files: Vec<FilePatch> = Vec::new();
        let mut vanished: Vec<String> = Vec::new();
        for change in self.by_task.get(task_id).into_iter().flatten() {
            match files.iter_mut().find(|file| file.file_path == change.path) {
                None => files.push(FilePatch {
                    file_path: change.path.clone(),
                    status: change.status,
                    hunks: change.hunks.clone(),
                }),
                Some(file) => {
                    file.status = match (file.status, change.status) {
                        (FileChangeStatus::Added, FileChangeStatus::Deleted) => {
                            vanished.push(file.file_path.clone());
                            FileChangeStatus::Deleted
                        }
                        (FileChangeStatus::Added, _) => FileChangeStatus::Added,
                        (FileChangeStatus::Deleted, FileChangeStatus::Added) => {
                            FileChangeStatus::Modified
                        }
                        (_, later) => later,
                    };
                    if !change.hunks.is_empty() {
                        if !file.hunks.is_empty() && !file.hunks.ends_with('\n') {
                            file.hunks.push('\n');
                        }
                        file.hunks.push_str(&change.hunks);
                    }
                }
            }
        }
        files.retain(|file| !vanished.contains(&file.file_path));
        // The tools report resolved paths: the project folder is matched as given and as
        // resolved (a symlinked temp folder, say).
        let roots: Vec<std::path::PathBuf> = root
            .into_iter()
            .flat_map(|root| [Some(root.to_path_buf()), root.canonicalize().ok()])
            .flatten()
            .collect();
        for file in &mut files {
            while file.hunks.ends_with('\n') {
                file.hunks.pop();
            }
            if let Some(relative) = roots
                .iter()
                .find_map(|root| Path::new(&file.file_path).strip_prefix(root).ok())
                .filter(|relative| !relative.as_os_str().is_empty())
            {
                file.file_path = relative.to_string_lossy().into_owned();
            }
        }
        files
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn change(path: &str, status: FileChangeStatus, hunks: &str) -> FileChange {
        FileChange {
            path: path.into(),
            status,
            hunks: hunks.into(),
        }
    }

    #[test]
    fn changes_fold_into_one_entry_per_file_with_the_net_status() {
        let mut patches = Patches::default();
        patches.record(
            "t1",
            &[
                change("/a", FileChangeStatus::Added, "@@ -0,0 +1 @@\n+x\n"),
                change("/b", FileChangeStatus::Modified, "@@ -1 +1 @@\n-y\n+z\n"),
            ],
        );
        patches.record(
            "t1",
            &[change(
                "/a",
                FileChangeStatus::Modified,
                "@@ -1 +1 @@\n-x\n+w\n",
            )],
        );
        patches.record(
            "t1",
            &[change("/c", FileChangeStatus::Added, "@@ -0,0 +1 @@\n+c\n")],
        );
        patches.record(
            "t1",
            &[change(
                "/c",
                FileChangeStatus::Deleted,
                "@@ -1 +0,0 @@\n-c\n",
            )],
        );
        patches.record("t2", &[change("/d", FileChangeStatus::Deleted, "")]);
        let preview = patches.preview("t1", None);
        assert_eq!(preview.len(), 2, "{preview:?}");
        assert_eq!(preview[0].file_path, "/a");
        assert_eq!(preview[0].status, FileChangeStatus::Added);
        assert!(preview[0].hunks.contains("+x") && preview[0].hunks.contains("+w"));
        assert_eq!(preview[1].status, FileChangeStatus::Modified);
        assert_eq!(
            patches.preview("t2", None)[0].status,
            FileChangeStatus::Deleted
        );
        assert!(patches.preview("unknown", None).is_empty());
    }

    #[test]
    fn paths_inside_the_project_are_relative_and_hunks_end_without_an_empty_line() {
        let mut patches = Patches::default();
        patches.record(
            "t1",
            &[
                change(
                    "/p/src/a.rs",
                    FileChangeStatus::Added,
                    "@@ -0,0 +1 @@\n+x\n",
                ),
                change(
                    "/elsewhere/b",
                    FileChangeStatus::Added,
                    "@@ -0,0 +1 @@\n+y\n",
                ),
            ],
        );
        let preview = patches.preview("t1", Some(Path::new("/p")));
        assert_eq!(preview[0].file_path, "src/a.rs");
        assert_eq!(preview[0].hunks, "@@ -0,0 +1 @@\n+x");
        assert_eq!(preview[1].file_path, "/elsewhere/b");
    }
}
