//! Reading tool arguments with errors that name the field, so the model can correct
//! itself (local-tool-runtime.md §8).

use serde_json::{Map, Value};

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub(crate) struct ArgError(pub String);

pub(crate) struct Args<'a> {
    tool: &'a str,
    map: &'a Map<String, Value>,
}

impl<'a> Args<'a> {
    pub(crate) fn new(tool: &'a str, map: &'a Map<String, Value>) -> Self {
        Self { tool, map }
    }

    /// Fails on arguments the tool does not define: a typo must not be silently ignored.
    pub(crate) fn only(&self, known: &[&str]) -> Result<(), ArgError> {
        match self.map.keys().find(|key| !known.contains(&key.as_str())) {
            Some(key) => Err(ArgError(format!(
                "{}: unknown argument \"{key}\" (expected: {})",
                self.tool,
                known.join(", ")
            ))),
            None => Ok(()),
        }
    }

    pub(crate) fn required_str(&self, name: &str) -> Result<&'a str, ArgError> {
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

    pub(crate) fn optional_str(&self, name: &str) -> Result<Option<&'a str>, ArgError> {
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
    pub(crate) fn optional_u64(&self, name: &str, min: u64) -> Result<Option<u64>, ArgError> {
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

    /// Any present, non-null value, for arguments of a shape the helpers here do not read.
    pub(crate) fn optional_value(&self, name: &str) -> Option<&'a Value> {
        self.map.get(name).filter(|value| !value.is_null())
    }

    /// An optional array of non-empty strings without NUL bytes (GitDiff's and GitCommit's
    /// `files`, given to git after `--`); empty when absent.
    pub(crate) fn optional_strings(&self, name: &str) -> Result<Vec<&'a str>, ArgError> {
        let Some(value) = self.optional_value(name) else {
            return Ok(Vec::new());
        };
        let invalid = || {
            ArgError(format!(
                "{}: argument \"{name}\" must be an array of strings",
                self.tool
            ))
        };
        let items = value.as_array().ok_or_else(invalid)?;
        items
            .iter()
            .map(|item| match item.as_str() {
                Some(text) if !text.is_empty() && !text.contains('\0') => Ok(text),
                _ => Err(invalid()),
            })
            .collect()
    }

    pub(crate) fn optional_object(
        &self,
        name: &str,
    ) -> Result<Option<&'a Map<String, Value>>, ArgError> {
        match self.map.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Object(object)) => Ok(Some(object)),
            Some(other) => Err(ArgError(format!(
                "{}: argument \"{name}\" must be an object, got {}",
                self.tool,
                kind(other)
            ))),
        }
    }
}

impl Args<'_> {
    pub(crate) fn optional_bool(&self, name: &str) -> Result<Option<bool>, ArgError> {
        match self.map.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Bool(flag)) => Ok(Some(*flag)),
            Some(other) => Err(ArgError(format!(
                "{}: argument \"{name}\" must be a boolean, got {}",
                self.tool,
                kind(other)
            ))),
        }
    }

    /// An optional integer in `min..=max`; the message states the bounds so the model can
    /// retry with a valid value.
    pub(crate) fn optional_u64_between(
        &self,
        name: &str,
        min: u64,
        max: u64,
    ) -> Result<Option<u64>, ArgError> {
        let out_of_range = |shown: &dyn std::fmt::Display| {
            ArgError(format!(
                "{}: argument \"{name}\" must be an integer between {min} and {max}, got {shown}",
                self.tool
            ))
        };
        match self.map.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Number(number)) => match number.as_u64() {
                Some(value) if (min..=max).contains(&value) => Ok(Some(value)),
                _ => Err(out_of_range(number)),
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn args(value: Value) -> Map<String, Value> {
        value.as_object().unwrap().clone()
    }

    #[test]
    fn booleans_and_bounded_integers_name_the_argument_and_the_rule() {
        let map = args(json!({"flag": true, "n": 5, "big": 601, "text": "x", "none": null}));
        let args = Args::new("T", &map);
        assert_eq!(args.optional_bool("flag"), Ok(Some(true)));
        assert_eq!(args.optional_bool("none"), Ok(None));
        assert_eq!(args.optional_bool("absent"), Ok(None));
        let error = args.optional_bool("text").unwrap_err().0;
        assert!(error.contains("\"text\" must be a boolean"), "{error}");
        assert_eq!(args.optional_u64_between("n", 1, 600), Ok(Some(5)));
        assert_eq!(args.optional_u64_between("none", 1, 600), Ok(None));
        let error = args.optional_u64_between("big", 1, 600).unwrap_err().0;
        assert!(error.contains("between 1 and 600, got 601"), "{error}");
        let error = args.optional_u64_between("n", 6, 600).unwrap_err().0;
        assert!(error.contains("got 5"), "{error}");
        let error = args.optional_u64_between("text", 1, 600).unwrap_err().0;
        assert!(
            error.contains("must be an integer, got a string"),
            "{error}"
        );
    }

    #[test]
    fn string_lists_refuse_anything_but_non_empty_strings() {
        let map = args(
            json!({"files": ["a", "b/c"], "none": null, "bad": ["a", ""], "nul": ["a\u{0}"], "text": "a"}),
        );
        let args = Args::new("GitDiff", &map);
        assert_eq!(args.optional_strings("files"), Ok(vec!["a", "b/c"]));
        assert_eq!(args.optional_strings("none"), Ok(vec![]));
        assert_eq!(args.optional_strings("absent"), Ok(vec![]));
        for name in ["bad", "nul", "text"] {
            let error = args.optional_strings(name).unwrap_err().0;
            assert_eq!(
                error,
                format!("GitDiff: argument \"{name}\" must be an array of strings")
            );
        }
    }
}
