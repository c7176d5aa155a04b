//! INTEROP.md §9's files, health and `workspace.sync`, seen from the Session Service's side:
//! the sandbox's `/health`, `/ready`, `/files`, `/upload`, and the files it syncs with the
//! Workspace Service. Over another transport than `sandbox` these steps are not applicable.

use anyhow::Context;
use cucumber::{given, then, when};
use serde_json::{Value, json};

use crate::steps::sandbox_host::{client, endpoint, sandbox_only};
use crate::steps::support::{StepResult, eventually};
use crate::world::ConformanceWorld;

#[given(expr = "the Workspace Service holds the file {string} containing {string}")]
async fn service_file(world: &mut ConformanceWorld, path: String, content: String) -> StepResult {
    sandbox_only(world)?;
    let workspace_id = world.session()?.workspace_id.clone();
    world
        .started_fakes()?
        .workspace
        .put_file(&workspace_id, &path, content.as_bytes());
    Ok(())
}

/// Files a web user uploaded before this sandbox ran (an earlier session of the workspace,
/// or while it was provisioning: the service syncs uploads only to a running sandbox).
#[given(
    expr = "the Workspace Service already holds the file {string} containing {string} for the sandbox's workspace"
)]
async fn preseed_file(world: &mut ConformanceWorld, path: String, content: String) -> StepResult {
    sandbox_only(world)?;
    world.sandbox.preseed.push((path, content.into_bytes()));
    Ok(())
}

#[when(expr = "the Session Service sends workspace.sync {word} for {string}")]
async fn sync(world: &mut ConformanceWorld, direction: String, path: String) -> StepResult {
    let response = world
        .started_runtime_mut()?
        .request(
            "workspace.sync",
            Some(json!({"direction": direction, "paths": [path]})),
        )
        .await?;
    world.last_response = Some(response);
    world.last_method = Some("workspace.sync".to_owned());
    Ok(())
}

#[when(expr = "the client uploads {string} containing {string} to the sandbox")]
async fn upload(world: &mut ConformanceWorld, path: String, content: String) -> StepResult {
    let endpoint = endpoint(world)?;
    let boundary = "kit-boundary-7d1";
    let body = format!(
        "--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{path}\"\r\nContent-Type: text/plain\r\n\r\n{content}\r\n--{boundary}--\r\n"
    );
    let response = client()?
        // The scenarios' paths are plain words: nothing to escape in the query.
        .post(format!("{endpoint}/upload?path={path}"))
        .header(
            "content-type",
            format!("multipart/form-data; boundary={boundary}"),
        )
        .body(body)
        .send()
        .await
        .context("POST /upload failed")?;
    remember(world, response).await
}

#[when(expr = "the client requests GET {word}")]
async fn get(world: &mut ConformanceWorld, path: String) -> StepResult {
    let endpoint = endpoint(world)?;
    let response = client()?
        .get(format!("{endpoint}{path}"))
        .send()
        .await
        .with_context(|| format!("GET {path} failed"))?;
    remember(world, response).await
}

pub(crate) async fn remember(
    world: &mut ConformanceWorld,
    response: reqwest::Response,
) -> StepResult {
    let status = response.status().as_u16();
    let kind = response
        .headers()
        .get("content-type")
        .and_then(|value| value.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    let body = response
        .bytes()
        .await
        .context("reading the answer failed")?;
    world.sandbox.answer = Some((status, kind, body.to_vec()));
    Ok(())
}

#[then(expr = "the answer is HTTP {int}")]
async fn answer_status(world: &mut ConformanceWorld, status: u16) -> StepResult {
    let (got, _, body) = world.sandbox.answer.clone().context("no HTTP answer yet")?;
    check!(
        got == status,
        "the answer is HTTP {got}, not {status}: {}",
        String::from_utf8_lossy(&body)
    );
    Ok(())
}

fn answer_json(world: &ConformanceWorld) -> anyhow::Result<Value> {
    let (_, _, body) = world.sandbox.answer.clone().context("no HTTP answer yet")?;
    serde_json::from_slice(&body).context("the answer is not JSON")
}

#[then(expr = "the answer names the session as ready")]
async fn ready_answer(world: &mut ConformanceWorld) -> StepResult {
    answer_status(world, 200).await?;
    let session_id = world.session()?.session_id.clone();
    let body = answer_json(world)?;
    check!(
        body.get("sessionId").and_then(Value::as_str) == Some(session_id.as_str()),
        "GET /ready does not name session {session_id}: {body}"
    );
    Ok(())
}

#[then(expr = "the file list holds {string} of {int} bytes, with the totals")]
async fn file_list(world: &mut ConformanceWorld, path: String, size: u64) -> StepResult {
    answer_status(world, 200).await?;
    let body = answer_json(world)?;
    let files = body
        .get("files")
        .and_then(Value::as_array)
        .context("the answer has no `files` list")?;
    let entry = files
        .iter()
        .find(|file| file.get("path").and_then(Value::as_str) == Some(path.as_str()))
        .with_context(|| format!("`files` does not list {path}: {body}"))?;
    check!(
        entry.get("size").and_then(Value::as_u64) == Some(size),
        "{path} is listed with size {:?}, not {size}",
        entry.get("size")
    );
    let total: u64 = files
        .iter()
        .filter_map(|file| file.get("size").and_then(Value::as_u64))
        .sum();
    check!(
        body.get("totalFiles").and_then(Value::as_u64) == Some(files.len() as u64)
            && body.get("totalSize").and_then(Value::as_u64) == Some(total),
        "totalFiles/totalSize do not match the list: {body}"
    );
    Ok(())
}

#[then(expr = "the answer's body is {string}")]
async fn body_is(world: &mut ConformanceWorld, expected: String) -> StepResult {
    answer_status(world, 200).await?;
    let (_, _, body) = world.sandbox.answer.clone().context("no HTTP answer yet")?;
    check!(
        body == expected.as_bytes(),
        "the body is {:?}, not {expected:?}",
        String::from_utf8_lossy(&body)
    );
    Ok(())
}

#[then(expr = "the answer is a zip archive holding {string}")]
async fn zip_holds(world: &mut ConformanceWorld, name: String) -> StepResult {
    answer_status(world, 200).await?;
    let (_, kind, body) = world.sandbox.answer.clone().context("no HTTP answer yet")?;
    check!(
        kind.contains("zip"),
        "the archive's content type is {kind:?}"
    );
    check!(
        body.starts_with(b"PK\x03\x04"),
        "the archive does not start with a zip local file header"
    );
    check!(
        body.windows(name.len()).any(|w| w == name.as_bytes()),
        "the archive does not hold {name}"
    );
    Ok(())
}

#[then(expr = "the sandbox's workspace holds {string} containing {string}")]
async fn workspace_holds(
    world: &mut ConformanceWorld,
    path: String,
    content: String,
) -> StepResult {
    let file = world.dirs()?.workspace.join(&path);
    // A sync answered, or a sandbox that fetches its files once registered: the file is
    // there by the time the kit looks, or soon after.
    eventually(
        world.timeout(),
        "the workspace file must hold its content",
        || async {
            let found = std::fs::read_to_string(&file).unwrap_or_default();
            if found == content {
                Ok(())
            } else {
                Err(format!(
                    "{} holds {found:?}, not {content:?}",
                    file.display()
                ))
            }
        },
    )
    .await?;
    Ok(())
}

#[then(expr = "the Workspace Service holds {string} containing {string}")]
async fn service_holds(world: &mut ConformanceWorld, path: String, content: String) -> StepResult {
    let workspace_id = world.session()?.workspace_id.clone();
    let found = world
        .started_fakes()?
        .workspace
        .file(&workspace_id, &path)
        .unwrap_or_default();
    check!(
        found == content.as_bytes(),
        "the Workspace Service holds {:?} for {path}, not {content:?}",
        String::from_utf8_lossy(&found)
    );
    Ok(())
}

#[then("the workspace.sync answer lists it as synced")]
async fn synced(world: &mut ConformanceWorld) -> StepResult {
    let response = world.last_response()?.clone();
    let synced = response
        .pointer("/result/synced")
        .and_then(Value::as_array)
        .map_or(0, Vec::len);
    check!(
        synced == 1,
        "workspace.sync did not report the file as synced: {response}"
    );
    Ok(())
}

/// A large file at the Workspace Service, for the bounded-memory scenarios of
/// `workspace.sync` pull.
#[given(expr = "the Workspace Service holds a file {string} of {int} MiB")]
async fn service_large_file(world: &mut ConformanceWorld, path: String, mib: usize) -> StepResult {
    sandbox_only(world)?;
    let workspace_id = world.session()?.workspace_id.clone();
    let content: Vec<u8> = b"0123456789abcdef\n"
        .iter()
        .copied()
        .cycle()
        .take(mib << 20)
        .collect();
    world
        .started_fakes()?
        .workspace
        .put_file(&workspace_id, &path, &content);
    Ok(())
}
