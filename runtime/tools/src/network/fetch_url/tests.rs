//! FetchUrl against real HTTP servers on loopback: pages as Markdown, refusals on redirect
//! hops, limits and the hostile page that nests without end.

use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use agent_protocol::{ToolStatus, UrlCheck};
use axum::Router;
use axum::extract::Query;
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use axum::routing::get;
use tokio::net::TcpListener;

use super::*;
use crate::platform::ssrf::AddressPolicy;
use crate::testing::{assert_failed, decoded};

fn open() -> FetchUrl {
    FetchUrl::new(HttpRequest::new(AddressPolicy {
        allow_loopback: true,
    }))
}

fn fetch_request(args: serde_json::Value) -> ToolRequest {
    let mut request = crate::testing::request("FetchUrl", Path::new("/"), args);
    request.limits.timeout_ms = Some(20_000);
    request
}

async fn run_request(tool: &FetchUrl, request: ToolRequest) -> ToolResult {
    tokio::time::timeout(Duration::from_secs(30), tool.run(&request))
        .await
        .expect("the call hung")
}

async fn run(args: serde_json::Value) -> ToolResult {
    run_request(&open(), fetch_request(args)).await
}

fn text(result: &ToolResult) -> &str {
    assert_eq!(result.status, ToolStatus::Succeeded, "{result:?}");
    result.output_text.as_deref().unwrap_or_default()
}

async fn serve(app: Router) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    address
}

fn html(body: String) -> impl IntoResponse {
    ([(header::CONTENT_TYPE, "text/html; charset=utf-8")], body)
}

const PAGE: &str = "<!doctype html><html><head><title>T</title><style>p{color:red}</style></head>\
    <body><h1>Release notes</h1><script>alert('x')</script>\
    <p>See <a href=\"https://example.com/docs\">the docs</a>.</p>\
    <ul><li>fast</li><li>safe</li></ul></body></html>";

async fn site() -> SocketAddr {
    let app = Router::new()
        .route("/page", get(|| async { html(PAGE.to_owned()) }))
        .route("/plain", get(|| async { "just text\n" }))
        .route(
            "/missing",
            get(|| async { (StatusCode::NOT_FOUND, "gone") }),
        )
        .route(
            "/image",
            get(|| async { ([(header::CONTENT_TYPE, "image/png")], vec![0u8, 1, 2, 3]) }),
        )
        .route(
            "/long",
            get(|| async { html(format!("<p>{}</p><p>THE END</p>", "word ".repeat(20_000))) }),
        )
        .route(
            "/nested",
            get(|| async {
                html(format!(
                    "{}deep{}",
                    "<div>".repeat(200_000),
                    "</div>".repeat(200_000)
                ))
            }),
        )
        .route(
            "/to",
            get(
                |Query(query): Query<std::collections::HashMap<String, String>>| async move {
                    let target = query.get("target").cloned().unwrap_or_default();
                    (StatusCode::FOUND, [(header::LOCATION, target)])
                },
            ),
        )
        .route("/never", get(std::future::pending::<String>));
    serve(app).await
}

#[tokio::test]
async fn an_html_page_comes_back_as_markdown_without_scripts_or_styles() {
    let address = site().await;
    let result = run(json!({"url": format!("http://{address}/page")})).await;
    let shown = text(&result);
    assert!(
        shown.starts_with(&format!(
            "URL: http://{address}/page\nContent-Type: text/html; charset=utf-8\n\n"
        )),
        "{shown}"
    );
    assert!(shown.contains("# Release notes"), "{shown}");
    assert!(
        shown.contains("[the docs](https://example.com/docs)"),
        "{shown}"
    );
    assert!(
        shown.contains("*   fast") || shown.contains("- fast") || shown.contains("* fast"),
        "{shown}"
    );
    assert!(!shown.contains("alert"), "{shown}");
    assert!(!shown.contains("color:red"), "{shown}");
    assert!(!shown.contains("<h1>"), "{shown}");
    assert!(result.artifacts.is_empty());
}

#[tokio::test]
async fn plain_text_is_returned_as_it_is_and_redirects_name_the_last_hop() {
    let address = site().await;
    let target = format!("http://{address}/plain");
    let result = run(json!({"url": format!("http://{address}/to?target={target}")})).await;
    assert_eq!(
        text(&result),
        format!("URL: {target}\nContent-Type: text/plain; charset=utf-8\n\njust text\n")
    );
}

#[tokio::test]
async fn error_statuses_and_binary_bodies_are_readable_failures() {
    let address = site().await;
    let missing = run(json!({"url": format!("http://{address}/missing")})).await;
    assert_failed(
        &missing,
        ErrorCode::ToolExecutionFailed,
        "HTTP 404 Not Found",
    );
    let image = run(json!({"url": format!("http://{address}/image")})).await;
    assert_failed(
        &image,
        ErrorCode::ToolExecutionFailed,
        "not a text page (image/png, 4 bytes)",
    );
}

#[tokio::test]
async fn a_redirect_to_an_internal_address_or_a_refused_domain_is_not_followed() {
    let address = site().await;
    for target in [
        "http://169.254.169.254/latest/meta-data/",
        "http://10.0.0.1/",
        "http://[fd00::1]/",
    ] {
        let url = format!("http://{address}/to?target={target}");
        let result = run(json!({ "url": url })).await;
        let error = result.error.clone().unwrap();
        assert_eq!(
            error.code,
            ErrorCode::InvalidRequest,
            "{target}: {}",
            error.message
        );
        assert!(
            error.message.starts_with("FetchUrl: redirect 1: refused"),
            "{}",
            error.message
        );
    }
    // The host's domain rules judge every hop: here they admit 127.0.0.1 only.
    let hits = Arc::new(AtomicUsize::new(0));
    let counter = hits.clone();
    let landing = serve(Router::new().route(
        "/secret",
        get(move || {
            counter.fetch_add(1, Ordering::SeqCst);
            async { "secret" }
        }),
    ))
    .await;
    let mut request = fetch_request(json!({
        "url": format!("http://{address}/to?target=http://localhost:{}/secret", landing.port())
    }));
    request.limits.url_check = Some(UrlCheck::new(|url: &str| {
        if url.contains("://127.0.0.1") {
            Ok(())
        } else {
            Err("Domain not allowed: localhost".to_owned())
        }
    }));
    let result = run_request(&open(), request).await;
    assert_failed(
        &result,
        ErrorCode::CapabilityDenied,
        "redirect 1: http://localhost",
    );
    assert_eq!(
        hits.load(Ordering::SeqCst),
        0,
        "the refused hop was requested"
    );
}

#[tokio::test]
async fn a_long_page_is_cut_for_the_model_and_kept_whole_as_an_artifact() {
    let address = site().await;
    let mut request = fetch_request(json!({"url": format!("http://{address}/long")}));
    request.limits.max_output_bytes = Some(2000);
    let result = run_request(&open(), request).await;
    let shown = text(&result);
    assert!(shown.contains("[... truncated"), "{shown}");
    assert!(shown.len() < 2300, "{}", shown.len());
    let [artifact] = &result.artifacts[..] else {
        panic!("{:?}", result.artifacts)
    };
    assert_eq!(artifact.artifact_type, "tool_output");
    assert!(decoded(artifact).contains("THE END"));
}

#[tokio::test]
async fn a_page_nested_two_hundred_thousand_deep_is_shown_as_text_at_once() {
    let address = site().await;
    let started = std::time::Instant::now();
    let result = run(json!({"url": format!("http://{address}/nested")})).await;
    assert!(text(&result).ends_with("\n\ndeep\n"), "{result:?}");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn depth_is_estimated_from_the_tags_and_markup_is_stripped_from_deep_pages() {
    let nested = |depth: usize| format!("{}x{}", "<div>".repeat(depth), "</div>".repeat(depth));
    assert!(!nests_deeper_than(&nested(MAX_NESTING), MAX_NESTING));
    assert!(nests_deeper_than(&nested(MAX_NESTING + 1), MAX_NESTING));
    // Flat and self-closing elements, end tags and comments add no depth.
    let flat = "<p>a<br><img src=x/><li>b<!-- c --><DIV/></div>".repeat(10_000);
    assert!(!nests_deeper_than(&flat, 3));
    assert_eq!(
        plain_text(
            "<div><h1>Title</h1><SCRIPT>evil()</script>\n\n\n<p>body</p><style>p{}</STYLE></div>"
        ),
        "Title\n\nbody\n"
    );
}

#[tokio::test]
async fn a_server_that_never_answers_times_out_and_bad_arguments_are_invalid() {
    let address = site().await;
    let started = std::time::Instant::now();
    let result = run(json!({"url": format!("http://{address}/never"), "timeout_seconds": 1})).await;
    assert_failed(
        &result,
        ErrorCode::ToolExecutionTimeout,
        "timed out after 1 seconds",
    );
    assert!(started.elapsed() < Duration::from_secs(5));
    for (args, says) in [
        (
            json!({"url": "http://example.com/", "timeout_seconds": 121}),
            "timeout_seconds",
        ),
        (json!({"url": "ftp://example.com/a"}), "only http and https"),
        (json!({"url": "not a url"}), "not a valid URL"),
        (json!({}), "url"),
        (
            json!({"url": "http://example.com/", "method": "POST"}),
            "method",
        ),
    ] {
        assert_failed(&run(args).await, ErrorCode::InvalidRequest, says);
    }
}
