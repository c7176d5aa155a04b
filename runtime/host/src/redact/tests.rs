//! Tests of the redactor: each kind of secret, exact values in every shape, the rules file.

use std::borrow::Cow;

use serde_json::json;

use super::*;

fn clean(text: &str) -> String {
    Redactor::with_defaults().redact(text).into_owned()
}

#[test]
fn default_rules_replace_each_kind_of_secret() {
    let cases = [
        ("key sk-proj-abcdefghijklmnop1234 end", "[REDACTED:api_key]"),
        ("AKIAIOSFODNN7EXAMPLE", "[REDACTED:aws_access_key]"),
        (
            "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
            "[REDACTED:github_token]",
        ),
        ("xoxb-1234567890-abcdefghij", "[REDACTED:slack_token]"),
        (
            "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
            "[REDACTED:jwt]",
        ),
    ];
    for (secret, tag) in cases {
        let out = clean(&format!("before {secret} after"));
        assert!(out.contains(tag), "{secret} → {out}");
        assert!(!out.contains(secret), "{secret} survived: {out}");
        assert!(
            out.starts_with("before ") && out.ends_with(" after"),
            "{out}"
        );
    }
}

#[test]
fn assignments_and_bearer_keep_their_names() {
    assert_eq!(
        clean("password=hunter22 and secret: 'opensesame'"),
        "password=[REDACTED:password] and secret: '[REDACTED:password]'"
    );
    assert_eq!(
        clean("Authorization: Bearer abcdefghijklmnop.qrs"),
        "Authorization: Bearer [REDACTED:bearer_token]"
    );
    assert_eq!(
        clean(r#"{"api_key": "zzzzzzzz1"}"#),
        r#"{"api_key": "[REDACTED:password]"}"#
    );
}

#[test]
fn pem_private_keys_are_removed_whole_or_truncated() {
    let pem = "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA\nabc+/=\n-----END RSA PRIVATE KEY-----\nafter";
    assert_eq!(clean(pem), "[REDACTED:private_key]\nafter");
    let cut = "-----BEGIN PRIVATE KEY-----\nMIIEpAIBAAKCAQEA\nabcdef";
    assert_eq!(clean(cut), "[REDACTED:private_key]");
}

#[test]
fn clean_text_is_borrowed_and_marker_is_not_redacted_again() {
    let redactor = Redactor::with_defaults();
    assert!(matches!(
        redactor.redact("an ordinary sentence, max_tokens=50"),
        Cow::Borrowed(_)
    ));
    let once = redactor
        .redact("secret=sk-abcdefghijklmnopqrst")
        .into_owned();
    assert_eq!(once, "secret=[REDACTED:api_key]");
    assert!(matches!(redactor.redact(&once), Cow::Borrowed(_)));
}

#[test]
fn exact_values_are_replaced_whatever_their_shape_also_json_escaped() {
    let redactor = Redactor::new(Vec::new(), ["tok\"en-12345".to_owned(), "short".to_owned()]);
    assert_eq!(
        redactor.redact("x tok\"en-12345 y short"),
        "x [REDACTED:credential] y short"
    );
    let json = serde_json::to_string(&json!({"m": "tok\"en-12345"})).unwrap_or_default();
    let out = redactor.redact_values(&json);
    assert_eq!(out, r#"{"m":"[REDACTED:credential]"}"#);
    let more = redactor.with_values(["mcp-bearer-999".to_owned()]);
    assert_eq!(more.redact("mcp-bearer-999"), "[REDACTED:credential]");
}

#[test]
fn rules_file_parses_comments_secret_groups_and_reports_bad_lines() {
    let rules = rules::parse(
        "# ours\n\nticket = \\bTCK-[0-9]{6}\\b\ndb = postgres://[^:\\s]+:(?P<secret>[^@\\s]+)@\n",
    )
    .unwrap_or_default();
    assert_eq!(rules.len(), 2);
    let redactor = Redactor::new(rules, Vec::new());
    assert_eq!(
        redactor.redact("TCK-123456 postgres://me:pw@db"),
        "[REDACTED:ticket] postgres://me:[REDACTED:db]@db"
    );
    let error = rules::parse("ok = a\nbroken (\n")
        .err()
        .map(|e| e.to_string());
    assert_eq!(
        error.as_deref(),
        Some("line 2 of the redaction rules file: expected `kind = regular expression`")
    );
    assert!(rules::parse("bad = (").is_err());
    assert!(rules::parse("no spaces allowed = x").is_err());
}

#[test]
fn environment_secrets_come_from_secret_named_variables() {
    let redactor = from_environment(
        None,
        [
            (
                "LLM_GATEWAY_AUTH_TOKEN".to_owned(),
                "gw-token-abcdef".to_owned(),
            ),
            (
                "AGENT_RUNTIME_HTTP_TOKEN".to_owned(),
                "http-token-xyz1".to_owned(),
            ),
            ("HOME".to_owned(), "/home/someone".to_owned()),
        ],
        ["header-secret-1".to_owned()],
    )
    .unwrap_or_default();
    let out = redactor.redact("gw-token-abcdef http-token-xyz1 /home/someone header-secret-1");
    assert_eq!(
        out,
        "[REDACTED:credential] [REDACTED:credential] /home/someone [REDACTED:credential]"
    );
}

#[test]
fn tool_results_are_redacted_in_text_error_hunks_and_artifacts() {
    use agent_protocol::methods::FileChangeStatus;
    use agent_protocol::tool::{ArtifactData, FileChange, ToolError};
    use agent_protocol::{ErrorCode, ToolResult, ToolStatus};
    use base64::Engine as _;
    let engine = base64::engine::general_purpose::STANDARD;
    let secret = "AKIAIOSFODNN7EXAMPLE";
    let mut result = ToolResult {
        tool_name: "RunCommand".into(),
        session_id: "s".into(),
        task_id: "t".into(),
        step_id: "st".into(),
        status: ToolStatus::Failed,
        output_text: Some(format!("out {secret}")),
        artifact_uris: Vec::new(),
        error: Some(ToolError {
            code: ErrorCode::ToolExecutionFailed,
            message: format!("err {secret}"),
        }),
        tool_call_id: None,
        artifacts: vec![ArtifactData {
            artifact_type: "tool_output".into(),
            artifact_name: "out.txt".into(),
            content_type: "text/plain".into(),
            content_base64: engine.encode(format!("full {secret}")),
        }],
        file_changes: vec![FileChange {
            path: "/w/a".into(),
            status: FileChangeStatus::Modified,
            hunks: format!("@@ -1 +1 @@\n-{secret}\n+x\n"),
        }],
        images: Vec::new(),
    };
    assert!(apply::tool_result(&Redactor::with_defaults(), &mut result));
    let all = serde_json::to_string(&result).unwrap_or_default();
    assert!(!all.contains(secret), "{all}");
    let artifact = engine
        .decode(&result.artifacts[0].content_base64)
        .unwrap_or_default();
    assert_eq!(
        String::from_utf8_lossy(&artifact),
        "full [REDACTED:aws_access_key]"
    );
}

#[test]
fn json_values_are_redacted_leaf_by_leaf() {
    let redactor = Redactor::with_defaults();
    let mut record = json!({
        "eventType": "tool_completed",
        "payload": {"result": "key sk-abcdefghijklmnopqrstu", "n": 3, "list": ["password=abcd1234"]},
    });
    assert!(apply::json_value(&redactor, &mut record));
    assert_eq!(record["payload"]["result"], "key [REDACTED:api_key]");
    assert_eq!(record["payload"]["list"][0], "password=[REDACTED:password]");
    assert_eq!(record["payload"]["n"], 3);
    assert!(!apply::json_value(&redactor, &mut record));
}

#[test]
fn policy_rules_join_the_global_redactor_and_bad_ones_are_reported() {
    use agent_protocol::policy::RedactionRule;
    let problems = add_policy_rules(&[
        RedactionRule {
            kind: "policy_case".into(),
            pattern: r"\bCASE-[0-9]{5}\b".into(),
        },
        RedactionRule {
            kind: "broken".into(),
            pattern: "(".into(),
        },
    ]);
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert!(problems[0].contains("broken"), "{problems:?}");
    assert_eq!(
        global().redact("see CASE-12345"),
        "see [REDACTED:policy_case]"
    );
}

#[test]
fn built_in_rules_compile_on_first_use_and_all_compile() {
    let redactor = Redactor::with_defaults();
    assert!(redactor.rules.set.get().is_none(), "compiled before use");
    redactor.warm();
    assert!(
        redactor.rules.set().is_some(),
        "the set of built-in rules compiles"
    );
    for rule in redactor.rules() {
        assert!(rule.regex().is_some(), "{} does not compile", rule.kind);
    }
}

#[test]
fn redactors_that_differ_in_values_share_compiled_rules() {
    let first = Redactor::with_defaults();
    let second = first.with_values(["a-credential-value".to_owned()]);
    second.warm();
    assert!(first.rules.set.get().is_some());
}
