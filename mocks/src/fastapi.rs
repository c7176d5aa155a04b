//! Request validation the way the real services (FastAPI + pydantic v2 models with camelCase
//! aliases) answer it: 422 `{"detail": [{type, loc, msg, input, ctx?}]}`, every bad field at
//! once, before the handler looks anything up. Lax like pydantic: integral floats and numeric
//! strings pass as integers.

use serde_json::{Map, Value, json};
use wiremock::{Request, ResponseTemplate};

use crate::faults::json_template;

/// One pydantic error item; `loc` is under `body`.
fn item(field: Option<&str>, kind: &str, msg: &str, input: &Value, ctx: Option<Value>) -> Value {
    let loc = match field {
        Some(field) => json!(["body", field]),
        None => json!(["body"]),
    };
    let mut error = json!({"type": kind, "loc": loc, "msg": msg, "input": input});
    if let (Some(ctx), Some(error)) = (ctx, error.as_object_mut()) {
        error.insert("ctx".into(), ctx);
    }
    error
}

/// 422 with these error items.
pub(crate) fn unprocessable(errors: Vec<Value>) -> ResponseTemplate {
    json_template(422, &json!({ "detail": errors }))
}

/// The body as a JSON object, or the 422 FastAPI gives for a missing, broken or non-object body.
pub(crate) fn object_body(request: &Request) -> Result<Map<String, Value>, Box<ResponseTemplate>> {
    if request.body.is_empty() {
        let error = item(None, "missing", "Field required", &Value::Null, None);
        return Err(Box::new(unprocessable(vec![error])));
    }
    match serde_json::from_slice::<Value>(&request.body) {
        Ok(Value::Object(object)) => Ok(object),
        Ok(other) => Err(Box::new(unprocessable(vec![item(
            None,
            "model_attributes_type",
            "Input should be a valid dictionary or object to extract fields from",
            &other,
            None,
        )]))),
        Err(error) => Err(Box::new(unprocessable(vec![item(
            None,
            "json_invalid",
            "JSON decode error",
            &json!({}),
            Some(json!({"error": error.to_string()})),
        )]))),
    }
}

/// Reads fields of one body, collecting every error (pydantic reports them all).
pub(crate) struct Fields<'a> {
    body: &'a Map<String, Value>,
    errors: Vec<Value>,
}

impl<'a> Fields<'a> {
    pub(crate) fn new(body: &'a Map<String, Value>) -> Self {
        Self {
            body,
            errors: Vec::new(),
        }
    }

    fn fail(&mut self, field: &str, kind: &str, msg: &str, ctx: Option<Value>) {
        let input = self.body.get(field).cloned().unwrap_or(Value::Null);
        self.errors.push(item(Some(field), kind, msg, &input, ctx));
    }

    fn missing(&mut self, field: &str) {
        let input = Value::Object(self.body.clone());
        let error = item(Some(field), "missing", "Field required", &input, None);
        self.errors.push(error);
    }

    /// `str = Field(min_length, max_length)`; `None` when absent (and then an error if required).
    pub(crate) fn string(
        &mut self,
        field: &str,
        required: bool,
        min: usize,
        max: Option<usize>,
    ) -> Option<String> {
        let value = match self.body.get(field) {
            None => {
                if required {
                    self.missing(field);
                }
                return None;
            }
            Some(Value::String(value)) => value.clone(),
            Some(_) => {
                self.fail(field, "string_type", "Input should be a valid string", None);
                return None;
            }
        };
        let length = value.chars().count();
        if length < min {
            let unit = if min == 1 { "character" } else { "characters" };
            let msg = format!("String should have at least {min} {unit}");
            self.fail(
                field,
                "string_too_short",
                &msg,
                Some(json!({"min_length": min})),
            );
            return None;
        }
        if let Some(max) = max
            && length > max
        {
            let msg = format!("String should have at most {max} characters");
            self.fail(
                field,
                "string_too_long",
                &msg,
                Some(json!({"max_length": max})),
            );
            return None;
        }
        Some(value)
    }

    /// `str | None = None`.
    pub(crate) fn optional_string(&mut self, field: &str) -> Option<String> {
        match self.body.get(field) {
            None | Some(Value::Null) => None,
            Some(_) => self.string(field, false, 0, None),
        }
    }

    /// `int = Field(default, ge, le)`.
    pub(crate) fn int(&mut self, field: &str, default: i64, min: i64, max: Option<i64>) -> i64 {
        let value = match self.body.get(field) {
            None => return default,
            Some(Value::Number(number)) => number.as_i64().or_else(|| {
                number
                    .as_f64()
                    .filter(|f| f.fract() == 0.0)
                    .map(|f| f as i64)
            }),
            Some(Value::String(text)) => text.trim().parse().ok(),
            Some(_) => None,
        };
        let Some(value) = value else {
            self.fail(field, "int_type", "Input should be a valid integer", None);
            return default;
        };
        if value < min {
            let msg = format!("Input should be greater than or equal to {min}");
            self.fail(field, "greater_than_equal", &msg, Some(json!({"ge": min})));
        } else if let Some(max) = max
            && value > max
        {
            let msg = format!("Input should be less than or equal to {max}");
            self.fail(field, "less_than_equal", &msg, Some(json!({"le": max})));
        }
        value
    }

    /// `bool = default`.
    pub(crate) fn boolean(&mut self, field: &str, default: bool) -> bool {
        match self.body.get(field) {
            None => default,
            Some(Value::Bool(value)) => *value,
            Some(_) => {
                self.fail(field, "bool_type", "Input should be a valid boolean", None);
                default
            }
        }
    }

    /// `Literal[...]`, with a default when absent (`None`: required).
    pub(crate) fn literal(
        &mut self,
        field: &str,
        allowed: &[&str],
        default: Option<&str>,
    ) -> Option<String> {
        match (self.body.get(field), default) {
            (None, Some(default)) => return Some(default.to_string()),
            (None, None) => {
                self.missing(field);
                return None;
            }
            (Some(Value::String(value)), _) if allowed.contains(&value.as_str()) => {
                return Some(value.clone());
            }
            _ => {}
        }
        let quoted: Vec<String> = allowed.iter().map(|value| format!("'{value}'")).collect();
        let expected = match quoted.split_last() {
            Some((last, [])) => last.clone(),
            Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
            None => String::new(),
        };
        let msg = format!("Input should be {expected}");
        self.fail(
            field,
            "literal_error",
            &msg,
            Some(json!({"expected": expected})),
        );
        None
    }

    /// `Optional[...]` of a JSON type: present and neither null nor of that type is an error.
    pub(crate) fn nullable_kind(&mut self, field: &str, is_kind: fn(&Value) -> bool, kind: &str) {
        if let Some(value) = self.body.get(field)
            && !value.is_null()
            && !is_kind(value)
        {
            let (code, msg) = kind_error(kind);
            self.fail(field, code, msg, None);
        }
    }

    /// A non-optional field of a JSON type with a default (`list[str] = []`, `dict = {}`):
    /// null is an error too.
    pub(crate) fn defaulted_kind(&mut self, field: &str, is_kind: fn(&Value) -> bool, kind: &str) {
        if let Some(value) = self.body.get(field)
            && !is_kind(value)
        {
            let (code, msg) = kind_error(kind);
            self.fail(field, code, msg, None);
        }
    }

    /// 422 when any field failed.
    pub(crate) fn finish(self) -> Result<(), Box<ResponseTemplate>> {
        if self.errors.is_empty() {
            Ok(())
        } else {
            Err(Box::new(unprocessable(self.errors)))
        }
    }
}

fn kind_error(kind: &str) -> (&'static str, &'static str) {
    match kind {
        "list" => ("list_type", "Input should be a valid list"),
        _ => ("dict_type", "Input should be a valid dictionary"),
    }
}
