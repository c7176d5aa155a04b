//! The sandbox's HTTP surface under attack (INTEROP.md §9; the endpoint has no
//! authentication): links the model planted in the workspace must not carry `/files`,
//! `/upload` or `workspace.sync` outside it, and half-sent heads, oversized bodies, stalled
//! readers and huge files must stay within the sandbox's descriptors and memory. The links
//! stand for what an allowed `ln -s` leaves; "outside" is the scenario's home folder.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;
use cucumber::{given, then, when};
use serde_json::Value;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpStream;

use agent_mocks::GatewayReply;

use crate::steps::sandbox_host::files::remember;
use crate::steps::sandbox_host::{client, endpoint, sandbox_only};
use crate::steps::support::model::{ensure_workspace_file, push_model_reply, read_call};
use crate::steps::support::{StepResult, eventually};
use crate::world::ConformanceWorld;

/// The folder outside the workspace the links lead to.
fn outside(world: &mut ConformanceWorld) -> anyhow::Result<PathBuf> {
    let folder = world.dirs()?.home.join("outside-the-workspace");
    std::fs::create_dir_all(&folder)
        .with_context(|| format!("cannot create {}", folder.display()))?;
    Ok(folder)
}

/// The file outside the workspace that the link `name` leads to.
fn outside_file(world: &mut ConformanceWorld, name: &str) -> anyhow::Result<PathBuf> {
    Ok(outside(world)?.join(format!("{}.target", name.replace('/', "_"))))
}

#[cfg(unix)]
fn symlink(target: &std::path::Path, link: &std::path::Path) -> anyhow::Result<()> {
    if let Some(parent) = link.parent() {
        std::fs::create_dir_all(parent)?;
    }
    std::os::unix::fs::symlink(target, link)
        .with_context(|| format!("cannot link {} to {}", link.display(), target.display()))
}

#[cfg(not(unix))]
fn symlink(_target: &std::path::Path, _link: &std::path::Path) -> anyhow::Result<()> {
    anyhow::bail!(
        "{} symbolic links are planted on Unix only",
        crate::runtime_manifest::NOT_APPLICABLE
    )
}

#[given(expr = "the workspace holds a link {string} to a file outside it containing {string}")]
async fn link_to_file(world: &mut ConformanceWorld, name: String, content: String) -> StepResult {
    sandbox_only(world)?;
    let target = outside_file(world, &name)?;
    std::fs::write(&target, &content)?;
    let link = world.dirs()?.workspace.join(&name);
    symlink(&target, &link)?;
    Ok(())
}

#[given(expr = "the workspace holds a link {string} to a folder outside it")]
async fn link_to_folder(world: &mut ConformanceWorld, name: String) -> StepResult {
    sandbox_only(world)?;
    let target = outside(world)?.join("folder");
    std::fs::create_dir_all(&target)?;
    let link = world.dirs()?.workspace.join(&name);
    symlink(&target, &link)?;
    Ok(())
}

/// Steps whose text is long, so the session's replay buffer fills up (what a reader that
/// copies it would hold).
#[given(
    expr = "the model will say {int} KiB beside each of {int} ReadFile calls on {string}, then answer {string}"
)]
async fn model_says_much(
    world: &mut ConformanceWorld,
    kib: usize,
    times: usize,
    name: String,
    answer: String,
) -> StepResult {
    ensure_workspace_file(world, &name, "Line one.\nLine two.\n")?;
    let text: String = "All work and no play. ".repeat(kib * 1024 / 22 + 1);
    for n in 1..=times {
        let call = read_call(world, &format!("call_read_{n:02}"), &name)?;
        push_model_reply(
            world.fakes().await?,
            GatewayReply::ToolCalls {
                text: Some(text.clone()),
                calls: vec![call],
            },
        );
    }
    push_model_reply(world.fakes().await?, GatewayReply::text(answer));
    Ok(())
}

#[when(expr = "the client uploads {int} bytes as {string} to the sandbox")]
async fn upload_bytes(world: &mut ConformanceWorld, size: usize, path: String) -> StepResult {
    let endpoint = endpoint(world)?;
    let response = client()?
        .post(format!("{endpoint}/upload?path={path}"))
        .header("content-type", "application/octet-stream")
        .body(vec![b'x'; size])
        .send()
        .await
        .context("POST /upload failed")?;
    remember(world, response).await
}

#[when(expr = "the client posts a JSON-RPC body of {int} bytes to the sandbox")]
async fn big_rpc(world: &mut ConformanceWorld, size: usize) -> StepResult {
    let endpoint = endpoint(world)?;
    let head = r#"{"jsonrpc":"2.0","id":1,"method":"GetSessionState","params":{"pad":""#;
    let tail = r#""}}"#;
    let mut body = head.as_bytes().to_vec();
    body.resize(size.saturating_sub(tail.len()).max(head.len()), b'x');
    body.extend_from_slice(tail.as_bytes());
    let response = client()?
        .post(format!("{endpoint}/rpc"))
        .header("content-type", "application/json")
        .body(body)
        .send()
        .await
        .context("POST /rpc failed")?;
    remember(world, response).await
}

/// A raw connection to the sandbox's endpoint.
pub(crate) async fn connect(world: &ConformanceWorld) -> anyhow::Result<(TcpStream, String)> {
    let endpoint = endpoint(world)?;
    let authority = endpoint
        .strip_prefix("http://")
        .context("the sandbox's endpoint is not http://")?
        .trim_end_matches('/')
        .to_owned();
    let stream = TcpStream::connect(&authority)
        .await
        .with_context(|| format!("cannot connect to {authority}"))?;
    Ok((stream, authority))
}

#[when("a client sends half a request head to the sandbox")]
async fn half_head(world: &mut ConformanceWorld) -> StepResult {
    let (mut stream, authority) = connect(world).await?;
    stream
        .write_all(format!("GET /health HTTP/1.1\r\nHost: {authority}\r\nX-Slow: ").as_bytes())
        .await?;
    world.sandbox.held.push(stream);
    Ok(())
}

#[when(expr = "{int} readers open the event stream and never read it")]
async fn stalled_readers(world: &mut ConformanceWorld, count: usize) -> StepResult {
    for _ in 0..count {
        let (mut stream, authority) = connect(world).await?;
        stream
            .write_all(
                format!(
                    "GET /events HTTP/1.1\r\nHost: {authority}\r\nAccept: text/event-stream\r\n\r\n"
                )
                .as_bytes(),
            )
            .await?;
        world.sandbox.held.push(stream);
    }
    // One ordinary request afterwards: the readers' requests have been taken in by then.
    let endpoint = endpoint(world)?;
    client()?
        .get(format!("{endpoint}/health"))
        .send()
        .await
        .context("GET /health failed")?;
    Ok(())
}

#[when(expr = "the client starts GET {word} and does not read the body")]
async fn unread_download(world: &mut ConformanceWorld, path: String) -> StepResult {
    let (mut stream, authority) = connect(world).await?;
    stream
        .write_all(format!("GET {path} HTTP/1.1\r\nHost: {authority}\r\n\r\n").as_bytes())
        .await?;
    // The head of the answer, then nothing more is read.
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    let read_head = async {
        while !head.ends_with(b"\r\n\r\n") {
            if stream.read(&mut byte).await? == 0 {
                break;
            }
            head.push(byte[0]);
        }
        anyhow::Ok(())
    };
    tokio::time::timeout(world.timeout(), read_head)
        .await
        .map_err(|_| {
            anyhow::anyhow!("GET {path} was not answered within {:?}", world.timeout())
        })??;
    let text = String::from_utf8_lossy(&head).into_owned();
    check!(
        text.starts_with("HTTP/1.1 200"),
        "GET {path} was answered {}",
        text.lines().next().unwrap_or_default()
    );
    world.sandbox.held.push(stream);
    Ok(())
}

#[then(expr = "the answer is a refusal that does not hold {string}")]
async fn refused_without(world: &mut ConformanceWorld, secret: String) -> StepResult {
    let (status, _, body) = world.sandbox.answer.clone().context("no HTTP answer yet")?;
    check!(
        (400..500).contains(&status),
        "the answer is HTTP {status}, not a refusal: {}",
        String::from_utf8_lossy(&body)
    );
    check!(
        !body.windows(secret.len()).any(|w| w == secret.as_bytes()),
        "the answer holds the content of the file outside the workspace"
    );
    Ok(())
}

#[then(expr = "the file outside the workspace behind {string} still holds {string}")]
async fn outside_unchanged(
    world: &mut ConformanceWorld,
    name: String,
    content: String,
) -> StepResult {
    let target = outside_file(world, &name)?;
    let found = std::fs::read_to_string(&target).unwrap_or_default();
    check!(
        found == content,
        "{} outside the workspace now holds {found:?}, not {content:?}",
        target.display()
    );
    Ok(())
}

#[then("the folder outside the workspace is still empty")]
async fn outside_empty(world: &mut ConformanceWorld) -> StepResult {
    let folder = outside(world)?.join("folder");
    let names: Vec<String> = std::fs::read_dir(&folder)?
        .filter_map(Result::ok)
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .collect();
    check!(
        names.is_empty(),
        "the folder outside the workspace now holds {names:?}"
    );
    Ok(())
}

#[then(expr = "the workspace's {string} is a file of its own containing {string}")]
async fn own_file(world: &mut ConformanceWorld, name: String, content: String) -> StepResult {
    let path = world.dirs()?.workspace.join(&name);
    let meta =
        std::fs::symlink_metadata(&path).with_context(|| format!("the workspace has no {name}"))?;
    check!(
        meta.is_file(),
        "the workspace's {name} is not a regular file (a link?)"
    );
    let found = std::fs::read_to_string(&path).unwrap_or_default();
    check!(
        found == content,
        "the workspace's {name} holds {found:?}, not {content:?}"
    );
    Ok(())
}

#[then("the workspace.sync answer lists it as failed")]
async fn sync_failed(world: &mut ConformanceWorld) -> StepResult {
    let response = world.last_response()?.clone();
    let failed = response
        .pointer("/result/failed")
        .and_then(Value::as_array)
        .map_or(0, Vec::len);
    check!(
        failed == 1,
        "workspace.sync did not report the file as failed: {response}"
    );
    Ok(())
}

#[then(expr = "the Workspace Service holds nothing for {string}")]
async fn service_lacks(world: &mut ConformanceWorld, path: String) -> StepResult {
    let workspace_id = world.session()?.workspace_id.clone();
    let found = world.started_fakes()?.workspace.file(&workspace_id, &path);
    check!(
        found.is_none(),
        "the Workspace Service received {path}: {:?}",
        found.map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
    );
    Ok(())
}

#[then(expr = "the Workspace Service holds {string} without {string}")]
async fn service_redacted(
    world: &mut ConformanceWorld,
    path: String,
    secret: String,
) -> StepResult {
    let workspace_id = world.session()?.workspace_id.clone();
    let found = world
        .started_fakes()?
        .workspace
        .file(&workspace_id, &path)
        .with_context(|| format!("the Workspace Service did not receive {path}"))?;
    check!(
        !found.windows(secret.len()).any(|w| w == secret.as_bytes()),
        "the Workspace Service received the secret in {path}: {:?}",
        String::from_utf8_lossy(&found)
    );
    Ok(())
}

#[then(expr = "the sandbox's workspace has no {string}")]
async fn workspace_lacks(world: &mut ConformanceWorld, name: String) -> StepResult {
    let path = world.dirs()?.workspace.join(&name);
    check!(
        std::fs::symlink_metadata(&path).is_err(),
        "the workspace holds {name}"
    );
    Ok(())
}

#[then(expr = "the sandbox closes that connection within {int} seconds")]
async fn closed_within(world: &mut ConformanceWorld, seconds: u64) -> StepResult {
    let mut stream = world
        .sandbox
        .held
        .pop()
        .context("no connection is held open")?;
    let mut sink = [0u8; 1024];
    let closed = async {
        loop {
            match stream.read(&mut sink).await {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
        }
    };
    check!(
        tokio::time::timeout(Duration::from_secs(seconds), closed)
            .await
            .is_ok(),
        "the sandbox kept a half-sent request head open for more than {seconds} s"
    );
    Ok(())
}

#[then(expr = "the sandbox's peak memory stayed under {int} MiB")]
async fn peak_memory(world: &mut ConformanceWorld, mib: u64) -> StepResult {
    let pid = world
        .started_runtime()?
        .pid()
        .context("the sandbox's process id is unknown (it was not started as a process)")?;
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).with_context(|| {
        format!(
            "{} the peak resident memory is read from /proc/{pid}/status (Linux only)",
            crate::runtime_manifest::NOT_APPLICABLE
        )
    })?;
    let peak_kib: u64 = status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|value| value.split_whitespace().next())
        .and_then(|kib| kib.parse().ok())
        .context("no VmHWM line in /proc/<pid>/status")?;
    check!(
        peak_kib < mib << 10,
        "the sandbox's peak resident memory was {} MiB, more than {mib} MiB",
        peak_kib >> 10
    );
    Ok(())
}

#[then("the Session Service no longer takes the sandbox's session as running")]
async fn session_ended_at_service(world: &mut ConformanceWorld) -> StepResult {
    let session_id = world.session()?.session_id.clone();
    let timeout = world.timeout();
    let fakes = &world.started_fakes()?.session;
    eventually(
        timeout,
        "the sandbox must tell the Session Service that it ended",
        || {
            let status = fakes.status(&session_id);
            async move {
                match status {
                    Some(status) if status == "SESSION_CANCELLED" => Ok(()),
                    other => Err(format!("the session is {other:?} at the Session Service")),
                }
            }
        },
    )
    .await?;
    Ok(())
}
