//! The enforcer (agent host) and the tool runtime must judge and touch the same file for
//! any path a model sends: a difference is a file the policy never judged. Both sides meet
//! only in this binary, so the property is checked here, through each side's public entry.

use std::path::PathBuf;

use agent_host::path_check::{PolicyEnforcer, Verdict};
use agent_protocol::policy::PolicyBundle;
use proptest::prelude::*;
use serde_json::json;

/// Where a spelling starts; `ROOT` stands for the project folder's absolute path.
const ROOT: &str = "<root>/";

/// Spellings a model might send: absolute, `~`-relative or relative, with `.`, `..`,
/// empty components and names the policy blocks. No component exists at `/`, so the
/// enforcer's symlink resolution has nothing to follow outside the project folder.
fn raw_path() -> impl Strategy<Value = String> {
    let prefix = prop::sample::select(vec!["", "/", "~", "~/", ROOT]);
    let component = prop::sample::select(vec!["a", "b", "..", ".", "", ".env", "k.pem", "~", "h"]);
    (prefix, prop::collection::vec(component, 0..6))
        .prop_map(|(prefix, parts)| format!("{prefix}{}", parts.join("/")))
}

/// The home folder: unset, empty, inside the project folder (`h` stands for it) or elsewhere.
fn home() -> impl Strategy<Value = Option<&'static str>> {
    prop::sample::select(vec![None, Some(""), Some("h"), Some("/nonexistent-home/u")])
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 512,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn the_enforcer_judges_the_file_the_tool_opens(raw in raw_path(), home in home()) {
        // A project folder with no symlink on its way (canonical).
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir(root.join("a")).unwrap();
        let raw = raw.replace(ROOT, &format!("{}/", root.display()));
        let home: Option<PathBuf> = home.map(|home| match home {
            "h" => root.join("h"),
            other => PathBuf::from(other),
        });
        let bundle: PolicyBundle = serde_json::from_value(json!({
            "policyBundleVersion": "v", "schemaVersion": "1.0", "sessionId": "s",
            "expiresAt": "2999-01-01T00:00:00Z",
            "capabilities": [{"name": "File.Read", "allowedPaths": ["."], "blockedPaths": [".env", "*.pem"]}],
            "llmPolicy": {"allowedModels": ["m"]}
        }))
        .unwrap();
        let policy = PolicyEnforcer::new(bundle, Some(root.clone())).with_home(home.clone());

        let judged = policy.judged_path(&raw);
        let opened = agent_tools::platform::resolve_in(&raw, Some(&root), home.as_deref());
        match (&judged, &opened) {
            (Ok(judged), Ok(opened)) => prop_assert_eq!(judged, opened, "{:?}", raw),
            (Err(_), Err(_)) => {}
            _ => prop_assert!(false, "{raw:?} (home {home:?}): enforcer {judged:?}, tool {opened:?}"),
        }
        // A spelling neither side can resolve is the tool's to refuse (an invalid request);
        // it touches nothing, whatever the enforcer said.
        let Ok(opened) = opened else { return Ok(()) };
        // The verdict is the shared containment and blocked-name rules applied to that file:
        // `.env` is a prefix (the project's own), `*.pem` a name anywhere.
        let allowed = matches!(
            policy.check_tool("File.Read", json!({"path": raw}).as_object().unwrap()),
            Verdict::Allowed
        );
        let expected = opened.starts_with(&root)
            && !opened.starts_with(root.join(".env"))
            && !opened
                .components()
                .any(|part| part.as_os_str().to_string_lossy().ends_with(".pem"));
        prop_assert_eq!(allowed, expected, "{:?} (home {:?})", raw, home);
    }
}
