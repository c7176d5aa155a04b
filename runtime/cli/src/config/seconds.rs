//! Knobs given in (fractional) seconds. One value type for every such flag/variable, so
//! each arrives as a `Duration`, a bad value is refused, naming its variable, before the
//! runtime starts, and a default taken from a library's `Duration` shows in `--help` as the
//! number of seconds the parser reads back.

use std::ffi::OsStr;
use std::fmt;
use std::time::Duration;

use clap::builder::{TypedValueParser, ValueParserFactory};
use clap::error::ErrorKind;

/// A non-negative, finite number of seconds; `#[arg(default_value_t = Seconds(…))]` takes a
/// library's default.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Seconds(pub Duration);

impl fmt::Display for Seconds {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(formatter, "{}", self.0.as_secs_f64())
    }
}

impl ValueParserFactory for Seconds {
    type Parser = SecondsParser;

    fn value_parser() -> SecondsParser {
        SecondsParser
    }
}

#[derive(Debug, Clone, Copy)]
pub(crate) struct SecondsParser;

impl TypedValueParser for SecondsParser {
    type Value = Seconds;

    fn parse_ref(
        &self,
        _command: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &OsStr,
    ) -> Result<Seconds, clap::Error> {
        // The environment variable is what people set; the flag name only when it has none.
        let name = arg
            .and_then(|arg| arg.get_env().map(|env| env.to_string_lossy().into_owned()))
            .or_else(|| arg.map(|arg| format!("--{}", arg.get_id())))
            .unwrap_or_else(|| "the value".to_owned());
        let text = value.to_string_lossy();
        text.trim()
            .parse::<f64>()
            .ok()
            .and_then(|number| Duration::try_from_secs_f64(number).ok())
            .map(Seconds)
            .ok_or_else(|| {
                clap::Error::raw(
                    ErrorKind::ValueValidation,
                    format!("{name} must be a non-negative number of seconds, got {text}\n"),
                )
            })
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    #[derive(Debug, Parser)]
    struct Knobs {
        #[arg(long, env = "SECONDS_TEST_KNOB", default_value = "0.25")]
        knob: Seconds,
    }

    #[test]
    fn fractions_parse_and_bad_values_name_their_variable() {
        let parsed = Knobs::try_parse_from(["t"]).unwrap();
        assert_eq!(parsed.knob, Seconds(Duration::from_millis(250)));
        let parsed = Knobs::try_parse_from(["t", "--knob", "2"]).unwrap();
        assert_eq!(parsed.knob, Seconds(Duration::from_secs(2)));
        for bad in ["-1", "soon", "NaN", "inf"] {
            let error = Knobs::try_parse_from(["t", &format!("--knob={bad}")]).unwrap_err();
            let message = error.to_string();
            assert!(
                message.contains("SECONDS_TEST_KNOB must be a non-negative number of seconds"),
                "{message}"
            );
        }
    }

    #[test]
    fn a_default_shows_as_the_seconds_it_parses_back_to() {
        for millis in [0, 500, 1000, 2500, 300_000] {
            let default = Seconds(Duration::from_millis(millis));
            let shown = default.to_string();
            let parsed = Knobs::try_parse_from(["t", "--knob", &shown]).unwrap();
            assert_eq!(parsed.knob, default, "{shown}");
        }
        assert_eq!(Seconds(Duration::from_millis(500)).to_string(), "0.5");
        assert_eq!(Seconds(Duration::from_secs(300)).to_string(), "300");
    }
}
