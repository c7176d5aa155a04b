//! Steps for the success side of HttpRequest (local-tool-runtime.md §4.5, §7.1, §7.2): a web
//! server fake on loopback (`${WEB}` in arguments) that records what it received. A runtime
//! reaches it only in the test mode that lets HttpRequest call loopback (the reference
//! runtime's `AGENT_RUNTIME_ALLOW_LOOPBACK_HTTP`, conformance/README.md).

use agent_mocks::{
    RecordedRequest, WebFake,
    policy::{capability_entry, set_capability},
};
use anyhow::Context;
use cucumber::{given, then};
use serde_json::json;

use crate::steps::support::policy::edit_policy;
use crate::steps::support::task::{first_of_type, this_task_events};
use crate::steps::support::{StepResult, show, str_at};
use crate::steps::task::wait_task_end;
use crate::steps::tools::shell::check_cut_80_20;
use crate::steps::tools::succeeded_result;
use crate::world::ConformanceWorld;

/// Refused by the tool's URL validation (INVALID_REQUEST) or by the policy enforcer
/// (CAPABILITY_DENIED): either way never attempted; the message is not judged.
#[then("the HttpRequest call is refused")]
async fn http_refused(world: &mut ConformanceWorld) -> StepResult {
    wait_task_end(world).await?;
    let events = this_task_events(world)?;
    let done = first_of_type(&events, "tool_completed")?;
    let payload = done.payload();
    let status = str_at(payload, &["status"]).unwrap_or("");
    // errorCode is optional (INTEROP.md §1 lists status and error); when sent it must say why.
    let code = str_at(payload, &["errorCode"]).unwrap_or("INVALID_REQUEST");
    check!(
        matches!(status, "failed" | "denied")
            && matches!(code, "INVALID_REQUEST" | "CAPABILITY_DENIED"),
        "a request to a local address must be refused before it is sent (status failed or denied, errorCode INVALID_REQUEST or CAPABILITY_DENIED): {}",
        show(payload)
    );
    Ok(())
}

#[given("a web server on loopback")]
async fn web_server(world: &mut ConformanceWorld) -> StepResult {
    world.web = Some(WebFake::start().await?);
    Ok(())
}

#[given(expr = "the policy grants Network.Http with at most {int} output bytes")]
async fn http_output_limit(world: &mut ConformanceWorld, bytes: u64) -> StepResult {
    edit_policy(world, |bundle| {
        set_capability(
            bundle,
            capability_entry("Network.Http", json!({"maxOutputBytes": bytes})),
        );
    })
    .await?;
    Ok(())
}

/// What the web server received, once the task has ended (so no request is still coming).
async fn received(world: &mut ConformanceWorld) -> anyhow::Result<Vec<RecordedRequest>> {
    wait_task_end(world).await?;
    Ok(world
        .web
        .as_ref()
        .context("no web server was started in this scenario (\"a web server on loopback\")")?
        .requests())
}

fn list(requests: &[RecordedRequest]) -> String {
    let lines: Vec<String> = requests
        .iter()
        .map(|request| format!("{} {}", request.method, request.path))
        .collect();
    format!("[{}]", lines.join(", "))
}

#[then(
    expr = "the web server received a {word} request for {string} with the header {string} set to {string} and the body {string}"
)]
async fn received_request(
    world: &mut ConformanceWorld,
    method: String,
    path: String,
    header: String,
    value: String,
    body: String,
) -> StepResult {
    let requests = received(world).await?;
    let request = requests
        .iter()
        .find(|request| request.path == path)
        .with_context(|| {
            format!(
                "the web server received no request for {path}: {}",
                list(&requests)
            )
        })?;
    check!(
        request.method == method,
        "the request for {path} must use {method}, it used {}",
        request.method
    );
    check!(
        request.header(&header) == Some(value.as_str()),
        "the request for {path} must carry {header}: {value:?}; its headers: {:?}",
        request.headers
    );
    check!(
        request.body_text() == body,
        "the request for {path} must carry the body {body:?}, it carried {:?}",
        request.body_text()
    );
    Ok(())
}

#[then(expr = "the web server received {int} request(s) for paths under {string}")]
async fn received_count(world: &mut ConformanceWorld, count: usize, prefix: String) -> StepResult {
    let requests = received(world).await?;
    let under = requests
        .iter()
        .filter(|request| request.path.starts_with(&prefix))
        .count();
    check!(
        under == count,
        "the web server must have received {count} request(s) under {prefix}, it received {under}: {}",
        list(&requests)
    );
    Ok(())
}

#[then(expr = "the web server received no request for {string}")]
async fn received_none(world: &mut ConformanceWorld, path: String) -> StepResult {
    let requests = received(world).await?;
    check!(
        requests.iter().all(|request| request.path != path),
        "the web server must not have been asked for {path}: {}",
        list(&requests)
    );
    Ok(())
}

#[then(
    expr = "the response body is cut to {int} bytes: its first 80% and its last 20% around the truncation marker"
)]
async fn body_cut(world: &mut ConformanceWorld, budget: usize) -> StepResult {
    let result = succeeded_result(world).await?;
    // The three header lines of §4.5 are never cut; the body follows the blank line.
    let (head, body) = result
        .split_once("\n\n")
        .with_context(|| format!("no blank line before the body in {result:?}"))?;
    check!(
        head.starts_with("HTTP 200") && head.lines().count() == 3,
        "the result must start with the three header lines of §4.5: {head:?}"
    );
    check_cut_80_20("response body", body, budget)
}
