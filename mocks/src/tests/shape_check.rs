//! Compares an answer with a shape of `tests-data/real-shapes.json`, member by member:
//! names (none missing, none invented), JSON types and null-ness, pinned values.

use serde_json::Value;

/// The fixture, read at compile time so the test needs no working directory.
pub(super) fn fixture() -> Value {
    serde_json::from_str(include_str!("../../tests-data/real-shapes.json")).unwrap()
}

/// Every difference between `answer` and the fixture's answer `name` (status included).
pub(super) fn differences(fixture: &Value, name: &str, status: u16, answer: &Value) -> Vec<String> {
    let entry = &fixture["answers"][name];
    assert!(entry.is_object(), "no answer {name:?} in the fixture");
    let mut out = Vec::new();
    if entry["status"].as_u64() != Some(u64::from(status)) {
        out.push(format!(
            "status {status}, the real service answers {}",
            entry["status"]
        ));
    }
    compare(fixture, &entry["shape"], answer, "", &mut out);
    if let Some(values) = entry["values"].as_object() {
        for (pointer, expected) in values {
            let actual = answer.pointer(pointer);
            if actual != Some(expected) {
                out.push(format!(
                    "{pointer}: {actual:?}, the real service sends {expected}"
                ));
            }
        }
    }
    out
}

/// Panics with every difference, naming the answer.
pub(super) fn assert_shape(fixture: &Value, name: &str, status: u16, answer: &Value) {
    let found = differences(fixture, name, status, answer);
    assert!(found.is_empty(), "{name}: {found:#?}\nanswer: {answer:#}");
}

fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(number) if number.is_i64() || number.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn compare(fixture: &Value, shape: &Value, actual: &Value, at: &str, out: &mut Vec<String>) {
    if let Some(name) = shape.get("$ref").and_then(Value::as_str) {
        let target = &fixture["$defs"][name]["shape"];
        assert!(!target.is_null(), "no $defs {name:?} in the fixture");
        return compare(fixture, target, actual, at, out);
    }
    match (shape, actual) {
        (Value::String(types), _) => {
            let kind = type_name(actual);
            if !types.split('|').any(|t| t == "any" || t == kind) {
                out.push(format!("{at}: {kind}, the real service sends {types}"));
            }
        }
        (Value::Object(members), Value::Object(given)) => {
            for (key, member) in members {
                let (name, optional) = match key.strip_suffix('?') {
                    Some(name) => (name, true),
                    None => (key.as_str(), false),
                };
                match given.get(name) {
                    Some(value) => compare(fixture, member, value, &format!("{at}/{name}"), out),
                    None if optional => {}
                    None => out.push(format!("{at}/{name}: missing, the real service sends it")),
                }
            }
            let known = |name: &str| {
                members.contains_key(name) || members.contains_key(&format!("{name}?"))
            };
            for name in given.keys().filter(|name| !known(name)) {
                out.push(format!(
                    "{at}/{name}: invented, the real service never sends it"
                ));
            }
        }
        (Value::Array(item), Value::Array(items)) => {
            if let Some(item) = item.first() {
                for (index, value) in items.iter().enumerate() {
                    compare(fixture, item, value, &format!("{at}/{index}"), out);
                }
            }
        }
        (_, _) => out.push(format!(
            "{at}: {}, the real service sends {}",
            type_name(actual),
            if shape.is_array() { "array" } else { "object" }
        )),
    }
}

#[test]
fn the_comparison_finds_invented_missing_and_mistyped_members() {
    let fixture = fixture();
    let answer = serde_json::json!({
        "taskId": "t", "status": "completed", "stepCount": "2", "completionReason": null,
        "sessionId": "s"
    });
    let found = differences(&fixture, "task_completed", 200, &answer);
    assert_eq!(found.len(), 2, "{found:#?}");
    assert!(found[0].starts_with("/stepCount: string"));
    assert!(found[1].starts_with("/sessionId: invented"));
    let answer = serde_json::json!({"taskId": "t", "status": "completed", "stepCount": 2});
    let found = differences(&fixture, "task_completed", 201, &answer);
    assert_eq!(found.len(), 2, "{found:#?}");
    assert!(found[1].starts_with("/completionReason: missing"));
}
