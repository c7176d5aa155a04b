//! Steps for the Local Tool Runtime (local-tool-runtime.md §3–§8; local-agent-host.md §7.4,
//! §7.5): the model calls any tool with JSON arguments, and the steps look at what the runtime
//! reported (tool_completed), what the model was told, the files of the workspace and what
//! the Workspace Service received.
//!
//! In arguments and expected texts, `${WORKSPACE}` stands for the workspace's absolute path
//! and `${WORKSPACE_SERVICE}` for the Workspace Service fake's base URL (a loopback address).
//! The model's calls get the ids `call_tool_1`, `call_tool_2`, … in the order scripted.

use agent_mocks::FaultControl;
use agent_mocks::GatewayReply;
use anyhow::Context;
use base64::Engine as _;
use cucumber::gherkin::Step;
use cucumber::{given, then};
use serde_json::{Value, json};

use super::common::{grant, this_task_events};
use super::task::wait_task_end;
use super::{StepResult, at, event_types, push_model_reply, show, str_at};
use crate::driver::ReceivedEvent;
use crate::world::ConformanceWorld;

/// The `marks` key counting the tool calls scripted so far.
pub(super) const SCRIPTED_CALLS: &str = "tools.scripted_calls";

/// The id of the `n`th scripted call (1-based).
pub fn call_id(n: usize) -> String {
    format!("call_tool_{n}")
}

/// `text` with `${WORKSPACE}`, `${WORKSPACE_SERVICE}` and `${WEB}` replaced.
pub async fn expand(world: &mut ConformanceWorld, text: &str) -> anyhow::Result<String> {
    let workspace = world.dirs()?.workspace.display().to_string();
    let mut expanded = text.replace("${WORKSPACE}", &workspace);
    if expanded.contains("${WORKSPACE_SERVICE}") {
        let url = world.fakes().await?.workspace.url();
        expanded = expanded.replace("${WORKSPACE_SERVICE}", &url);
    }
    if expanded.contains("${WEB}") {
        let url = world
            .web
            .as_ref()
            .map(agent_mocks::WebFake::url)
            .context("${WEB} needs the step \"a web server on loopback\" first")?;
        expanded = expanded.replace("${WEB}", &url);
    }
    Ok(expanded)
}

/// `\n` in an expected text written in a feature file is a newline.
fn unescape(text: &str) -> String {
    text.replace("\\n", "\n")
}

/// The tool_completed event of the `n`th call, once the task has ended.
pub async fn completed(world: &mut ConformanceWorld, n: usize) -> anyhow::Result<Value> {
    wait_task_end(world).await?;
    let id = call_id(n);
    let events = this_task_events(world)?;
    events
        .iter()
        .find(|e| {
            e.event_type() == "tool_completed"
                && str_at(e.payload(), &["toolCallId"]) == Some(id.as_str())
        })
        .map(|e| e.payload().clone())
        .with_context(|| {
            format!(
                "no tool_completed for {id}; the task's events: {}",
                event_types(&events)
            )
        })
}

/// The text the runtime reported as the call's result (`tool_completed.result`), which must
/// have succeeded.
pub(super) async fn succeeded_result(world: &mut ConformanceWorld) -> anyhow::Result<String> {
    let payload = completed(world, 1).await?;
    if str_at(&payload, &["status"]) != Some("succeeded") {
        let failure = anyhow::anyhow!("the tool call should have succeeded: {}", show(&payload));
        let tool = str_at(&payload, &["toolName"])
            .unwrap_or_default()
            .to_owned();
        return Err(super::common::explain_tool_failure(world, &tool, failure).await);
    }
    str_at(&payload, &["result"])
        .map(str::to_owned)
        .with_context(|| format!("tool_completed carries no result text: {}", show(&payload)))
}

// ---- Given -----------------------------------------------------------------------------------

#[given(expr = "the policy also grants {word}")]
async fn also_grants(world: &mut ConformanceWorld, capability: String) -> StepResult {
    let scope = if capability.starts_with("File.") || capability.starts_with("Git.") {
        json!({"allowedPaths": ["."]})
    } else {
        json!({})
    };
    grant(world, &capability, scope).await?;
    Ok(())
}

#[given(expr = "the policy grants Shell.Exec with at most {int} output bytes")]
async fn shell_output_limit(world: &mut ConformanceWorld, bytes: u64) -> StepResult {
    grant(world, "Shell.Exec", json!({"maxOutputBytes": bytes})).await?;
    Ok(())
}

#[given(expr = "the policy limits File.Write to files of at most {int} bytes")]
async fn write_limit(world: &mut ConformanceWorld, bytes: u64) -> StepResult {
    grant(world, "File.Write", json!({"allowedPaths": ["."], "blockedPaths": [".env", ".git/"], "maxFileSizeBytes": bytes})).await?;
    Ok(())
}

#[given(expr = "the workspace file {string} holds the bytes {string}")]
async fn file_bytes(world: &mut ConformanceWorld, name: String, hex: String) -> StepResult {
    let bytes = hex
        .split_whitespace()
        .map(|pair| u8::from_str_radix(pair, 16))
        .collect::<Result<Vec<u8>, _>>()
        .with_context(|| format!("{hex:?} is not hex bytes like \"EF BB BF 68\""))?;
    let path = world.dirs()?.workspace.join(&name);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    std::fs::write(&path, bytes).with_context(|| format!("cannot write {}", path.display()))?;
    Ok(())
}

#[given(expr = "the workspace file {string} contains these lines:")]
async fn file_lines(world: &mut ConformanceWorld, name: String, step: &Step) -> StepResult {
    let text = step
        .docstring
        .as_deref()
        .context("the step needs the lines as a doc string")?;
    let path = world.dirs()?.workspace.join(&name);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    let text = format!("{}\n", text.trim_matches('\n'));
    std::fs::write(&path, text).with_context(|| format!("cannot write {}", path.display()))?;
    Ok(())
}

#[given(expr = "the workspace file {string} is read-only")]
async fn file_read_only(world: &mut ConformanceWorld, name: String) -> StepResult {
    let path = world.dirs()?.workspace.join(&name);
    let mut permissions = std::fs::metadata(&path)
        .with_context(|| format!("create {name} before making it read-only"))?
        .permissions();
    permissions.set_readonly(true);
    std::fs::set_permissions(&path, permissions)
        .with_context(|| format!("cannot make {} read-only", path.display()))?;
    Ok(())
}

#[given(expr = "the model will call {word} with:")]
async fn model_calls_with(world: &mut ConformanceWorld, tool: String, step: &Step) -> StepResult {
    let raw = step
        .docstring
        .as_deref()
        .context("the step needs the JSON arguments as a doc string")?;
    let arguments = expand(world, raw.trim()).await?;
    let mut parsed = serde_json::from_str::<Value>(&arguments)
        .with_context(|| format!("the scripted arguments are not JSON: {arguments}"))?;
    let os = world.runtime_os();
    let posix_only = world.scenario.tags.iter().any(|tag| tag == POSIX_SHELL_TAG);
    let arguments = match command_for_os(&mut parsed, os) {
        CommandForm::Unchanged => arguments,
        CommandForm::Chosen => parsed.to_string(),
        CommandForm::PosixOnly if posix_only => Err(anyhow::anyhow!(
            "{} the scenario's command is POSIX sh (@{POSIX_SHELL_TAG}) and gives no `command@windows` form for cmd.exe",
            crate::runtime_manifest::NOT_APPLICABLE
        ))?,
        CommandForm::PosixOnly => parsed.to_string(),
    };
    let n = world.marks.get(SCRIPTED_CALLS).copied().unwrap_or(0) + 1;
    world.marks.insert(SCRIPTED_CALLS, n);
    push_model_reply(
        world.fakes().await?,
        GatewayReply::tool_call(call_id(n), tool, arguments),
    );
    Ok(())
}

/// Marks a scenario whose commands need a POSIX shell: on a Windows runtime, a call without a
/// `command@windows` form is not applicable.
pub const POSIX_SHELL_TAG: &str = "posix-shell";

#[derive(Debug, PartialEq, Eq)]
pub enum CommandForm {
    /// No `command@windows` key: the arguments go as written.
    Unchanged,
    /// The key was there and is gone; on Windows its value replaced `command`.
    Chosen,
    /// Windows, and the call has a `command` but no `command@windows` form.
    PosixOnly,
}

/// A scripted call's `command` for the runtime's OS: `command@windows`, when present, is
/// the cmd.exe form of the POSIX `command` (taken on Windows, dropped elsewhere).
pub fn command_for_os(
    arguments: &mut Value,
    os: crate::runtime_manifest::RuntimeOs,
) -> CommandForm {
    let Some(object) = arguments.as_object_mut() else {
        return CommandForm::Unchanged;
    };
    let windows = object.remove("command@windows");
    let is_windows = os == crate::runtime_manifest::RuntimeOs::Windows;
    match windows {
        Some(form) if is_windows => {
            object.insert("command".to_owned(), form);
            CommandForm::Chosen
        }
        Some(_) => CommandForm::Chosen,
        None if is_windows && object.contains_key("command") => CommandForm::PosixOnly,
        None => CommandForm::Unchanged,
    }
}

// ---- Then: the call's outcome ----------------------------------------------------------------

#[then(expr = "the tool call succeeds with a result containing {string}")]
async fn succeeds_containing(world: &mut ConformanceWorld, needle: String) -> StepResult {
    let needle = unescape(&expand(world, &needle).await?);
    let result = succeeded_result(world).await?;
    check!(
        result.contains(&needle),
        "the result must contain {needle:?}: {result:?}"
    );
    Ok(())
}

#[then("the tool call result is exactly:")]
async fn result_exactly(world: &mut ConformanceWorld, step: &Step) -> StepResult {
    let want = step
        .docstring
        .as_deref()
        .context("the step needs the expected result as a doc string")?;
    // A doc string ends without the final newline; results of line-based output end with one.
    let want = format!("{}\n", expand(world, want.trim_matches('\n')).await?);
    let result = succeeded_result(world).await?;
    check!(
        result == want,
        "the result must be exactly {want:?}, got {result:?}"
    );
    Ok(())
}

#[then(expr = "the tool call result does not contain {string}")]
async fn result_lacks(world: &mut ConformanceWorld, needle: String) -> StepResult {
    let result = succeeded_result(world).await?;
    check!(
        !result.contains(&needle),
        "the result must not contain {needle:?}: {result:?}"
    );
    Ok(())
}

/// Judges an error message by meaning: for any runtime it must be readable (a person reads
/// it); that it names what the scenario names (a file, a field, a number, the reference
/// runtime's words) is checked only for a runtime that claims the `reference` profile — the
/// documents leave the wording free.
fn message_says(world: &ConformanceWorld, message: &str, needle: &str) -> anyhow::Result<()> {
    let reasons = super::errors::unreadable_reasons(message);
    anyhow::ensure!(
        reasons.is_empty(),
        "the error message is not readable ({}): {message:?}",
        reasons.join("; ")
    );
    let reference = world
        .config()?
        .manifest
        .declares(crate::catalogue::Profile::Reference);
    anyhow::ensure!(
        !reference || message.contains(needle),
        "the error message must contain {needle:?}: {message:?}"
    );
    Ok(())
}

#[then(expr = "the tool call fails with errorCode {string} and a message containing {string}")]
async fn fails_with_message(
    world: &mut ConformanceWorld,
    code: String,
    needle: String,
) -> StepResult {
    let needle = unescape(&expand(world, &needle).await?);
    let payload = completed(world, 1).await?;
    check!(
        str_at(&payload, &["status"]) == Some("failed")
            && super::optional_code(&payload, "errorCode", &code),
        "tool_completed must report status \"failed\" and errorCode {code:?}: {}",
        show(&payload)
    );
    let message = str_at(&payload, &["error"]).unwrap_or_default();
    message_says(world, message, &needle)?;
    Ok(())
}

#[then(expr = "the tool call is refused with a message containing {string}")]
async fn refused_with_message(world: &mut ConformanceWorld, needle: String) -> StepResult {
    // Refused by the policy enforcer (CAPABILITY_DENIED) or by the tool's own validation
    // (INVALID_REQUEST, local-tool-runtime.md §8 — defense in depth): either way never run.
    let payload = completed(world, 1).await?;
    let code = str_at(&payload, &["errorCode"]);
    check!(
        matches!(str_at(&payload, &["status"]), Some("failed" | "denied"))
            && matches!(code, None | Some("INVALID_REQUEST" | "CAPABILITY_DENIED")),
        "tool_completed must report a refusal (INVALID_REQUEST or CAPABILITY_DENIED): {}",
        show(&payload)
    );
    let message = str_at(&payload, &["error"]).unwrap_or_default();
    message_says(world, message, &needle)?;
    Ok(())
}

#[then("every tool call of the task succeeds")]
async fn every_call_succeeds(world: &mut ConformanceWorld) -> StepResult {
    wait_task_end(world).await?;
    let scripted = world.marks.get(SCRIPTED_CALLS).copied().unwrap_or(0);
    check!(scripted > 0, "no tool call was scripted");
    for n in 1..=scripted {
        let payload = completed(world, n).await?;
        check!(
            str_at(&payload, &["status"]) == Some("succeeded"),
            "tool call {n} should have succeeded: {}",
            show(&payload)
        );
    }
    Ok(())
}

// ---- Then: the workspace ---------------------------------------------------------------------

#[then(expr = "the workspace file {string} now contains {string}")]
async fn file_now_contains(world: &mut ConformanceWorld, name: String, want: String) -> StepResult {
    let want = unescape(&want);
    wait_task_end(world).await?;
    let path = world.dirs()?.workspace.join(&name);
    let text = std::fs::read_to_string(&path)
        .with_context(|| format!("the workspace file {name} cannot be read"))?;
    check!(
        text == want,
        "{name} must hold exactly {want:?}, it holds {text:?}"
    );
    Ok(())
}

// ---- Then: artifacts -------------------------------------------------------------------------

#[then(
    expr = "the Workspace Service receives a {word} artifact of the tool call containing {string}"
)]
async fn artifact_uploaded(
    world: &mut ConformanceWorld,
    artifact_type: String,
    needle: String,
) -> StepResult {
    let needle = unescape(&needle);
    let payload = completed(world, 1).await?;
    let task_id = world.task()?.task_id.clone();
    let session_id = world.session()?.session_id.clone();
    let uploads = world.started_fakes()?.workspace.uploads().await;
    let mine: Vec<&Value> = uploads
        .iter()
        .filter(|u| str_at(u, &["artifactType"]) == Some(artifact_type.as_str()))
        .collect();
    let upload = mine.first().with_context(|| {
        format!(
            "no {artifact_type} artifact was uploaded (uploads: {})",
            uploads
                .iter()
                .map(|u| str_at(u, &["artifactType"]).unwrap_or("?"))
                .collect::<Vec<_>>()
                .join(", ")
        )
    })?;
    super::check_service_body(
        "services/workspace/ArtifactUploadRequest",
        upload,
        "the artifact upload",
    )?;
    check!(
        str_at(upload, &["sessionId"]) == Some(session_id.as_str())
            && str_at(upload, &["taskId"]) == Some(task_id.as_str())
            && str_at(upload, &["stepId"]).is_some_and(|s| !s.is_empty()),
        "the upload must name the session, the task and the step: {}",
        show(upload)
    );
    let content = str_at(upload, &["contentBase64"])
        .and_then(|b64| base64::engine::general_purpose::STANDARD.decode(b64).ok())
        .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
        .with_context(|| format!("the upload has no base64 content: {}", show(upload)))?;
    check!(
        content.contains(&needle),
        "the {artifact_type} artifact must contain {needle:?}: {}",
        crate::driver::excerpt(&content)
    );
    let uris = at(&payload, &["artifactUris"])
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let answered = world.started_fakes()?.workspace.artifact_uris();
    check!(
        uris.len() == mine.len()
            && uris
                .iter()
                .all(|u| u.as_str().is_some_and(|u| answered.iter().any(|a| a == u))),
        "tool_completed.artifactUris must list the URI the Workspace Service returned for each of the {} upload(s): {}",
        mine.len(),
        show(&payload)
    );
    Ok(())
}

#[then("the tool call reports no artifact URI")]
async fn no_artifact_uri(world: &mut ConformanceWorld) -> StepResult {
    let payload = completed(world, 1).await?;
    let uris = at(&payload, &["artifactUris"]).and_then(Value::as_array);
    check!(
        uris.is_none_or(Vec::is_empty),
        "an artifact that could not be uploaded has no URI: {}",
        show(&payload)
    );
    Ok(())
}

#[then(expr = "a warning with code {string} says the {word} artifact was not uploaded")]
async fn artifact_warning(
    world: &mut ConformanceWorld,
    code: String,
    artifact_type: String,
) -> StepResult {
    wait_task_end(world).await?;
    // "A warning is logged" (local-tool-runtime.md §7.5) has no form on the wire: the
    // `warning` event is the reference runtime's, judged only for a runtime claiming it.
    if !super::errors::declares_reference(world)? {
        return Ok(());
    }
    let events = this_task_events(world)?;
    let warnings: Vec<&Value> = events
        .iter()
        .filter(|e| e.event_type() == "warning")
        .map(ReceivedEvent::payload)
        .collect();
    check!(
        warnings
            .iter()
            .any(|w| str_at(w, &["code"]) == Some(code.as_str())
                && str_at(w, &["message"]).is_some_and(|m| m.contains(&artifact_type))),
        "no warning with code {code:?} names the {artifact_type} artifact; the task's warnings: {}",
        warnings
            .iter()
            .map(|w| show(w))
            .collect::<Vec<_>>()
            .join(", ")
    );
    Ok(())
}

#[then(expr = "the Workspace Service received no request for {string}")]
async fn no_request_for(world: &mut ConformanceWorld, path: String) -> StepResult {
    wait_task_end(world).await?;
    let requests = world.started_fakes()?.workspace.requests().await;
    let hit = requests.iter().find(|r| r.path.starts_with(&path));
    check!(
        hit.is_none(),
        "the runtime reached the loopback service: {} {}",
        hit.map(|r| r.method.as_str()).unwrap_or_default(),
        path
    );
    Ok(())
}

// ---- Then: RunCommand ------------------------------------------------------------------------

#[then(expr = "the processes listed in the workspace file {string} are no longer running")]
async fn processes_gone(world: &mut ConformanceWorld, name: String) -> StepResult {
    wait_task_end(world).await?;
    let path = world.dirs()?.workspace.join(&name);
    let listed = match std::fs::read_to_string(&path) {
        Ok(listed) => listed,
        Err(error) => {
            let failure = anyhow::anyhow!("the command did not write {}: {error}", path.display());
            return Err(
                super::common::explain_tool_failure(world, "RunCommand", failure)
                    .await
                    .into(),
            );
        }
    };
    let pids: Vec<&str> = listed.split_whitespace().collect();
    check!(
        pids.len() >= 2,
        "expected at least two pids in {name}: {listed:?}"
    );
    for pid in pids {
        check!(
            pid.bytes().all(|b| b.is_ascii_digit()),
            "{pid:?} is not a pid"
        );
        // `ps` prints nothing for a process that is gone; a zombie (`Z`) has ended too.
        let probe = tokio::process::Command::new("ps")
            .args(["-o", "stat=", "-p", pid])
            .output();
        let out = tokio::time::timeout(world.timeout(), probe)
            .await
            .context("ps did not answer")?
            .context("cannot run ps")?;
        let stat = String::from_utf8_lossy(&out.stdout).trim().to_owned();
        check!(
            stat.is_empty() || stat.starts_with('Z'),
            "process {pid} of the timed-out command is still running (state {stat})"
        );
    }
    Ok(())
}

#[then(
    expr = "the stdout section is cut to {int} bytes: its first 80% and its last 20% around the truncation marker"
)]
async fn cut_80_20(world: &mut ConformanceWorld, budget: usize) -> StepResult {
    let result = succeeded_result(world).await?;
    if !super::errors::declares_reference(world)?
        && let Some(head_only) = check_head_only_cut(&result, budget)
    {
        return head_only;
    }
    let stdout = result
        .split_once("--- stdout ---\n")
        .and_then(|(_, rest)| rest.split_once("--- stderr ---\n"))
        .map(|(stdout, _)| stdout)
        .with_context(|| format!("no stdout section in {result:?}"))?;
    check_cut_80_20("stdout section", stdout, budget)
}

/// The other cut the documents describe for command output (local-tool-runtime.md §4.4): the
/// first `budget` bytes of stdout and stderr together, then
/// `[Output truncated — {total} bytes, showing first {limit} bytes]`. `None` when `result`
/// carries no such marker.
pub(super) fn check_head_only_cut(result: &str, budget: usize) -> Option<StepResult> {
    let marker_at = result.find("[Output truncated")?;
    let shown = result[..marker_at]
        .split_once("--- stdout ---\n")
        .map_or(&result[..marker_at], |(_, rest)| rest)
        .replacen("--- stderr ---\n", "", 1);
    let shown = shown.trim_end_matches('\n').len();
    // A cut may fall a few bytes short (a character or line ending is never split).
    Some(if shown <= budget && shown + 8 >= budget {
        Ok(())
    } else {
        Err(anyhow::anyhow!(
            "with maxOutputBytes {budget}, the output before \"[Output truncated …]\" must be the first {budget} bytes; it is {shown}"
        )
        .into())
    })
}

/// `section` is cut by local-tool-runtime.md §7.1 for `budget` bytes: about 80% of them
/// before the `[... truncated N bytes ...]` marker, about 20% after it.
pub(super) fn check_cut_80_20(name: &str, section: &str, budget: usize) -> StepResult {
    let stdout = section;
    let marker_at = stdout.find("\n[... truncated ").with_context(|| {
        format!(
            "no truncation marker in the {name}: {}",
            crate::driver::excerpt(stdout)
        )
    })?;
    let after = &stdout[marker_at + 1..];
    let marker_end = after
        .find(" bytes ...]\n")
        .map(|end| end + " bytes ...]\n".len())
        .with_context(|| {
            format!(
                "the marker must read \"[... truncated N bytes ...]\": {}",
                crate::driver::excerpt(after)
            )
        })?;
    let head = &stdout[..marker_at];
    let tail = after[marker_end..].trim_end_matches('\n');
    let (head_share, tail_share) = (budget * 80 / 100, budget * 20 / 100);
    // A cut may fall a few bytes short (a character or line ending is never split).
    let near = |got: usize, share: usize| got <= share && got + 8 >= share;
    check!(
        near(head.len(), head_share) && near(tail.len(), tail_share),
        "with maxOutputBytes {budget}, the head must keep about {head_share} bytes and the tail about {tail_share}; got {} and {}",
        head.len(),
        tail.len()
    );
    Ok(())
}
