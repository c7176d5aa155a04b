//! Which MCP endpoints may be contacted (local-tool-runtime.md §9.3, "TLS required for all
//! MCP connections"): `https` only; plain `http` solely to a loopback address, and only
//! when `allow_loopback_http` is set (tests and the conformance kit).

use std::net::IpAddr;

use url::{Host, Url};

pub(crate) fn check(endpoint: &str, allow_loopback_http: bool) -> Result<Url, String> {
    let url = Url::parse(endpoint)
        .map_err(|error| format!("its endpoint \"{endpoint}\" is not a valid URL ({error})"))?;
    let loopback = match url.host() {
        Some(Host::Domain(domain)) => domain.eq_ignore_ascii_case("localhost"),
        Some(Host::Ipv4(ip)) => IpAddr::V4(ip).is_loopback(),
        Some(Host::Ipv6(ip)) => IpAddr::V6(ip).is_loopback(),
        None => false,
    };
    match url.scheme() {
        "https" if url.host().is_some() => Ok(url),
        "http" if loopback && allow_loopback_http => Ok(url),
        "http" if loopback => Err(format!(
            "its endpoint {endpoint} uses plain http; loopback http is allowed only in test mode (AGENT_RUNTIME_ALLOW_LOOPBACK_HTTP)"
        )),
        _ => Err(format!(
            "its endpoint {endpoint} does not use https, which MCP connections require"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::check;

    #[test]
    fn https_is_required_and_loopback_http_only_in_test_mode() {
        assert!(check("https://mcp.example.com/mcp", false).is_ok());
        assert!(check("http://mcp.example.com/mcp", true).is_err());
        assert!(check("http://127.0.0.1:9/mcp", false).is_err());
        assert!(check("http://127.0.0.1:9/mcp", true).is_ok());
        assert!(check("http://[::1]:9/mcp", true).is_ok());
        assert!(check("http://10.0.0.1/mcp", true).is_err());
        assert!(check("ftp://mcp.example.com", true).is_err());
        assert!(check("not a url", true).is_err());
    }
}
