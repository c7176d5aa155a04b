//! Micro-benchmarks of the agent host's per-step work: fitting the thread into the context
//! window and building the request (10, 1 000 and 10 000 messages), parsing streamed
//! chunks, policy checks (a file read, a RunCommand line) and redaction of a tool output. Run with `cargo bench -p agent-host` (or `cargo xtask bench`).

use std::hint::black_box;
use std::path::PathBuf;

use agent_host::bench::Accumulator;
use agent_host::bench::PolicyEnforcer;
use agent_host::bench::Thread;
use agent_host::bench::WireCache;
use agent_host::bench::{Limits, fit, marker_text};
use agent_protocol::message::{ConversationMessage, MessageToolCall, Role};
use agent_protocol::policy::{LlmPolicy, PolicyBundle};
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use serde_json::json;

fn thread(len: usize) -> Vec<ConversationMessage> {
    (0..len)
        .map(|i| {
            let role = match i % 3 {
                0 => Role::User,
                1 => Role::Assistant,
                _ => Role::Tool,
            };
            let mut message = ConversationMessage {
                message_id: format!("msg_{i:06}"),
                session_id: "sess".into(),
                task_id: Some("task".into()),
                step_id: Some(format!("step_{i:03}")),
                role,
                content: "Some file content or an answer of moderate length. ".repeat(8),
                token_count: Some(100),
                timestamp: "2026-11-22T00:00:00Z".into(),
                tool_calls: Vec::new(),
                tool_call_id: None,
                tool_name: None,
                image_urls: Vec::new(),
            };
            if role == Role::Assistant {
                message.tool_calls = vec![MessageToolCall {
                    id: format!("call_{i}"),
                    name: "ReadFile".into(),
                    arguments: r#"{"path":"src/main.rs"}"#.into(),
                    message_id: None,
                }];
            }
            if role == Role::Tool {
                message.tool_call_id = Some(format!("call_{}", i - 1));
            }
            message
        })
        .collect()
}

fn marker(dropped: usize) -> ConversationMessage {
    let mut message = thread(1).remove(0);
    message.role = Role::System;
    message.content = marker_text(dropped);
    message
}

fn context_window(c: &mut Criterion) {
    let mut group = c.benchmark_group("context_window");
    let policy = LlmPolicy {
        allowed_models: vec!["m".into()],
        max_input_tokens: Some(64_000),
        max_output_tokens: Some(4_000),
        max_session_tokens: None,
        redaction_rules: Vec::new(),
    };
    for len in [10usize, 1_000, 10_000] {
        let messages = Thread::restore("sess", thread(len));
        let limits = Limits {
            max_input_tokens: policy.max_input_tokens,
            fixed_tokens: 2_000,
            max_messages: 50,
            recency_window: 10,
        };
        group.throughput(Throughput::Elements(len as u64));
        group.bench_with_input(BenchmarkId::new("fit", len), &messages, |b, messages| {
            b.iter(|| fit(black_box(messages.meta()), &limits, marker))
        });
        group.bench_with_input(
            BenchmarkId::new("fit_and_build_body", len),
            &messages,
            |b, messages| {
                // One cache across iterations, as across the steps of a task: what a
                // step pays once the thread's messages were sent before.
                let redactor = std::sync::Arc::new(agent_host::Redactor::with_defaults());
                let mut wires = WireCache::default();
                b.iter(|| {
                    let fitted = fit(black_box(messages.meta()), &limits, marker);
                    let lookup = |index| messages.message(index);
                    wires.body(
                        &redactor,
                        "system prompt",
                        &fitted.messages,
                        lookup,
                        &[],
                        &policy,
                    )
                })
            },
        );
    }
    group.finish();
}

fn sse_parsing(c: &mut Criterion) {
    let chunks: Vec<String> = (0..1_000)
        .map(|i| {
            json!({"id": "c", "object": "chat.completion.chunk",
                   "choices": [{"index": 0, "delta": {"content": format!("word{i} ")}, "finish_reason": null}]})
            .to_string()
        })
        .collect();
    let bytes: usize = chunks.iter().map(String::len).sum();
    let mut group = c.benchmark_group("sse");
    group.throughput(Throughput::Bytes(bytes as u64));
    group.bench_function("accumulate_1000_text_chunks", |b| {
        b.iter(|| {
            let mut acc = Accumulator::default();
            for chunk in &chunks {
                let _ = black_box(acc.push(chunk));
            }
            acc.finish()
        })
    });
    group.finish();
}

fn policy_check(c: &mut Criterion) {
    let dir = std::env::temp_dir();
    let bundle: PolicyBundle = serde_json::from_value(json!({
        "policyBundleVersion": "v", "schemaVersion": "1.0", "sessionId": "s",
        "expiresAt": "2999-01-01T00:00:00Z",
        "capabilities": [{"name": "File.Read", "allowedPaths": ["."], "blockedPaths": [".env", ".git/"]}],
        "llmPolicy": {"allowedModels": ["m"]}
    }))
    .unwrap_or_else(|error| panic!("bundle: {error}"));
    let enforcer = PolicyEnforcer::new(bundle, Some(PathBuf::from(&dir)));
    let args = json!({"path": "src/main.rs"})
        .as_object()
        .cloned()
        .unwrap_or_default();
    c.bench_function("policy_check_file_read", |b| {
        b.iter(|| enforcer.check_tool(black_box("File.Read"), black_box(&args)))
    });

    let bundle: PolicyBundle = serde_json::from_value(json!({
        "policyBundleVersion": "v", "schemaVersion": "1.0", "sessionId": "s",
        "expiresAt": "2999-01-01T00:00:00Z",
        "capabilities": [{"name": "Shell.Exec",
            "allowedCommands": ["cargo", "git", "ls", "grep", "cat", "head", "npm", "pytest"],
            "blockedCommands": ["rm -rf /", "sudo", "curl", "wget"],
            "requiresApproval": true, "approvalRuleId": "shell"}],
        "llmPolicy": {"allowedModels": ["m"]}
    }))
    .unwrap_or_else(|error| panic!("bundle: {error}"));
    let enforcer = PolicyEnforcer::new(bundle, Some(PathBuf::from(&dir)));
    let args = json!({"command": "cd src && FOO=1 cargo test --workspace 2>&1 | grep -v warning | head -n 50; git status --short $(ls)"})
        .as_object()
        .cloned()
        .unwrap_or_default();
    c.bench_function("policy_check_run_command", |b| {
        b.iter(|| enforcer.check_tool(black_box("Shell.Exec"), black_box(&args)))
    });

    // The analyser alone on long lines: 200 pipeline stages with quoting,
    // substitutions, expansions and redirections, about 16 KB.
    let allowed: Vec<String> = ["cargo", "git", "ls", "grep", "cat", "head", "echo"]
        .iter()
        .map(|name| (*name).to_owned())
        .collect();
    let blocked = vec!["rm -rf /".to_owned(), "sudo".to_owned()];
    let stage = "grep -v \"a b\" $(ls src/*.rs) ${X:-d} $((1 + 2)) 2>/dev/null | ";
    let long = format!("{}cat", stage.repeat(200));
    let mut group = c.benchmark_group("command_analyser");
    group.throughput(Throughput::Bytes(long.len() as u64));
    group.bench_function("long_line_16k", |b| {
        b.iter(|| {
            agent_host::bench::analyse(
                black_box(&long),
                Some(&allowed),
                Some(&blocked),
                agent_host::bench::Os::OtherUnix,
            )
            .is_ok()
        })
    });
    group.finish();
}

/// The per-step checkpoint (local-agent-host.md §9.3) as a step writes it: the head
/// serialised and the thread's stored JSON spliced in, written atomically — temp file,
/// fsync, rename, fsync the directory (`step_write_fsync`). `serialize_whole`, for
/// comparison, is what serialising the whole checkpoint each step would cost.
fn checkpoint_write(c: &mut Criterion) {
    use agent_host::bench::CheckpointStore;
    use agent_protocol::checkpoint::Checkpoint;
    use agent_protocol::state::SessionStatus;
    let mut group = c.benchmark_group("checkpoint");
    group.sample_size(20);
    let Ok(dir) = tempfile::tempdir() else {
        return;
    };
    let store = CheckpointStore::new(dir.path());
    for len in [10usize, 1_000, 10_000] {
        let checkpoint = Checkpoint {
            checkpoint_version: "1.0".into(),
            session_id: "sess_bench".into(),
            workspace_id: "ws".into(),
            tenant_id: "t".into(),
            user_id: "u".into(),
            session_status: SessionStatus::SessionRunning,
            task: None,
            step_cursor: Some("step_001".into()),
            thread: Vec::new(),
            session_tokens_used: 0,
            policy_bundle_version: "v".into(),
            checkpointed_at: "2026-11-22T00:00:00Z".into(),
            pending_approvals: Vec::new(),
            workspace_root: None,
            event_id_epoch: 0,
            file_changes: Vec::new(),
            name: None,
            feature_flags: serde_json::Map::new(),
            execution_environment: None,
            os_family: None,
            continued_from: None,
        };
        let redactor = std::sync::Arc::new(agent_host::Redactor::with_defaults());
        // As the runtime keeps it: checked messages in a spill file beside the checkpoints.
        let mut live = agent_host::bench::Thread::restore("sess_bench", thread(len));
        live.spill_into(Some(dir.path().to_owned()));
        let stored = live.stored(&redactor);
        let whole = Checkpoint {
            thread: thread(len),
            ..checkpoint.clone()
        };
        let bytes = serde_json::to_vec(&whole).map_or(0, |b| b.len());
        group.throughput(Throughput::Bytes(bytes as u64));
        group.bench_with_input(BenchmarkId::new("serialize_whole", len), &whole, |b, cp| {
            b.iter(|| serde_json::to_vec(black_box(cp)).map(|v| v.len()))
        });
        group.bench_with_input(
            BenchmarkId::new("step_write_fsync", len),
            &checkpoint,
            |b, head| {
                b.iter(|| {
                    store
                        .write_with_thread(black_box(head), stored.clone(), &redactor)
                        .is_ok()
                })
            },
        );
    }
    group.finish();
}

/// Redaction of a 64 KiB tool output: clean (the common case, one `RegexSet` scan) and
/// with a few secrets in it.
fn redaction(c: &mut Criterion) {
    let redactor =
        agent_host::Redactor::with_defaults().with_values(["gateway-token-0123456789".to_owned()]);
    let clean = "fn main() { println!(\"hello\"); } // ordinary source text\n".repeat(1100);
    let dirty = format!(
        "{clean}password=hunter22hunter\nsk-proj-abcdefghijklmnopqrstuv\ngateway-token-0123456789\nDB_PASSWORD=hunter22\npostgres://u:pw12345@db/x\n"
    );
    let mut group = c.benchmark_group("redaction");
    group.throughput(Throughput::Bytes(clean.len() as u64));
    group.bench_function("clean_64k", |b| {
        b.iter(|| redactor.redact(black_box(&clean)).len())
    });
    group.bench_function("with_secrets_64k", |b| {
        b.iter(|| redactor.redact(black_box(&dirty)).len())
    });
    group.finish();
}

criterion_group!(
    benches,
    context_window,
    sse_parsing,
    policy_check,
    checkpoint_write,
    redaction
);
criterion_main!(benches);
