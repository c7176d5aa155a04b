//! The egress proxy: the only way out for a sandboxed process granted the network. A
//! command sees `HTTP_PROXY`/`HTTPS_PROXY` pointing at a loopback port of the runtime, and
//! the OS sandbox lets it open TCP connections to that port only (Landlock TCP rules, no
//! UDP or other families by seccomp). Every destination is judged like an `HttpRequest` URL:
//! the host's domain rules (`allowedDomains`/`blockedDomains`, via the request's
//! [`UrlCheck`]), then the address rules (no loopback, private, link-local, … address,
//! literally or after resolution, [`crate::platform::ssrf`]). So `curl`, `pip` and
//! `git fetch` obey the same policy as HttpRequest.
//!
//! Two forms are served: `CONNECT host:port` (a TLS tunnel; the proxy never sees inside) and
//! plain HTTP in absolute form (`GET http://host/path`), forwarded in origin form, one
//! request per client connection (`egress_http`: a kept-alive client's next request comes on
//! a new connection and is judged again, never sent to the first server). Connecting to a
//! destination is bounded by [`Rules::connect_timeout`]. A refusal
//! is a `403` whose body says which rule refused. The proxy lives as long as its [`Egress`]
//! handle, one per started process.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use agent_protocol::UrlCheck;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::{TcpListener, TcpStream};
use url::Url;

use crate::platform::ssrf::{self, AddressPolicy, VettingResolver};

/// Longest request head read before the destination is known.
const MAX_HEAD_BYTES: usize = 16 * 1024;

/// What the proxy applies to every destination.
#[derive(Clone)]
pub(crate) struct Rules {
    /// The host's domain rules; `None`: only the address rules apply.
    pub check: Option<UrlCheck>,
    pub addresses: AddressPolicy,
    /// How long connecting to a destination may take
    /// (`AGENT_RUNTIME_EGRESS_CONNECT_TIMEOUT_SECONDS`).
    pub connect_timeout: Duration,
}

/// The default of `AGENT_RUNTIME_EGRESS_CONNECT_TIMEOUT_SECONDS`.
pub(crate) const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

impl Default for Rules {
    fn default() -> Self {
        Rules {
            check: None,
            addresses: AddressPolicy::default(),
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
        }
    }
}

/// A running proxy; dropping it stops it (open tunnels end with their process anyway).
#[derive(Debug)]
pub(crate) struct Egress {
    port: u16,
    task: tokio::task::JoinHandle<()>,
    /// The Unix socket a command in a network namespace of its own reaches the proxy by.
    socket: Option<(std::path::PathBuf, tokio::task::JoinHandle<()>)>,
}

impl Drop for Egress {
    fn drop(&mut self) {
        self.task.abort();
        if let Some((path, task)) = &self.socket {
            task.abort();
            let _ = std::fs::remove_file(path);
        }
    }
}

impl Egress {
    /// Starts a proxy on a free loopback port. Needs a Tokio runtime.
    #[cfg(test)]
    pub(crate) fn start(rules: Rules) -> std::io::Result<Egress> {
        Self::start_with_socket(rules, None)
    }

    /// [`Egress::start`], and on the Unix socket `socket` when given too (each of its
    /// connections joined to the port).
    pub(crate) fn start_with_socket(
        rules: Rules,
        socket: Option<&std::path::Path>,
    ) -> std::io::Result<Egress> {
        let listener = std::net::TcpListener::bind(("127.0.0.1", 0))?;
        listener.set_nonblocking(true)?;
        let port = listener.local_addr()?.port();
        let listener = TcpListener::from_std(listener)?;
        let rules = Arc::new(rules);
        let task = tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                let rules = Arc::clone(&rules);
                tokio::spawn(async move {
                    if let Err(error) = serve(client, &rules).await {
                        tracing::debug!(%error, "egress proxy connection ended");
                    }
                });
            }
        });
        let socket = match socket {
            Some(path) => Some((path.to_path_buf(), serve_socket(path, port)?)),
            None => None,
        };
        Ok(Egress { port, task, socket })
    }

    pub(crate) fn port(&self) -> u16 {
        self.port
    }

    /// The proxy URL for `HTTP_PROXY` and friends.
    pub(crate) fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }
}

/// Joins each connection on the Unix socket at `path` to the proxy's loopback `port`.
#[cfg(unix)]
fn serve_socket(path: &std::path::Path, port: u16) -> std::io::Result<tokio::task::JoinHandle<()>> {
    let listener = tokio::net::UnixListener::bind(path)?;
    Ok(tokio::spawn(async move {
        while let Ok((mut client, _)) = listener.accept().await {
            tokio::spawn(async move {
                if let Ok(mut proxy) = TcpStream::connect(("127.0.0.1", port)).await {
                    let _ = tokio::io::copy_bidirectional(&mut client, &mut proxy).await;
                }
            });
        }
    }))
}

#[cfg(not(unix))]
fn serve_socket(
    _path: &std::path::Path,
    _port: u16,
) -> std::io::Result<tokio::task::JoinHandle<()>> {
    Err(std::io::Error::other("Unix sockets are not offered here"))
}

/// The request line and headers, and any bytes read past them.
struct Head {
    method: String,
    target: String,
    version: String,
    headers: Vec<String>,
    rest: Vec<u8>,
}

/// Why a request is not forwarded: the status and the sentence for the client.
struct Refused(u16, String);

async fn serve(mut client: TcpStream, rules: &Rules) -> std::io::Result<()> {
    let head = match read_head(&mut client).await? {
        Ok(head) => head,
        Err(Refused(status, reason)) => return refuse(&mut client, status, &reason).await,
    };
    let tunnel = head.method.eq_ignore_ascii_case("CONNECT");
    let url = match destination(&head, tunnel) {
        Ok(url) => url,
        Err(Refused(status, reason)) => return refuse(&mut client, status, &reason).await,
    };
    let addresses = match judge(&url, rules).await {
        Ok(addresses) => addresses,
        Err(Refused(status, reason)) => return refuse(&mut client, status, &reason).await,
    };
    if !tunnel && let Err(reason) = egress_http::check_framing(&head.headers) {
        return refuse(&mut client, 400, &reason).await;
    }
    if !tunnel && let Err(reason) = egress_http::check_host(&head.headers, &url) {
        return refuse(&mut client, 403, &reason).await;
    }
    let mut upstream = match tokio::time::timeout(rules.connect_timeout, connect(&addresses)).await
    {
        Ok(Ok(upstream)) => upstream,
        Ok(Err(error)) => {
            let reason = format!("could not connect to {}: {error}", display_host(&url));
            return refuse(&mut client, 502, &reason).await;
        }
        Err(_) => {
            let reason = format!(
                "could not connect to {} within {:?} (AGENT_RUNTIME_EGRESS_CONNECT_TIMEOUT_SECONDS)",
                display_host(&url),
                rules.connect_timeout
            );
            return refuse(&mut client, 504, &reason).await;
        }
    };
    if !tunnel {
        let request = egress_http::request_head(
            &head.method,
            &origin_path(&url),
            &head.version,
            &head.headers,
        );
        return egress_http::exchange(
            &mut client,
            &mut upstream,
            request,
            &head.headers,
            &head.rest,
        )
        .await;
    }
    client
        .write_all(b"HTTP/1.1 200 Connection established\r\n\r\n")
        .await?;
    upstream.write_all(&head.rest).await?;
    tokio::io::copy_bidirectional(&mut client, &mut upstream).await?;
    Ok(())
}

async fn read_head(client: &mut TcpStream) -> std::io::Result<Result<Head, Refused>> {
    let mut buffer = Vec::with_capacity(1024);
    let mut chunk = [0u8; 4096];
    let end = loop {
        if let Some(at) = buffer.windows(4).position(|window| window == b"\r\n\r\n") {
            break at;
        }
        if buffer.len() > MAX_HEAD_BYTES {
            return Ok(Err(Refused(
                431,
                "the request head is too large".to_owned(),
            )));
        }
        let read = client.read(&mut chunk).await?;
        if read == 0 {
            return Ok(Err(Refused(400, "the request ended early".to_owned())));
        }
        buffer.extend_from_slice(&chunk[..read]);
    };
    let rest = buffer.split_off(end + 4);
    let text = String::from_utf8_lossy(&buffer[..end]).into_owned();
    let mut lines = text.split("\r\n");
    let line = lines.next().unwrap_or_default();
    let mut parts = line.split(' ');
    let (Some(method), Some(target), Some(version), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Ok(Err(Refused(
            400,
            format!("the request line {line:?} is not \"METHOD target HTTP/1.x\""),
        )));
    };
    Ok(Ok(Head {
        method: method.to_owned(),
        target: target.to_owned(),
        version: version.to_owned(),
        headers: lines.map(str::to_owned).collect(),
        rest,
    }))
}

/// The URL the request goes to: `https://host:port/` for a tunnel, the absolute URL else.
fn destination(head: &Head, tunnel: bool) -> Result<Url, Refused> {
    let text = if tunnel {
        format!("https://{}/", head.target)
    } else {
        head.target.clone()
    };
    let url = Url::parse(&text).map_err(|error| {
        Refused(
            400,
            format!(
                "{} is not a destination this proxy serves ({error}); send CONNECT host:port or an absolute http:// URL",
                head.target
            ),
        )
    })?;
    if !tunnel && url.scheme() != "http" {
        return Err(Refused(
            400,
            format!(
                "only http:// URLs are forwarded in plain form, not {}; use CONNECT for https",
                head.target
            ),
        ));
    }
    Ok(url)
}

/// The policy's verdict: the addresses a connection may use, or the refusal naming its rule.
async fn judge(url: &Url, rules: &Rules) -> Result<Vec<SocketAddr>, Refused> {
    let forbidden = |reason: String| Refused(403, format!("the policy refuses {url}: {reason}"));
    if let Some(check) = &rules.check {
        check.check(url.as_str()).map_err(forbidden)?;
    }
    ssrf::check_url(url, rules.addresses).map_err(|refusal| forbidden(refusal.to_string()))?;
    let host = url.host_str().unwrap_or_default();
    let host = host.trim_start_matches('[').trim_end_matches(']');
    let port = url.port_or_known_default().unwrap_or(443);
    let resolver = VettingResolver {
        policy: rules.addresses,
    };
    let found = resolver
        .vetted(host)
        .await
        .map_err(|error| forbidden(error.to_string()))?;
    if found.is_empty() {
        return Err(Refused(502, format!("{host} has no address")));
    }
    Ok(found
        .into_iter()
        .map(|address| SocketAddr::new(address.ip(), port))
        .collect())
}

async fn connect(addresses: &[SocketAddr]) -> std::io::Result<TcpStream> {
    let mut last = None;
    for address in addresses {
        match TcpStream::connect(address).await {
            Ok(stream) => return Ok(stream),
            Err(error) => last = Some(error),
        }
    }
    Err(last.unwrap_or_else(|| std::io::Error::other("no address to connect to")))
}

/// The request target as the server expects it: origin form.
fn origin_path(url: &Url) -> String {
    match url.query() {
        Some(query) => format!("{}?{query}", url.path()),
        None => url.path().to_owned(),
    }
}

fn display_host(url: &Url) -> String {
    match url.port_or_known_default() {
        Some(port) => format!("{}:{port}", url.host_str().unwrap_or_default()),
        None => url.host_str().unwrap_or_default().to_owned(),
    }
}

async fn refuse(client: &mut TcpStream, status: u16, reason: &str) -> std::io::Result<()> {
    let phrase = match status {
        403 => "Forbidden",
        504 => "Gateway Timeout",
        431 => "Request Header Fields Too Large",
        502 => "Bad Gateway",
        _ => "Bad Request",
    };
    let body = format!("agent-runtime egress proxy: {reason}\n");
    let response = format!(
        "HTTP/1.1 {status} {phrase}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    client.write_all(response.as_bytes()).await?;
    client.shutdown().await
}

#[path = "egress_http.rs"]
mod egress_http;

#[cfg(test)]
#[path = "egress_tests.rs"]
mod tests;
