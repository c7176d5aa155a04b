//! Crash recovery (local-agent-host.md §9, INTEROP.md §1 and §3): the kit kills the runtime
//! with SIGKILL, starts a new process on the same CHECKPOINT_DIR and resumes the session with
//! the old sessionId, as the desktop app does after a crash. The checkpoint file is the one
//! of §9.4: `{sessionId}.json` in CHECKPOINT_DIR (one session per process, so it is also the
//! only file there).

use std::path::PathBuf;

use agent_mocks::FaultControl;
use anyhow::Context;
use cucumber::{given, then, when};
use serde_json::{Value, json};

use crate::steps::errors::{check_error_data, unreadable_reasons};
use crate::steps::support::model::model_requests;
use crate::steps::support::task::{this_task_events, wait_task_event};
use crate::steps::support::{
    StepResult, at, declares_reference, eventually, expect_result, show, str_at,
};
use crate::steps::task::READ_CALL_ID;
use crate::world::{ConformanceWorld, SessionInfo};

/// The gateway requests seen when the runtime was killed, to tell later ones apart.
const REQUESTS_AT_CRASH: &str = "model requests at crash";

/// The session's checkpoint file: `{sessionId}.json`, or the only JSON file in the dir.
fn checkpoint_file(world: &mut ConformanceWorld) -> anyhow::Result<Option<PathBuf>> {
    let session_id = world.session()?.session_id.clone();
    let dir = world.dirs()?.checkpoints.clone();
    let named = dir.join(format!("{session_id}.json"));
    if named.exists() {
        return Ok(Some(named));
    }
    let files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .with_context(|| format!("cannot list CHECKPOINT_DIR {}", dir.display()))?
        .filter_map(|entry| entry.ok().map(|entry| entry.path()))
        .filter(|path| path.extension().is_some_and(|ext| ext == "json"))
        .collect();
    Ok(match files.as_slice() {
        [only] => Some(only.clone()),
        _ => None,
    })
}

fn read_checkpoint(world: &mut ConformanceWorld) -> anyhow::Result<(PathBuf, Value)> {
    let path = checkpoint_file(world)?.with_context(
        || "no checkpoint file was found in CHECKPOINT_DIR (local-agent-host.md §9.3–§9.4)",
    )?;
    let bytes = std::fs::read(&path).with_context(|| format!("cannot read {}", path.display()))?;
    let value = serde_json::from_slice(&bytes)
        .with_context(|| format!("the checkpoint {} is not JSON", path.display()))?;
    Ok((path, value))
}

#[given("the runtime process is killed")]
#[when("the runtime process is killed")]
async fn killed(world: &mut ConformanceWorld) -> StepResult {
    let seen = model_requests(world.fakes().await?).await.len();
    world.marks.insert(REQUESTS_AT_CRASH, seen);
    world.crash_runtime().await?;
    Ok(())
}

#[given(
    regex = r"^the checkpoint of the session is (not JSON|cut in half|of checkpoint version 9\.9|another session's)$"
)]
async fn damage_checkpoint(world: &mut ConformanceWorld, damage: String) -> StepResult {
    let (path, mut value) = read_checkpoint(world)?;
    let text = value.to_string();
    let damaged = match damage.as_str() {
        "not JSON" => "this is not a checkpoint {".to_owned(),
        "cut in half" => text[..text.len() / 2].to_owned(),
        "of checkpoint version 9.9" => {
            value["checkpointVersion"] = json!("9.9");
            value.to_string()
        }
        _ => {
            value["sessionId"] = json!("sess_someone_else");
            value.to_string()
        }
    };
    world
        .marks
        .insert(DAMAGED_CHECKPOINT, content_hash(damaged.as_bytes()));
    std::fs::write(&path, damaged).with_context(|| format!("cannot write {}", path.display()))?;
    Ok(())
}

/// `marks` key: the hash of the damaged checkpoint the scenario wrote.
const DAMAGED_CHECKPOINT: &str = "recovery.damaged_checkpoint";

/// `marks` key, set when a resume over a damaged checkpoint started a fresh session.
const STARTED_FRESH: &str = "recovery.started_fresh";

fn content_hash(bytes: &[u8]) -> usize {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    bytes.hash(&mut hasher);
    hasher.finish() as usize
}

/// local-agent-host.md §9.7 and §11 allow two answers to a damaged checkpoint: recovery
/// fails with a readable notice, or the runtime starts a fresh session. The reference runtime
/// refuses with its own code (`CHECKPOINT_CORRUPT`); any other runtime may take either road.
#[then(
    expr = "the damaged checkpoint is refused with error code {string} or the session starts fresh"
)]
async fn damaged_refused_or_fresh(world: &mut ConformanceWorld, code: String) -> StepResult {
    let response = world.last_response()?.clone();
    let reference = declares_reference(world)?;
    if let Some(error) = response.get("error") {
        let message = error.get("message").and_then(Value::as_str).unwrap_or("");
        let reasons = unreadable_reasons(message);
        check!(
            reasons.is_empty(),
            "the refusal's error.message is not readable ({}): {}",
            reasons.join("; "),
            show(&response)
        );
        if reference {
            let data = check_error_data(error)?;
            check!(
                str_at(data, &["code"]) == Some(code.as_str()),
                "error.data.code should be {code:?}: {}",
                show(&response)
            );
        }
        return Ok(());
    }
    check!(
        !reference,
        "the reference runtime refuses a damaged checkpoint with {code:?}, but ResumeSession answered: {}",
        show(&response)
    );
    expect_result(&response, "ResumeSession over a damaged checkpoint")?;
    world.marks.insert(STARTED_FRESH, 1);
    Ok(())
}

#[then("the damaged checkpoint is gone")]
async fn damaged_gone(world: &mut ConformanceWorld) -> StepResult {
    let Some(path) = checkpoint_file(world)? else {
        return Ok(());
    };
    // A fresh session checkpoints under its own id, which may be the same file name.
    let bytes = std::fs::read(&path).unwrap_or_default();
    check!(
        world.marks.contains_key(STARTED_FRESH)
            && world.marks.get(DAMAGED_CHECKPOINT) != Some(&content_hash(&bytes)),
        "the damaged checkpoint {} should have been deleted (local-agent-host.md §9.7)",
        path.display()
    );
    Ok(())
}

#[then("a new session can be created at once, unless the resume started a fresh one")]
async fn fresh_unless_started(world: &mut ConformanceWorld) -> StepResult {
    if world.marks.contains_key(STARTED_FRESH) {
        return Ok(());
    }
    fresh_session(world).await
}

#[given("the Session Service considers the session expired")]
async fn session_expired(world: &mut ConformanceWorld) -> StepResult {
    let session_id = world.session()?.session_id.clone();
    world.fakes().await?.session.expire_session(&session_id);
    Ok(())
}

#[when("the client resumes a session this runtime never saw")]
async fn resume_unknown(world: &mut ConformanceWorld) -> StepResult {
    let response = world
        .runtime()
        .await?
        .request(
            "ResumeSession",
            Some(json!({"sessionId": "sess_never_created"})),
        )
        .await?;
    world.last_response = Some(response);
    world.last_method = Some("ResumeSession".to_owned());
    Ok(())
}

/// CreateSession on the scenario's workspace, with `extra` params merged in.
async fn create_session_with(world: &mut ConformanceWorld, extra: Value) -> anyhow::Result<Value> {
    let workspace = world.dirs()?.workspace.display().to_string();
    let mut params = json!({
        "userId": "user_conformance",
        "tenantId": "tenant_conformance",
        "workspaceHint": {"localPaths": [workspace]},
    });
    if let (Some(params), Value::Object(extra)) = (params.as_object_mut(), extra) {
        params.extend(extra);
    }
    world
        .runtime()
        .await?
        .request("CreateSession", Some(params))
        .await
}

#[when("the client creates a session continuing the previous one")]
async fn create_continuing(world: &mut ConformanceWorld) -> StepResult {
    let previous = world.session()?.session_id.clone();
    let response = create_session_with(world, json!({ "continueFromSessionId": previous })).await?;
    let result = expect_result(&response, "CreateSession continuing a past session")?.clone();
    world.session = Some(SessionInfo::from_result(result));
    world.last_response = Some(response);
    world.last_method = Some("CreateSession".to_owned());
    Ok(())
}

#[when("a new session can be created at once")]
#[then("a new session can be created at once")]
async fn fresh_session(world: &mut ConformanceWorld) -> StepResult {
    let response = create_session_with(world, json!({})).await?;
    expect_result(&response, "CreateSession after a failed crash recovery")?;
    Ok(())
}

#[then("the checkpoint of the session is gone")]
async fn checkpoint_gone(world: &mut ConformanceWorld) -> StepResult {
    // Asked after the answer (or the exit) that the deletion precedes.
    let file = checkpoint_file(world)?;
    check!(
        file.is_none(),
        "the checkpoint {} should have been deleted (local-agent-host.md §9.6–§9.7)",
        file.map(|p| p.display().to_string()).unwrap_or_default()
    );
    Ok(())
}

#[then("the checkpoint of the session is a valid checkpoint of the session")]
async fn checkpoint_valid(world: &mut ConformanceWorld) -> StepResult {
    let (path, value) = read_checkpoint(world)?;
    crate::validation::check_open("checkpoint/Checkpoint", &value).map_err(|problem| {
        anyhow::anyhow!(
            "the checkpoint {} does not match the Checkpoint schema: {problem}",
            path.display()
        )
    })?;
    let session_id = world.session()?.session_id.clone();
    check!(
        str_at(&value, &["sessionId"]) == Some(session_id.as_str())
            && str_at(&value, &["checkpointVersion"]) == Some("1.0"),
        "the checkpoint should name session {session_id} with checkpointVersion \"1.0\": {}",
        show(&value)
    );
    Ok(())
}

#[then(expr = "the checkpoint of the session records {int} completed step(s) of the task")]
async fn checkpoint_steps(world: &mut ConformanceWorld, steps: u64) -> StepResult {
    let (path, value) = read_checkpoint(world)?;
    // What the checkpoint records is read in local-agent-host.md §9.2's form; a checkpoint in
    // another form is REQ-REC-001's finding, and this scenario cannot be judged.
    if value.get("checkpointVersion").is_none() {
        fail!(
            "{} the checkpoint {} is not in local-agent-host.md §9.2's form (no checkpointVersion), so the kit cannot read which steps it records; that is REQ-REC-001's finding",
            crate::contract::NOT_JUDGED,
            path.display()
        );
    }
    let task_id = world.task()?.task_id.clone();
    let prompt = world.task()?.prompt.clone();
    check!(
        str_at(&value, &["task", "taskId"]) == Some(task_id.as_str())
            && at(&value, &["task", "stepCount"]).and_then(Value::as_u64) == Some(steps),
        "the checkpoint should record task {task_id} with stepCount {steps}: {}",
        show(at(&value, &["task"]).unwrap_or(&Value::Null))
    );
    let thread = at(&value, &["thread"]).and_then(Value::as_array);
    check!(
        thread.is_some_and(|thread| thread
            .iter()
            .any(|m| str_at(m, &["content"]) == Some(prompt.as_str()))),
        "the checkpoint's thread should hold the task's prompt {prompt:?}"
    );
    Ok(())
}

#[then(expr = "the incomplete task reports {int} completed step(s)")]
async fn incomplete_steps(world: &mut ConformanceWorld, steps: u64) -> StepResult {
    let state = world.last_response()?.clone();
    let result = expect_result(&state, "GetSessionState")?;
    let last_step = at(result, &["incompleteTask", "lastStep"]).and_then(Value::as_u64);
    check!(
        last_step == Some(steps),
        "incompleteTask.lastStep should be {steps} (the steps checkpointed before the crash), got {last_step:?}: {}",
        show(result)
    );
    Ok(())
}

#[then("the Session Service received a resume with the checkpoint's step cursor")]
async fn resume_with_cursor(world: &mut ConformanceWorld) -> StepResult {
    let session_id = world.session()?.session_id.clone();
    let requests = world.started_fakes()?.session.requests().await;
    let resume = requests
        .iter()
        .rev()
        .find(|r| r.path == format!("/sessions/{session_id}/resume"))
        .context("the Session Service received no POST /sessions/{id}/resume")?;
    let cursor = str_at(&resume.body, &["checkpointCursor"]);
    check!(
        cursor.is_some_and(|c| !c.is_empty()),
        "the resume request should carry the checkpoint's cursor as checkpointCursor (local-agent-host.md §9.5): {}",
        show(&resume.body)
    );
    Ok(())
}

#[then(expr = "the first model request after the restart is for step {string}")]
async fn first_request_step(world: &mut ConformanceWorld, step_id: String) -> StepResult {
    let before = world.marks.get(REQUESTS_AT_CRASH).copied().unwrap_or(0);
    let requests = model_requests(world.started_fakes()?).await;
    let first = requests
        .get(before)
        .context("the model received no request after the restart")?;
    // Step ids are the runtime's own: for another runtime, "the step after the cursor" means
    // the first request already answers the completed step's tool call instead of asking
    // for it again.
    if !declares_reference(world)? {
        let answered = first
            .body
            .get("messages")
            .and_then(Value::as_array)
            .is_some_and(|messages| {
                messages
                    .iter()
                    .any(|m| str_at(m, &["role"]) == Some("tool"))
            });
        check!(
            answered,
            "the first model request after the restart should carry the completed step's tool result (no completed step repeated): {}",
            show(&first.body)
        );
        return Ok(());
    }
    let header = first.header("x-step-id");
    check!(
        header == Some(step_id.as_str()),
        "the first model request after the restart should be for {step_id} (the step after the cursor, with no completed step repeated), its X-Step-Id is {header:?}"
    );
    Ok(())
}

#[then("the ReadFile result of the first step reaches the model exactly once")]
async fn read_result_once(world: &mut ConformanceWorld) -> StepResult {
    let requests = model_requests(world.started_fakes()?).await;
    let last = requests.last().context("the model received no request")?;
    let count = last
        .body
        .get("messages")
        .and_then(Value::as_array)
        .map_or(0, |messages| {
            messages
                .iter()
                .filter(|m| str_at(m, &["tool_call_id"]) == Some(READ_CALL_ID))
                .count()
        });
    check!(
        count == 1,
        "the last model request carries the ReadFile result {count} time(s), expected exactly once: {}",
        show(&last.body)
    );
    Ok(())
}

#[then(expr = "the last model request contains {string}")]
async fn last_request_contains(world: &mut ConformanceWorld, needle: String) -> StepResult {
    let timeout = world.timeout();
    let fakes = world.started_fakes()?;
    eventually(timeout, "the model request", || async {
        let requests = model_requests(fakes).await;
        match requests.last() {
            Some(last) if last.body_text().contains(&needle) => Ok(()),
            Some(last) => Err(format!(
                "the last model request does not contain {needle:?}: {}",
                crate::driver::excerpt(&last.body_text())
            )),
            None => Err("the model received no request".to_owned()),
        }
    })
    .await?;
    Ok(())
}

#[given("the client has shut the session down")]
async fn shut_down(world: &mut ConformanceWorld) -> StepResult {
    let timeout = world.timeout();
    let runtime = world.runtime().await?;
    let response = runtime.request("Shutdown", None).await?;
    expect_result(&response, "Shutdown")?;
    runtime.wait_exit(timeout).await?;
    // The next step that needs a runtime starts a new process, as the app does for the
    // next session.
    world.crash_runtime().await?;
    Ok(())
}

#[given("the runtime's checkpoint directory cannot be written")]
async fn checkpoint_dir_unwritable(world: &mut ConformanceWorld) -> StepResult {
    // A directory below a regular file cannot be created, whoever runs the kit (root too).
    let blocker = world.dirs()?.root().join("not-a-directory");
    std::fs::write(&blocker, "a file where the checkpoint directory should be")?;
    let dir = blocker.join("checkpoints");
    world.set_runtime_env("CHECKPOINT_DIR", &dir.display().to_string())?;
    Ok(())
}

#[then("the checkpoint of the session holds the pending approval")]
async fn checkpoint_holds_approval(world: &mut ConformanceWorld) -> StepResult {
    let timeout = world.timeout();
    let requested = world
        .started_runtime()?
        .wait_for_event("approval_requested", timeout, |e| {
            e.event_type() == "approval_requested"
        })
        .await?;
    let approval_id = str_at(requested.payload(), &["approvalId"])
        .context("approval_requested carries no approvalId")?
        .to_owned();
    let (_, value) = read_checkpoint(world)?;
    let pending = at(&value, &["pendingApprovals"])
        .and_then(Value::as_array)
        .map_or(&[][..], Vec::as_slice);
    check!(
        pending
            .iter()
            .any(|a| str_at(a, &["approvalId"]) == Some(approval_id.as_str())),
        "while approval {approval_id} waits, the checkpoint should list it in pendingApprovals (local-agent-host.md §9.2): {}",
        show(at(&value, &["pendingApprovals"]).unwrap_or(&Value::Null))
    );
    Ok(())
}

#[then("every tool call in the model requests has its result")]
async fn no_orphan_tool_calls(world: &mut ConformanceWorld) -> StepResult {
    for (index, request) in model_requests(world.started_fakes()?)
        .await
        .iter()
        .enumerate()
    {
        let messages = request
            .body
            .get("messages")
            .and_then(Value::as_array)
            .map_or(&[][..], Vec::as_slice);
        let answered: Vec<&str> = messages
            .iter()
            .filter_map(|m| str_at(m, &["tool_call_id"]))
            .collect();
        let calls = messages
            .iter()
            .filter_map(|m| m.get("tool_calls").and_then(Value::as_array))
            .flatten()
            .filter_map(|call| str_at(call, &["id"]));
        for call in calls {
            check!(
                answered.contains(&call),
                "model request {} carries the tool call {call} without its result (real gateways reject such a request): {}",
                index + 1,
                show(&request.body)
            );
        }
    }
    Ok(())
}

fn event_ids(runtime: &crate::driver::RuntimeDriver) -> Vec<u64> {
    runtime
        .events()
        .iter()
        .filter_map(|e| e.params.get("eventId").and_then(Value::as_u64))
        .collect()
}

/// The highest eventId the killed processes sent: what the app tracks as its max.
fn highest_id_before_crash(world: &ConformanceWorld) -> anyhow::Result<u64> {
    world
        .crashed_runtimes()
        .iter()
        .flat_map(event_ids)
        .max()
        .with_context(|| {
            format!(
                "{} the killed runtime sent no event with an integer eventId before the crash; that is REQ-EVT-002's finding",
                crate::contract::NOT_JUDGED
            )
        })
}

#[then("every event of the resumed runtime has an id above every id the killed runtime sent")]
async fn ids_rise_across_crash(world: &mut ConformanceWorld) -> StepResult {
    let before = highest_id_before_crash(world)?;
    let runtime = world.started_runtime()?;
    runtime
        .wait_for_event("an event of the resumed runtime", runtime.timeout(), |_| {
            true
        })
        .await?;
    let after = event_ids(runtime);
    let reused: Vec<u64> = after.iter().copied().filter(|id| *id <= before).collect();
    check!(
        reused.is_empty(),
        "eventId is monotonic per session (INTEROP.md §1) and the app keeps the highest it saw ({before}), but the resumed runtime sent ids {reused:?} (all its ids: {after:?})"
    );
    Ok(())
}

#[then("GetEvents since the last id the killed runtime sent reports a gap")]
async fn replay_after_crash_gap(world: &mut ConformanceWorld) -> StepResult {
    let before = highest_id_before_crash(world)?;
    let response = world
        .runtime()
        .await?
        .request("GetEvents", Some(json!({ "sinceId": before })))
        .await?;
    let result = expect_result(&response, "GetEvents")?;
    check!(
        result.get("gapDetected") == Some(&json!(true)),
        "the events sent after the last checkpoint and before the crash cannot be replayed, so GetEvents since {before} must say gapDetected: true: {}",
        show(result)
    );
    Ok(())
}

/// The session's checkpoint file, which must exist (local-agent-host.md §9.3–§9.4).
fn required_checkpoint_file(world: &mut ConformanceWorld) -> anyhow::Result<PathBuf> {
    checkpoint_file(world)?.with_context(|| {
        format!(
            "no checkpoint file of the session in CHECKPOINT_DIR {} (local-agent-host.md §9.3–§9.4)",
            world.dirs().map(|dirs| dirs.checkpoints.display().to_string()).unwrap_or_default()
        )
    })
}

/// Read at the moment the kit sees the first step_completed: the spec writes the checkpoint
/// before that event, so it must already hold what the step's tools returned. The next
/// step's model answer is held back by the scenario, so no later checkpoint can stand in.
#[then(
    expr = "when the first step_completed is reported, the checkpoint of the session holds {string}"
)]
async fn checkpoint_at_step_completed(world: &mut ConformanceWorld, needle: String) -> StepResult {
    let completed = wait_task_event(world, "the first step_completed", |e| {
        e.event_type() == "step_completed"
    })
    .await?;
    // A step_completed sent before its tools ran is REQ-LOOP-030's finding; what the
    // checkpoint holds at a step_completed is this one's.
    let tools_done = this_task_events(world)?
        .iter()
        .any(|e| e.event_type() == "tool_completed" && e.seq < completed.seq);
    if !tools_done {
        fail!(
            "{} the first step_completed came before any tool_completed of its step; that is REQ-LOOP-030's finding",
            crate::contract::NOT_JUDGED
        );
    }
    let path = required_checkpoint_file(world)?;
    let text = std::fs::read_to_string(&path)
        .with_context(|| format!("cannot read the checkpoint {}", path.display()))?;
    let value: Value = serde_json::from_str(&text)
        .with_context(|| format!("the checkpoint {} is not JSON", path.display()))?;
    // Compared on the JSON text of the thread (or the whole checkpoint without one), so the
    // tool message's shape is the runtime's to choose.
    let thread = value.get("thread").unwrap_or(&value).to_string();
    check!(
        thread.contains(&needle),
        "when step_completed was reported, the checkpoint's thread did not hold the step's tool result {needle:?} (local-agent-host.md §9.3: written after the tool results are added): {}",
        crate::driver::excerpt(&thread)
    );
    Ok(())
}
