//! Tests of request building: the cached, serialised body means the same JSON as a body
//! built afresh from the thread, whatever the context window cuts.

use super::*;
use crate::testing::message;
use agent_protocol::message::MessageToolCall;
use serde_json::{Value, json};

/// The body as the runtime built it before the cache: a `json!` tree per request. The
/// cached, serialised body must mean exactly the same JSON.
fn reference_body(
    system_prompt: &str,
    messages: &[ConversationMessage],
    tools: &[ToolDefinition],
    policy: &LlmPolicy,
) -> Value {
    let mut wire = vec![json!({ "role": "system", "content": system_prompt })];
    wire.extend(messages.iter().map(|message| match message.role {
        Role::System => json!({ "role": "system", "content": message.content }),
        Role::User => json!({ "role": "user", "content": message.content }),
        Role::Assistant if message.tool_calls.is_empty() => {
            json!({ "role": "assistant", "content": message.content })
        }
        Role::Assistant => json!({
            "role": "assistant",
            "content": message.content,
            "tool_calls": message.tool_calls.iter().map(|call| json!({
                "id": call.id,
                "type": "function",
                "function": { "name": to_wire_name(&call.name), "arguments": call.arguments },
            })).collect::<Vec<_>>(),
        }),
        Role::Tool => json!({
            "role": "tool",
            "tool_call_id": message.tool_call_id.clone().unwrap_or_default(),
            "content": message.content,
        }),
    }));
    let mut body = json!({
        "model": policy.allowed_models.first().cloned().unwrap_or_default(),
        "stream": true,
        "stream_options": { "include_usage": true },
        "messages": wire,
    });
    if let Some(max_tokens) = policy.max_output_tokens {
        body["max_tokens"] = json!(max_tokens);
    }
    if !tools.is_empty() {
        body["tools"] = Value::Array(
            tools
                .iter()
                .map(|tool| {
                    json!({
                        "type": "function",
                        "function": {
                            "name": to_wire_name(&tool.tool_name),
                            "description": tool.description,
                            "parameters": tool.input_schema,
                        }
                    })
                })
                .collect(),
        );
    }
    body
}

fn thread() -> Vec<ConversationMessage> {
    let mut answer = message("msg_2", Role::Assistant, "");
    answer.tool_calls = vec![
        MessageToolCall {
            id: "call_1".to_owned(),
            name: "ReadFile".to_owned(),
            arguments: r#"{"path":"a \"quoted\" name\n"}"#.to_owned(),
            message_id: None,
        },
        MessageToolCall {
            id: "call_2".to_owned(),
            name: "mcp:docs/search".to_owned(),
            arguments: "{}".to_owned(),
            message_id: None,
        },
    ];
    let mut result = message("msg_3", Role::Tool, "line one\nline \"two\"\t\u{1F600}");
    result.tool_call_id = Some("call_1".to_owned());
    result.tool_name = Some("ReadFile".to_owned());
    vec![
        message("msg_1", Role::User, "read the file"),
        answer,
        result,
        message("msg_4", Role::Assistant, "done"),
        message("msg_5", Role::System, "a note"),
    ]
}

fn policy(max_output_tokens: Option<u64>) -> LlmPolicy {
    LlmPolicy {
        allowed_models: vec!["gpt-test".to_owned()],
        max_input_tokens: None,
        max_output_tokens,
        max_session_tokens: None,
        redaction_rules: Vec::new(),
    }
}

fn tools() -> Vec<ToolDefinition> {
    let Ok(tools) = serde_json::from_value::<Vec<ToolDefinition>>(json!([
        {"toolName": "ReadFile", "description": "Reads a file.",
         "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}}}},
        {"toolName": "mcp:docs/search", "description": "Searches.", "inputSchema": {"type": "object"}}
    ])) else {
        panic!("tool definitions");
    };
    tools
}

fn parsed(body: &RequestBody) -> Value {
    match serde_json::from_slice(&body.json) {
        Ok(value) => value,
        Err(error) => panic!("the body is not JSON: {error}"),
    }
}

/// The body of a request sending `sent` out of `thread`.
fn build(
    cache: &mut WireCache,
    redactor: &Arc<Redactor>,
    system_prompt: &str,
    thread: &[ConversationMessage],
    sent: &[Sent],
    tools: &[ToolDefinition],
    policy: &LlmPolicy,
) -> RequestBody {
    let lookup = |index: usize| thread.get(index).map(Cow::Borrowed);
    match cache.body(redactor, system_prompt, sent, lookup, tools, policy) {
        Ok(body) => body,
        Err(error) => panic!("serialisable: {error}"),
    }
}

/// [`build`] with system prompt "s", no tools and the plain policy.
fn plain(
    cache: &mut WireCache,
    redactor: &Arc<Redactor>,
    thread: &[ConversationMessage],
    sent: &[Sent],
) -> RequestBody {
    build(cache, redactor, "s", thread, sent, &[], &policy(None))
}

/// The messages `sent` stands for.
fn resolved(thread: &[ConversationMessage], sent: &[Sent]) -> Vec<ConversationMessage> {
    sent.iter()
        .map(|sent| match sent {
            Sent::Thread(index) => thread[*index].clone(),
            Sent::Marker(marker) => (**marker).clone(),
        })
        .collect()
}

/// Every message of `thread`, in order.
fn all(thread: &[ConversationMessage]) -> Vec<Sent> {
    (0..thread.len()).map(Sent::Thread).collect()
}

#[test]
fn the_body_means_what_the_reference_builder_builds() {
    let redactor = Arc::new(Redactor::with_defaults());
    let thread = thread();
    let marker = message("context_marker", Role::System, "[3 messages removed]");
    let mut sent = vec![Sent::Marker(Box::new(marker))];
    sent.extend(all(&thread));
    let messages = resolved(&thread, &sent);
    let mut cache = WireCache::default();
    for (tools, policy) in [
        (tools(), policy(Some(512))),
        (Vec::new(), policy(None)),
        (tools(), policy(None)),
    ] {
        for _ in 0..2 {
            let body = build(
                &mut cache,
                &redactor,
                "You are helpful.",
                &thread,
                &sent,
                &tools,
                &policy,
            );
            assert_eq!(
                parsed(&body),
                reference_body("You are helpful.", &messages, &tools, &policy)
            );
            assert!(!body.redaction_applied);
        }
    }
}

#[test]
fn the_tools_token_estimate_follows_the_offered_tools_and_is_counted_once() {
    let mut cache = WireCache::default();
    let all = tools();
    let one = &all[..1];
    let length = |json: &str| json.len() as u64;
    let expected = |tools: &[ToolDefinition]| match serde_json::to_string(tools) {
        Ok(json) => json.len() as u64,
        Err(error) => panic!("serialisable: {error}"),
    };
    let tokens =
        |cache: &mut WireCache, tools: &[ToolDefinition], count: &dyn Fn(&str) -> u64| match cache
            .tools_tokens(tools, count)
        {
            Ok(tokens) => tokens,
            Err(error) => panic!("serialisable: {error}"),
        };
    assert_eq!(tokens(&mut cache, &all, &length), expected(&all));
    assert_eq!(tokens(&mut cache, one, &length), expected(one));
    assert_eq!(
        tokens(&mut cache, one, &|_| panic!(
            "the same tools were counted again"
        )),
        expected(one)
    );
    assert_eq!(tokens(&mut cache, &[], &length), 2);
}

#[test]
fn the_cache_keeps_only_the_messages_of_the_last_request() {
    let redactor = Arc::new(Redactor::with_defaults());
    let thread: Vec<_> = (0..6)
        .map(|i| message(&format!("msg_{i}"), Role::User, &format!("text {i}")))
        .collect();
    let mut cache = WireCache::default();
    // A window sliding forward over the thread, the opening message always kept.
    for start in 1..4 {
        let mut sent = vec![Sent::Thread(0)];
        sent.extend((start..start + 3).map(Sent::Thread));
        let body = plain(&mut cache, &redactor, &thread, &sent);
        assert_eq!(
            parsed(&body),
            reference_body("s", &resolved(&thread, &sent), &[], &policy(None))
        );
        assert_eq!(cache.len(), 4, "window starting at {start}");
    }
}

#[test]
fn a_cached_message_is_not_read_back_from_the_thread() {
    let redactor = Arc::new(Redactor::with_defaults());
    let thread = thread();
    let sent = all(&thread);
    let reads = std::cell::Cell::new(0);
    let lookup = |index: usize| {
        reads.set(reads.get() + 1);
        thread.get(index).map(Cow::Borrowed)
    };
    let mut cache = WireCache::default();
    for expected in [thread.len(), thread.len()] {
        let Ok(_) = cache.body(&redactor, "s", &sent, lookup, &[], &policy(None)) else {
            panic!("serialisable");
        };
        assert_eq!(
            reads.get(),
            expected,
            "a step reads only messages new to the window"
        );
    }
    let missing = [Sent::Thread(thread.len())];
    assert!(
        cache
            .body(&redactor, "s", &missing, lookup, &[], &policy(None))
            .is_err(),
        "a message that cannot be read back is an error, not a gap in the request"
    );
}

#[test]
fn a_synthetic_message_is_never_served_from_the_cache() {
    let redactor = Arc::new(Redactor::with_defaults());
    let mut cache = WireCache::default();
    for text in ["[2 messages removed]", "[7 messages removed]"] {
        let sent = [Sent::Marker(Box::new(message(
            "context_marker",
            Role::System,
            text,
        )))];
        let body = build(&mut cache, &redactor, "s", &[], &sent, &[], &policy(None));
        assert_eq!(parsed(&body)["messages"][1]["content"], text);
    }
}

#[test]
fn a_message_seen_clean_is_redacted_once_the_redactor_learns_more() {
    let thread = [message(
        "msg_1",
        Role::User,
        "deploy with abcdefgh-learnt-later please",
    )];
    let sent = all(&thread);
    let first = Arc::new(Redactor::with_defaults());
    let mut cache = WireCache::default();
    let body = plain(&mut cache, &first, &thread, &sent);
    assert!(!body.redaction_applied);
    assert_eq!(parsed(&body)["messages"][1]["content"], thread[0].content);
    let second = Arc::new(first.with_values(["abcdefgh-learnt-later".to_owned()]));
    let body = plain(&mut cache, &second, &thread, &sent);
    assert!(body.redaction_applied);
    let text = String::from_utf8_lossy(&body.json);
    assert!(!text.contains("abcdefgh-learnt-later"), "{text}");
}

#[test]
fn content_redacted_before_it_entered_the_thread_is_announced() {
    let redactor = Arc::new(Redactor::with_defaults());
    let thread = [message("msg_1", Role::Tool, "key: [REDACTED:api_key]")];
    let sent = all(&thread);
    let mut cache = WireCache::default();
    for _ in 0..2 {
        let body = plain(&mut cache, &redactor, &thread, &sent);
        assert!(body.redaction_applied, "announced from the cache too");
    }
}

#[test]
fn credentials_in_tool_call_arguments_are_replaced_and_the_json_stays_valid() {
    let redactor = Arc::new(Redactor::with_defaults().with_values(["s3cr3t-value-42".to_owned()]));
    let mut answer = message("msg_1", Role::Assistant, "");
    answer.tool_calls = vec![MessageToolCall {
        id: "call_1".to_owned(),
        name: "HttpRequest".to_owned(),
        arguments: r#"{"token":"s3cr3t-value-42"}"#.to_owned(),
        message_id: None,
    }];
    let thread = [answer];
    let body = plain(&mut WireCache::default(), &redactor, &thread, &all(&thread));
    assert!(body.redaction_applied);
    let arguments = &parsed(&body)["messages"][1]["tool_calls"][0]["function"]["arguments"];
    let Some(arguments) = arguments.as_str() else {
        panic!("arguments are a string: {arguments}");
    };
    assert!(
        serde_json::from_str::<Value>(arguments).is_ok(),
        "{arguments}"
    );
    assert!(!arguments.contains("s3cr3t-value-42"), "{arguments}");
}

#[test]
fn contents_are_redacted_by_the_rules_and_flagged() {
    let redactor = Arc::new(Redactor::with_defaults());
    let thread = [message(
        "msg_1",
        Role::User,
        "my key is sk-abcdefghijklmnopqrstu",
    )];
    let body = plain(&mut WireCache::default(), &redactor, &thread, &all(&thread));
    assert!(body.redaction_applied);
    assert_eq!(
        parsed(&body)["messages"][1]["content"],
        "my key is [REDACTED:api_key]"
    );
    let hello = [message("msg_1", Role::User, "hello")];
    let body = plain(&mut WireCache::default(), &redactor, &hello, &all(&hello));
    assert!(!body.redaction_applied);
}

#[test]
fn a_tool_message_with_images_goes_as_text_and_image_url_parts() {
    let redactor = Arc::new(Redactor::with_defaults());
    let mut shown = message("m2", Role::Tool, "Image: /p/a.png (67 B)");
    shown.tool_call_id = Some("call_1".into());
    shown.image_urls = vec!["data:image/png;base64,iVBORw0KGgo=".into()];
    let mut text_only = message("m3", Role::Tool, "plain");
    text_only.tool_call_id = Some("call_2".into());
    let thread = vec![shown, text_only];
    let body = plain(&mut WireCache::default(), &redactor, &thread, &all(&thread));
    let messages = &parsed(&body)["messages"];
    assert_eq!(
        messages[1],
        json!({
            "role": "tool",
            "tool_call_id": "call_1",
            "content": [
                {"type": "text", "text": "Image: /p/a.png (67 B)"},
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}},
            ],
        })
    );
    // Without images the content stays a string: the real gateway takes nothing else.
    assert_eq!(messages[2]["content"], json!("plain"));
}
