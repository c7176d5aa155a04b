//! Table tests of the domain rules: allowed and blocked hosts, wildcards and addresses.

use super::*;

fn list(items: &[&str]) -> Vec<String> {
    items.iter().map(|item| (*item).to_owned()).collect()
}

/// "ok <host>", "blocked: …", "not allowed: …" or "bad: <substring of the reason>".
fn judge(url: &str, allowed: Option<&[&str]>, blocked: Option<&[&str]>) -> String {
    let allowed = allowed.map(list);
    let blocked = blocked.map(list);
    match check(url, allowed.as_deref(), blocked.as_deref()) {
        Ok(host) => format!("ok {host}"),
        Err(DomainDenial::Blocked(host)) => format!("blocked: {host}"),
        Err(DomainDenial::NotAllowed(host)) => format!("not allowed: {host}"),
        Err(DomainDenial::BadUrl(why)) => format!("bad: {why}"),
    }
}

fn assert_cases(cases: &[(&str, &str)], allowed: Option<&[&str]>, blocked: Option<&[&str]>) {
    crate::testing::assert_cases(cases, "bad: ", |url| judge(url, allowed, blocked));
}

#[test]
fn allowed_domains_admit_the_domain_and_its_subdomains_only() {
    let allowed: &[&str] = &[
        "example.com",
        "API.GitHub.com.",
        "https://pypi.org/simple",
        "registry.npmjs.org:443",
    ];
    let cases: &[(&str, &str)] = &[
        ("https://example.com/", "ok example.com"),
        ("http://example.com:8080/x?y#z", "ok example.com"),
        ("https://api.example.com/v1", "ok api.example.com"),
        ("https://a.b.example.com", "ok a.b.example.com"),
        ("https://EXAMPLE.com./", "ok example.com"),
        (
            "https://example.com.evil.net/",
            "not allowed: example.com.evil.net",
        ),
        ("https://evil-example.com/", "not allowed: evil-example.com"),
        ("https://notexample.com/", "not allowed: notexample.com"),
        ("https://example.co/", "not allowed: example.co"),
        ("https://com/", "not allowed: com"),
        ("https://example.com@evil.net/", "not allowed: evil.net"),
        ("https://evil.net\\@example.com/", "not allowed: evil.net"),
        ("https://evil.net#@example.com/", "not allowed: evil.net"),
        ("https://api.github.com/repos", "ok api.github.com"),
        ("https://github.com/", "not allowed: github.com"),
        ("https://pypi.org/simple/x", "ok pypi.org"),
        ("https://registry.npmjs.org/x", "ok registry.npmjs.org"),
        ("https://%65xample.com/", "ok example.com"),
        ("http://93.184.216.34/", "not allowed: 93.184.216.34"),
        ("http://[::1]/", "not allowed: [::1]"),
    ];
    assert_cases(cases, Some(allowed), None);
    assert_cases(
        &[("https://example.com", "not allowed: example.com")],
        Some(&[]),
        None,
    );
    assert_cases(&[("https://anything.test", "ok anything.test")], None, None);
}

#[test]
fn blocked_domains_with_wildcards_and_addresses_win() {
    let allowed: &[&str] = &["example.com", "10.0.0.5", "*"];
    let blocked: &[&str] = &[
        "10.*",
        "192.168.*",
        "localhost",
        "169.254.169.254",
        "*.internal",
        "api-*.corp.net",
        "::1",
        "[fd00::1]",
        "bad.example.com",
    ];
    let cases: &[(&str, &str)] = &[
        ("http://10.0.0.5/", "blocked: 10.0.0.5"),
        ("http://10.1.2.3:8080/", "blocked: 10.1.2.3"),
        ("http://0x0a.1/", "blocked: 10.0.0.1"),
        ("http://167772161/", "blocked: 10.0.0.1"),
        ("http://[::ffff:10.0.0.5]/", "blocked: [::ffff:10.0.0.5]"),
        ("http://100.0.0.1/", "ok 100.0.0.1"),
        ("http://11.10.0.1/", "ok 11.10.0.1"),
        ("http://10/", "ok 0.0.0.10"),
        ("http://192.168.1.1/", "blocked: 192.168.1.1"),
        ("http://192.169.1.1/", "ok 192.169.1.1"),
        ("http://localhost:3000/", "blocked: localhost"),
        ("http://LOCALHOST./", "blocked: localhost"),
        ("http://app.localhost/", "blocked: app.localhost"),
        ("http://localhost.example.net/", "ok localhost.example.net"),
        (
            "http://169.254.169.254/latest/meta-data",
            "blocked: 169.254.169.254",
        ),
        ("http://db.internal/", "blocked: db.internal"),
        ("http://a.b.internal/", "blocked: a.b.internal"),
        ("http://internal/", "ok internal"),
        ("http://internal.example.com/", "ok internal.example.com"),
        ("http://api-v2.corp.net/", "blocked: api-v2.corp.net"),
        ("http://api.corp.net/", "ok api.corp.net"),
        ("http://web-api-v2.corp.net/", "ok web-api-v2.corp.net"),
        ("http://[::1]/", "blocked: [::1]"),
        ("http://[0:0:0:0:0:0:0:1]:80/", "blocked: [::1]"),
        ("http://[FD00::1]/", "blocked: [fd00::1]"),
        ("http://[fd00::2]/", "ok [fd00::2]"),
        ("https://bad.example.com/", "blocked: bad.example.com"),
        ("https://x.bad.example.com/", "blocked: x.bad.example.com"),
        ("https://good.example.com/", "ok good.example.com"),
    ];
    assert_cases(cases, None, Some(blocked));
    assert_cases(
        &[
            ("http://10.0.0.5/", "blocked: 10.0.0.5"),
            ("https://bad.example.com/", "blocked: bad.example.com"),
            ("https://example.com/", "ok example.com"),
        ],
        Some(allowed),
        Some(blocked),
    );
}

#[test]
fn ip_entries_compare_as_addresses() {
    let allowed: &[&str] = &["10.0.0.5", "::1"];
    let cases: &[(&str, &str)] = &[
        ("http://10.0.0.5/", "ok 10.0.0.5"),
        ("http://10.0.0.50/", "not allowed: 10.0.0.50"),
        ("http://10.0.0.5.nip.io/", "not allowed: 10.0.0.5.nip.io"),
        ("http://x.10.0.0.5/", "bad: URL is not valid"),
        ("http://[::1]/", "ok [::1]"),
        ("http://[::2]/", "not allowed: [::2]"),
        ("http://[::ffff:10.0.0.5]/", "ok [::ffff:10.0.0.5]"),
    ];
    assert_cases(cases, Some(allowed), None);
}

#[test]
fn only_http_urls_with_a_host_pass() {
    let cases: &[(&str, &str)] = &[
        (
            "ftp://example.com/file",
            "bad: Only http and https URLs are allowed, not ftp",
        ),
        (
            "file:///etc/passwd",
            "bad: Only http and https URLs are allowed, not file",
        ),
        ("javascript:alert(1)", "bad: not javascript"),
        ("gopher://example.com", "bad: not gopher"),
        ("example.com/path", "bad: URL is not valid"),
        ("//example.com", "bad: URL is not valid"),
        ("", "bad: URL is not valid"),
        ("http://", "bad: URL is not valid"),
        ("http:///x", "ok x"),
        ("https://exa mple.com", "bad: URL is not valid"),
        ("HTTPS://Example.COM", "ok example.com"),
        ("  https://example.com  ", "ok example.com"),
    ];
    assert_cases(cases, None, None);
}

#[test]
fn denials_read_as_the_spec_words_them() {
    assert_eq!(
        DomainDenial::NotAllowed("evil.net".into()).to_string(),
        "Domain not allowed: evil.net"
    );
    assert_eq!(
        DomainDenial::Blocked("10.0.0.5".into()).to_string(),
        "Domain is blocked: 10.0.0.5"
    );
}

#[test]
fn the_push_remote_allowlist_is_the_git_push_entrys_domains_and_empty_means_none() {
    let entry = |allowed: Option<&[&str]>, blocked: Option<&[&str]>| CapabilityEntry {
        name: "Git.Push".to_owned(),
        allowed_domains: allowed.map(list),
        blocked_domains: blocked.map(list),
        ..CapabilityEntry::default()
    };
    let listed = remote_check(&entry(Some(&["github.com"]), Some(&["evil.github.com"])));
    for url in [
        "https://github.com/o/r.git",
        "ssh://git@GitHub.com:22/o/r.git",
        "git://api.github.com/o/r",
    ] {
        assert_eq!(listed.check(url), Ok(()), "{url}");
    }
    let refused = |check: &UrlCheck, url: &str, says: &str| {
        let reason = check.check(url).unwrap_err();
        assert!(reason.contains(says), "{url}: {reason}");
    };
    refused(
        &listed,
        "ssh://git@gitlab.com/o/r.git",
        "gitlab.com is not on the remote allowlist",
    );
    refused(
        &listed,
        "https://evil.github.com/o/r",
        "evil.github.com is blocked",
    );
    refused(
        &listed,
        "ssh://git@[::1]/o/r",
        "[::1] is not on the remote allowlist",
    );
    refused(&listed, "not a url", "names no server");
    let unlisted = remote_check(&entry(None, None));
    refused(
        &unlisted,
        "https://github.com/o/r.git",
        "has no allowedDomains",
    );
}
