//! The session_history snapshot the loop uploads to the Workspace Service after each task
//! (the per-step checkpoint is `session::checkpoint`). It never stops the loop: a failure
//! is a `warning` event.

use agent_protocol::ErrorCode;
use agent_protocol::events::{EventBody, Warning};
use agent_protocol::services::ArtifactUploadRequest;
use serde_json::Map;
use std::path::{Path, PathBuf};

use super::Backends;
use crate::events::Scope;
use crate::json_splice::{Items, JsonPieces};
use crate::session::Session;
use crate::time::now_rfc3339;

/// Uploads the whole thread as the session's `session_history` artifact (last writer
/// wins). The service client already retries; what still fails becomes a warning event,
/// and the next upload carries the full thread anyway.
///
/// `task_id` is the task of this session the upload belongs to; `after_task` the task the
/// snapshot follows, which for a session that continues a past conversation and ran no
/// task of its own is that conversation's last task (of another session).
pub(crate) async fn upload_history(
    session: &Session,
    backends: &Backends,
    task_id: Option<&str>,
    after_task: Option<&str>,
) {
    let items = app_form_items(session);
    let request = ArtifactUploadRequest {
        session_id: session.identity.session_id.clone(),
        task_id: task_id.map(str::to_owned),
        step_id: None,
        artifact_type: "session_history".to_owned(),
        artifact_name: "session_history.json".to_owned(),
        content_type: "application/json".to_owned(),
        content_base64: None,
        messages: Some(Vec::new()),
        snapshot_after_task_id: after_task.map(str::to_owned),
        snapshot_at: Some(now_rfc3339()),
        metadata: Map::new(),
    };
    let uploaded = match history_pieces(&request, items) {
        Ok(pieces) => {
            backends
                .workspace
                .upload_artifact_pieces(&session.identity.workspace_id, pieces)
                .await
        }
        Err(detail) => Err(crate::services::ServiceError::InvalidRequest {
            service: "Workspace Service",
            detail,
        }),
    };
    if let Err(error) = uploaded {
        tracing::warn!(%error, "session history upload failed");
        let scope = task_id.map_or_else(Scope::session, Scope::task);
        session.events.emit(
            scope,
            EventBody::Warning(Warning {
                code: ErrorCode::WorkspaceUploadFailed,
                message: format!(
                    "The conversation history could not be saved to the Workspace Service: {error} The session goes on; the next save will include everything."
                ),
            }),
        );
    }
}

/// The thread in the form the desktop app renders (INTEROP.md §8, `services::history`),
/// each message cleaned of the runtime's credentials as the thread's stored JSON is.
/// Written to an unnamed file beside the thread's own (when it has one), so an upload
/// holds one message in memory at a time however long the session.
fn app_form_items(session: &Session) -> Items {
    let redactor = crate::redact::global();
    session.with_thread(|thread| {
        let messages = (0..thread.len())
            .filter_map(|index| thread.message(index))
            .flat_map(|message| crate::services::history::to_app_form(&message))
            .map(|mut value| {
                exact_values_out(&redactor, &mut value);
                value.to_string()
            });
        collect_items(messages, thread.spill_dir().map(PathBuf::as_path))
    })
}

/// `messages` as upload items: written to an unnamed file in `dir` when there is one (in
/// memory without, and from the first write that fails, as on a full disk).
fn collect_items(messages: impl Iterator<Item = String>, dir: Option<&Path>) -> Items {
    let Some(mut spill) = dir.and_then(|dir| crate::thread::spill::SpillFile::create(dir).ok())
    else {
        let each: std::sync::Arc<[std::sync::Arc<str>]> = messages.map(Into::into).collect();
        return Items::from(each);
    };
    let mut each: Vec<std::sync::Arc<str>> = Vec::new();
    for json in messages {
        if !each.is_empty() || spill.append(&json).is_err() {
            each.push(json.into());
        }
    }
    Items::new(Some(spill.region()), each.into())
}

/// Replaces the runtime's known credential values in every string of `value` (the check
/// the thread's stored JSON gets, `Thread::stored`).
fn exact_values_out(redactor: &crate::redact::Redactor, value: &mut serde_json::Value) {
    match value {
        serde_json::Value::String(text) => {
            if let std::borrow::Cow::Owned(clean) = redactor.redact_values(text) {
                *text = clean;
            }
        }
        serde_json::Value::Array(items) => {
            items
                .iter_mut()
                .for_each(|item| exact_values_out(redactor, item));
        }
        serde_json::Value::Object(map) => {
            map.values_mut()
                .for_each(|item| exact_values_out(redactor, item));
        }
        _ => {}
    }
}

/// The upload request `request` (whose `messages` is empty) with `messages` in its place.
fn history_pieces(request: &ArtifactUploadRequest, messages: Items) -> Result<JsonPieces, String> {
    let json = serde_json::to_string(request).map_err(|error| error.to_string())?;
    JsonPieces::around(&json, MESSAGES_SLOT, messages)
        .ok_or_else(|| "the history request has no place for its messages".to_owned())
}

/// Where the messages go in the serialised upload request. The quotes of a key cannot
/// occur unescaped inside a string value, so the slot is found only where it is meant.
const MESSAGES_SLOT: &str = "\"messages\":[]";

#[cfg(test)]
mod tests {
    use super::*;
    use agent_protocol::message::{ConversationMessage, Role};

    #[test]
    fn upload_items_are_written_to_a_file_not_held_in_memory() {
        let dir = tempfile::tempdir().unwrap();
        let messages = || ["{\"a\":1}".to_owned(), "{\"b\":2}".to_owned()].into_iter();
        let items = collect_items(messages(), Some(dir.path()));
        assert!(
            items.each().is_empty(),
            "held in memory: {:?}",
            items.each()
        );
        let region = items.joined().unwrap();
        let mut bytes = vec![0; usize::try_from(region.len()).unwrap()];
        region.read_at(&mut bytes, 0).unwrap();
        assert_eq!(bytes, b"{\"a\":1},{\"b\":2}");
        let in_memory = collect_items(messages(), None);
        assert!(in_memory.joined().is_none());
        assert_eq!(in_memory.each().len(), 2);
    }

    #[test]
    fn the_history_request_is_the_request_with_its_messages() {
        let messages: Vec<ConversationMessage> = ["first", "a \"quoted\" \"messages\":[] text"]
            .iter()
            .enumerate()
            .map(|(index, content)| ConversationMessage {
                message_id: format!("msg_{index}"),
                session_id: "s1".to_owned(),
                task_id: Some("t1".to_owned()),
                step_id: None,
                role: Role::User,
                content: (*content).to_owned(),
                token_count: Some(3),
                timestamp: "2026-11-25T00:00:00Z".to_owned(),
                tool_calls: Vec::new(),
                tool_call_id: None,
                tool_name: None,
                image_urls: Vec::new(),
            })
            .collect();
        let request = |messages: Vec<ConversationMessage>| ArtifactUploadRequest {
            session_id: "s1 \"messages\":[]".to_owned(),
            task_id: Some("t1".to_owned()),
            step_id: None,
            artifact_type: "session_history".to_owned(),
            artifact_name: "session_history.json".to_owned(),
            content_type: "application/json".to_owned(),
            content_base64: None,
            messages: Some(messages),
            snapshot_after_task_id: None,
            snapshot_at: Some("2026-11-25T00:00:01Z".to_owned()),
            metadata: Map::new(),
        };
        for count in 0..=messages.len() {
            let stored: std::sync::Arc<[std::sync::Arc<str>]> = messages[..count]
                .iter()
                .map(|message| serde_json::to_string(message).unwrap().into())
                .collect();
            // All in a spill file; the first one there and the rest each on its own.
            let dir = tempfile::tempdir().unwrap();
            let mut spill = crate::thread::spill::SpillFile::create(dir.path()).unwrap();
            let mut first = crate::thread::spill::SpillFile::create(dir.path()).unwrap();
            for (index, message) in stored.iter().enumerate() {
                spill.append(message).unwrap();
                if index == 0 {
                    first.append(message).unwrap();
                }
            }
            let rest: std::sync::Arc<[std::sync::Arc<str>]> =
                stored.iter().skip(1).cloned().collect();
            let expected = serde_json::to_string(&request(messages[..count].to_vec())).unwrap();
            for items in [
                Items::from(stored),
                Items::new(Some(spill.region()), std::sync::Arc::from([])),
                Items::new(Some(first.region()), rest),
            ] {
                let pieces = history_pieces(&request(Vec::new()), items).unwrap();
                assert_eq!(
                    String::from_utf8(pieces.to_vec().unwrap()).unwrap(),
                    expected
                );
            }
        }
    }
}
