//! Steps for the network, execution and search tools of INTEROP.md §11 — FetchUrl
//! (Network.Http), ExecuteCode (Code.Execute) and WebSearch (Search.Web): the grants the
//! real Policy Service sends for them, the kit's search endpoint (the web server fake's
//! `/search`, named to the runtime through its search-endpoint knob) and what the model
//! reads back.

use agent_mocks::WebFake;
use anyhow::Context;
use cucumber::{given, then};
use serde_json::json;

use crate::steps::support::policy::grant;
use crate::steps::support::task::{first_of_type, optional_code, this_task_events};
use crate::steps::support::{StepResult, show, str_at};
use crate::steps::task::wait_task_end;
use crate::steps::tools::succeeded_result;
use crate::world::ConformanceWorld;

/// The knob that names a search endpoint to the runtime (the reference runtime's variable).
const SEARCH_KNOB: &str = "AGENT_RUNTIME_WEB_SEARCH_URL";

/// The real Policy Service's default entry (INTEROP.md §5): Python only, 30 s, no network.
#[given("the policy grants Code.Execute as the real Policy Service does")]
async fn code_as_served(world: &mut ConformanceWorld) -> StepResult {
    grant(
        world,
        "Code.Execute",
        json!({"allowedLanguages": ["python"], "maxExecutionTimeSeconds": 30, "allowCodeNetwork": false}),
    )
    .await?;
    Ok(())
}

/// The real default entry with one scope field changed, given as JSON (`allowCodeNetwork`
/// `true`, a path list): the scenario then turns on that field alone.
#[given(
    expr = "the policy grants Code.Execute as the real Policy Service does, with {word} set to {string}"
)]
async fn code_as_served_but(
    world: &mut ConformanceWorld,
    field: String,
    value: String,
) -> StepResult {
    let value: serde_json::Value = serde_json::from_str(&value)
        .with_context(|| format!("the value of {field} is not JSON: {value}"))?;
    let mut scope = json!({"allowedLanguages": ["python"], "maxExecutionTimeSeconds": 30, "allowCodeNetwork": false});
    scope[field.as_str()] = value;
    grant(world, "Code.Execute", scope).await?;
    Ok(())
}

/// The ExecuteCode scenarios that run Python need an interpreter on the runtime's machine;
/// without one (the manifest says so) they are not applicable, not failed.
#[given("the runtime's machine has a Python interpreter")]
async fn python_on_the_machine(world: &mut ConformanceWorld) -> StepResult {
    world.require_python()?;
    Ok(())
}

#[given(expr = "the policy grants Code.Execute for {string} only")]
async fn code_for_language(world: &mut ConformanceWorld, language: String) -> StepResult {
    grant(
        world,
        "Code.Execute",
        json!({"allowedLanguages": [language], "allowCodeNetwork": false}),
    )
    .await?;
    Ok(())
}

#[given(expr = "the policy grants Code.Execute with at most {int} second(s) of execution")]
async fn code_with_time(world: &mut ConformanceWorld, seconds: u64) -> StepResult {
    grant(
        world,
        "Code.Execute",
        json!({"allowedLanguages": ["python"], "maxExecutionTimeSeconds": seconds, "allowCodeNetwork": false}),
    )
    .await?;
    Ok(())
}

/// Starts the web server fake (if the scenario has none yet) and names its `/search` to the
/// runtime as its search endpoint.
#[given("the runtime is configured with the kit's search endpoint")]
async fn search_endpoint(world: &mut ConformanceWorld) -> StepResult {
    if world.web.is_none() {
        world.web = Some(WebFake::start().await?);
    }
    let url = world
        .web
        .as_ref()
        .map(|web| format!("{}/search", web.url()))
        .unwrap_or_default();
    world.set_runtime_env(SEARCH_KNOB, &url)?;
    Ok(())
}

/// The page of the web fake as a reader sees it: the heading, the link and the list items
/// as Markdown, no markup, no script and no style.
#[then("the tool call result is the web page as Markdown")]
async fn page_as_markdown(world: &mut ConformanceWorld) -> StepResult {
    let result = succeeded_result(world).await?;
    for expected in [
        "# Release notes",
        "[the guide](https://example.com/docs)",
        "faster builds",
        "safer defaults",
    ] {
        check!(
            result.contains(expected),
            "the page as Markdown must contain {expected:?}: {result:?}"
        );
    }
    for markup in ["<h1", "<a ", "<li", "<p>", "document.write", "color: red"] {
        check!(
            !result.contains(markup),
            "the page as Markdown must not contain {markup:?} (markup, script or style): {result:?}"
        );
    }
    Ok(())
}

/// A refusal of the redirect hop: the call did not succeed, with a code a refusal carries
/// and a reason the model can read.
#[then("the tool call is refused with a readable reason")]
async fn refused_readably(world: &mut ConformanceWorld) -> StepResult {
    wait_task_end(world).await?;
    let events = this_task_events(world)?;
    let done = first_of_type(&events, "tool_completed")?;
    let payload = done.payload();
    let status = str_at(payload, &["status"]).unwrap_or("");
    let code = str_at(payload, &["errorCode"]).unwrap_or("INVALID_REQUEST");
    let reason = str_at(payload, &["error"]).unwrap_or("");
    check!(
        matches!(status, "failed" | "denied")
            && matches!(
                code,
                "INVALID_REQUEST" | "CAPABILITY_DENIED" | "PERMISSION_DENIED"
            )
            && !reason.trim().is_empty(),
        "the call must be refused (status failed or denied; INVALID_REQUEST, CAPABILITY_DENIED or PERMISSION_DENIED; a reason): {}",
        show(payload)
    );
    Ok(())
}

/// The first `count` results of the kit's search endpoint for `query`, numbered, each with
/// its title, URL and snippet, and none after them.
#[then(expr = "the tool call result lists the first {int} search results for {string}")]
async fn lists_results(world: &mut ConformanceWorld, count: usize, query: String) -> StepResult {
    let result = succeeded_result(world).await?;
    for n in 1..=count {
        for expected in [
            format!("Result {n} for {query}"),
            format!("https://example.com/result/{n}"),
            format!("Snippet {n} about {query}."),
        ] {
            check!(
                result.contains(&expected),
                "result {n} must be listed with its title, URL and snippet ({expected:?}): {result:?}"
            );
        }
    }
    let next = count + 1;
    check!(
        !result.contains(&format!("https://example.com/result/{next}")),
        "only {count} results may be listed, result {next} is too: {result:?}"
    );
    Ok(())
}

#[then(expr = "the search endpoint was asked for {string}")]
async fn endpoint_asked(world: &mut ConformanceWorld, query: String) -> StepResult {
    wait_task_end(world).await?;
    let requests = world
        .web
        .as_ref()
        .map(WebFake::requests)
        .unwrap_or_default();
    let asked: Vec<String> = requests
        .iter()
        .filter(|request| request.path == "/search")
        .filter_map(|request| {
            request
                .query
                .as_deref()
                .unwrap_or_default()
                .split('&')
                .find_map(|pair| pair.strip_prefix("q="))
                .map(form_decoded)
        })
        .collect();
    check!(
        asked.contains(&query),
        "the search endpoint must have been asked for {query:?}; it was asked {asked:?}"
    );
    Ok(())
}

/// A form-encoded query value as text (`+` is a space, `%XX` a byte).
fn form_decoded(value: &str) -> String {
    let bytes = value.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut index = 0;
    while index < bytes.len() {
        match bytes[index] {
            b'+' => out.push(b' '),
            b'%' => {
                let hex = value.get(index + 1..index + 3).unwrap_or_default();
                match u8::from_str_radix(hex, 16) {
                    Ok(byte) => {
                        out.push(byte);
                        index += 2;
                    }
                    Err(_) => out.push(b'%'),
                }
            }
            other => out.push(other),
        }
        index += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Every tool call of the task failed with `code` (when the runtime sends a code: it is
/// optional beside `status`, INTEROP.md §1).
#[then(expr = "every tool call fails with errorCode {string}")]
async fn every_call_fails(world: &mut ConformanceWorld, code: String) -> StepResult {
    wait_task_end(world).await?;
    let events = this_task_events(world)?;
    let completed: Vec<_> = events
        .iter()
        .filter(|event| event.event_type() == "tool_completed")
        .collect();
    check!(!completed.is_empty(), "no tool_completed in this task");
    for event in completed {
        let payload = event.payload();
        check!(
            str_at(payload, &["status"]) == Some("failed")
                && optional_code(payload, "errorCode", &code),
            "every tool call must fail with {code}: {}",
            show(payload)
        );
    }
    Ok(())
}
