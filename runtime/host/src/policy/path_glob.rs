//! Glob entries of the bundle's path lists that cannot be used, for session start to report
//! (the matching itself is `agent_path_rules::glob`, shared with the tool runtime).

use agent_path_rules::{Os, glob};

/// A readable message per glob entry of the bundle's path lists that cannot be used.
pub(crate) fn problems(bundle: &agent_protocol::policy::PolicyBundle) -> Vec<String> {
    let mut found = Vec::new();
    for entry in &bundle.capabilities {
        let lists = [
            ("allowedPaths", &entry.allowed_paths, "it matches nothing"),
            (
                "blockedPaths",
                &entry.blocked_paths,
                "it blocks every path until the policy is corrected",
            ),
        ];
        for (field, list, effect) in lists {
            for pattern in list.iter().flatten() {
                if let Some(error) = glob::invalid(Os::current(), pattern) {
                    found.push(format!(
                        "{} {field} entry {pattern:?} is not a usable glob pattern ({error}); {effect}.",
                        entry.name
                    ));
                }
            }
        }
    }
    found
}
