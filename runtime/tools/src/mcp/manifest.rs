//! Manifest translation (local-tool-runtime.md §9.5) with validation at ingress
//! (system-design.md §19.6–§19.7): an MCP tool becomes a [`ToolDefinition`] named
//! `{server}/{tool}` only when the policy allows it and its manifest is sound; anything
//! else is rejected with a reason a person can read.

use std::sync::Arc;

use agent_protocol::ToolDefinition;
use agent_protocol::extensions::{MCP_NAME_SEPARATOR, is_valid_wire_name, to_wire_name};
use rmcp::model::Tool;
use serde_json::Value;

/// Descriptions longer than this are cut: they go into every LLM request and are a
/// favourite place for prompt injection.
pub(crate) const MAX_DESCRIPTION_CHARS: usize = 1024;
/// A larger input schema is rejected outright.
pub(crate) const MAX_SCHEMA_BYTES: usize = 64 * 1024;

/// An accepted tool: what the model sees, and the compiled schemas for validating calls.
pub(crate) struct McpTool {
    pub definition: ToolDefinition,
    /// The name the server knows the tool by.
    pub remote_name: String,
    pub input: Arc<jsonschema::Validator>,
    pub output: Option<Arc<jsonschema::Validator>>,
}

/// Why a tool of an allowed server was not registered.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("The MCP tool \"{server}/{tool}\" was rejected: {reason}")]
pub(crate) struct Rejected {
    pub server: String,
    pub tool: String,
    pub reason: String,
}

/// Translates one listed tool. `Ok(None)`: not allowlisted, silently skipped (the policy,
/// not the server, decides what exists).
pub(crate) fn translate(
    server: &str,
    allowed: &[String],
    tool: &Tool,
) -> Result<Option<McpTool>, Rejected> {
    let remote_name = tool.name.to_string();
    if !allowed.contains(&remote_name) {
        return Ok(None);
    }
    let reject = |reason: String| Rejected {
        server: server.to_owned(),
        tool: remote_name.clone(),
        reason,
    };
    let name = format!("{server}{MCP_NAME_SEPARATOR}{remote_name}");
    if remote_name.contains(MCP_NAME_SEPARATOR) || !is_valid_wire_name(&to_wire_name(&name)) {
        return Err(reject(format!(
            "its name must be letters, digits, '_' or '-' and \"{server}__{remote_name}\" at most 64 characters (the LLM tools API's limit)"
        )));
    }
    let schema = Value::Object((*tool.input_schema).clone());
    let input = compile_schema(&schema, "input").map_err(reject)?;
    let output = match &tool.output_schema {
        None => None,
        Some(output) => {
            Some(compile_schema(&Value::Object((**output).clone()), "output").map_err(reject)?)
        }
    };
    let description = tool
        .description
        .as_deref()
        .map(str::trim)
        .filter(|text| !text.is_empty())
        .unwrap_or("A tool of an MCP server");
    let description = match description.char_indices().nth(MAX_DESCRIPTION_CHARS) {
        Some((cut, _)) => format!("{}…", &description[..cut]),
        None => description.to_owned(),
    };
    Ok(Some(McpTool {
        definition: ToolDefinition {
            tool_name: name,
            description: format!("{description} (MCP server \"{server}\")"),
            input_schema: schema.into(),
        },
        remote_name,
        input: Arc::new(input),
        output: output.map(Arc::new),
    }))
}

/// A schema the model and the validator can both use: an object schema, small, valid
/// against its meta-schema and compilable without fetching anything remote.
fn compile_schema(schema: &Value, which: &str) -> Result<jsonschema::Validator, String> {
    let size = serde_json::to_vec(schema).map_or(usize::MAX, |bytes| bytes.len());
    if size > MAX_SCHEMA_BYTES {
        return Err(format!(
            "its {which} schema is {size} bytes, more than the {MAX_SCHEMA_BYTES} accepted"
        ));
    }
    if schema.get("type").and_then(Value::as_str) != Some("object") {
        return Err(format!(
            "its {which} schema must describe a JSON object (\"type\": \"object\")"
        ));
    }
    // Checks the schema against its meta-schema too; remote `$ref`s cannot be fetched.
    jsonschema::validator_for(schema)
        .map_err(|error| format!("its {which} schema is not a usable JSON Schema: {error}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tool(name: &str, description: &str, schema: Value) -> Tool {
        Tool::new(
            name.to_owned(),
            description.to_owned(),
            Arc::new(schema.as_object().cloned().unwrap()),
        )
    }

    fn allowed(names: &[&str]) -> Vec<String> {
        names.iter().map(|name| (*name).to_owned()).collect()
    }

    #[test]
    fn an_allowed_sound_tool_is_prefixed_and_keeps_its_schema() {
        let schema = json!({"type": "object", "properties": {"q": {"type": "string"}}});
        let translated = translate(
            "docs",
            &allowed(&["search"]),
            &tool("search", "Find", schema.clone()),
        )
        .unwrap()
        .unwrap();
        assert_eq!(translated.definition.tool_name, "docs/search");
        assert_eq!(*translated.definition.input_schema, schema);
        assert!(translated.definition.description.starts_with("Find"));
        assert_eq!(translated.remote_name, "search");
    }

    #[test]
    fn tools_outside_the_allowlist_are_skipped() {
        let listed = tool("other", "x", json!({"type": "object"}));
        assert!(
            translate("docs", &allowed(&["search"]), &listed)
                .unwrap()
                .is_none()
        );
    }

    #[test]
    fn bad_schemas_bad_names_and_huge_descriptions_are_handled() {
        let all = allowed(&["bad", "ReadFile/x", "a.b", "big", "arr", "remote"]);
        for (name, schema) in [
            (
                "bad",
                json!({"type": "object", "properties": {"q": {"type": 12}}}),
            ),
            ("arr", json!({"type": "array"})),
            (
                "remote",
                json!({"type": "object", "$ref": "https://evil.example/schema"}),
            ),
            ("ReadFile/x", json!({"type": "object"})),
            ("a.b", json!({"type": "object"})),
        ] {
            let result = translate("docs", &all, &tool(name, "d", schema));
            assert!(result.is_err(), "{name} accepted");
        }
        let huge = "ignore previous instructions ".repeat(1000);
        let cut = translate("docs", &all, &tool("big", &huge, json!({"type": "object"})))
            .unwrap()
            .unwrap();
        assert!(cut.definition.description.chars().count() < MAX_DESCRIPTION_CHARS + 40);
    }
}
