//! Tests of the thread: stored JSON, the spill file and its failures, and which tool result
//! joins which call.

use super::*;

fn origin() -> Origin<'static> {
    Origin {
        task_id: "t",
        step_id: None,
    }
}

/// Each stored message's text, as [`Thread::stored`] gives them.
fn texts(items: &Items) -> Vec<String> {
    let array = crate::json_splice::JsonPieces::new("[", items.clone(), "]");
    let each: Vec<Box<serde_json::value::RawValue>> =
        serde_json::from_slice(&array.to_vec().unwrap()).unwrap();
    each.iter().map(|raw| raw.get().to_owned()).collect()
}

/// A thread in memory, and one whose checked messages go to a spill file.
fn both() -> (tempfile::TempDir, [Thread; 2]) {
    let dir = tempfile::tempdir().unwrap();
    let mut spilled = Thread::new("s");
    spilled.spill_into(Some(dir.path().join("spill")));
    (dir, [Thread::new("s"), spilled])
}

#[test]
fn stored_json_is_the_message_and_rescanned_when_the_redactor_learns_a_value() {
    let (_dir, threads) = both();
    for mut thread in threads {
        thread.add_user("use key-learnt-later now", origin());
        thread.add_user("and nothing else", origin());
        let first = Arc::new(Redactor::with_defaults());
        let stored = texts(&thread.stored(&first));
        let Ok(back) = serde_json::from_str::<ConversationMessage>(&stored[0]) else {
            panic!("stored JSON is a message: {}", stored[0]);
        };
        assert_eq!(back, thread.all()[0]);
        thread.add_user("a third, key-learnt-later too", origin());
        let second = Arc::new(first.with_values(["key-learnt-later".to_owned()]));
        let stored = texts(&thread.stored(&second));
        assert_eq!(stored.len(), 3);
        for text in [&stored[0], &stored[2]] {
            assert!(!text.contains("key-learnt-later"), "{text}");
        }
        assert!(stored[1].contains("nothing else"));
        let all = thread.all();
        assert!(
            all[0].content.contains("key-learnt-later")
                && all[2].content.contains("key-learnt-later"),
            "the thread itself keeps what was said"
        );
        assert_eq!(all[1].content, "and nothing else");
    }
}

#[test]
fn checked_messages_go_to_the_spill_file_and_read_back_the_same() {
    let (_dir, [_, mut spilled]) = both();
    let redactor = Arc::new(Redactor::with_defaults());
    for round in 0..3 {
        spilled.add_user(&format!("round {round} \"quoted\"\n"), origin());
        spilled.add_tool_result(
            "c1",
            "ReadFile",
            format!("{round} \u{1F600}").into(),
            origin(),
        );
        let items = spilled.stored(&redactor);
        assert!(
            items.joined().is_some() && items.each().is_empty(),
            "round {round}"
        );
        let said = spilled.all();
        assert_eq!(said.len(), 4 * round + 2);
        let mut memory = Thread::restore("s", said.clone());
        assert_eq!(texts(&items), texts(&memory.stored(&redactor)));
        assert!(memory.stored(&redactor).joined().is_none());
        assert_eq!(
            said[4 * round].content,
            format!("round {round} \"quoted\"\n")
        );
        // Messages not yet checked are read back from memory.
        spilled.add_system_note("pending", origin());
        spilled.add_system_note("pending too", origin());
        let Some(last) = spilled.message(4 * round + 3) else {
            panic!("round {round}: the last message reads back");
        };
        assert_eq!(last.content, "pending too");
    }
}

#[test]
fn messages_a_failing_spill_file_cannot_take_stay_in_memory_and_nothing_is_lost() {
    let (_dir, [_, mut thread]) = both();
    let redactor = Arc::new(Redactor::with_defaults());
    thread.add_user("one", origin());
    thread.add_user("two", origin());
    let _ = thread.stored(&redactor);
    let Some(file) = thread.store.spill_file() else {
        panic!("the thread spills");
    };
    file.refuse_appends = true;
    thread.add_user("three", origin());
    thread.add_user("four", origin());
    let items = thread.stored(&redactor);
    assert_eq!(items.joined().map(|region| !region.is_empty()), Some(true));
    assert_eq!(items.each().len(), 2);
    let contents: Vec<String> = texts(&items)
        .iter()
        .map(|text| {
            serde_json::from_str::<ConversationMessage>(text)
                .unwrap()
                .content
        })
        .collect();
    assert_eq!(contents, ["one", "two", "three", "four"]);
    let all: Vec<String> = thread.all().into_iter().map(|m| m.content).collect();
    assert_eq!(all, contents);
    // The file is not tried again, even once it could take more.
    if let Some(file) = thread.store.spill_file() {
        file.refuse_appends = false;
    }
    thread.add_user("five", origin());
    assert_eq!(thread.stored(&redactor).each().len(), 3);
    assert_eq!(thread.all().len(), 5);
}

#[test]
fn a_spill_directory_that_cannot_be_made_keeps_the_thread_in_memory() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a-file");
    std::fs::write(&file, "not a directory").unwrap();
    let mut thread = Thread::new("s");
    thread.spill_into(Some(file.join("spill")));
    thread.add_user("kept anyway", origin());
    let items = thread.stored(&Arc::new(Redactor::with_defaults()));
    assert!(items.joined().is_none());
    assert_eq!(texts(&items).len(), 1);
    assert_eq!(thread.all()[0].content, "kept anyway");
    assert!(thread.spill_dir().is_none());
}

#[test]
fn a_tool_result_joins_only_the_call_it_answers() {
    let call = |ids: &[&str]| {
        let mut message = ConversationMessage {
            message_id: "m".into(),
            session_id: "s".into(),
            task_id: None,
            step_id: None,
            role: Role::Assistant,
            content: String::new(),
            token_count: Some(1),
            timestamp: String::new(),
            tool_calls: Vec::new(),
            tool_call_id: None,
            tool_name: None,
            image_urls: Vec::new(),
        };
        message.tool_calls = ids
            .iter()
            .map(|id| MessageToolCall {
                id: (*id).into(),
                name: "ReadFile".into(),
                arguments: "{}".into(),
                message_id: None,
            })
            .collect();
        message
    };
    let result = |id: &str| {
        let mut message = call(&[]);
        message.role = Role::Tool;
        message.tool_call_id = Some(id.into());
        message
    };
    let mut user = call(&[]);
    user.role = Role::User;
    let thread = Thread::restore(
        "s",
        vec![
            user,
            call(&["c1", "c2"]),
            result("c1"),
            result("c2"),
            result("c3"),
            result("c1"),
            call(&[]),
            result("c1"),
            call(&["c4"]),
            result("c4"),
        ],
    );
    let joins: Vec<bool> = thread.meta().iter().map(|m| m.joins_previous).collect();
    assert_eq!(
        joins,
        [
            false, false, true, true, false, false, false, false, false, true
        ]
    );
}

#[test]
fn a_scrubbed_message_is_read_back_as_it_was_said_and_the_last_task_is_known() {
    let mut thread = Thread::new("s");
    thread.add_user("first", origin());
    thread.add_system_note(
        "token abcdefgh-secret here",
        Origin {
            task_id: "t2",
            step_id: None,
        },
    );
    let redactor = Arc::new(Redactor::with_defaults().with_values(["abcdefgh-secret".into()]));
    assert!(!texts(&thread.stored(&redactor))[1].contains("abcdefgh-secret"));
    let Some(said) = thread.message(1) else {
        panic!("message 1 reads back");
    };
    assert_eq!(said.content, "token abcdefgh-secret here");
    assert_eq!(
        thread.last_tasked().and_then(|m| m.task_id.clone()),
        Some("t2".to_owned())
    );
    assert!(thread.has_task("t") && thread.has_task("t2"));
    assert!(thread.message(2).is_none());
}

#[test]
fn a_credential_spanning_json_syntax_still_leaves_valid_json() {
    let mut thread = Thread::new("s");
    thread.add_user("x", origin());
    // The stored text has `"content":"x"`: replacing `x"` breaks the string.
    let redactor = Arc::new(Redactor::with_defaults().with_values(["x\"".to_owned()]));
    let stored = texts(&thread.stored(&redactor));
    assert!(
        serde_json::from_str::<serde_json::Value>(&stored[0]).is_ok(),
        "{}",
        stored[0]
    );
}

#[test]
fn a_restored_thread_continues_its_ids_and_estimates_missing_counts() {
    let mut original = Thread::new("s");
    let origin = Origin {
        task_id: "t",
        step_id: None,
    };
    original.add_user("first", origin);
    original.add_user("second", origin);
    let mut messages = original.all();
    messages[1].token_count = None;
    let mut restored = Thread::restore("s", messages);
    assert!(restored.all()[1].token_count.is_some_and(|n| n > 0));
    assert!(restored.meta()[1].token_count > 0);
    restored.add_user("third", origin);
    let all = restored.all();
    let ids: Vec<&str> = all.iter().map(|m| m.message_id.as_str()).collect();
    assert_eq!(ids, ["msg_000001", "msg_000002", "msg_000003"]);
}

#[test]
fn messages_get_sequential_ids_and_their_origin() {
    let mut thread = Thread::new("s");
    let origin = Origin {
        task_id: "t",
        step_id: Some("step_001"),
    };
    thread.add_user(
        "hi",
        Origin {
            task_id: "t",
            step_id: None,
        },
    );
    thread.add_assistant(
        "",
        vec![MessageToolCall {
            id: "c1".into(),
            name: "ReadFile".into(),
            arguments: "{}".into(),
            message_id: None,
        }],
        Some(7),
        origin,
    );
    thread.add_tool_result("c1", "ReadFile", "content".into(), origin);
    let all = thread.all();
    let ids: Vec<_> = all.iter().map(|m| m.message_id.as_str()).collect();
    assert_eq!(ids, ["msg_000001", "msg_000002", "msg_000003"]);
    assert_eq!(all[1].token_count, Some(7));
    assert_eq!(thread.meta()[1].token_count, 7);
    assert_eq!(all[2].tool_call_id.as_deref(), Some("c1"));
    assert_eq!(all[0].step_id, None);
    assert!(thread.has_task("t") && !thread.has_task("u"));
}

#[test]
fn images_of_a_tool_result_are_kept_and_counted() {
    let mut thread = Thread::new("s");
    let reply = ToolReply {
        text: "Image: a.png (67 B)".into(),
        image_urls: vec!["data:image/png;base64,AAAA".into()],
    };
    thread.add_tool_result("c1", "ViewImage", reply, origin());
    let message = thread.message(0).unwrap().into_owned();
    assert_eq!(message.image_urls, ["data:image/png;base64,AAAA"]);
    let text = estimate_tokens("Image: a.png (67 B)");
    assert_eq!(message.token_count, Some(text + IMAGE_TOKENS));
    assert_eq!(thread.token_count(), text + IMAGE_TOKENS);
}
