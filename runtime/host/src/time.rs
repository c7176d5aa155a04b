//! Wall-clock timestamps in the wire format (RFC 3339, UTC), and durations as the
//! events' whole milliseconds.

use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

pub(crate) fn now_rfc3339() -> String {
    OffsetDateTime::now_utc()
        .format(&Rfc3339)
        .unwrap_or_else(|_| String::from("1970-01-01T00:00:00Z"))
}

pub(crate) fn parse_rfc3339(text: &str) -> Option<OffsetDateTime> {
    OffsetDateTime::parse(text, &Rfc3339).ok()
}

/// A duration as whole milliseconds, saturating (events' `latencyMs`, `delayMs`, …).
pub(crate) fn millis(duration: std::time::Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}
