//! WebSearch against a search endpoint on loopback speaking SearxNG's JSON API.

use std::net::SocketAddr;
use std::path::Path;
use std::sync::{Arc, Mutex};

use agent_protocol::ToolStatus;
use axum::Router;
use axum::extract::Query;
use axum::http::StatusCode;
use axum::response::IntoResponse;
use axum::routing::get;
use serde_json::Value;
use tokio::net::TcpListener;

use super::*;
use crate::testing::assert_failed;

type Seen = Arc<Mutex<Vec<std::collections::HashMap<String, String>>>>;

/// `/search` answers three results, or none for `q=nothing`; `/broken` answers 500,
/// `/html` a page, `/slow` never.
async fn endpoint() -> (SocketAddr, Seen) {
    let seen: Seen = Arc::default();
    let record = seen.clone();
    let app = Router::new()
        .route(
            "/search",
            get(
                move |Query(query): Query<std::collections::HashMap<String, String>>| {
                    let nothing = query.get("q").map(String::as_str) == Some("nothing");
                    record.lock().unwrap().push(query);
                    async move {
                        let results = if nothing {
                            json!([])
                        } else {
                            json!([
                                {"title": "Rust", "url": "https://www.rust-lang.org/", "content": "A language\n   empowering everyone.", "engine": "x"},
                                {"title": "Docs", "url": "https://doc.rust-lang.org/", "snippet": "The book."},
                                {"title": "Crates", "url": "https://crates.io/", "content": "x".repeat(3000)}
                            ])
                        };
                        axum::Json(json!({"query": "q", "results": results}))
                    }
                },
            ),
        )
        .route(
            "/broken",
            get(|| async { (StatusCode::INTERNAL_SERVER_ERROR, "engine down").into_response() }),
        )
        .route("/html", get(|| async { "<html>not json</html>" }))
        .route("/slow", get(std::future::pending::<String>));
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    (address, seen)
}

fn request(args: Value) -> ToolRequest {
    let mut request = crate::testing::request("WebSearch", Path::new("/"), args);
    request.limits.timeout_ms = Some(10_000);
    request
}

async fn run(endpoint: String, request: ToolRequest) -> ToolResult {
    let tool = WebSearch::new(&endpoint).unwrap();
    tokio::time::timeout(Duration::from_secs(20), tool.run(&request))
        .await
        .expect("the call hung")
}

#[tokio::test]
async fn results_are_listed_numbered_with_url_and_snippet() {
    let (address, seen) = endpoint().await;
    let result = run(
        format!("http://{address}/search?lang=en"),
        request(json!({"query": "rust language", "max_results": 2})),
    )
    .await;
    assert_eq!(result.status, ToolStatus::Succeeded, "{result:?}");
    assert_eq!(
        result.output_text.as_deref().unwrap(),
        "1. Rust\n   https://www.rust-lang.org/\n   A language empowering everyone.\n\n2. Docs\n   https://doc.rust-lang.org/\n   The book.\n"
    );
    let asked = seen.lock().unwrap().clone();
    assert_eq!(asked.len(), 1);
    assert_eq!(asked[0]["q"], "rust language");
    assert_eq!(asked[0]["format"], "json");
    assert_eq!(asked[0]["lang"], "en", "the endpoint's own query is kept");
}

#[tokio::test]
async fn five_results_by_default_snippets_bounded_and_none_said_so() {
    let (address, _) = endpoint().await;
    let url = format!("http://{address}/search");
    let result = run(url.clone(), request(json!({"query": "rust"}))).await;
    let text = result.output_text.unwrap();
    assert!(text.contains("3. Crates"), "{text}");
    let longest = text.lines().map(str::len).max().unwrap();
    assert!(longest <= MAX_SNIPPET_BYTES + 8, "{longest}");
    let none = run(url, request(json!({"query": "nothing"}))).await;
    assert_eq!(
        none.output_text.as_deref(),
        Some("No results for \"nothing\".\n")
    );
}

#[tokio::test]
async fn a_failing_endpoint_is_a_readable_failure_and_a_silent_one_times_out() {
    let (address, _) = endpoint().await;
    let query = || request(json!({"query": "rust"}));
    let broken = run(format!("http://{address}/broken"), query()).await;
    assert_failed(
        &broken,
        ErrorCode::ToolExecutionFailed,
        "answered HTTP 500: engine down",
    );
    let html = run(format!("http://{address}/html"), query()).await;
    assert_failed(
        &html,
        ErrorCode::ToolExecutionFailed,
        "not a JSON object with a results list",
    );
    let down = run("http://127.0.0.1:9/search".to_owned(), query()).await;
    assert_failed(
        &down,
        ErrorCode::ToolExecutionFailed,
        "could not be reached",
    );
    let mut slow = query();
    slow.limits.timeout_ms = Some(300);
    let slow = run(format!("http://{address}/slow"), slow).await;
    assert_failed(
        &slow,
        ErrorCode::ToolExecutionTimeout,
        "timed out after 0.3 seconds",
    );
}

#[tokio::test]
async fn bad_arguments_and_endpoints_are_refused() {
    for (args, says) in [
        (json!({}), "query"),
        (json!({"query": "  "}), "the query is empty"),
        (json!({"query": "x", "max_results": 11}), "max_results"),
        (json!({"query": "x", "max_results": 0}), "max_results"),
        (json!({"query": "x", "page": 2}), "page"),
    ] {
        let result = run("http://127.0.0.1:9/".to_owned(), request(args)).await;
        assert_failed(&result, ErrorCode::InvalidRequest, says);
    }
    assert!(WebSearch::new("ftp://search.example/").is_err());
    assert!(WebSearch::new("not a url").is_err());
}

#[test]
fn the_router_offers_web_search_only_with_an_endpoint() {
    use agent_protocol::ToolRouter as _;
    let names = |options: crate::ToolOptions| -> Vec<String> {
        crate::LocalToolRouter::with_options(options)
            .available_tools()
            .into_iter()
            .map(|tool| tool.tool_name)
            .collect()
    };
    assert!(!names(crate::ToolOptions::default()).contains(&"WebSearch".to_owned()));
    let configured = crate::ToolOptions {
        web_search_url: Some("https://search.example/search".to_owned()),
        ..Default::default()
    };
    assert!(configured.validate().is_ok());
    assert!(names(configured).contains(&"WebSearch".to_owned()));
    let bad = crate::ToolOptions {
        web_search_url: Some("search.example".to_owned()),
        ..Default::default()
    };
    assert!(bad.validate().unwrap_err().contains("not a valid URL"));
}
