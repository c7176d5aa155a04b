//! Steps of the coding file tools (INTEROP.md §11) that the file tools' steps do not already
//! give: what a tool made in the workspace besides files, and the images ViewImage (and
//! ExecuteCode) show the model.

use anyhow::Context;
use base64::Engine;
use cucumber::{given, then};
use serde_json::Value;

use crate::steps::support::model::{request_messages, task_requests};
use crate::steps::support::{StepResult, show, str_at};
use crate::steps::task::wait_task_end;
use crate::steps::tools::call_id;
use crate::world::ConformanceWorld;

/// The knob that tells the runtime its gateway takes `image_url` content parts (the
/// reference runtime's variable; the real gateway takes only string content, INTEROP.md §2).
const IMAGE_PARTS_KNOB: &str = "AGENT_RUNTIME_LLM_IMAGE_PARTS";

#[then(expr = "the workspace folder {string} now exists")]
async fn folder_now_exists(world: &mut ConformanceWorld, name: String) -> StepResult {
    wait_task_end(world).await?;
    let path = world.dirs()?.workspace.join(&name);
    check!(
        path.is_dir(),
        "the workspace folder {name} should have been created: {} is not a folder",
        path.display()
    );
    Ok(())
}

#[given("the gateway takes image parts")]
async fn gateway_takes_images(world: &mut ConformanceWorld) -> StepResult {
    world.set_runtime_env(IMAGE_PARTS_KNOB, "true")?;
    Ok(())
}

/// The `image_url` parts of the tool message answering the first call in the model request
/// after it.
async fn image_parts(world: &mut ConformanceWorld) -> anyhow::Result<Vec<String>> {
    wait_task_end(world).await?;
    let requests = task_requests(world).await?;
    let next = requests.get(1).with_context(|| {
        format!(
            "the model was not asked again after the call ({} request(s))",
            requests.len()
        )
    })?;
    let call = call_id(1);
    let tool = request_messages(next)?
        .iter()
        .find(|m| {
            str_at(m, &["role"]) == Some("tool") && str_at(m, &["tool_call_id"]) == Some(&call)
        })
        .with_context(|| format!("no tool message answers {call}: {}", show(next)))?;
    Ok(tool
        .get("content")
        .and_then(Value::as_array)
        .map(|parts| {
            parts
                .iter()
                .filter(|part| str_at(part, &["type"]) == Some("image_url"))
                .filter_map(|part| str_at(part, &["image_url", "url"]).map(str::to_owned))
                .collect()
        })
        .unwrap_or_default())
}

#[then(expr = "the model sees the workspace file {string} as a {string} image")]
async fn model_sees_image(
    world: &mut ConformanceWorld,
    name: String,
    media_type: String,
) -> StepResult {
    let bytes = std::fs::read(world.dirs()?.workspace.join(&name))?;
    sees_image_part(
        world,
        &media_type,
        &bytes,
        &format!("the ViewImage call must carry {name}"),
    )
    .await
}

/// The model was shown `bytes` as a `media_type` data URI in an image_url part of the tool
/// message answering the call (`what` says which, for the failure message).
async fn sees_image_part(
    world: &mut ConformanceWorld,
    media_type: &str,
    bytes: &[u8],
    what: &str,
) -> StepResult {
    let expected = format!(
        "data:{media_type};base64,{}",
        base64::engine::general_purpose::STANDARD.encode(bytes)
    );
    let urls = image_parts(world).await?;
    check!(
        urls.contains(&expected),
        "the tool message answering {what} as an image_url part ({expected:.60}…); its \
         image_url parts are {urls:.200?}"
    );
    Ok(())
}

/// An image that is no workspace file (ExecuteCode's, written to its output folder).
#[then(expr = "the model sees a {string} image holding the bytes {string}")]
async fn model_sees_bytes(
    world: &mut ConformanceWorld,
    media_type: String,
    hex: String,
) -> StepResult {
    let bytes = hex
        .split_whitespace()
        .map(|pair| u8::from_str_radix(pair, 16))
        .collect::<Result<Vec<u8>, _>>()
        .with_context(|| format!("{hex:?} is not hex bytes like \"89 50 4E 47\""))?;
    sees_image_part(world, &media_type, &bytes, "the call must carry the image").await
}

#[then("the model is shown no image")]
async fn no_image(world: &mut ConformanceWorld) -> StepResult {
    let urls = image_parts(world).await?;
    check!(
        urls.is_empty(),
        "the call must show the model no image; the tool message carries {urls:.200?}"
    );
    Ok(())
}

#[then("the tool call is refused as too large")]
async fn refused_too_large(world: &mut ConformanceWorld) -> StepResult {
    // Judged by the policy enforcer (maxFileSizeBytes, CAPABILITY_DENIED) or by the tool
    // itself (FILE_TOO_LARGE): either way nothing is sent.
    let payload = crate::steps::tools::completed(world, 1).await?;
    check!(
        matches!(str_at(&payload, &["status"]), Some("failed" | "denied"))
            && matches!(
                str_at(&payload, &["errorCode"]),
                None | Some("FILE_TOO_LARGE" | "CAPABILITY_DENIED")
            ),
        "tool_completed must report the file as too large (FILE_TOO_LARGE or CAPABILITY_DENIED): {}",
        show(&payload)
    );
    Ok(())
}
