//! The mutants' line rewriting, without a runtime.

use serde_json::{Value, json};

use super::{Breaker, MUTANTS, Mutant};

fn breaker(name: &str) -> Breaker {
    Breaker::new(Mutant::named(name).unwrap())
}

fn out(breaker: &mut Breaker, line: &Value) -> Vec<Value> {
    breaker
        .response(serde_json::to_vec(line).unwrap())
        .iter()
        .map(|l| serde_json::from_slice(l).unwrap())
        .collect()
}

fn event(id: u64, event_type: &str) -> Value {
    json!({"jsonrpc": "2.0", "method": "SessionEvent", "params": {
        "eventId": id, "eventType": event_type, "sessionId": "s", "workspaceId": "w",
        "taskId": "t", "timestamp": "2026-01-01T00:00:00Z", "payload": {"text": "x"}}})
}

#[test]
fn mutants_are_named_once_and_name_real_requirements() {
    assert!(MUTANTS.len() >= 25);
    let catalogue = crate::catalogue::Catalogue::load(
        &crate::runner::default_features_dir().join("requirements.toml"),
    )
    .unwrap();
    for (i, mutant) in MUTANTS.iter().enumerate() {
        assert!(
            MUTANTS[..i].iter().all(|m| m.name != mutant.name),
            "{} is named twice",
            mutant.name
        );
        assert!(
            !mutant.fails.is_empty(),
            "{} names no requirement",
            mutant.name
        );
        for id in mutant.fails.iter().chain(mutant.witnesses) {
            assert!(
                catalogue.get(id).is_some(),
                "{}: {id} is unknown",
                mutant.name
            );
        }
    }
}

#[test]
fn a_dropped_event_is_not_sent_and_others_pass_unchanged() {
    let mut b = breaker("drop-task-completed");
    assert!(out(&mut b, &event(3, "task_completed")).is_empty());
    assert_eq!(
        out(&mut b, &event(4, "text_chunk")),
        vec![event(4, "text_chunk")]
    );
}

#[test]
fn event_ids_repeat_or_swap() {
    let mut b = breaker("repeated-event-id");
    let ids: Vec<Value> = (1..=4)
        .map(|n| out(&mut b, &event(n, "text_chunk"))[0]["params"]["eventId"].clone())
        .collect();
    assert_eq!(ids, vec![json!(1), json!(1), json!(3), json!(3)]);
    let mut b = breaker("event-ids-out-of-order");
    let ids: Vec<Value> = (1..=5)
        .map(|n| out(&mut b, &event(n, "text_chunk"))[0]["params"]["eventId"].clone())
        .collect();
    assert_eq!(ids, vec![json!(1), json!(3), json!(2), json!(5), json!(4)]);
}

#[test]
fn an_event_follows_the_terminal_one_with_room_made_for_it() {
    let mut b = breaker("event-after-terminal");
    out(&mut b, &event(2, "text_chunk"));
    let end = out(&mut b, &event(3, "task_completed"));
    assert_eq!(end.len(), 2);
    assert_eq!(end[0]["params"]["eventId"], json!(6));
    assert_eq!(end[1]["params"]["eventType"], json!("text_chunk"));
    assert_eq!(end[1]["params"]["eventId"], json!(7));
    let sent = b.request(
        br#"{"jsonrpc":"2.0","id":9,"method":"GetEvents","params":{"sinceId":6}}"#.to_vec(),
    );
    let sent: Value = serde_json::from_slice(&sent[0]).unwrap();
    assert_eq!(sent["params"]["sinceId"], json!(3));
}

#[test]
fn responses_are_broken_by_the_method_they_answer() {
    let mut b = breaker("state-always-idle");
    b.request(br#"{"jsonrpc":"2.0","id":"a","method":"GetSessionState","params":{}}"#.to_vec());
    let state = json!({"jsonrpc": "2.0", "id": "a", "result": {
        "task": {"status": "EXECUTING_TOOLS"}, "currentTaskId": "t"}});
    let got = out(&mut b, &state);
    assert_eq!(got[0]["result"]["task"]["status"], json!("IDLE"));
    assert_eq!(got[0]["result"]["currentTaskId"], Value::Null);
    let other = json!({"jsonrpc": "2.0", "id": 2, "result": {"task": {"status": "X"}}});
    assert_eq!(out(&mut b, &other), vec![other]);

    let mut b = breaker("method-not-found-as-internal");
    let got = out(
        &mut b,
        &json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32601, "message": "m"}}),
    );
    assert_eq!(got[0]["error"]["code"], json!(-32603));

    let mut b = breaker("batch-as-lines");
    let got = out(
        &mut b,
        &json!([{"jsonrpc": "2.0", "id": 1, "result": {}}, {"jsonrpc": "2.0", "id": 2, "result": {}}]),
    );
    assert_eq!(got.len(), 2);

    let mut b = breaker("shutdown-unanswered");
    b.request(br#"{"jsonrpc":"2.0","id":5,"method":"Shutdown"}"#.to_vec());
    assert!(out(&mut b, &json!({"jsonrpc": "2.0", "id": 5, "result": {}})).is_empty());
}
