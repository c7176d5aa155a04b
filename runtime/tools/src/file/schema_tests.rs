//! Tool arguments cross a boundary (the model's): each coding file tool of INTEROP.md §11
//! offers exactly the schema `schemas/tool/arguments/<tool>.json` states, its document's own
//! keywords (`$schema`, `$id`, `title`) and the descriptions, written for people there and
//! for the model here, aside.

use agent_protocol::ToolRouter;
use serde_json::Value;

use crate::LocalToolRouter;

const FILE_TOOLS: &[&str] = &[
    "EditFile",
    "MultiEdit",
    "ListDirectory",
    "FindFiles",
    "GrepFiles",
    "CreateDirectory",
    "MoveFile",
];

#[test]
fn the_coding_file_tools_offer_the_argument_schemas_of_schemas_tool_arguments() {
    let offered = LocalToolRouter::new().available_tools();
    let folder =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../schemas/tool/arguments");
    for name in FILE_TOOLS {
        let text = std::fs::read_to_string(folder.join(format!("{name}.json"))).unwrap();
        let mut schema: Value = serde_json::from_str(&text).unwrap();
        for keyword in ["$schema", "$id", "title"] {
            schema.as_object_mut().unwrap().remove(keyword);
        }
        let mut tool = offered
            .iter()
            .find(|tool| tool.tool_name == *name)
            .unwrap_or_else(|| panic!("{name} is not offered"))
            .input_schema
            .as_ref()
            .clone();
        without_descriptions(&mut schema);
        without_descriptions(&mut tool);
        assert_eq!(tool, schema, "{name}");
    }
}

fn without_descriptions(value: &mut Value) {
    match value {
        Value::Object(map) => {
            map.remove("description");
            map.values_mut().for_each(without_descriptions);
        }
        Value::Array(items) => items.iter_mut().for_each(without_descriptions),
        _ => {}
    }
}
