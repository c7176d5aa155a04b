//! Tests of the session history: the upload renders by the desktop app's rules, and every
//! accepted form reads back as the same conversation.

use super::*;
use crate::testing::message;

/// A thread with a text-less tool-call turn, one with text, a failed call and an answer.
fn thread() -> Vec<ConversationMessage> {
    let mut calls = message("msg_2", Role::Assistant, "");
    calls.tool_calls = vec![
        MessageToolCall {
            id: "call_a".into(),
            name: "ReadFile".into(),
            arguments: r#"{"path":"notes.txt"}"#.into(),
            message_id: None,
        },
        MessageToolCall {
            id: "call_b".into(),
            name: "ListDirectory".into(),
            arguments: r#"{"path":"."}"#.into(),
            message_id: None,
        },
    ];
    let mut read = message("msg_3", Role::Tool, "launch code 42");
    read.tool_call_id = Some("call_a".into());
    read.tool_name = Some("ReadFile".into());
    let mut listed = message(
        "msg_4",
        Role::Tool,
        "Denied (CAPABILITY_DENIED): not allowed",
    );
    listed.tool_call_id = Some("call_b".into());
    listed.tool_name = Some("ListDirectory".into());
    let mut write = message("msg_5", Role::Assistant, "Writing the summary.");
    write.tool_calls = vec![MessageToolCall {
        id: "call_c".into(),
        name: "WriteFile".into(),
        arguments: r#"{"path":"summary.md","content":"42"}"#.into(),
        message_id: None,
    }];
    let mut written = message("msg_6", Role::Tool, "wrote 2 bytes");
    written.tool_call_id = Some("call_c".into());
    written.tool_name = Some("WriteFile".into());
    vec![
        message("msg_1", Role::User, "What is the launch code?"),
        calls,
        read,
        listed,
        write,
        written,
        message("msg_7", Role::Assistant, "It is 42."),
    ]
}

fn app_form(thread: &[ConversationMessage]) -> Vec<Value> {
    thread.iter().flat_map(to_app_form).collect()
}

/// What the desktop app draws for a history, by its rules as INTEROP.md §8 states them:
/// a tool message is a card only when its content is a JSON tool_call / tool_result;
/// anything else in a tool message, or an assistant message without text, is drawn as a
/// bubble that makes no sense to a person — the render fails on those.
fn render(history: &[Value]) -> Result<Vec<String>, String> {
    let mut drawn = Vec::new();
    for item in history {
        for key in ["messageId", "sessionId", "role", "content", "timestamp"] {
            if item.get(key).is_none() {
                return Err(format!("a message without {key}: {item}"));
            }
        }
        let role = item["role"].as_str().unwrap_or_default();
        let content = item["content"].as_str().ok_or("content is not a string")?;
        match role {
            "tool" => {
                let card: Value = serde_json::from_str(content)
                    .map_err(|_| format!("a tool message drawn as raw text: {content}"))?;
                match card["type"].as_str() {
                    Some("tool_call") if card["arguments"].is_object() => drawn.push(format!(
                        "call {} {}",
                        card["toolName"].as_str().unwrap_or_default(),
                        card["id"].as_str().unwrap_or_default()
                    )),
                    Some("tool_result") if card["output"].is_string() => {
                        let output: String = card["output"]
                            .as_str()
                            .unwrap_or_default()
                            .chars()
                            .take(500)
                            .collect();
                        let error = card.get("error").and_then(Value::as_str);
                        drawn.push(format!(
                            "result {} {output}{}",
                            card["id"].as_str().unwrap_or_default(),
                            if error.is_some() { " (error)" } else { "" }
                        ));
                    }
                    _ => return Err(format!("a tool message that is no card: {content}")),
                }
            }
            "assistant" if content.trim().is_empty() => {
                return Err("an empty assistant bubble".to_owned());
            }
            other => drawn.push(format!("{other}: {content}")),
        }
    }
    Ok(drawn)
}

#[test]
fn the_uploaded_history_renders_by_the_apps_rules() {
    let drawn = render(&app_form(&thread())).unwrap();
    assert_eq!(
        drawn,
        [
            "user: What is the launch code?",
            "call ReadFile call_a",
            "call ListDirectory call_b",
            "result call_a launch code 42",
            "result call_b Denied (CAPABILITY_DENIED): not allowed (error)",
            "assistant: Writing the summary.",
            "call WriteFile call_c",
            "result call_c wrote 2 bytes",
            "assistant: It is 42.",
        ]
    );
    // The spec's own form is what the app cannot draw.
    let spec: Vec<Value> = thread()
        .iter()
        .map(|message| serde_json::to_value(message).unwrap())
        .collect();
    assert!(render(&spec).is_err());
}

/// One message as the model sees it: role, text, calls (id, name, arguments) and the call
/// it answers.
type Seen = (Role, String, Vec<(String, String, Value)>, Option<String>);

/// The thread as the model sees it.
fn model_view(thread: &[ConversationMessage]) -> Vec<Seen> {
    thread
        .iter()
        .map(|m| {
            (
                m.role,
                m.content.clone(),
                m.tool_calls
                    .iter()
                    .map(|c| {
                        (
                            c.id.clone(),
                            c.name.clone(),
                            serde_json::from_str(&c.arguments).unwrap_or(Value::Null),
                        )
                    })
                    .collect(),
                m.tool_call_id.clone(),
            )
        })
        .collect()
}

#[test]
fn every_form_reads_back_as_the_same_conversation() {
    let original = thread();
    let ours = read_back(app_form(&original), "sess_1").unwrap();
    assert_eq!(model_view(&ours), model_view(&original));
    let spec: Vec<Value> = original
        .iter()
        .map(|message| serde_json::to_value(message).unwrap())
        .collect();
    assert_eq!(
        model_view(&read_back(spec, "sess_1").unwrap()),
        model_view(&original)
    );
    // The Python runtime's: no ids, arguments as a JSON string; results pair by order.
    let python: Vec<Value> = app_form(&original)
        .into_iter()
        .map(|mut item| {
            if let Some(Ok(Value::Object(mut card))) =
                item["content"].as_str().map(serde_json::from_str::<Value>)
            {
                card.remove("id");
                if let Some(arguments) = card.get("arguments").cloned() {
                    card.insert("arguments".into(), json!(arguments.to_string()));
                }
                item["content"] = json!(Value::Object(card).to_string());
            }
            item
        })
        .collect();
    let read = read_back(python, "sess_1").unwrap();
    let view = model_view(&read);
    assert_eq!(view.len(), original.len());
    for ((role, text, calls, answers), (want_role, want_text, want_calls, _)) in
        view.iter().zip(model_view(&original))
    {
        assert_eq!((role, text), (&want_role, &want_text));
        assert_eq!(
            calls
                .iter()
                .map(|(_, name, args)| (name, args))
                .collect::<Vec<_>>(),
            want_calls
                .iter()
                .map(|(_, name, args)| (name, args))
                .collect::<Vec<_>>()
        );
        if *role == Role::Tool {
            assert!(answers.is_some());
        }
    }
    // Each result answers the call at its position in the run.
    assert_eq!(read[2].tool_call_id, Some(read[1].tool_calls[0].id.clone()));
    assert_eq!(read[3].tool_call_id, Some(read[1].tool_calls[1].id.clone()));
    assert_eq!(read[5].tool_call_id, Some(read[4].tool_calls[0].id.clone()));
}

#[test]
fn an_item_that_is_no_message_is_refused_with_a_reason() {
    let error = read_back(vec![json!("text")], "s").unwrap_err();
    assert!(error.contains("not a message"), "{error}");
    let error = read_back(vec![json!({"role": "robot", "content": "x"})], "s").unwrap_err();
    assert!(error.contains("robot"), "{error}");
}

#[test]
fn message_ids_are_the_same_after_every_read_back() {
    let once = app_form(&thread());
    let mut history = once.clone();
    for _ in 0..3 {
        let read = read_back(history.clone(), "s1").unwrap();
        history = app_form(&read);
        let ids = |form: &[Value]| -> Vec<String> {
            form.iter()
                .map(|message| message["messageId"].as_str().unwrap_or_default().to_owned())
                .collect()
        };
        assert_eq!(ids(&history), ids(&once));
    }
}

#[test]
fn another_producers_call_messages_keep_their_own_ids() {
    // The Python runtime and the desktop app write one message per call, each with an id
    // of its own (none of the `<message>_call_<n>` form).
    let card = |kind: &str, name: &str| {
        json!({"type": kind, "toolName": name, "arguments": "{}", "output": "ok"}).to_string()
    };
    let stored = vec![
        json!({"messageId": "u1", "role": "user", "content": "go", "timestamp": "t"}),
        json!({"messageId": "c1", "role": "tool", "content": card("tool_call", "ReadFile"), "timestamp": "t"}),
        json!({"messageId": "c2", "role": "tool", "content": card("tool_call", "ListDirectory"), "timestamp": "t"}),
        json!({"messageId": "r1", "role": "tool", "content": card("tool_result", "ReadFile"), "timestamp": "t"}),
        json!({"messageId": "r2", "role": "tool", "content": card("tool_result", "ListDirectory"), "timestamp": "t"}),
        json!({"messageId": "a1", "role": "assistant", "content": "done", "timestamp": "t"}),
    ];
    let read = read_back(stored, "s1").unwrap();
    assert_eq!(
        read[1].tool_calls.len(),
        2,
        "a run of calls is one assistant turn"
    );
    let again = app_form(&read);
    let ids: Vec<&str> = again
        .iter()
        .map(|message| message["messageId"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(ids, ["u1", "c1", "c2", "r1", "r2", "a1"]);
    // Stable through a checkpoint too: the ids ride on the calls it serialises.
    let restored: Vec<ConversationMessage> =
        serde_json::from_value(serde_json::to_value(&read).unwrap()).unwrap();
    assert_eq!(app_form(&restored), again);
}

#[test]
fn a_call_written_before_calls_kept_their_ids_still_loads() {
    let old = json!({"messageId": "m2", "sessionId": "s1", "role": "assistant", "content": "",
        "timestamp": "t", "toolCalls": [{"id": "call_1", "name": "ReadFile", "arguments": "{}"}]});
    let message: ConversationMessage = serde_json::from_value(old).unwrap();
    assert_eq!(message.tool_calls[0].message_id, None);
    assert_eq!(to_app_form(&message)[0]["messageId"], "m2_call_1");
}
