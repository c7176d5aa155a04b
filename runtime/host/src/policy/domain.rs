//! `Network.Http` domain enforcement (local-agent-host.md §8.2, INTEROP.md §5): the host of
//! an `HttpRequest` URL judged against `allowedDomains` and `blockedDomains`.
//!
//! - The URL is parsed as a browser does (WHATWG, the `url` crate), so `user@host`,
//!   backslashes, percent-encoding, IDNA and numeric IPv4 forms (`0x7f.1`, `2130706433`)
//!   yield the host the request really goes to. Only `http` and `https` URLs with a host
//!   pass; anything else is denied with the reason.
//! - Hosts and entries compare ASCII-case-insensitively, without a trailing dot
//!   (`EXAMPLE.com.` is `example.com`). An entry may be written as a URL or with a port;
//!   only its host counts.
//! - A domain entry `example.com` matches `example.com` and its subdomains
//!   (`api.example.com`), never `example.com.evil.net` nor `evil-example.com`.
//! - `*` wildcards, as the real service sends them, match label-wise: a label that is only
//!   `*` stands for one or more whole labels (`10.*` matches `10.0.0.5`, `*.internal`
//!   matches `a.b.internal` but not `internal`); a `*` inside a label matches within that
//!   label (`api-*.example.com`).
//! - IP literals (IPv6 in brackets) compare as addresses: an IP entry matches that address
//!   only, and an IPv4-mapped IPv6 host (`[::ffff:10.0.0.5]`) is also compared as its IPv4
//!   address, so it cannot slip past `10.*`.
//! - `blockedDomains` wins over `allowedDomains`.
//!
//! Pure: nothing is resolved. A name that resolves to a blocked address is the tool's
//! concern (local-tool-runtime.md §8.3).

use std::net::{IpAddr, Ipv4Addr};

use agent_protocol::UrlCheck;
use agent_protocol::policy::CapabilityEntry;
use url::{Host, Url};

#[cfg(test)]
mod tests;

/// Why a URL may not be fetched; the `Display` text is the reason shown to the model.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum DomainDenial {
    #[error("Domain is blocked: {0}")]
    Blocked(String),
    #[error("Domain not allowed: {0}")]
    NotAllowed(String),
    #[error("{0}")]
    BadUrl(String),
}

/// The host of an http(s) URL, normalised.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Target {
    Domain(String),
    Ip(IpAddr),
}

impl Target {
    fn display(&self) -> String {
        match self {
            Target::Domain(name) => name.clone(),
            Target::Ip(IpAddr::V6(ip)) => format!("[{ip}]"),
            Target::Ip(ip) => ip.to_string(),
        }
    }

    /// The IPv4 address of a v4 or v4-mapped v6 host.
    fn ipv4(&self) -> Option<Ipv4Addr> {
        match self {
            Target::Ip(IpAddr::V4(ip)) => Some(*ip),
            Target::Ip(IpAddr::V6(ip)) => ip.to_ipv4_mapped(),
            Target::Domain(_) => None,
        }
    }
}

/// Judges `url`. On success, the host it names (for the approval risk).
pub(crate) fn check(
    url: &str,
    allowed: Option<&[String]>,
    blocked: Option<&[String]>,
) -> Result<String, DomainDenial> {
    let target = target(url)?;
    if blocked
        .unwrap_or_default()
        .iter()
        .any(|entry| matches(entry, &target))
    {
        return Err(DomainDenial::Blocked(target.display()));
    }
    if let Some(allowed) = allowed
        && !allowed.iter().any(|entry| matches(entry, &target))
    {
        return Err(DomainDenial::NotAllowed(target.display()));
    }
    Ok(target.display())
}

/// The same judgement as [`check`] with `entry`'s lists, for the tool runtime to apply to
/// every URL a call reaches after the first (redirect hops).
pub(crate) fn url_check(entry: &CapabilityEntry) -> UrlCheck {
    let allowed = entry.allowed_domains.clone();
    let blocked = entry.blocked_domains.clone();
    UrlCheck::new(move |url| {
        check(url, allowed.as_deref(), blocked.as_deref())
            .map(drop)
            .map_err(|denial| denial.to_string())
    })
}

/// Git.Push's remote allowlist (system-design.md §9: "Repo path and remote allowlist"),
/// written in the entry's own `allowedDomains`/`blockedDomains`, for the tool runtime to
/// apply to the server a push goes to. `url` is the remote's URL of any scheme (`https`,
/// `ssh`, `git`; scp-like remotes arrive as `ssh://`): only its host counts. Unlike
/// `Network.Http`, an entry without `allowedDomains` lists no server, so a push reaches
/// only the granted folders on this machine.
pub(crate) fn remote_check(entry: &CapabilityEntry) -> UrlCheck {
    let allowed = entry.allowed_domains.clone();
    let blocked = entry.blocked_domains.clone();
    UrlCheck::new(move |url| {
        let Some(allowed) = allowed.as_deref() else {
            return Err(
                "the Git.Push entry of the policy has no allowedDomains, so no server is on its remote allowlist"
                    .to_owned(),
            );
        };
        let host = Url::parse(url.trim())
            .ok()
            .and_then(|parsed| parsed.host_str().map(str::to_owned))
            .ok_or_else(|| format!("the remote URL {url} names no server"))?;
        check(&format!("https://{host}/"), Some(allowed), blocked.as_deref())
            .map(drop)
            .map_err(|denial| match denial {
                DomainDenial::NotAllowed(host) => format!(
                    "the server {host} is not on the remote allowlist (the Git.Push entry's allowedDomains)"
                ),
                DomainDenial::Blocked(host) => format!(
                    "the server {host} is blocked (the Git.Push entry's blockedDomains)"
                ),
                DomainDenial::BadUrl(reason) => reason,
            })
    })
}

fn target(url: &str) -> Result<Target, DomainDenial> {
    let parsed = Url::parse(url.trim())
        .map_err(|error| DomainDenial::BadUrl(format!("URL is not valid ({error}): {url}")))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(DomainDenial::BadUrl(format!(
            "Only http and https URLs are allowed, not {}: {url}",
            parsed.scheme()
        )));
    }
    match parsed.host() {
        Some(Host::Domain(name)) => match normalise_domain(name) {
            Some(name) => Ok(Target::Domain(name)),
            None => Err(DomainDenial::BadUrl(format!("URL has no host: {url}"))),
        },
        Some(Host::Ipv4(ip)) => Ok(Target::Ip(IpAddr::V4(ip))),
        Some(Host::Ipv6(ip)) => Ok(Target::Ip(IpAddr::V6(ip))),
        None => Err(DomainDenial::BadUrl(format!("URL has no host: {url}"))),
    }
}

fn normalise_domain(name: &str) -> Option<String> {
    let name = name.trim().trim_end_matches('.').to_ascii_lowercase();
    (!name.is_empty()).then_some(name)
}

/// An entry's domain as URLs' hosts are written: IDNA-mapped to punycode (`bücher.de` is
/// `xn--bcher-kva.de`, as the URL parser makes the host), lower-case, no trailing dot.
/// Wildcard labels stay as they are.
fn normalise_entry(host: &str) -> Option<String> {
    if host.is_ascii() {
        return normalise_domain(host);
    }
    let labels: Vec<String> = host
        .trim()
        .split(['.', '。', '．', '｡'])
        .map(|label| {
            if label.is_ascii() {
                return label.to_ascii_lowercase();
            }
            match Host::parse(label) {
                Ok(Host::Domain(ascii)) => ascii,
                _ => label.to_lowercase(),
            }
        })
        .collect();
    normalise_domain(&labels.join("."))
}

/// The host part of an entry: without scheme, path, port and brackets.
fn entry_host(entry: &str) -> &str {
    let entry = entry.trim();
    let entry = entry.split_once("://").map_or(entry, |(_, rest)| rest);
    let entry = entry.split(['/', '?', '#']).next().unwrap_or(entry);
    if let Some(inner) = entry.strip_prefix('[') {
        return inner.split(']').next().unwrap_or(inner);
    }
    match entry.rsplit_once(':') {
        Some((host, port))
            if !host.contains(':')
                && !port.is_empty()
                && port.bytes().all(|b| b.is_ascii_digit()) =>
        {
            host
        }
        _ => entry,
    }
}

fn matches(entry: &str, target: &Target) -> bool {
    let host = entry_host(entry);
    if let Ok(ip) = host.parse::<IpAddr>() {
        return match (ip, target) {
            (IpAddr::V4(v4), _) => target.ipv4() == Some(v4),
            (IpAddr::V6(v6), Target::Ip(IpAddr::V6(other))) => v6 == *other,
            (IpAddr::V6(v6), Target::Ip(IpAddr::V4(other))) => v6.to_ipv4_mapped() == Some(*other),
            (IpAddr::V6(_), Target::Domain(_)) => false,
        };
    }
    let Some(pattern) = normalise_entry(host) else {
        return false;
    };
    let name = match target {
        Target::Domain(name) => name.clone(),
        // Wildcards such as `10.*` are written for dotted IPv4 addresses.
        Target::Ip(_) if pattern.contains('*') => match target.ipv4() {
            Some(v4) => v4.to_string(),
            None => return false,
        },
        Target::Ip(_) => return false,
    };
    if pattern.contains('*') {
        let pattern: Vec<&str> = pattern.split('.').collect();
        let labels: Vec<&str> = name.split('.').collect();
        return labels_match(&pattern, &labels);
    }
    name == pattern
        || name
            .strip_suffix(pattern.as_str())
            .is_some_and(|head| head.ends_with('.'))
}

/// A `*` label stands for one or more labels; a `*` inside a label for any characters.
fn labels_match(pattern: &[&str], labels: &[&str]) -> bool {
    match pattern.split_first() {
        None => labels.is_empty(),
        Some((&"*", rest)) => (1..=labels.len()).any(|take| labels_match(rest, &labels[take..])),
        Some((first, rest)) => match labels.split_first() {
            Some((label, others)) => label_matches(first, label) && labels_match(rest, others),
            None => false,
        },
    }
}

fn label_matches(pattern: &str, label: &str) -> bool {
    match pattern.split_once('*') {
        None => pattern == label,
        Some((head, tail)) => {
            label.len() >= head.len()
                && label.starts_with(head)
                && (head.len()..=label.len())
                    .any(|at| label.is_char_boundary(at) && label_matches(tail, &label[at..]))
        }
    }
}
