//! HttpRequest against real HTTP servers on loopback (axum, or raw sockets where a server
//! must misbehave), and its pure parts.

use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use agent_protocol::ToolStatus;
use agent_protocol::tool::ArtifactData;
use axum::Router;
use axum::extract::{Path as UrlPath, Query};
use axum::http::{HeaderMap as AxumHeaders, Method as AxumMethod, StatusCode, header};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::{any, get};
use base64::Engine as _;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

use super::*;
use crate::platform::ssrf;
use crate::testing::decoded;

const MB: usize = 1024 * 1024;

fn open() -> HttpRequest {
    HttpRequest::new(AddressPolicy {
        allow_loopback: true,
    })
}

fn http_request(args: Value) -> ToolRequest {
    let mut request = crate::testing::request("HttpRequest", Path::new("/"), args);
    request.limits.timeout_ms = Some(20_000);
    request
}

async fn run_request(tool: &HttpRequest, request: ToolRequest) -> ToolResult {
    tokio::time::timeout(Duration::from_secs(30), tool.run(&request))
        .await
        .expect("the call hung")
}

async fn run(tool: &HttpRequest, args: Value) -> ToolResult {
    run_request(tool, http_request(args)).await
}

fn text(result: &ToolResult) -> &str {
    result.output_text.as_deref().unwrap_or_default()
}

fn failure(result: &ToolResult) -> (ErrorCode, String) {
    assert_eq!(result.status, ToolStatus::Failed, "{result:?}");
    let error = result.error.clone().unwrap();
    (error.code, error.message)
}

/// Serves `app` on an ephemeral loopback port.
async fn serve(app: Router) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    address
}

/// Serves one raw HTTP/1.1 response head then `body_bytes` bytes of `x`, then holds the
/// connection open, so only a client that counts can finish.
async fn serve_raw(head: String, body_bytes: usize) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            let head = head.clone();
            tokio::spawn(async move {
                let mut request = [0u8; 4096];
                let _ = socket.read(&mut request).await;
                if socket.write_all(head.as_bytes()).await.is_err() {
                    return;
                }
                let chunk = vec![b'x'; 64 * 1024];
                let mut sent = 0;
                while sent < body_bytes {
                    let n = chunk.len().min(body_bytes - sent);
                    if socket.write_all(&chunk[..n]).await.is_err() {
                        return;
                    }
                    sent += n;
                }
                std::future::pending::<()>().await;
            });
        }
    });
    address
}

async fn echo(method: AxumMethod, headers: AxumHeaders, body: String) -> String {
    let header = |name: &str| {
        headers
            .get(name)
            .and_then(|value| value.to_str().ok())
            .unwrap_or("-")
            .to_owned()
    };
    format!(
        "method={method}\nx-test={}\ncontent-type={}\nbody={body}",
        header("x-test"),
        header("content-type")
    )
}

#[tokio::test]
async fn get_and_post_send_method_headers_and_body_and_show_the_response() {
    let address = serve(Router::new().route("/echo", any(echo))).await;
    let url = format!("http://{address}/echo");
    let tool = open();

    let got = run(&tool, json!({"url": url, "headers": {"X-Test": "one"}})).await;
    assert_eq!(got.status, ToolStatus::Succeeded, "{got:?}");
    let body = "method=GET\nx-test=one\ncontent-type=-\nbody=";
    assert_eq!(
        text(&got),
        format!(
            "HTTP 200 OK\nContent-Type: text/plain; charset=utf-8\nContent-Length: {}\n\n{body}",
            body.len()
        )
    );
    assert!(got.artifacts.is_empty());

    let posted = run(
        &tool,
        json!({"url": url, "method": "post", "body": "{\"a\":1}",
               "headers": {"Content-Type": "application/json", "x-test": "two"}}),
    )
    .await;
    assert_eq!(posted.status, ToolStatus::Succeeded, "{posted:?}");
    assert!(
        text(&posted).ends_with(
            "\n\nmethod=POST\nx-test=two\ncontent-type=application/json\nbody={\"a\":1}"
        ),
        "{}",
        text(&posted)
    );
}

#[tokio::test]
async fn error_statuses_are_succeeded_calls_that_show_the_status() {
    let app = Router::new().route(
        "/missing",
        get(|| async { (StatusCode::NOT_FOUND, "no such thing") }),
    );
    let address = serve(app).await;
    let result = run(&open(), json!({"url": format!("http://{address}/missing")})).await;
    assert_eq!(result.status, ToolStatus::Succeeded, "{result:?}");
    assert!(
        text(&result).starts_with("HTTP 404 Not Found\n"),
        "{}",
        text(&result)
    );
    assert!(text(&result).ends_with("\n\nno such thing"));
}

/// `/r/{n}` redirects to `/r/{n-1}`; `/r/0` answers. Counts the requests that reach `/r/0`.
async fn redirect_chain() -> (SocketAddr, Arc<AtomicUsize>) {
    let reached = Arc::new(AtomicUsize::new(0));
    let counter = reached.clone();
    let app = Router::new().route(
        "/r/{n}",
        get(move |UrlPath(n): UrlPath<u32>| {
            let counter = counter.clone();
            async move {
                if n == 0 {
                    counter.fetch_add(1, Ordering::SeqCst);
                    "arrived".into_response()
                } else {
                    Redirect::to(&format!("/r/{}", n - 1)).into_response()
                }
            }
        }),
    );
    (serve(app).await, reached)
}

#[tokio::test]
async fn five_redirects_are_followed_and_a_sixth_is_refused() {
    let (address, reached) = redirect_chain().await;
    let tool = open();
    let five = run(&tool, json!({"url": format!("http://{address}/r/5")})).await;
    assert_eq!(five.status, ToolStatus::Succeeded, "{five:?}");
    assert!(text(&five).ends_with("\n\narrived"), "{}", text(&five));
    assert_eq!(reached.load(Ordering::SeqCst), 1);

    let six = run(&tool, json!({"url": format!("http://{address}/r/6")})).await;
    let (code, message) = failure(&six);
    assert_eq!(code, ErrorCode::ToolExecutionFailed);
    assert!(message.contains("more than 5 redirects"), "{message}");
    assert!(message.ends_with("/r/0"), "{message}");
    assert_eq!(
        reached.load(Ordering::SeqCst),
        1,
        "the 6th hop was requested"
    );
}

#[tokio::test]
async fn a_redirect_to_an_internal_address_is_refused_before_connecting() {
    let app = Router::new().route(
        "/to",
        get(
            |Query(query): Query<std::collections::HashMap<String, String>>| async move {
                let target = query.get("target").cloned().unwrap_or_default();
                (StatusCode::FOUND, [(header::LOCATION, target)])
            },
        ),
    );
    let address = serve(app).await;
    // Loopback is allowed here, so only the rule on the redirect hop can refuse these.
    for target in [
        "http://169.254.169.254/latest/meta-data/",
        "http://10.0.0.1/",
        "http://[fd00::1]/",
        "http://[::ffff:192.168.0.1]/",
        "http://0xa9fea9fe/",
        "file:///etc/passwd",
    ] {
        let url = format!("http://{address}/to?target={target}");
        let started = Instant::now();
        let result = run(&open(), json!({ "url": url })).await;
        let (code, message) = failure(&result);
        assert_eq!(code, ErrorCode::InvalidRequest, "{target}: {message}");
        assert!(message.contains("redirect 1: refused"), "{message}");
        assert!(started.elapsed() < Duration::from_secs(5), "{target}");
    }
}

#[tokio::test]
async fn loopback_is_refused_by_default_without_reaching_the_server() {
    let hits = Arc::new(AtomicUsize::new(0));
    let counter = hits.clone();
    let app = Router::new().route(
        "/",
        get(move || {
            counter.fetch_add(1, Ordering::SeqCst);
            async { "secret" }
        }),
    );
    let address = serve(app).await;
    let port = address.port();
    let closed = HttpRequest::default();
    for url in [
        format!("http://127.0.0.1:{port}/"),
        format!("http://2130706433:{port}/"),
        format!("http://0177.0.0.1:{port}/"),
        format!("http://0x7f.1:{port}/"),
        format!("http://[::ffff:127.0.0.1]:{port}/"),
        format!("http://[::1]:{port}/"),
        format!("http://localhost:{port}/"),
    ] {
        let (code, message) = failure(&run(&closed, json!({ "url": url })).await);
        assert_eq!(code, ErrorCode::InvalidRequest, "{url}: {message}");
        assert!(message.contains("loopback"), "{message}");
    }
    // The resolver itself refuses: a name that resolves to loopback never connects, even
    // when the URL check is bypassed.
    let client = fetch::client(AddressPolicy::default()).unwrap();
    let error = client
        .get(format!("http://localhost:{port}/"))
        .send()
        .await
        .unwrap_err();
    assert!(ssrf::refusal_in(&error).is_some(), "{error:?}");
    assert_eq!(hits.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn internal_addresses_are_refused_as_urls() {
    let closed = HttpRequest::default();
    for (url, class) in [
        ("http://169.254.169.254/latest/meta-data/", "link-local"),
        ("http://10.0.0.1/", "private"),
        ("http://172.16.0.1/", "private"),
        ("http://192.168.1.1/", "private"),
        ("http://[fe80::1]/", "link-local"),
        ("http://[fc00::1]/", "unique-local"),
        ("http://0.0.0.0/", "unspecified"),
        ("http://224.0.0.1/", "multicast"),
        ("http://255.255.255.255/", "broadcast"),
    ] {
        let (code, message) = failure(&run(&closed, json!({ "url": url })).await);
        assert_eq!(code, ErrorCode::InvalidRequest, "{url}");
        assert!(message.contains(&format!("a {class} address")), "{message}");
    }
}

#[tokio::test]
async fn a_body_over_10_mb_is_aborted_without_waiting_for_its_end() {
    // 11 MB, then the connection stays open: reading to the end would never finish.
    let head = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\n";
    let address = serve_raw(head.to_owned(), 11 * MB).await;
    let result = run(&open(), json!({"url": format!("http://{address}/")})).await;
    let (code, message) = failure(&result);
    assert_eq!(code, ErrorCode::ToolExecutionFailed, "{message}");
    assert!(
        message.contains("cap of 10485760 bytes (10 MB)"),
        "{message}"
    );
    assert!(message.contains("aborted"), "{message}");

    // A declared length over the cap is refused before any of the body is read.
    let head = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: {}\r\n\r\n",
        11 * MB
    );
    let address = serve_raw(head, 0).await;
    let result = run(&open(), json!({"url": format!("http://{address}/")})).await;
    let (code, message) = failure(&result);
    assert_eq!(code, ErrorCode::ToolExecutionFailed);
    assert!(message.contains("declares 11534336 bytes"), "{message}");
}

#[tokio::test]
async fn a_long_body_is_truncated_for_the_model_and_kept_whole_as_an_artifact() {
    let body: String = (0..5000).map(|i| format!("line {i:05}\n")).collect(); // 55 000 bytes
    let served = body.clone();
    let app = Router::new()
        .route("/long", get(move || async move { served }))
        .route("/short", get(|| async { "x".repeat(10 * 1024) }));
    let address = serve(app).await;
    let mut request = http_request(json!({"url": format!("http://{address}/long")}));
    request.limits.max_output_bytes = Some(1000);
    let result = run_request(&open(), request).await;
    assert_eq!(result.status, ToolStatus::Succeeded, "{result:?}");
    let head = "HTTP 200 OK\nContent-Type: text/plain; charset=utf-8\nContent-Length: 55000\n\n";
    assert_eq!(
        text(&result),
        format!("{head}{}", output::truncate(&body, 1000))
    );
    // 54 000 bytes, and the few of a line number the cuts do not split.
    assert!(text(&result).contains("[... truncated 5400"));
    let [artifact]: &[ArtifactData; 1] = result.artifacts.as_slice().try_into().unwrap();
    assert_eq!(artifact.artifact_type, "tool_output");
    assert_eq!(artifact.artifact_name, "response.txt");
    assert_eq!(decoded(artifact), format!("{head}{body}"));

    // Exactly 10 KB is not "over 10 KB".
    let short = run(&open(), json!({"url": format!("http://{address}/short")})).await;
    assert_eq!(short.status, ToolStatus::Succeeded, "{short:?}");
    assert!(short.artifacts.is_empty());
}

#[tokio::test]
async fn binary_bodies_are_described_not_dumped() {
    let png: Vec<u8> = (0..20_000u32).map(|i| (i % 256) as u8).collect();
    let served = png.clone();
    let app = Router::new()
        .route(
            "/image",
            get(move || async move { ([(header::CONTENT_TYPE, "image/png")], served) }),
        )
        .route(
            "/small",
            get(|| async { Response::new(axum::body::Body::from(vec![0xff, 0xfe, 0x00])) }),
        );
    let address = serve(app).await;
    let image = run(&open(), json!({"url": format!("http://{address}/image")})).await;
    assert_eq!(
        text(&image),
        "HTTP 200 OK\nContent-Type: image/png\nContent-Length: 20000\n\n\
         [binary response body, 20000 bytes, not shown; the full body is attached as an artifact]"
    );
    let artifact = &image.artifacts[0];
    assert_eq!(
        (
            artifact.artifact_name.as_str(),
            artifact.content_type.as_str()
        ),
        ("response.bin", "image/png")
    );
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(&artifact.content_base64)
        .unwrap();
    assert_eq!(bytes, png);

    let small = run(&open(), json!({"url": format!("http://{address}/small")})).await;
    assert_eq!(
        text(&small),
        "HTTP 200 OK\nContent-Type: (none)\nContent-Length: 3\n\n[binary response body, 3 bytes, not shown]"
    );
    assert!(small.artifacts.is_empty());
}

#[tokio::test]
async fn a_server_that_never_answers_times_out() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((socket, _)) = listener.accept().await {
            held.push(socket);
        }
    });
    let mut request = http_request(json!({"url": format!("http://{address}/"), "timeout": 5}));
    request.limits.timeout_ms = Some(300);
    let started = Instant::now();
    let result = run_request(&open(), request).await;
    let (code, message) = failure(&result);
    assert_eq!(code, ErrorCode::ToolExecutionTimeout);
    assert_eq!(message, "HTTP request timed out after 0.3 seconds");
    assert!(started.elapsed() < Duration::from_secs(3));
}

#[tokio::test]
async fn bad_arguments_and_other_schemes_are_invalid_requests() {
    let tool = open();
    let cases = [
        (json!({"url": "ftp://example.com/f"}), "only http and https"),
        (json!({"url": "file:///etc/passwd"}), "only http and https"),
        (
            json!({"url": "gopher://example.com/"}),
            "only http and https",
        ),
        (json!({"url": "not a url"}), "is not a valid URL"),
        (json!({}), "missing required argument \"url\""),
        (
            json!({"url": "http://example.com/", "verb": "GET"}),
            "unknown argument \"verb\"",
        ),
        (
            json!({"url": "http://example.com/", "method": "TRACE"}),
            "unsupported method \"TRACE\"",
        ),
        (
            json!({"url": "http://example.com/", "method": "CONNECT"}),
            "unsupported method",
        ),
        (
            json!({"url": "http://example.com/", "headers": {"a": 1}}),
            "header \"a\" must have a string value",
        ),
        (
            json!({"url": "http://example.com/", "headers": ["a"]}),
            "\"headers\" must be an object",
        ),
        (
            json!({"url": "http://example.com/", "headers": {"bad name": "x"}}),
            "not a valid header name",
        ),
        (
            json!({"url": "http://example.com/", "headers": {"Host": "internal"}}),
            "set by the client",
        ),
        (
            json!({"url": "http://example.com/", "headers": {"x": "a\nb"}}),
            "invalid value",
        ),
        (
            json!({"url": "http://example.com/", "timeout": 0}),
            "between 1 and 600",
        ),
        (
            json!({"url": "http://example.com/", "body": 5}),
            "\"body\" must be a string",
        ),
    ];
    for (args, expected) in cases {
        let (code, message) = failure(&run(&tool, args.clone()).await);
        assert_eq!(code, ErrorCode::InvalidRequest, "{args}");
        assert!(message.contains(expected), "{args}: {message}");
    }
}

#[test]
fn pure_parts_timeouts_text_detection_and_definition() {
    assert_eq!(effective_timeout(None, None), Duration::from_secs(30));
    assert_eq!(
        effective_timeout(Some(5), Some(200)),
        Duration::from_millis(200)
    );
    assert_eq!(
        effective_timeout(Some(5), Some(60_000)),
        Duration::from_secs(5)
    );
    assert_eq!(seconds(Duration::from_millis(250)), "0.25");
    assert_eq!(body_text(b"\xEF\xBB\xBFhi", None).as_deref(), Some("hi"));
    assert_eq!(body_text(b"caf\xe9", None), None);
    assert_eq!(
        body_text(b"caf\xe9", Some("text/html; charset=ISO-8859-1")).as_deref(),
        Some("café")
    );
    assert_eq!(body_text(b"a\0b", Some("text/plain")), None);
    let definition = HttpRequest::default().definition();
    assert_eq!(definition.tool_name, "HttpRequest");
    assert_eq!(
        definition.description,
        "Make an HTTP request and return the response"
    );
    let schema = definition.input_schema;
    assert_eq!(schema["required"], json!(["url"]));
    assert_eq!(schema["properties"]["timeout"]["default"], 30);
    assert_eq!(schema["properties"]["headers"]["type"], "object");
}

#[tokio::test]
async fn the_router_offers_loopback_only_when_its_options_allow_it() {
    use crate::router::{LocalToolRouter, ToolOptions};
    use agent_protocol::ToolRouter as _;
    let address = serve(Router::new().route("/", get(|| async { "hello" }))).await;
    let call = || http_request(json!({"url": format!("http://{address}/")}));
    let open = LocalToolRouter::with_options(ToolOptions {
        allow_loopback_http: true,
        ..ToolOptions::default()
    });
    let reached = open.execute(call()).await;
    assert_eq!(reached.status, ToolStatus::Succeeded, "{reached:?}");
    assert!(text(&reached).ends_with("\n\nhello"));
    let (code, message) = failure(&LocalToolRouter::new().execute(call()).await);
    assert_eq!(code, ErrorCode::InvalidRequest);
    assert!(message.contains("loopback"), "{message}");
}
