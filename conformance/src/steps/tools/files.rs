//! Workspace files around the file tools (local-tool-runtime.md §4.1–§4.3, §6.1): their
//! contents before and after, files beside the workspace and in the home folder, symlinks, and
//! reads and writes the policy denies.

use anyhow::Context;
use cucumber::{gherkin::Step, given, then};
use serde_json::{Value, json};

use crate::steps::support::policy::grant;
use crate::steps::support::task::{optional_code, tool_completed};
use crate::steps::support::{StepResult, show, str_at};
use crate::steps::task::{READ_CALL_ID, wait_task_end};
use crate::steps::tools::{call_id, expand, unescape};
use crate::world::ConformanceWorld;

#[given(expr = "the file {string} beside the workspace contains {string}")]
async fn file_beside_workspace(
    world: &mut ConformanceWorld,
    name: String,
    content: String,
) -> StepResult {
    let workspace = world.dirs()?.workspace.clone();
    let parent = workspace
        .parent()
        .context("the workspace has no parent directory")?;
    let path = parent.join(&name);
    std::fs::write(&path, content).with_context(|| format!("cannot write {}", path.display()))?;
    Ok(())
}

#[given(expr = "the workspace symlink {string} points to {string}")]
async fn workspace_symlink(
    world: &mut ConformanceWorld,
    link: String,
    target: String,
) -> StepResult {
    let link = world.dirs()?.workspace.join(link);
    #[cfg(unix)]
    {
        // A relative target, as a user would make it with `ln -s secrets link`.
        std::os::unix::fs::symlink(&target, &link)
            .with_context(|| format!("cannot create the symlink {}", link.display()))?;
        Ok(())
    }
    #[cfg(not(unix))]
    {
        fail!(
            "symlink {} -> {target}: this scenario needs a Unix file system",
            link.display()
        )
    }
}

#[then(expr = "the ReadFile call is denied with error code {string}")]
async fn read_denied(world: &mut ConformanceWorld, code: String) -> StepResult {
    let payload = tool_completed(world, READ_CALL_ID).await?;
    check!(
        str_at(&payload, &["status"]) == Some("denied")
            && optional_code(&payload, "errorCode", &code),
        "the ReadFile call must end with tool_completed {{status: \"denied\", errorCode: {code:?}}}: {}",
        show(&payload)
    );
    check!(
        str_at(&payload, &["error"]).is_some_and(|e| !e.trim().is_empty()),
        "a denied call's tool_completed must say why in error: {}",
        show(&payload)
    );
    Ok(())
}

#[then(expr = "the ReadFile call runs and returns {string}")]
async fn read_runs(world: &mut ConformanceWorld, content: String) -> StepResult {
    let payload = tool_completed(world, READ_CALL_ID).await?;
    check!(
        str_at(&payload, &["status"]) == Some("succeeded")
            && str_at(&payload, &["result"]).is_some_and(|r| r.contains(&content)),
        "the ReadFile call should have run and shown {content:?}: {}",
        show(&payload)
    );
    Ok(())
}

#[then("the ReadFile call is rejected without reading anything")]
async fn read_rejected(world: &mut ConformanceWorld) -> StepResult {
    let payload = tool_completed(world, READ_CALL_ID).await?;
    let status = str_at(&payload, &["status"]).unwrap_or("");
    check!(
        matches!(status, "denied" | "failed") && payload.get("result").is_none_or(Value::is_null),
        "a path with a NUL byte must be rejected (tool_completed status denied or failed, no result): {}",
        show(&payload)
    );
    Ok(())
}

/// `text` with the placeholders of [`expand`] and `${HOME}` (the runtime's fresh HOME, a
/// folder beside the workspace) replaced.
pub(crate) async fn expand_path(
    world: &mut ConformanceWorld,
    text: &str,
) -> anyhow::Result<String> {
    let home = world.dirs()?.home.display().to_string();
    Ok(expand(world, text).await?.replace("${HOME}", &home))
}

/// `folder` relative to the workspace, or absolute after `${HOME}` / `${WORKSPACE}`.
#[then(expr = "no file {string} was made in the folder {string}")]
async fn no_file_made(world: &mut ConformanceWorld, name: String, folder: String) -> StepResult {
    wait_task_end(world).await?;
    let folder = expand_path(world, &folder).await?;
    let path = world.dirs()?.workspace.join(folder).join(&name);
    check!(
        !path.exists(),
        "the denied command ran anyway: it made {}",
        path.display()
    );
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

/// The first scripted call was denied by the policy and left the file as it was.
#[then(expr = "the {word} call is denied and the workspace file {string} still contains {string}")]
async fn denied_and_kept(
    world: &mut ConformanceWorld,
    tool: String,
    name: String,
    content: String,
) -> StepResult {
    let id = call_id(1);
    let payload = tool_completed(world, &id).await?;
    check!(
        str_at(&payload, &["toolName"]) == Some(tool.as_str())
            && str_at(&payload, &["status"]) == Some("denied")
            && optional_code(&payload, "errorCode", "CAPABILITY_DENIED"),
        "the {tool} call must end with tool_completed {{status: \"denied\", errorCode: \"CAPABILITY_DENIED\"}}: {}",
        show(&payload)
    );
    let path = world.dirs()?.workspace.join(&name);
    let now = std::fs::read_to_string(&path).unwrap_or_default();
    check!(
        now == content,
        "{} should still hold {content:?}, it holds {now:?}",
        path.display()
    );
    Ok(())
}

#[given(expr = "the file {string} in the home folder contains {string}")]
async fn home_file(world: &mut ConformanceWorld, name: String, content: String) -> StepResult {
    world.require_home()?;
    let path = world.dirs()?.home.join(&name);
    std::fs::write(&path, format!("{content}\n"))
        .with_context(|| format!("cannot write {}", path.display()))?;
    Ok(())
}

#[then(expr = "there is no file {string} beside the workspace")]
async fn no_file_beside(world: &mut ConformanceWorld, name: String) -> StepResult {
    wait_task_end(world).await?;
    let workspace = world.dirs()?.workspace.clone();
    let path = workspace
        .parent()
        .context("the workspace has no parent directory")?
        .join(&name);
    check!(
        !path.exists(),
        "{} exists: the tool wrote outside the workspace",
        path.display()
    );
    Ok(())
}
