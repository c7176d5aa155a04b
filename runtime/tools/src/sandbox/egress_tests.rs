//! Tests of the egress proxy: allowed destinations are forwarded or tunnelled, the others
//! refused before any connection is made.

use super::*;

/// A one-shot upstream on loopback: answers `reply` to whatever arrives first and reports
/// what it received.
async fn upstream(reply: &'static [u8]) -> (u16, tokio::sync::oneshot::Receiver<Vec<u8>>) {
    let listener = TcpListener::bind(("127.0.0.1", 0)).await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let (sender, receiver) = tokio::sync::oneshot::channel();
    tokio::spawn(async move {
        let (mut stream, _) = listener.accept().await.unwrap();
        let mut buffer = vec![0u8; 4096];
        let read = stream.read(&mut buffer).await.unwrap();
        buffer.truncate(read);
        stream.write_all(reply).await.unwrap();
        stream.shutdown().await.unwrap();
        let _ = sender.send(buffer);
    });
    (port, receiver)
}

/// Sends `request` through the proxy and returns everything it answered.
async fn through(proxy: &Egress, request: &str) -> String {
    let mut stream = TcpStream::connect(("127.0.0.1", proxy.port()))
        .await
        .unwrap();
    stream.write_all(request.as_bytes()).await.unwrap();
    // Nothing more to send: a tunnel then ends when the upstream has answered.
    stream.shutdown().await.unwrap();
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).await.unwrap();
    String::from_utf8_lossy(&answer).into_owned()
}

fn loopback_rules(check: Option<UrlCheck>) -> Rules {
    Rules {
        check,
        addresses: AddressPolicy {
            allow_loopback: true,
        },
        ..Rules::default()
    }
}

fn only(host: &'static str) -> UrlCheck {
    UrlCheck::new(move |url| {
        let parsed = Url::parse(url).map_err(|error| error.to_string())?;
        match parsed.host_str() {
            Some(found) if found == host => Ok(()),
            other => Err(format!("Domain not allowed: {}", other.unwrap_or_default())),
        }
    })
}

#[tokio::test]
async fn plain_http_is_forwarded_in_origin_form_without_proxy_headers() {
    let (port, received) = upstream(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi").await;
    let proxy = Egress::start(loopback_rules(Some(only("127.0.0.1")))).unwrap();
    let answer = through(
        &proxy,
        &format!(
            "GET http://127.0.0.1:{port}/a?b=1 HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nProxy-Connection: keep-alive\r\n\r\n"
        ),
    )
    .await;
    assert!(answer.ends_with("\r\n\r\nhi"), "{answer}");
    let sent = String::from_utf8(received.await.unwrap()).unwrap();
    assert!(sent.starts_with("GET /a?b=1 HTTP/1.1\r\n"), "{sent}");
    assert!(sent.contains(&format!("Host: 127.0.0.1:{port}")), "{sent}");
    assert!(
        !sent.to_ascii_lowercase().contains("proxy-connection"),
        "{sent}"
    );
}

#[tokio::test]
async fn connect_opens_a_tunnel_to_an_allowed_destination() {
    let (port, received) = upstream(b"server bytes").await;
    let proxy = Egress::start(loopback_rules(None)).unwrap();
    let answer = through(
        &proxy,
        &format!("CONNECT 127.0.0.1:{port} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\nclient bytes"),
    )
    .await;
    assert_eq!(
        answer,
        "HTTP/1.1 200 Connection established\r\n\r\nserver bytes"
    );
    assert_eq!(received.await.unwrap(), b"client bytes");
}

#[tokio::test]
async fn a_domain_the_policy_does_not_admit_is_refused_and_never_reached() {
    let (port, mut received) = upstream(b"must not be read").await;
    let proxy = Egress::start(loopback_rules(Some(only("example.com")))).unwrap();
    for request in [
        format!("CONNECT 127.0.0.1:{port} HTTP/1.1\r\n\r\n"),
        format!("GET http://127.0.0.1:{port}/ HTTP/1.1\r\n\r\n"),
    ] {
        let answer = through(&proxy, &request).await;
        assert!(answer.starts_with("HTTP/1.1 403 Forbidden\r\n"), "{answer}");
        assert!(answer.contains("Domain not allowed: 127.0.0.1"), "{answer}");
    }
    drop(proxy);
    assert!(received.try_recv().is_err(), "the upstream was reached");
}

/// The address rules of HttpRequest: loopback (unless the runtime allows it), private,
/// link-local, unique-local — as literals or names — never pass.
#[tokio::test]
async fn internal_addresses_are_refused_as_httprequest_refuses_them() {
    let proxy = Egress::start(Rules::default()).unwrap();
    for target in [
        "127.0.0.1:80",
        "localhost:80",
        "10.0.0.5:443",
        "192.168.1.1:443",
        "169.254.169.254:80",
        "[::1]:443",
        "[fe80::1]:443",
        "[fd00::1]:443",
        "[::ffff:10.0.0.5]:443",
    ] {
        let answer = through(&proxy, &format!("CONNECT {target} HTTP/1.1\r\n\r\n")).await;
        assert!(
            answer.starts_with("HTTP/1.1 403 Forbidden\r\n"),
            "{target}: {answer}"
        );
        assert!(
            answer.contains("requests to local and internal networks are blocked"),
            "{target}: {answer}"
        );
    }
}

#[tokio::test]
async fn malformed_requests_are_answered_with_the_reason() {
    let proxy = Egress::start(Rules::default()).unwrap();
    let answer = through(&proxy, "GARBAGE\r\n\r\n").await;
    assert!(
        answer.starts_with("HTTP/1.1 400 Bad Request\r\n"),
        "{answer}"
    );
    let answer = through(&proxy, "GET https://example.com/ HTTP/1.1\r\n\r\n").await;
    assert!(answer.contains("use CONNECT for https"), "{answer}");
    let answer = through(&proxy, "GET /relative HTTP/1.1\r\n\r\n").await;
    assert!(
        answer.contains("not a destination this proxy serves"),
        "{answer}"
    );
}

/// A kept-alive upstream: answers every request head it reads, until the connection ends or
/// a request asks to close it; reports everything it received.
async fn keep_alive_upstream() -> (u16, tokio::sync::oneshot::Receiver<String>) {
    let listener = TcpListener::bind(("127.0.0.1", 0)).await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let (sender, receiver) = tokio::sync::oneshot::channel();
    tokio::spawn(async move {
        let (mut stream, _) = listener.accept().await.unwrap();
        let mut received = Vec::new();
        let mut answered = 0;
        let mut chunk = [0u8; 4096];
        loop {
            let read = stream.read(&mut chunk).await.unwrap_or(0);
            if read == 0 {
                break;
            }
            received.extend_from_slice(&chunk[..read]);
            let text = String::from_utf8_lossy(&received).to_lowercase();
            let heads = text.matches("\r\n\r\n").count();
            while answered < heads {
                answered += 1;
                stream
                    .write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi")
                    .await
                    .unwrap();
            }
            if text.contains("connection: close") {
                break;
            }
        }
        let _ = stream.shutdown().await;
        let _ = sender.send(String::from_utf8_lossy(&received).into_owned());
    });
    (port, receiver)
}

/// A second request on a kept-alive client connection names another host: it must never
/// reach the first server. The proxy forwards one request per connection, with its body,
/// tells both sides to close, and the client asks again on a fresh, freshly judged one.
#[tokio::test]
async fn a_second_request_on_a_kept_alive_connection_never_reaches_the_first_server() {
    let (port, received) = keep_alive_upstream().await;
    let proxy = Egress::start(loopback_rules(None)).unwrap();
    let answer = through(
        &proxy,
        &format!(
            "POST http://127.0.0.1:{port}/one HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: keep-alive\r\nContent-Length: 5\r\n\r\nhello\
             GET http://other.example/two HTTP/1.1\r\nHost: other.example\r\n\r\n"
        ),
    )
    .await;
    let received = received.await.unwrap();
    assert!(received.starts_with("POST /one HTTP/1.1\r\n"), "{received}");
    assert!(received.ends_with("\r\n\r\nhello"), "{received}");
    assert!(!received.contains("/two"), "{received}");
    assert!(!received.contains("keep-alive"), "{received}");
    assert!(answer.starts_with("HTTP/1.1 200 OK\r\n"), "{answer}");
    assert!(answer.contains("\r\nConnection: close\r\n"), "{answer}");
    assert!(answer.ends_with("\r\n\r\nhi"), "{answer}");
}

/// A chunked request body is forwarded whole, and nothing after it.
#[tokio::test]
async fn a_chunked_body_is_forwarded_and_nothing_after_it() {
    let (port, received) = keep_alive_upstream().await;
    let proxy = Egress::start(loopback_rules(None)).unwrap();
    let answer = through(
        &proxy,
        &format!(
            "POST http://127.0.0.1:{port}/up HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n\
             GET http://127.0.0.1:{port}/again HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n"
        ),
    )
    .await;
    let received = received.await.unwrap();
    assert!(
        received.ends_with("\r\n\r\n5\r\nhello\r\n0\r\n\r\n"),
        "{received}"
    );
    assert!(!received.contains("/again"), "{received}");
    assert!(answer.ends_with("hi"), "{answer}");
}

/// A destination that never answers the connection costs the configured connect timeout,
/// not the kernel's minutes of retries. The listener's accept queue is full, so the
/// kernel drops further connection attempts unanswered.
#[tokio::test]
async fn a_destination_that_never_accepts_ends_at_the_connect_timeout() {
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.bind(SocketAddr::from(([127, 0, 0, 1], 0))).unwrap();
    let listener = socket.listen(0).unwrap();
    let port = listener.local_addr().unwrap().port();
    let mut held = Vec::new();
    // Fill the queue: once an attempt does not complete, the queue is full.
    loop {
        let attempt = TcpStream::connect(("127.0.0.1", port));
        match tokio::time::timeout(std::time::Duration::from_millis(300), attempt).await {
            Ok(Ok(stream)) => held.push(stream),
            _ => break,
        }
        assert!(held.len() < 64, "the accept queue never filled");
    }
    let mut rules = loopback_rules(None);
    rules.connect_timeout = std::time::Duration::from_millis(200);
    let proxy = Egress::start(rules).unwrap();
    let answer = tokio::time::timeout(
        std::time::Duration::from_secs(20),
        through(
            &proxy,
            &format!("CONNECT 127.0.0.1:{port} HTTP/1.1\r\n\r\n"),
        ),
    )
    .await
    .expect("the proxy waited past its connect timeout");
    assert!(
        answer.starts_with("HTTP/1.1 504 Gateway Timeout\r\n"),
        "{answer}"
    );
    assert!(
        answer.contains("AGENT_RUNTIME_EGRESS_CONNECT_TIMEOUT_SECONDS"),
        "{answer}"
    );
    drop(listener);
}
