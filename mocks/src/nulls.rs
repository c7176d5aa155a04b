//! How the fakes write the members a real service leaves unset. The real services differ
//! here (the Policy Service's pydantic dump sends every unset capability scope field as
//! `null`; the Session Service's hand-built answers leave unset members out), and a runtime
//! must accept both, so a scenario can switch a fake to either extreme.

use std::str::FromStr;

use serde_json::Value;

/// The null style of a fake's answers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Nulls {
    /// Exactly as the real services answer (the default): unset capability scope fields as
    /// `null`, `completionReason: null` in a task completion, and the Session Service's
    /// optional members (`policyBundle`, `incompatibilityReason`, `nextToken`, …) left out.
    #[default]
    AsServed,
    /// Every optional member present, `null` when unset: e.g. `policyBundle: null` in an
    /// incompatible create answer and `incompatibilityReason: null` in a compatible one.
    Verbose,
    /// No `null` member anywhere: unset scope fields and `completionReason` are left out.
    Omitted,
}

impl Nulls {
    /// Applies the style to one answer whose `optional` top-level members the real service
    /// leaves out when unset.
    pub(crate) fn apply(self, answer: &mut Value, optional: &[&str]) {
        match self {
            Nulls::AsServed => {}
            Nulls::Verbose => {
                if let Some(object) = answer.as_object_mut() {
                    for member in optional {
                        object.entry(*member).or_insert(Value::Null);
                    }
                }
            }
            Nulls::Omitted => strip_nulls(answer),
        }
    }
}

impl FromStr for Nulls {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text {
            "as-served" => Ok(Nulls::AsServed),
            "verbose" => Ok(Nulls::Verbose),
            "omitted" => Ok(Nulls::Omitted),
            other => Err(format!(
                "unknown null style {other:?} (as-served, verbose or omitted)"
            )),
        }
    }
}

/// Removes every `null` object member, at any depth (array items stay).
pub(crate) fn strip_nulls(value: &mut Value) {
    match value {
        Value::Object(members) => {
            members.retain(|_, member| !member.is_null());
            members.values_mut().for_each(strip_nulls);
        }
        Value::Array(items) => items.iter_mut().for_each(strip_nulls),
        _ => {}
    }
}
