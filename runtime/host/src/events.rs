//! SessionEvent emission (local-agent-host.md §12, INTEROP.md §1): integer ids, monotonic
//! per session; the full ID chain on every event; a bounded ring for `GetEvents`; and a
//! structured JSON copy in the local log.

use std::collections::VecDeque;
use std::sync::Mutex;

use agent_protocol::checkpoint::EVENT_ID_EPOCH_SPAN;
use agent_protocol::events::{EventBody, METHOD, SessionEvent};
use agent_protocol::jsonrpc::VERSION;
use agent_protocol::methods::GetEventsResult;

use crate::audit::Outlets;
use crate::outbound::Outbound;
use crate::time::now_rfc3339;

/// Where an event sits in the ID chain below the session.
#[derive(Debug, Clone, Default)]
pub(crate) struct Scope {
    pub task_id: Option<String>,
    pub step_id: Option<String>,
}

impl Scope {
    pub(crate) fn session() -> Self {
        Self::default()
    }

    pub(crate) fn task(task_id: &str) -> Self {
        Self {
            task_id: Some(task_id.to_owned()),
            step_id: None,
        }
    }

    pub(crate) fn step(task_id: &str, step_id: &str) -> Self {
        Self {
            task_id: Some(task_id.to_owned()),
            step_id: Some(step_id.to_owned()),
        }
    }
}

/// The events kept for `GetEvents`, by id, as the JSON they were sent as: kept as structs,
/// a thousand events would hold about three times the bytes, a good part of a long
/// session's memory. `GetEvents` is rare; it parses them back.
struct Ring {
    next_id: u64,
    events: VecDeque<(u64, Box<str>)>,
    /// Bytes of JSON in `events`.
    bytes: usize,
}

/// See [`EventSink::replay`].
#[derive(Debug, Default)]
pub struct Replay {
    pub events: Vec<(u64, String)>,
    pub gap_detected: bool,
    pub latest_id: u64,
}

pub(crate) struct EventSink {
    session_id: String,
    workspace_id: String,
    outbound: Outbound,
    capacity: usize,
    /// Bytes of JSON the ring may hold; the newest event is kept whatever its size.
    byte_budget: usize,
    /// The process's span of event ids (`Checkpoint.eventIdEpoch`): 0 for a new session,
    /// one more for each restore in a new process.
    epoch: u64,
    ring: Mutex<Ring>,
    /// Audit, telemetry and the local run store (crate::audit).
    outlets: Option<Outlets>,
}

impl EventSink {
    pub(crate) fn new(
        session_id: &str,
        workspace_id: &str,
        outbound: Outbound,
        capacity: usize,
    ) -> Self {
        Self::with_epoch(session_id, workspace_id, outbound, capacity, 0)
    }

    /// A sink whose ids start at `epoch × EVENT_ID_EPOCH_SPAN + 1`: above every id an
    /// earlier process of the session can have sent.
    pub(crate) fn with_epoch(
        session_id: &str,
        workspace_id: &str,
        outbound: Outbound,
        capacity: usize,
        epoch: u64,
    ) -> Self {
        Self {
            session_id: session_id.to_owned(),
            workspace_id: workspace_id.to_owned(),
            outbound,
            capacity: capacity.max(1),
            byte_budget: usize::MAX,
            epoch,
            ring: Mutex::new(Ring {
                next_id: epoch.saturating_mul(EVENT_ID_EPOCH_SPAN).saturating_add(1),
                events: VecDeque::new(),
                bytes: 0,
            }),
            outlets: None,
        }
    }

    pub(crate) fn epoch(&self) -> u64 {
        self.epoch
    }

    /// Bounds the ring by the bytes of its events' JSON too, not only by their count.
    pub(crate) fn with_byte_budget(mut self, bytes: usize) -> Self {
        self.byte_budget = bytes;
        self
    }

    pub(crate) fn with_outlets(mut self, outlets: Outlets) -> Self {
        self.outlets = Some(outlets);
        self
    }

    pub(crate) fn outlets(&self) -> Option<&Outlets> {
        self.outlets.as_ref()
    }

    pub(crate) fn emit(&self, scope: Scope, body: EventBody) {
        let warning_scope = scope.clone();
        let mut ring = match self.ring.lock() {
            Ok(ring) => ring,
            Err(poisoned) => poisoned.into_inner(),
        };
        let event = SessionEvent {
            event_id: ring.next_id,
            timestamp: now_rfc3339(),
            session_id: self.session_id.clone(),
            workspace_id: Some(self.workspace_id.clone()),
            task_id: scope.task_id,
            step_id: scope.step_id,
            body,
        };
        ring.next_id += 1;
        // Serialised once for the client, the log and the ring. Queued while the lock is
        // held, so ids leave the process in increasing order.
        let json = match serde_json::to_string(&event) {
            Ok(json) => {
                self.outbound.send_line(notification_line(&json));
                tracing::info!(target: "session_event", event = %json, "{}", event.event_type());
                Some(json)
            }
            Err(error) => {
                tracing::error!(%error, "could not serialize a session event");
                None
            }
        };
        let warning = self
            .outlets
            .as_ref()
            .and_then(|outlets| outlets.record(&event));
        if let Some(json) = json {
            ring.bytes += json.len();
            ring.events
                .push_back((event.event_id, json.into_boxed_str()));
            while ring.events.len() > self.capacity
                || (ring.bytes > self.byte_budget && ring.events.len() > 1)
            {
                let Some((_, dropped)) = ring.events.pop_front() else {
                    break;
                };
                ring.bytes -= dropped.len();
            }
        }
        drop(ring);
        if let Some(warning) = warning {
            self.emit(warning_scope, warning);
        }
    }

    /// At most `max` kept events after `since_id` as the JSON they were sent as, and whether
    /// some after `since_id` were dropped: the sandbox's event stream reads these a page at
    /// a time, copying only what it is about to send.
    pub(crate) fn replay(&self, since_id: u64, max: usize) -> Replay {
        let ring = match self.ring.lock() {
            Ok(ring) => ring,
            Err(poisoned) => poisoned.into_inner(),
        };
        let latest_id = ring.next_id.saturating_sub(1);
        let oldest_kept = ring.events.front().map_or(ring.next_id, |(id, _)| *id);
        Replay {
            // Ids rise along the ring: the first one after `since_id` is found by halving,
            // so a reader's page costs the same however full the ring is.
            events: ring
                .events
                .range(ring.events.partition_point(|(id, _)| *id <= since_id)..)
                .take(max)
                .map(|(id, json)| (*id, json.to_string()))
                .collect(),
            gap_detected: since_id + 1 < oldest_kept && since_id < latest_id,
            latest_id,
        }
    }

    /// Events after `since_id` still in the ring; `gap_detected` when some were dropped.
    pub(crate) fn since(&self, since_id: u64) -> GetEventsResult {
        let ring = match self.ring.lock() {
            Ok(ring) => ring,
            Err(poisoned) => poisoned.into_inner(),
        };
        let latest_id = ring.next_id.saturating_sub(1);
        let oldest_kept = ring.events.front().map_or(ring.next_id, |(id, _)| *id);
        let mut lost = false;
        let events = ring
            .events
            .iter()
            .filter(|(id, _)| *id > since_id)
            .filter_map(|(id, json)| match serde_json::from_str(json) {
                Ok(event) => Some(event),
                Err(error) => {
                    // The ring holds what `emit` serialised; this is a bug. The client
                    // hears of the hole as of any other.
                    tracing::error!(event_id = id, %error, "a kept event does not parse back");
                    lost = true;
                    None
                }
            })
            .collect();
        GetEventsResult {
            events,
            gap_detected: lost || (since_id + 1 < oldest_kept && since_id < latest_id),
            latest_id,
        }
    }
}

/// The `session.event` notification around an event's JSON: what serialising
/// `Notification::new(METHOD, &event)` writes, without serialising the event again.
fn notification_line(event_json: &str) -> String {
    format!(r#"{{"jsonrpc":"{VERSION}","method":"{METHOD}","params":{event_json}}}"#)
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_protocol::events::TextChunk;
    use agent_protocol::jsonrpc::Notification;

    fn chunk(text: &str) -> EventBody {
        EventBody::TextChunk(TextChunk { text: text.into() })
    }

    #[test]
    fn the_notification_line_is_the_serialised_notification() {
        let event = SessionEvent {
            event_id: 7,
            timestamp: "2026-11-25T12:00:00Z".into(),
            session_id: "s".into(),
            workspace_id: Some("w".into()),
            task_id: Some("t".into()),
            step_id: None,
            body: chunk("a \"quoted\" chunk\n"),
        };
        let json = serde_json::to_string(&event).unwrap();
        assert_eq!(
            notification_line(&json),
            serde_json::to_string(&Notification::new(METHOD, &event)).unwrap()
        );
    }

    #[tokio::test]
    async fn ids_are_monotonic_and_the_ring_reports_gaps() {
        let outbound = crate::testing::discarding_outbound();
        let sink = EventSink::new("s", "w", outbound, 3);
        for text in ["a", "b", "c", "d", "e"] {
            sink.emit(Scope::step("t", "step_001"), chunk(text));
        }
        let all = sink.since(0);
        let expected = |id: u64, text: &str| SessionEvent {
            event_id: id,
            timestamp: all.events[0].timestamp.clone(),
            session_id: "s".into(),
            workspace_id: Some("w".into()),
            task_id: Some("t".into()),
            step_id: Some("step_001".into()),
            body: chunk(text),
        };
        let mut events = all.events.clone();
        for event in &mut events {
            assert!(event.timestamp.starts_with("20"), "{}", event.timestamp);
            event.timestamp = all.events[0].timestamp.clone();
        }
        assert_eq!(
            events,
            [expected(3, "c"), expected(4, "d"), expected(5, "e")],
            "kept events are the events sent"
        );
        assert_eq!(all.latest_id, 5);
        assert!(all.gap_detected, "events 1 and 2 fell out of the ring");
        assert_eq!(
            all.events.iter().map(|e| e.event_id).collect::<Vec<_>>(),
            vec![3, 4, 5]
        );
        let recent = sink.since(2);
        assert!(!recent.gap_detected);
        assert_eq!(recent.events.len(), 3);
        assert!(sink.since(5).events.is_empty());
        assert!(!sink.since(5).gap_detected);
    }

    #[tokio::test]
    async fn the_ring_holds_no_more_bytes_than_its_budget_but_always_the_newest_event() {
        let outbound = crate::testing::discarding_outbound();
        let big = "x".repeat(600);
        let sink = EventSink::new("s", "w", outbound, 100).with_byte_budget(2000);
        for _ in 0..5 {
            sink.emit(Scope::task("t"), chunk(&big));
        }
        let kept = sink.since(0);
        let ids: Vec<u64> = kept.events.iter().map(|e| e.event_id).collect();
        assert!(ids.len() < 5 && ids.len() >= 2, "{ids:?}");
        assert_eq!(ids.last(), Some(&5));
        assert!(kept.gap_detected);
        let bytes: usize = kept
            .events
            .iter()
            .map(|e| serde_json::to_string(e).unwrap().len())
            .sum();
        assert!(bytes <= 2000, "{bytes} bytes kept");
        sink.emit(Scope::task("t"), chunk(&"y".repeat(5000)));
        let kept = sink.since(0);
        assert_eq!(
            kept.events.len(),
            1,
            "an event over the budget alone is still kept"
        );
        assert_eq!(kept.events[0].event_id, 6);
    }

    #[tokio::test]
    async fn a_restored_process_numbers_above_every_earlier_process() {
        let outbound = crate::testing::discarding_outbound();
        let sink = EventSink::with_epoch("s", "w", outbound, 10, 2);
        sink.emit(Scope::session(), chunk("resumed"));
        let all = sink.since(0);
        assert_eq!(all.latest_id, 2 * EVENT_ID_EPOCH_SPAN + 1);
        assert_eq!(sink.epoch(), 2);
        // What the app saw from the crashed process is not replayable here.
        assert!(sink.since(57).gap_detected);
        assert!(!sink.since(all.latest_id).gap_detected);
    }
}
