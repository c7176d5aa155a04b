//! The SSE rendering of `GatewayReply` parses back to what was scripted.

use serde_json::json;

use super::support::{accumulate, parse_sse};
use crate::script::parse_script;
use crate::sse::{RenderedReply, render_reply, split_arguments, split_text, sse_body, text_stream};
use crate::{GatewayReply, ScriptedToolCall, Usage};

fn payloads(reply: &GatewayReply, usage: Option<Usage>) -> Vec<String> {
    match render_reply(reply, "model-x", usage) {
        // Through the wire format and back, as a client would see it.
        RenderedReply::Stream(payloads) => parse_sse(&sse_body(&payloads)),
        RenderedReply::Status { .. } => panic!("not a stream"),
    }
}

#[test]
fn text_parses_back_exactly_in_several_chunks() {
    let usage = Usage {
        prompt_tokens: 11,
        completion_tokens: 7,
    };
    for text in [
        "The quick brown fox jumps over the lazy dog",
        "  leading spaces,\ttabs\nand new lines\n\n kept ",
        "ünïcödé wörds — with 🦀 crabs and more words here",
        "one two three",
    ] {
        let out = accumulate(&payloads(&GatewayReply::text(text), Some(usage)));
        assert_eq!(out.text, text);
        assert!(
            out.content_deltas >= 3,
            "{text:?} came in {} deltas",
            out.content_deltas
        );
        assert_eq!(out.finish_reason.as_deref(), Some("stop"));
        assert_eq!(
            out.usage,
            Some(json!({"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}))
        );
        assert!(out.done);
        assert!(out.models.iter().all(|model| model == "model-x"));
    }
}

#[test]
fn text_chunk_order_is_deltas_then_finish_then_usage_then_done() {
    let rendered = payloads(&GatewayReply::text("a b c d"), Some(Usage::default()));
    let last = rendered.len() - 1;
    assert_eq!(rendered[last], "[DONE]");
    let usage_chunk: serde_json::Value = serde_json::from_str(&rendered[last - 1]).unwrap();
    assert_eq!(usage_chunk["choices"], json!([]));
    let finish: serde_json::Value = serde_json::from_str(&rendered[last - 2]).unwrap();
    assert_eq!(finish["choices"][0]["finish_reason"], "stop");
    let first: serde_json::Value = serde_json::from_str(&rendered[0]).unwrap();
    assert_eq!(first["choices"][0]["delta"]["role"], "assistant");
}

#[test]
fn short_and_empty_texts() {
    assert_eq!(split_text("Hello"), vec!["Hello"]);
    assert_eq!(split_text("Hello world"), vec!["Hello ", "world"]);
    assert!(split_text("").is_empty());
    let out = accumulate(&payloads(&GatewayReply::text(""), None));
    assert_eq!((out.text.as_str(), out.content_deltas), ("", 1));
    assert_eq!(out.usage, None, "usage omitted");
    assert!(out.done);
}

#[test]
fn long_text_chunks_are_bounded() {
    let text = "word ".repeat(40);
    let pieces = split_text(&text);
    assert_eq!(pieces.concat(), text);
    assert_eq!(pieces.len(), 10);
}

#[test]
fn tool_calls_parse_back_by_index() {
    let calls = vec![
        ScriptedToolCall::new("call_1", "ReadFile", r#"{"path":"src/main.rs"}"#),
        ScriptedToolCall::new("call_2", "RunCommand", r#"{"command":"ls -la","cwd":"."}"#),
    ];
    let reply = GatewayReply::ToolCalls {
        text: Some("Let me look.".into()),
        calls: calls.clone(),
    };
    let out = accumulate(&payloads(&reply, Some(Usage::default())));
    assert_eq!(out.text, "Let me look.");
    assert_eq!(out.finish_reason.as_deref(), Some("tool_calls"));
    assert!(out.done);
    assert_eq!(out.calls.len(), 2);
    for (parsed, scripted) in out.calls.iter().zip(&calls) {
        assert!(parsed.opened_properly, "{parsed:?}");
        assert_eq!(parsed.kind, "function");
        assert_eq!(
            (&parsed.id, &parsed.name, &parsed.arguments),
            (&scripted.id, &scripted.name, &scripted.arguments)
        );
        assert!(parsed.fragments >= 2, "{parsed:?}");
    }
}

#[test]
fn tool_call_without_text_and_with_odd_arguments() {
    let reply = GatewayReply::ToolCalls {
        text: None,
        calls: vec![
            ScriptedToolCall::new("c1", "A", ""),
            ScriptedToolCall::new("c2", "B", "{not json"),
            ScriptedToolCall::new("c3", "C", "é🦀"),
        ],
    };
    let out = accumulate(&payloads(&reply, None));
    assert_eq!(out.content_deltas, 0);
    let arguments: Vec<_> = out
        .calls
        .iter()
        .map(|call| call.arguments.as_str())
        .collect();
    assert_eq!(arguments, ["", "{not json", "é🦀"]);
    assert_eq!(out.calls[2].fragments, 2);
    assert_eq!(split_arguments("x"), vec!["x"]);
}

#[test]
fn raw_sse_is_sent_as_given_and_status_is_not_a_stream() {
    let raw = vec![
        "{not json".to_string(),
        r#"{"error":"upstream"}"#.to_string(),
    ];
    assert_eq!(
        payloads(&GatewayReply::RawSse(raw.clone()), Some(Usage::default())),
        raw
    );
    let status = GatewayReply::status(429, "{}");
    assert!(matches!(
        render_reply(&status, "m", None),
        RenderedReply::Status { status: 429, .. }
    ));
}

#[test]
fn text_stream_helper_sets_any_finish_reason() {
    let out = accumulate(&text_stream("cut short here", "length", "m", None));
    assert_eq!(out.finish_reason.as_deref(), Some("length"));
    assert_eq!(out.text, "cut short here");
}

#[test]
fn script_file_entries() {
    let script = parse_script(
        r#"[
          {"text": "hi"},
          {"toolCalls": [{"name": "ReadFile", "arguments": {"path": "a"}}], "text": "t"},
          {"status": 429, "headers": {"Retry-After": "1"}, "body": {"error": "slow down"}},
          {"rawSse": ["x", "[DONE]"]}
        ]"#,
    )
    .unwrap();
    assert_eq!(
        script,
        vec![
            GatewayReply::text("hi"),
            GatewayReply::ToolCalls {
                text: Some("t".into()),
                calls: vec![ScriptedToolCall::new(
                    "call_1",
                    "ReadFile",
                    r#"{"path":"a"}"#
                )],
            },
            GatewayReply::Status {
                status: 429,
                headers: vec![("Retry-After".into(), "1".into())],
                body: r#"{"error":"slow down"}"#.into(),
            },
            GatewayReply::RawSse(vec!["x".into(), "[DONE]".into()]),
        ]
    );
    for bad in [
        r#"{"text":"x"}"#,
        "[{}]",
        r#"[{"status": 99999}]"#,
        r#"[{"toolCalls": [{}]}]"#,
        "not json",
    ] {
        assert!(parse_script(bad).is_err(), "{bad} should be rejected");
    }
}
