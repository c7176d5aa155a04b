//! The lexical rules per OS, all tested on any OS.

use super::*;

fn win(raw: &str, root: Option<&str>) -> Result<String, PathError> {
    resolve_for(Os::Windows, raw, root, Some(r"C:\Users\ada"))
}

#[test]
fn windows_paths_are_shown_without_the_verbatim_prefix() {
    for (raw, want) in [
        (r"\\?\Z:\tmp\a.txt", r"Z:\tmp\a.txt"),
        (r"\\?\UNC\server\share\a", r"\\server\share\a"),
        (r"C:\work\a", r"C:\work\a"),
    ] {
        assert_eq!(shown(Os::Windows, raw), want, "{raw}");
    }
    // A Unix path that happens to start so is a path like any other.
    assert_eq!(shown(Os::OtherUnix, r"\\?\x"), r"\\?\x");
}

#[test]
fn windows_accepts_both_separators_and_renders_backslashes() {
    let root = Some(r"C:\work\proj");
    let cases = [
        (r"src\main.rs", r"C:\work\proj\src\main.rs"),
        ("src/main.rs", r"C:\work\proj\src\main.rs"),
        (r"C:/work/proj/./a\..\b.txt", r"C:\work\proj\b.txt"),
        (r"d:\data\x.csv", r"D:\data\x.csv"),
        (r"\tmp\x", r"C:\tmp\x"),
        (r"~\notes.txt", r"C:\Users\ada\notes.txt"),
        ("~/notes.txt", r"C:\Users\ada\notes.txt"),
        (r"C:\..\..\x", r"C:\x"),
        (r"\\server\share\dir\..\f.txt", r"\\server\share\f.txt"),
        ("//server/share/f.txt", r"\\server\share\f.txt"),
        (r"\\?\C:\very\long\..\p", r"\\?\C:\very\p"),
        (r"\\?\UNC\srv\sh\a", r"\\?\UNC\srv\sh\a"),
    ];
    for (raw, want) in cases {
        assert_eq!(win(raw, root).as_deref(), Ok(want), "{raw}");
    }
    // A path anchored at `\` takes the project folder's share.
    assert_eq!(
        win(r"\x", Some(r"\\srv\sh\proj")).as_deref(),
        Ok(r"\\srv\sh\x")
    );
    assert_eq!(
        win("a", None),
        Err(PathError::RelativeWithoutRoot("a".into()))
    );
    // A share needs a server and a share name.
    for raw in ["//a/", r"\\a", r"\\a\\b", r"\\?\UNC\srv", r"\\?\UNC\\sh\x"] {
        assert_eq!(
            win(raw, root),
            Err(PathError::IncompleteShare(raw.into())),
            "{raw}"
        );
    }
}

#[test]
fn unix_treats_backslashes_as_ordinary_characters() {
    let root = Some("/work/proj");
    let unix = |raw| resolve_for(Os::OtherUnix, raw, root, Some("/home/ada"));
    assert_eq!(unix(r"a\b").as_deref(), Ok(r"/work/proj/a\b"));
    assert_eq!(unix("C:/x").as_deref(), Ok("/work/proj/C:/x"));
    assert_eq!(unix("~/n.txt").as_deref(), Ok("/home/ada/n.txt"));
    assert_eq!(unix("~other/n").as_deref(), Ok("/work/proj/~other/n"));
    assert_eq!(unix("/../../etc").as_deref(), Ok("/etc"));
    assert_eq!(unix("./").as_deref(), Ok("/work/proj"));
}

#[test]
fn paths_over_the_os_limit_are_refused() {
    let name = "a".repeat(250);
    let long = format!(r"C:\{name}\{name}");
    assert!(matches!(
        win(&long, None),
        Err(PathError::TooLong { limit: 260, .. })
    ));
    let verbatim = format!(r"\\?\{long}");
    assert_eq!(win(&verbatim, None).as_deref(), Ok(verbatim.as_str()));
    let mac = format!("/{}", "b/".repeat(600));
    assert!(matches!(
        resolve_for(Os::MacOs, &mac, None, None),
        Err(PathError::TooLong { limit: 1024, .. })
    ));
    assert!(resolve_for(Os::OtherUnix, &mac, None, None).is_ok());
    let error = win(&long, None).unwrap_err().to_string();
    assert!(error.contains("260"), "{error}");
}

#[test]
fn containment_compares_whole_components_and_folds_case_on_windows_and_macos() {
    let cases: [(Os, &str, &str, bool); 14] = [
        (Os::Windows, r"C:\Work\Proj\a.txt", r"c:\work\proj", true),
        (Os::Windows, "c:/work/proj", r"C:\work\proj", true),
        (Os::Windows, r"C:\work\proj2\a", r"C:\work\proj", false),
        (Os::Windows, r"D:\work\proj\a", r"C:\work\proj", false),
        (Os::Windows, r"\\SRV\Share\p\a", r"\\srv\share\p", true),
        (Os::Windows, r"\\srv\other\p\a", r"\\srv\share\p", false),
        (Os::Windows, r"C:\work\proj\..\x", r"C:\work\proj", false),
        (Os::MacOs, "/Users/ada/Proj/a", "/Users/ada/proj", true),
        (Os::MacOs, "/Users/ada/proj2", "/Users/ada/proj", false),
        (Os::OtherUnix, "/home/ada/Proj/a", "/home/ada/proj", false),
        (Os::OtherUnix, "/home/ada/proj/a", "/home/ada/proj", true),
        (Os::OtherUnix, "/home/ada/proj", "/home/ada/proj", true),
        (Os::OtherUnix, "/home/ada", "/home/ada/proj", false),
        (Os::OtherUnix, r"/p\q", "/p", false),
    ];
    for (os, path, root, want) in cases {
        assert_eq!(is_within(os, path, root), want, "{os:?}: {path} in {root}");
    }
}

#[test]
fn climbing_is_spotted_in_either_spelling_on_windows_only() {
    assert!(climbs(Os::Windows, r"..\x"));
    assert!(climbs(Os::Windows, "a/../x"));
    assert!(!climbs(Os::OtherUnix, r"..\x"));
    assert!(climbs(Os::OtherUnix, "../x"));
    assert!(!climbs(Os::Windows, r"a\..b\x"));
}

/// An empty home variable is unset for `~`, on every OS: `~/x` stays a name in the project
/// folder, never the relative `x` (which the enforcer and the tools once read differently).
#[test]
fn an_empty_home_leaves_the_tilde_a_name() {
    let unix = resolve_for(Os::OtherUnix, "~/.env", Some("/work/proj"), Some(""));
    assert_eq!(unix.as_deref(), Ok("/work/proj/~/.env"));
    let unset = resolve_for(Os::OtherUnix, "~/.env", Some("/work/proj"), None);
    assert_eq!(unix, unset);
    let windows = resolve_for(Os::Windows, r"~\.env", Some(r"C:\proj"), Some(""));
    assert_eq!(windows.as_deref(), Ok(r"C:\proj\~\.env"));
    assert_eq!(
        resolve_for(Os::OtherUnix, "~", None, Some("")),
        Err(PathError::RelativeWithoutRoot("~".into()))
    );
}

/// Two separators and nothing else name no share: the drive's root, resolved the same way
/// twice (a property-test finding).
#[test]
fn two_bare_separators_are_the_drives_root() {
    let once = resolve_for(Os::Windows, "/\\", Some(r"C:\work\proj"), None);
    assert_eq!(once.as_deref(), Ok(r"C:\"));
    let twice = resolve_for(Os::Windows, r"C:\", Some(r"C:\work\proj"), None);
    assert_eq!(once, twice);
    assert!(!is_within(Os::Windows, r"C:\", r"C:\work\proj"));
}

mod properties {
    use super::*;
    use proptest::prelude::*;

    fn raw(separator: &'static str) -> impl Strategy<Value = String> {
        let part = prop::sample::select(vec!["a", "B", "..", ".", "", "~", "c.d"]);
        (
            prop::sample::select(vec!["", "/", "~/", r"C:\", r"\\srv\sh\"]),
            prop::collection::vec(part, 0..6),
        )
            .prop_map(move |(prefix, parts)| format!("{prefix}{}", parts.join(separator)))
    }

    proptest! {
        #![proptest_config(ProptestConfig {
            failure_persistence: None,
            ..ProptestConfig::default()
        })]

        /// A resolved path resolves to itself, and lies within the folder it was joined to
        /// exactly when the shared containment rule says so, on both OS families.
        #[test]
        fn resolving_is_idempotent_and_containment_agrees(
            unix in raw("/"), windows in raw(r"\"),
        ) {
            for (os, raw, root, home) in [
                (Os::OtherUnix, unix, "/work/proj", "/home/ada"),
                (Os::Windows, windows, r"C:\work\proj", r"C:\Users\ada"),
            ] {
                let Ok(once) = resolve_for(os, &raw, Some(root), Some(home)) else { continue };
                let twice = resolve_for(os, &once, Some(root), Some(home));
                prop_assert_eq!(twice.as_deref(), Ok(once.as_str()), "{:?}", raw);
                let prefixed = once.len() > root.len()
                    && once.as_bytes()[root.len()] == os.separator() as u8
                    && once[..root.len()].eq_ignore_ascii_case(root);
                let inside = prefixed || once.eq_ignore_ascii_case(root);
                prop_assert_eq!(is_within(os, &once, root), inside, "{:?} -> {:?}", raw, once);
            }
        }
    }
}
