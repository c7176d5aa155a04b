//! Knobs given in (fractional) seconds. One value parser for every such flag/variable, so
//! each arrives as a `Duration` and a bad value is refused, naming its variable, before the
//! runtime starts.

use std::ffi::OsStr;
use std::time::Duration;

use clap::builder::TypedValueParser;
use clap::error::ErrorKind;

/// `#[arg(value_parser = Seconds)]`: a non-negative, finite number of seconds.
#[derive(Debug, Clone, Copy)]
pub struct Seconds;

impl TypedValueParser for Seconds {
    type Value = Duration;

    fn parse_ref(
        &self,
        _command: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &OsStr,
    ) -> Result<Duration, clap::Error> {
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
        #[arg(long, env = "SECONDS_TEST_KNOB", value_parser = Seconds, default_value = "0.25")]
        knob: Duration,
    }

    #[test]
    fn fractions_parse_and_bad_values_name_their_variable() {
        let parsed = Knobs::try_parse_from(["t"]).unwrap();
        assert_eq!(parsed.knob, Duration::from_millis(250));
        let parsed = Knobs::try_parse_from(["t", "--knob", "2"]).unwrap();
        assert_eq!(parsed.knob, Duration::from_secs(2));
        for bad in ["-1", "soon", "NaN", "inf"] {
            let error = Knobs::try_parse_from(["t", &format!("--knob={bad}")]).unwrap_err();
            let message = error.to_string();
            assert!(
                message.contains("SECONDS_TEST_KNOB must be a non-negative number of seconds"),
                "{message}"
            );
        }
    }
}
