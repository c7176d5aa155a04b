//! SSRF protection for HttpRequest and the sandbox's egress proxy (local-tool-runtime.md
//! §8.3): which addresses a connection may reach, judged on the address itself, never on
//! how the URL spelled it.
//!
//! Two checks cover every connection:
//! - a host written as an IP literal is judged before anything is sent ([`check_url`]); the
//!   `url` crate has already normalised decimal (`2130706433`), octal (`0177.0.0.1`), hex
//!   (`0x7f.1`) and shortened (`127.1`) forms into a plain IPv4 address;
//! - a host name is resolved by [`VettingResolver`], the client's only resolver, which drops
//!   every forbidden address from the answer: the connection can only use vetted addresses,
//!   so a name that points at `127.0.0.1` — or starts to between a check and the connect —
//!   is never reached.
//!
//! Both run on every redirect hop, since each hop is a request of its own.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use url::{Host, Url};

/// Why an address may not be reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Blocked {
    /// `127.0.0.0/8`, `::1`.
    Loopback,
    /// `10.0.0.0/8`, `172.16.0.0/12`, `192.168.0.0/16`.
    Private,
    /// `169.254.0.0/16` (with the cloud metadata address `169.254.169.254`), `fe80::/10`.
    LinkLocal,
    /// `fc00::/7`.
    UniqueLocal,
    /// `fec0::/10` (deprecated, still routed inside some networks).
    SiteLocal,
    /// `0.0.0.0/8` ("this network": `0.0.0.0` reaches the local host), `::`.
    Unspecified,
    /// `224.0.0.0/4`, `ff00::/8`.
    Multicast,
    /// `255.255.255.255`.
    Broadcast,
    /// `100.64.0.0/10`, carrier-grade NAT: internal to a provider's network.
    SharedAddressSpace,
    /// `240.0.0.0/4`.
    Reserved,
}

impl fmt::Display for Blocked {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Blocked::Loopback => "loopback",
            Blocked::Private => "private",
            Blocked::LinkLocal => "link-local",
            Blocked::UniqueLocal => "unique-local",
            Blocked::SiteLocal => "site-local",
            Blocked::Unspecified => "unspecified",
            Blocked::Multicast => "multicast",
            Blocked::Broadcast => "broadcast",
            Blocked::SharedAddressSpace => "shared (carrier-grade NAT)",
            Blocked::Reserved => "reserved",
        })
    }
}

/// The class of a forbidden address; `None` for an address on the public internet.
/// An IPv6 address that carries an IPv4 one (mapped `::ffff:a.b.c.d`, compatible
/// `::a.b.c.d`, NAT64 `64:ff9b::a.b.c.d`) is judged as that IPv4 address.
pub(crate) fn classify(ip: IpAddr) -> Option<Blocked> {
    match ip {
        IpAddr::V4(v4) => classify_v4(v4),
        IpAddr::V6(v6) => classify_v6(v6),
    }
}

fn classify_v4(ip: Ipv4Addr) -> Option<Blocked> {
    let [a, b, ..] = ip.octets();
    if ip.is_broadcast() {
        Some(Blocked::Broadcast)
    } else if a == 0 {
        Some(Blocked::Unspecified)
    } else if ip.is_loopback() {
        Some(Blocked::Loopback)
    } else if ip.is_private() {
        Some(Blocked::Private)
    } else if ip.is_link_local() {
        Some(Blocked::LinkLocal)
    } else if a == 100 && (64..128).contains(&b) {
        Some(Blocked::SharedAddressSpace)
    } else if ip.is_multicast() {
        Some(Blocked::Multicast)
    } else if a >= 240 {
        Some(Blocked::Reserved)
    } else {
        None
    }
}

fn classify_v6(ip: Ipv6Addr) -> Option<Blocked> {
    let segments = ip.segments();
    if ip.is_unspecified() {
        return Some(Blocked::Unspecified);
    }
    if ip.is_loopback() {
        return Some(Blocked::Loopback);
    }
    if let Some(v4) = embedded_v4(&ip) {
        return classify_v4(v4);
    }
    let first = segments[0];
    if first & 0xffc0 == 0xfe80 {
        Some(Blocked::LinkLocal)
    } else if first & 0xffc0 == 0xfec0 {
        Some(Blocked::SiteLocal)
    } else if first & 0xfe00 == 0xfc00 {
        Some(Blocked::UniqueLocal)
    } else if first & 0xff00 == 0xff00 {
        Some(Blocked::Multicast)
    } else {
        None
    }
}

/// The IPv4 address inside `::ffff:a.b.c.d` (mapped), `::a.b.c.d` (compatible, deprecated) and
/// `64:ff9b::a.b.c.d` (NAT64).
fn embedded_v4(ip: &Ipv6Addr) -> Option<Ipv4Addr> {
    let s = ip.segments();
    let last = || Ipv4Addr::from((u32::from(s[6]) << 16) | u32::from(s[7]));
    match s {
        [0, 0, 0, 0, 0, 0xffff, _, _] | [0, 0, 0, 0, 0, 0, _, _] => Some(last()),
        [0x64, 0xff9b, 0, 0, 0, 0, _, _] => Some(last()),
        _ => None,
    }
}

/// What the router's owner allows beyond the public internet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct AddressPolicy {
    /// Loopback addresses (and the name `localhost`) may be reached: for tests and the
    /// conformance kit, whose fake servers listen on `127.0.0.1`. Every other class stays
    /// forbidden.
    pub allow_loopback: bool,
}

impl AddressPolicy {
    /// `Err` with the class of a forbidden address.
    pub(crate) fn check(&self, ip: IpAddr) -> Result<(), Blocked> {
        match classify(ip) {
            None => Ok(()),
            Some(Blocked::Loopback) if self.allow_loopback => Ok(()),
            Some(class) => Err(class),
        }
    }
}

/// Why a URL may not be requested.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum Refusal {
    #[error("only http and https URLs are allowed, not {0}:")]
    Scheme(String),
    #[error("the URL has no host")]
    NoHost,
    #[error("{host} is a {class} address; requests to local and internal networks are blocked")]
    Address { host: String, class: Blocked },
    #[error("{host} resolves to {addresses}; requests to local and internal networks are blocked")]
    Resolved { host: String, addresses: String },
}

/// The checks that need no DNS: the scheme, and a host that is an IP literal or `localhost`.
pub(crate) fn check_url(url: &Url, policy: AddressPolicy) -> Result<(), Refusal> {
    if !matches!(url.scheme(), "http" | "https") {
        return Err(Refusal::Scheme(url.scheme().to_owned()));
    }
    let blocked = |class| Refusal::Address {
        host: url.host_str().unwrap_or_default().to_owned(),
        class,
    };
    match url.host() {
        None => Err(Refusal::NoHost),
        Some(Host::Ipv4(ip)) => policy.check(IpAddr::V4(ip)).map_err(blocked),
        Some(Host::Ipv6(ip)) => policy.check(IpAddr::V6(ip)).map_err(blocked),
        Some(Host::Domain(name)) => {
            let name = name.trim_end_matches('.').to_ascii_lowercase();
            let local = name == "localhost" || name.ends_with(".localhost");
            if local && !policy.allow_loopback {
                Err(blocked(Blocked::Loopback))
            } else {
                Ok(())
            }
        }
    }
}

/// The client's DNS resolver: the system's answer without the forbidden addresses; an error
/// ([`Refusal::Resolved`]) when nothing is left.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct VettingResolver {
    pub policy: AddressPolicy,
}

impl VettingResolver {
    /// The addresses of `host` a connection may use.
    pub(crate) async fn vetted(
        &self,
        host: &str,
    ) -> Result<Vec<SocketAddr>, Box<dyn std::error::Error + Send + Sync>> {
        let found: Vec<SocketAddr> = tokio::net::lookup_host((host, 0)).await?.collect();
        Ok(self.filter(host, found)?)
    }

    fn filter(&self, host: &str, found: Vec<SocketAddr>) -> Result<Vec<SocketAddr>, Refusal> {
        let mut refused = Vec::new();
        let mut allowed = Vec::new();
        for address in found {
            match self.policy.check(address.ip()) {
                Ok(()) => allowed.push(address),
                Err(class) => refused.push(format!("{} ({class})", address.ip())),
            }
        }
        if allowed.is_empty() && !refused.is_empty() {
            return Err(Refusal::Resolved {
                host: host.to_owned(),
                addresses: refused.join(", "),
            });
        }
        Ok(allowed)
    }
}

impl Resolve for VettingResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let resolver = *self;
        Box::pin(async move {
            let addresses = resolver.vetted(name.as_str()).await?;
            let addrs: Addrs = Box::new(addresses.into_iter());
            Ok(addrs)
        })
    }
}

/// The [`Refusal`] somewhere in the causes of a client error, when the resolver refused.
pub(crate) fn refusal_in<'a>(error: &'a (dyn std::error::Error + 'static)) -> Option<&'a Refusal> {
    let mut current = Some(error);
    while let Some(error) = current {
        if let Some(refusal) = error.downcast_ref::<Refusal>() {
            return Some(refusal);
        }
        current = error.source();
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(text: &str) -> IpAddr {
        text.parse().unwrap()
    }

    #[test]
    fn every_forbidden_class_is_recognised_and_public_addresses_pass() {
        let table: &[(&str, Option<Blocked>)] = &[
            ("127.0.0.1", Some(Blocked::Loopback)),
            ("127.255.0.9", Some(Blocked::Loopback)),
            ("::1", Some(Blocked::Loopback)),
            ("10.0.0.1", Some(Blocked::Private)),
            ("10.255.255.255", Some(Blocked::Private)),
            ("172.16.0.1", Some(Blocked::Private)),
            ("172.31.255.254", Some(Blocked::Private)),
            ("192.168.1.1", Some(Blocked::Private)),
            ("169.254.169.254", Some(Blocked::LinkLocal)),
            ("169.254.0.1", Some(Blocked::LinkLocal)),
            ("fe80::1", Some(Blocked::LinkLocal)),
            ("febf::1", Some(Blocked::LinkLocal)),
            ("fec0::1", Some(Blocked::SiteLocal)),
            ("fc00::1", Some(Blocked::UniqueLocal)),
            ("fd12:3456::1", Some(Blocked::UniqueLocal)),
            ("0.0.0.0", Some(Blocked::Unspecified)),
            ("0.1.2.3", Some(Blocked::Unspecified)),
            ("::", Some(Blocked::Unspecified)),
            ("224.0.0.1", Some(Blocked::Multicast)),
            ("239.255.255.250", Some(Blocked::Multicast)),
            ("ff02::1", Some(Blocked::Multicast)),
            ("255.255.255.255", Some(Blocked::Broadcast)),
            ("100.64.0.1", Some(Blocked::SharedAddressSpace)),
            ("240.0.0.1", Some(Blocked::Reserved)),
            // IPv6 forms that carry an IPv4 address are judged as that address.
            ("::ffff:127.0.0.1", Some(Blocked::Loopback)),
            ("::ffff:10.1.2.3", Some(Blocked::Private)),
            ("::ffff:169.254.169.254", Some(Blocked::LinkLocal)),
            ("::ffff:0.0.0.0", Some(Blocked::Unspecified)),
            ("::127.0.0.1", Some(Blocked::Loopback)),
            ("64:ff9b::192.168.0.1", Some(Blocked::Private)),
            // Public addresses, including neighbours of the forbidden ranges.
            ("8.8.8.8", None),
            ("93.184.216.34", None),
            ("172.15.255.255", None),
            ("172.32.0.0", None),
            ("169.253.255.255", None),
            ("100.63.255.255", None),
            ("100.128.0.0", None),
            ("11.0.0.1", None),
            ("223.255.255.255", None),
            ("::ffff:8.8.8.8", None),
            ("64:ff9b::8.8.8.8", None),
            ("2606:4700:4700::1111", None),
            ("fbff::1", None),
            ("fe7f::1", None),
        ];
        for (address, expected) in table {
            assert_eq!(classify(ip(address)), *expected, "{address}");
        }
    }

    #[test]
    fn allowing_loopback_allows_only_loopback() {
        let open = AddressPolicy {
            allow_loopback: true,
        };
        assert_eq!(open.check(ip("127.0.0.1")), Ok(()));
        assert_eq!(open.check(ip("::1")), Ok(()));
        assert_eq!(open.check(ip("::ffff:127.0.0.1")), Ok(()));
        assert_eq!(open.check(ip("10.0.0.1")), Err(Blocked::Private));
        assert_eq!(open.check(ip("169.254.169.254")), Err(Blocked::LinkLocal));
        assert_eq!(open.check(ip("0.0.0.0")), Err(Blocked::Unspecified));
        let closed = AddressPolicy::default();
        assert_eq!(closed.check(ip("127.0.0.1")), Err(Blocked::Loopback));
    }

    #[test]
    fn urls_are_judged_by_the_address_their_host_normalises_to() {
        let table: &[(&str, Blocked)] = &[
            ("http://127.0.0.1/", Blocked::Loopback),
            ("http://2130706433/", Blocked::Loopback),
            ("http://0177.0.0.1/", Blocked::Loopback),
            ("http://0x7f.1/", Blocked::Loopback),
            ("http://0x7f000001/", Blocked::Loopback),
            ("http://127.1/", Blocked::Loopback),
            ("http://017700000001:8080/x", Blocked::Loopback),
            ("http://[::1]/", Blocked::Loopback),
            ("http://[::ffff:127.0.0.1]/", Blocked::Loopback),
            ("http://[::ffff:7f00:1]/", Blocked::Loopback),
            ("http://localhost/", Blocked::Loopback),
            ("http://LOCALHOST./", Blocked::Loopback),
            ("http://api.localhost/", Blocked::Loopback),
            ("https://10.0.0.1/", Blocked::Private),
            ("http://0xa000001/", Blocked::Private),
            ("http://172.16.5.4/", Blocked::Private),
            ("http://192.168.0.1/", Blocked::Private),
            (
                "http://169.254.169.254/latest/meta-data/",
                Blocked::LinkLocal,
            ),
            ("http://2852039166/", Blocked::LinkLocal),
            ("http://[fe80::1]/", Blocked::LinkLocal),
            ("http://[fd00::1]/", Blocked::UniqueLocal),
            ("http://0.0.0.0/", Blocked::Unspecified),
            ("http://0/", Blocked::Unspecified),
            ("http://[::]/", Blocked::Unspecified),
            ("http://224.0.0.1/", Blocked::Multicast),
            ("http://[ff02::1]/", Blocked::Multicast),
            ("http://255.255.255.255/", Blocked::Broadcast),
        ];
        let policy = AddressPolicy::default();
        for (raw, class) in table {
            let url = Url::parse(raw).unwrap();
            match check_url(&url, policy) {
                Err(Refusal::Address { class: found, .. }) => assert_eq!(found, *class, "{raw}"),
                other => panic!("{raw}: {other:?}"),
            }
        }
        for raw in [
            "http://example.com/",
            "https://8.8.8.8/",
            "http://[2001:db8::1]/",
        ] {
            assert_eq!(
                check_url(&Url::parse(raw).unwrap(), policy),
                Ok(()),
                "{raw}"
            );
        }
    }

    #[test]
    fn only_http_and_https_are_accepted() {
        let policy = AddressPolicy::default();
        for raw in [
            "file:///etc/passwd",
            "ftp://example.com/",
            "gopher://example.com/",
            "data:text/plain,hi",
            "javascript:alert(1)",
        ] {
            let refusal = check_url(&Url::parse(raw).unwrap(), policy).unwrap_err();
            assert!(matches!(refusal, Refusal::Scheme(_)), "{raw}: {refusal:?}");
        }
    }

    #[tokio::test]
    async fn the_resolver_drops_forbidden_answers_and_refuses_when_none_is_left() {
        let closed = VettingResolver::default();
        let error = closed.vetted("localhost").await.unwrap_err();
        let refusal = refusal_in(error.as_ref()).unwrap();
        assert!(matches!(refusal, Refusal::Resolved { .. }), "{refusal:?}");
        assert!(refusal.to_string().contains("(loopback)"), "{refusal}");

        let mixed = vec![
            SocketAddr::new(ip("10.0.0.1"), 0),
            SocketAddr::new(ip("8.8.8.8"), 0),
            SocketAddr::new(ip("::1"), 0),
        ];
        assert_eq!(
            closed.filter("h", mixed).unwrap(),
            vec![SocketAddr::new(ip("8.8.8.8"), 0)]
        );
        let open = VettingResolver {
            policy: AddressPolicy {
                allow_loopback: true,
            },
        };
        let found = open.vetted("localhost").await.unwrap();
        assert!(!found.is_empty() && found.iter().all(|a| a.ip().is_loopback()));
    }
}
