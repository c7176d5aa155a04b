//! Tests that git runs nothing the repository names and never leaves the granted folder.

use std::ffi::OsStr;

use super::*;

#[test]
fn every_named_program_of_the_config_is_switched_off() {
    let listed = b"core.bare\0filter.lfs.clean\0filter.lfs.required\0diff.evil.textconv\0Remote.origin.receivepack\0credential.https://x.example.helper\0user.name\0filter.lfs.clean\0";
    assert_eq!(
        neutralise(listed).unwrap(),
        [
            "filter.lfs.clean=",
            "filter.lfs.required=false",
            "diff.evil.textconv=",
            "Remote.origin.receivepack=",
            "credential.https://x.example.helper=",
        ]
    );
    assert!(neutralise(b"").unwrap().is_empty());
}

#[test]
fn git_runs_with_the_forced_environment() {
    let git = command(None, &[]);
    let envs: Vec<_> = git.as_std().get_envs().collect();
    for (name, value) in [
        ("GIT_CONFIG_NOSYSTEM", "1"),
        ("GIT_TERMINAL_PROMPT", "0"),
        ("GIT_NO_LAZY_FETCH", "1"),
    ] {
        assert!(
            envs.contains(&(OsStr::new(name), Some(OsStr::new(value)))),
            "{name} is not {value}: {envs:?}"
        );
    }
}

#[test]
fn a_named_program_under_a_key_that_cannot_be_overridden_refuses_the_repository() {
    // `-c` splits at the first `=`: `filter.a=b.clean=` would set `filter.a`, not the driver.
    for listed in [
        &b"filter.a=b.clean\0"[..],
        b"credential.https://x.example/?a=b.helper\0",
        b"diff.\xff.textconv\0",
    ] {
        let error = neutralise(listed).unwrap_err();
        assert!(error.contains("cannot switch off"), "{error}");
    }
    // A key holding `=` that names no program is left alone.
    assert_eq!(
        neutralise(b"branch.a=b.merge\0").unwrap(),
        Vec::<String>::new()
    );
}

#[test]
fn pathspec_magic_and_wildcards_are_refused_with_the_rule() {
    assert!(plain_pathspec("GitCommit", "src/a.txt").is_ok());
    assert!(plain_pathspec("GitCommit", "dir with space/b").is_ok());
    for bad in [":(glob)**", ":!x", ":/top", "*.env", "a?", "[ab]", "-n"] {
        let error = plain_pathspec("GitCommit", bad).unwrap_err();
        assert!(error.contains(bad), "{error}");
    }
    assert!(
        plain_pathspec("GitCommit", "*.env")
            .unwrap_err()
            .contains("wildcard")
    );
    assert!(
        plain_pathspec("GitCommit", ":x")
            .unwrap_err()
            .contains("magic")
    );
}

#[test]
fn local_destinations_are_told_from_servers() {
    assert_eq!(local_destination("/srv/repo.git"), Some("/srv/repo.git"));
    assert_eq!(local_destination("../up.git"), Some("../up.git"));
    assert_eq!(local_destination("file:///srv/r"), Some("/srv/r"));
    assert_eq!(local_destination("./a:b"), Some("./a:b"));
    assert_eq!(local_destination("C:/repos/r"), Some("C:/repos/r"));
    assert_eq!(local_destination("git@github.com:o/r.git"), None);
    assert_eq!(local_destination("https://github.com/o/r"), None);
    assert_eq!(local_destination("ssh://host/r"), None);
}

#[test]
fn a_dot_git_file_leading_out_of_the_granted_folder_is_refused() {
    let outside = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let git_dir = outside.path().join("real.git");
    std::fs::create_dir(&git_dir).unwrap();
    std::fs::write(
        project.path().join(".git"),
        format!("gitdir: {}\n", git_dir.display()),
    )
    .unwrap();
    let error = find_repository(project.path(), project.path()).unwrap_err();
    assert!(
        error.contains("outside the folder this call may use"),
        "{error}"
    );
    assert!(error.contains("real.git"), "{error}");

    // Inside: accepted, with the git directory it names.
    let inner = project.path().join("modules/x");
    std::fs::create_dir_all(&inner).unwrap();
    std::fs::write(project.path().join(".git"), "gitdir: modules/x\n").unwrap();
    let found = find_repository(project.path(), project.path())
        .unwrap()
        .unwrap();
    assert_eq!(found.git_dir, std::fs::canonicalize(&inner).unwrap());
    assert_eq!(found.work_tree, project.path());

    // A worktree whose shared git directory is outside.
    std::fs::write(inner.join("commondir"), format!("{}\n", git_dir.display())).unwrap();
    let error = find_repository(project.path(), project.path()).unwrap_err();
    assert!(error.contains("shares the git directory"), "{error}");
    std::fs::write(project.path().join(".git"), "nonsense\n").unwrap();
    assert!(
        find_repository(project.path(), project.path())
            .unwrap_err()
            .contains("without a \"gitdir:\" line")
    );
}

#[test]
fn the_search_for_a_repository_stops_at_the_granted_folder() {
    let outer = tempfile::tempdir().unwrap();
    std::fs::create_dir(outer.path().join(".git")).unwrap();
    let project = outer.path().join("project");
    let sub = project.join("sub");
    std::fs::create_dir_all(&sub).unwrap();
    assert_eq!(find_repository(&sub, &project).unwrap(), None);
    let found = find_repository(&sub, outer.path()).unwrap().unwrap();
    assert_eq!(found.work_tree, outer.path());
}

#[cfg(unix)]
#[test]
fn a_dot_git_link_out_of_the_granted_folder_is_refused() {
    let outside = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(outside.path(), project.path().join(".git")).unwrap();
    let error = find_repository(project.path(), project.path()).unwrap_err();
    assert!(
        error.contains("outside the folder this call may use"),
        "{error}"
    );
}

#[test]
fn server_remotes_become_urls_with_their_host() {
    assert_eq!(
        server_url("git@github.com:o/r.git"),
        "ssh://git@github.com/o/r.git"
    );
    assert_eq!(server_url("host:/srv/r"), "ssh://host/srv/r");
    assert_eq!(server_url("git@[::1]:o/r"), "ssh://git@[::1]/o/r");
    assert_eq!(
        server_url("https://github.com/o/r"),
        "https://github.com/o/r"
    );
}

#[test]
fn every_key_that_routes_a_push_is_forced_to_the_runtimes_proxy() {
    let listed = b"core.bare\0http.proxy\0http.https://x.example/.proxy\0remote.origin.proxy\0remote.origin.url\0http.https://x.example.curloptresolve\0http.sslverify\0http.proxy\0";
    let keys = route_keys(listed).unwrap();
    assert_eq!(
        keys,
        [
            "http.proxy",
            "http.https://x.example/.proxy",
            "remote.origin.proxy",
            "http.https://x.example.curloptresolve",
        ]
    );
    let route = Route {
        scheme: "https".to_owned(),
        keys,
    };
    let proxy = "http://127.0.0.1:9";
    let forced = forced_route(&route, proxy);
    let forced: Vec<(&str, &str)> = forced
        .iter()
        .map(|(key, value)| (key.as_str(), value.as_str()))
        .collect();
    assert_eq!(
        forced,
        [
            ("http.proxy", proxy),
            ("http.curloptResolve", ""),
            ("http.https://x.example/.proxy", proxy),
            ("remote.origin.proxy", proxy),
            ("http.https://x.example.curloptresolve", ""),
        ]
    );
    let none = Route {
        scheme: "https".to_owned(),
        keys: Vec::new(),
    };
    assert_eq!(
        forced_route(&none, ""),
        [
            ("http.proxy".to_owned(), String::new()),
            ("http.curloptResolve".to_owned(), String::new())
        ]
    );
    // A name that cannot be given to git is refused.
    for unnamable in [
        &b"http.https://x.example/?a=b.proxy\0"[..],
        b"remote.o\xffx.proxy\0",
    ] {
        let error = route_keys(unnamable).unwrap_err();
        assert!(error.contains("cannot override"), "{error}");
    }
    let settings = [
        ("http.proxy".to_owned(), "http://u:p@h:1".to_owned()),
        ("remote.it's.proxy".to_owned(), String::new()),
    ];
    assert_eq!(
        config_parameters(&settings),
        r#"'http.proxy=http://u:p@h:1' 'remote.it'\''s.proxy='"#
    );
}

#[test]
fn the_environments_proxy_is_the_one_git_would_take() {
    let env = |pairs: &'static [(&'static str, &'static str)]| {
        move |name: &str| {
            pairs
                .iter()
                .find(|(key, _)| *key == name)
                .map(|(_, value)| (*value).to_owned())
        }
    };
    let all = env(&[
        ("HTTPS_PROXY", "upper-s"),
        ("https_proxy", "lower-s"),
        ("http_proxy", "lower"),
        ("HTTP_PROXY", "upper"),
        ("ALL_PROXY", "upper-all"),
    ]);
    assert_eq!(environment_proxy("https", all), "lower-s");
    assert_eq!(environment_proxy("http", all), "lower");
    let fallback = env(&[("HTTP_PROXY", "upper"), ("ALL_PROXY", "upper-all")]);
    assert_eq!(environment_proxy("http", fallback), "upper-all");
    assert_eq!(
        environment_proxy("HTTPS", env(&[("HTTPS_PROXY", "s")])),
        "s"
    );
    assert_eq!(environment_proxy("https", env(&[("https_proxy", "")])), "");
    assert_eq!(environment_proxy("https", env(&[])), "");
}
