//! Reading tool arguments with errors that name the field, so the model can correct
//! itself (local-tool-runtime.md §8).

use serde_json::{Map, Value};

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ArgError(pub String);

pub struct Args<'a> {
    tool: &'a str,
    map: &'a Map<String, Value>,
}

impl<'a> Args<'a> {
    pub fn new(tool: &'a str, map: &'a Map<String, Value>) -> Self {
        Self { tool, map }
    }

    /// Fails on arguments the tool does not define: a typo must not be silently ignored.
    pub fn only(&self, known: &[&str]) -> Result<(), ArgError> {
        match self.map.keys().find(|key| !known.contains(&key.as_str())) {
            Some(key) => Err(ArgError(format!(
                "{}: unknown argument \"{key}\" (expected: {})",
                self.tool,
                known.join(", ")
            ))),
            None => Ok(()),
        }
    }

    pub fn required_str(&self, name: &str) -> Result<&'a str, ArgError> {
        match self.map.get(name) {
            Some(Value::String(text)) => Ok(text),
            None | Some(Value::Null) => Err(ArgError(format!(
                "{}: missing required argument \"{name}\"",
                self.tool
            ))),
            Some(other) => Err(ArgError(format!(
                "{}: argument \"{name}\" must be a string, got {}",
                self.tool,
                kind(other)
            ))),
        }
    }

    pub fn optional_str(&self, name: &str) -> Result<Option<&'a str>, ArgError> {
        match self.map.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(text)) => Ok(Some(text)),
            Some(other) => Err(ArgError(format!(
                "{}: argument \"{name}\" must be a string, got {}",
                self.tool,
                kind(other)
            ))),
        }
    }

    /// An optional integer of at least `min`.
    pub fn optional_u64(&self, name: &str, min: u64) -> Result<Option<u64>, ArgError> {
        match self.map.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Number(number)) => match number.as_u64() {
                Some(value) if value >= min => Ok(Some(value)),
                _ => Err(ArgError(format!(
                    "{}: argument \"{name}\" must be an integer of at least {min}, got {number}",
                    self.tool
                ))),
            },
            Some(other) => Err(ArgError(format!(
                "{}: argument \"{name}\" must be an integer, got {}",
                self.tool,
                kind(other)
            ))),
        }
    }
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}
