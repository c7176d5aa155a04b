//! The slowest scenarios of a run, from the step and hook durations in cucumber's JSON: every
//! report lists the ten slowest, so a gate that waits more than it checks shows where.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;

/// How many slow scenarios every report lists.
pub const SLOWEST: usize = 10;

/// One scenario and how long its steps and hooks took.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ScenarioTime {
    pub name: String,
    pub uri: String,
    pub line: usize,
    pub millis: u64,
}

/// The `n` slowest scenarios in cucumber's JSON report, slowest first (empty if it does not
/// parse: timings never fail a report).
pub fn slowest(cucumber_json: &str, n: usize) -> Vec<ScenarioTime> {
    let Ok(features) = serde_json::from_str::<Value>(cucumber_json) else {
        return Vec::new();
    };
    // (uri, line, name) → nanoseconds; a background element shares its scenario's key.
    let mut total: BTreeMap<(String, usize, String), u128> = BTreeMap::new();
    for feature in features.as_array().map(Vec::as_slice).unwrap_or_default() {
        let uri = feature.get("uri").and_then(Value::as_str).unwrap_or("");
        for element in feature
            .get("elements")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default()
        {
            let name = element.get("name").and_then(Value::as_str).unwrap_or("");
            let line = element.get("line").and_then(Value::as_u64).unwrap_or(0) as usize;
            let nanos: u128 = ["before", "steps", "after"]
                .iter()
                .flat_map(|key| {
                    element
                        .get(*key)
                        .and_then(Value::as_array)
                        .map(Vec::as_slice)
                        .unwrap_or_default()
                })
                .filter_map(|item| item.pointer("/result/duration").and_then(Value::as_u64))
                .map(u128::from)
                .sum();
            *total
                .entry((uri.to_owned(), line, name.to_owned()))
                .or_default() += nanos;
        }
    }
    let mut times: Vec<ScenarioTime> = total
        .into_iter()
        .map(|((uri, line, name), nanos)| ScenarioTime {
            name,
            uri: within_features(&uri),
            line,
            millis: u64::try_from(nanos / 1_000_000).unwrap_or(u64::MAX),
        })
        .collect();
    times.sort_by(|a, b| b.millis.cmp(&a.millis).then_with(|| a.uri.cmp(&b.uri)));
    times.truncate(n);
    times
}

/// `rpc/framing.feature` of `…/features/rpc/framing.feature`: where the features directory
/// lies (a temp dir for the built-in ones) says nothing about the scenario.
fn within_features(uri: &str) -> String {
    uri.rsplit_once("features/")
        .map_or(uri, |(_, rest)| rest)
        .to_owned()
}

/// `12.3 s` or `850 ms`.
pub fn human(millis: u64) -> String {
    if millis >= 1000 {
        format!("{:.1} s", millis as f64 / 1000.0)
    } else {
        format!("{millis} ms")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_hooks_and_background_add_up_and_the_slowest_come_first() {
        let json = r#"[{"uri": "tmp/conformance-builtin-x/features/a.feature", "elements": [
            {"type": "scenario", "name": "fast", "line": 3, "steps": [{"result": {"duration": 2000000}}]},
            {"type": "scenario", "name": "slow", "line": 9,
             "before": [{"result": {"duration": 1000000000}}],
             "steps": [{"result": {"duration": 500000000}}], "after": [{"result": {"duration": 250000000}}]},
            {"type": "background", "name": "slow", "line": 9, "steps": [{"result": {"duration": 250000000}}]}
        ]}]"#;
        let times = slowest(json, 1);
        assert_eq!(times.len(), 1);
        assert_eq!(times[0].name, "slow");
        assert_eq!(times[0].millis, 2000);
        assert_eq!(times[0].uri, "a.feature");
        assert_eq!(slowest(json, 10)[1].millis, 2);
        assert_eq!(human(2000), "2.0 s");
        assert!(slowest("not json", 10).is_empty());
    }
}
