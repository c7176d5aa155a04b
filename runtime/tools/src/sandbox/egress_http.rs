//! Plain HTTP through the egress proxy: one request per client connection. The request
//! goes out with its body (by `Content-Length` or chunked framing) and `Connection: close`;
//! the response comes back with `Connection: close`, and the connection ends. Nothing the
//! client sends after the first request reaches that server: a kept-alive client asks again
//! on a fresh connection, judged afresh, so a second request naming another host never
//! goes to the first one. The `Host` header must name the host judged (the request
//! line's): a server that hosts several names would otherwise answer for the one the
//! header names, which the policy never saw.

use tokio::io::{
    AsyncBufReadExt as _, AsyncRead, AsyncReadExt as _, AsyncWrite, AsyncWriteExt as _,
};
use tokio::net::TcpStream;

/// Longest chunk-size line or trailer line of a chunked body.
const MAX_LINE_BYTES: usize = 4096;

/// Longest response head read before it is passed on.
const MAX_RESPONSE_HEAD_BYTES: usize = 64 * 1024;

/// Headers about the connection, not the message: the proxy sets its own.
fn hop_by_hop(header: &str) -> bool {
    let name = header.split(':').next().unwrap_or_default().trim();
    [
        "connection",
        "keep-alive",
        "proxy-connection",
        "proxy-authorization",
    ]
    .iter()
    .any(|hop| name.eq_ignore_ascii_case(hop))
}

/// The value of header `name` in `headers`, if present.
fn header<'a>(headers: &'a [String], name: &str) -> Option<&'a str> {
    headers.iter().find_map(|line| {
        let (key, value) = line.split_once(':')?;
        key.trim()
            .eq_ignore_ascii_case(name)
            .then_some(value.trim())
    })
}

/// How the request's body is delimited.
enum Body {
    None,
    Length(u64),
    Chunked,
}

fn body(headers: &[String]) -> Result<Body, String> {
    if let Some(coding) = header(headers, "transfer-encoding") {
        return if coding.to_ascii_lowercase().ends_with("chunked") {
            Ok(Body::Chunked)
        } else {
            Err(format!(
                "the transfer coding {coding:?} is not forwarded; send the body chunked or with a Content-Length"
            ))
        };
    }
    match header(headers, "content-length") {
        None => Ok(Body::None),
        Some(length) => length
            .parse()
            .map(Body::Length)
            .map_err(|_| format!("the Content-Length {length:?} is not a number")),
    }
}

/// The request head in origin form for the server: `path`, the client's headers but the
/// hop-by-hop ones, `Connection: close`.
pub(super) fn request_head(method: &str, path: &str, version: &str, headers: &[String]) -> Vec<u8> {
    let mut text = format!("{method} {path} {version}\r\n");
    for line in headers.iter().filter(|line| !hop_by_hop(line)) {
        text.push_str(line);
        text.push_str("\r\n");
    }
    text.push_str("Connection: close\r\n\r\n");
    text.into_bytes()
}

/// Checks the request's framing before anything is sent: the reason when it cannot be
/// forwarded.
pub(super) fn check_framing(headers: &[String]) -> Result<(), String> {
    body(headers).map(|_| ())
}

/// Checks that the request's `Host` header, if any, names the host and port of `url` (the
/// one judged): the reason when it names another, or there are several.
pub(super) fn check_host(headers: &[String], url: &url::Url) -> Result<(), String> {
    let mut named = headers.iter().filter_map(|line| {
        let (key, value) = line.split_once(':')?;
        key.trim()
            .eq_ignore_ascii_case("host")
            .then_some(value.trim())
    });
    let Some(value) = named.next() else {
        return Ok(());
    };
    if named.next().is_some() {
        return Err("the request has more than one Host header".to_owned());
    }
    let judged_host = url
        .host_str()
        .unwrap_or_default()
        .trim_start_matches('[')
        .trim_end_matches(']')
        .trim_end_matches('.');
    let judged_port = url.port_or_known_default().unwrap_or(80);
    let (host, port) = match value.rsplit_once(':') {
        // A bracketed IPv6 address without a port has its colons inside the brackets.
        Some((host, port)) if !port.contains(']') => (host, port.parse::<u16>().ok()),
        _ => (value, Some(80)),
    };
    let host = host
        .trim_start_matches('[')
        .trim_end_matches(']')
        .trim_end_matches('.');
    if host.eq_ignore_ascii_case(judged_host) && port == Some(judged_port) {
        return Ok(());
    }
    Err(format!(
        "the Host header names {value:?}, not {judged_host}:{judged_port}, the host the request line names and the policy judged"
    ))
}

/// Sends `head` and the request's body (read from `rest`, then the client) to `upstream`,
/// and passes the response back with `Connection: close`; nothing after the body is read.
pub(super) async fn exchange(
    client: &mut TcpStream,
    upstream: &mut TcpStream,
    head: Vec<u8>,
    headers: &[String],
    rest: &[u8],
) -> std::io::Result<()> {
    let framing = body(headers).map_err(std::io::Error::other)?;
    let (client_read, mut client_write) = client.split();
    let (upstream_read, mut upstream_write) = upstream.split();
    let send = async {
        upstream_write.write_all(&head).await?;
        let mut source = tokio::io::BufReader::new(rest.chain(client_read));
        match framing {
            Body::None => {}
            Body::Length(length) => {
                let copied =
                    tokio::io::copy(&mut (&mut source).take(length), &mut upstream_write).await?;
                if copied < length {
                    return Err(std::io::Error::new(
                        std::io::ErrorKind::UnexpectedEof,
                        "the request body ended early",
                    ));
                }
            }
            Body::Chunked => copy_chunked(&mut source, &mut upstream_write).await?,
        }
        upstream_write.flush().await
    };
    // Both at once: a client waiting for `100 Continue` sends its body only once the
    // server's answer starts.
    let receive = relay_response(upstream_read, &mut client_write);
    let (sent, received) = tokio::join!(send, receive);
    received?;
    sent?;
    client_write.shutdown().await
}

/// Copies a chunked body, framing included, through its last chunk and trailer.
async fn copy_chunked<R, W>(source: &mut R, sink: &mut W) -> std::io::Result<()>
where
    R: tokio::io::AsyncBufRead + Unpin,
    W: AsyncWrite + Unpin,
{
    loop {
        let line = read_line(source).await?;
        sink.write_all(&line).await?;
        let text = String::from_utf8_lossy(&line);
        let size = text.split(';').next().unwrap_or_default().trim();
        let size = u64::from_str_radix(size, 16).map_err(|_| {
            std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!("the chunk size {size:?} is not hexadecimal"),
            )
        })?;
        if size == 0 {
            // The trailer: header lines up to an empty one.
            loop {
                let line = read_line(source).await?;
                sink.write_all(&line).await?;
                if line == b"\r\n" || line == b"\n" {
                    return Ok(());
                }
            }
        }
        let want = size + 2;
        let copied = tokio::io::copy(&mut (&mut *source).take(want), sink).await?;
        if copied < want {
            return Err(std::io::Error::new(
                std::io::ErrorKind::UnexpectedEof,
                "the chunked request body ended early",
            ));
        }
    }
}

/// One line, its ending included, of at most [`MAX_LINE_BYTES`].
async fn read_line<R: tokio::io::AsyncBufRead + Unpin>(source: &mut R) -> std::io::Result<Vec<u8>> {
    let mut line = Vec::new();
    let read = (&mut *source)
        .take(MAX_LINE_BYTES as u64)
        .read_until(b'\n', &mut line)
        .await?;
    if read == 0 || !line.ends_with(b"\n") {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            "the chunked request body ended early or has an overlong line",
        ));
    }
    Ok(line)
}

/// The response with its connection headers replaced by `Connection: close`, then the rest
/// as it comes, until the server ends.
async fn relay_response<R, W>(mut upstream: R, client: &mut W) -> std::io::Result<()>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut buffer = Vec::with_capacity(1024);
    let mut chunk = [0u8; 4096];
    let end = loop {
        if let Some(at) = buffer.windows(4).position(|window| window == b"\r\n\r\n") {
            break at;
        }
        if buffer.len() > MAX_RESPONSE_HEAD_BYTES {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                "the server's response head is too large",
            ));
        }
        let read = upstream.read(&mut chunk).await?;
        if read == 0 {
            // No head at all: pass on whatever came.
            client.write_all(&buffer).await?;
            return Ok(());
        }
        buffer.extend_from_slice(&chunk[..read]);
    };
    let text = String::from_utf8_lossy(&buffer[..end]).into_owned();
    let mut head = String::with_capacity(text.len() + 24);
    for line in text.split("\r\n").filter(|line| !hop_by_hop(line)) {
        head.push_str(line);
        head.push_str("\r\n");
    }
    head.push_str("Connection: close\r\n\r\n");
    client.write_all(head.as_bytes()).await?;
    client.write_all(&buffer[end + 4..]).await?;
    tokio::io::copy(&mut upstream, client).await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(lines: &[&str]) -> Vec<String> {
        lines.iter().map(|line| (*line).to_owned()).collect()
    }

    #[test]
    fn the_host_header_must_name_the_judged_host() {
        let url = url::Url::parse("http://allowed.example/path").unwrap();
        for ok in [
            &["Host: allowed.example"][..],
            &["host: ALLOWED.example:80"],
            &["Host: allowed.example."],
            &["Accept: */*"],
        ] {
            assert!(check_host(&headers(ok), &url).is_ok(), "{ok:?}");
        }
        for refused in [
            &["Host: forbidden.example"][..],
            &["Host: allowed.example:8080"],
            &["Host: allowed.example", "Host: forbidden.example"],
            &["Host: allowed.example.forbidden.example"],
        ] {
            let reason = check_host(&headers(refused), &url).unwrap_err();
            assert!(reason.contains("Host header"), "{refused:?}: {reason}");
        }
        let v6 = url::Url::parse("http://[::1]:8080/").unwrap();
        assert!(check_host(&headers(&["Host: [::1]:8080"]), &v6).is_ok());
        assert!(check_host(&headers(&["Host: [::1]"]), &v6).is_err());
    }
}
