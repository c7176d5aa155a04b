//! Helpers: validation against a schema, the keys a schema declares, its enums.

use super::*;

/// Serializes `value`, validates it against `schema`, checks that every key is declared, and
/// returns the JSON.
pub(crate) fn check<T: Serialize>(schema: &str, value: &T) -> Value {
    let json = serde_json::to_value(value).unwrap();
    if let Err(error) = agent_schemas::validate(schema, &json) {
        panic!("{schema}: {error}\n{json:#}");
    }
    let undeclared = undeclared_keys(schema, &json);
    assert!(
        undeclared.is_empty(),
        "{schema}: keys the schema does not declare (a renamed field?): {undeclared:?}\n{json:#}"
    );
    json
}

pub(crate) fn check_event(event: &SessionEvent) -> Value {
    let json = check("events/SessionEvent", event);
    agent_schemas::validate_session_event(&json).unwrap_or_else(|e| panic!("{e}"));
    let payload_schema = format!("events/payloads/{}", event.event_type());
    check(&payload_schema, &json["payload"]);
    json
}

/// A `$ref` target: the document name and the node.
pub(crate) fn resolve(document: &str, reference: &str) -> (String, &'static Value) {
    let (path, fragment) = reference.split_once('#').unwrap_or((reference, ""));
    let name = if path.is_empty() {
        document.to_owned()
    } else {
        let mut parts: Vec<&str> = document.split('/').collect();
        parts.pop();
        for segment in path.trim_end_matches(".json").split('/') {
            match segment {
                ".." => {
                    parts.pop();
                }
                "." => {}
                other => parts.push(other),
            }
        }
        parts.join("/")
    };
    let root = agent_schemas::schema(&name).unwrap_or_else(|| panic!("no schema {name}"));
    let node = root
        .pointer(fragment)
        .unwrap_or_else(|| panic!("{name} has no {fragment}"));
    (name, node)
}

/// Whether an `if` subschema of the simple forms used in `schemas/` holds for `instance`;
/// `None` when the form is not understood (both branches then count).
pub(crate) fn simple_if(condition: &Value, instance: &Value) -> Option<bool> {
    let mut holds = true;
    for (keyword, argument) in condition.as_object()? {
        match keyword.as_str() {
            "required" => {
                for key in argument.as_array()? {
                    holds &= instance.get(key.as_str()?).is_some();
                }
            }
            "properties" => {
                for (key, rule) in argument.as_object()? {
                    let expected = rule.get("const")?;
                    if let Some(actual) = instance.get(key) {
                        holds &= actual == expected;
                    }
                }
            }
            "type" if argument == "null" => holds &= instance.is_null(),
            _ => return None,
        }
    }
    Some(holds)
}

#[derive(Default)]
pub(crate) struct Gathered {
    /// Some node declares `properties`.
    closed: bool,
    /// Some node declares arbitrary keys as expected (`additionalProperties: true` or a
    /// schema, `patternProperties`).
    open: bool,
    properties: BTreeMap<String, Vec<(String, &'static Value)>>,
    items: Vec<(String, &'static Value)>,
}

pub(crate) fn gather(document: &str, node: &'static Value, instance: &Value, into: &mut Gathered) {
    let Some(map) = node.as_object() else {
        return;
    };
    if let Some(Value::String(reference)) = map.get("$ref") {
        let (target, target_node) = resolve(document, reference);
        gather(&target, target_node, instance, into);
    }
    if let Some(Value::Object(properties)) = map.get("properties") {
        into.closed = true;
        for (key, subschema) in properties {
            into.properties
                .entry(key.clone())
                .or_default()
                .push((document.to_owned(), subschema));
        }
    }
    // `additionalProperties: true` spelled out, or a schema for extra keys, marks a free-form
    // map; a mere absence of `additionalProperties` does not (the key check is stricter than
    // validation on purpose).
    if map
        .get("additionalProperties")
        .is_some_and(|extra| extra.is_object() || extra == &Value::Bool(true))
        || map.contains_key("patternProperties")
    {
        into.open = true;
    }
    if let Some(items) = map.get("items") {
        into.items.push((document.to_owned(), items));
    }
    for keyword in ["allOf", "anyOf", "oneOf"] {
        if let Some(Value::Array(branches)) = map.get(keyword) {
            for branch in branches {
                gather(document, branch, instance, into);
            }
        }
    }
    if let Some(condition) = map.get("if") {
        let holds = simple_if(condition, instance);
        if holds != Some(false)
            && let Some(then) = map.get("then")
        {
            gather(document, then, instance, into);
        }
        if holds != Some(true)
            && let Some(otherwise) = map.get("else")
        {
            gather(document, otherwise, instance, into);
        }
    }
}

pub(crate) fn undeclared_walk(
    nodes: &[(String, &'static Value)],
    instance: &Value,
    pointer: &str,
    out: &mut Vec<String>,
) {
    let mut gathered = Gathered::default();
    for (document, node) in nodes {
        gather(document, node, instance, &mut gathered);
    }
    match instance {
        Value::Object(map) => {
            for (key, value) in map {
                let child = format!("{pointer}/{key}");
                match gathered.properties.get(key) {
                    Some(subschemas) => undeclared_walk(subschemas, value, &child, out),
                    None if gathered.closed && !gathered.open => out.push(child),
                    None => {}
                }
            }
        }
        Value::Array(items) if !gathered.items.is_empty() => {
            for (index, item) in items.iter().enumerate() {
                undeclared_walk(&gathered.items, item, &format!("{pointer}/{index}"), out);
            }
        }
        _ => {}
    }
}

pub(crate) fn undeclared_keys(schema: &str, instance: &Value) -> Vec<String> {
    let root = agent_schemas::schema(schema).unwrap_or_else(|| panic!("no schema {schema}"));
    let mut out = Vec::new();
    undeclared_walk(&[(schema.to_owned(), root)], instance, "", &mut out);
    out
}

pub(crate) fn schema_enum(schema: &str, pointer: &str) -> BTreeSet<String> {
    let node = agent_schemas::schema(schema)
        .and_then(|root| root.pointer(pointer))
        .unwrap_or_else(|| panic!("{schema}#{pointer}"));
    let node = match node.get("$ref") {
        Some(Value::String(reference)) => resolve(schema, reference).1,
        _ => node,
    };
    node["enum"]
        .as_array()
        .unwrap_or_else(|| panic!("{schema}#{pointer} has no enum"))
        .iter()
        // A nullable enum lists `null` too; it is not a variant.
        .filter_map(|v| v.as_str().map(str::to_owned))
        .collect()
}

pub(crate) fn serialized<T: Serialize>(values: &[T]) -> BTreeSet<String> {
    values
        .iter()
        .map(|v| {
            serde_json::to_value(v)
                .unwrap()
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect()
}

pub(crate) fn object(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        other => panic!("not an object: {other}"),
    }
}
