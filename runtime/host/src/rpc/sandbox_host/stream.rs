//! The SessionEvent stream of the sandbox: every event as an SSE frame `id: N`,
//! `event: session_event`, `data: {"id":N, …SessionEvent}`; any number of readers, each
//! served from its `Last-Event-ID` (or from the oldest kept event) out of the session's one
//! event ring by a cursor, a page at a time as its socket takes them, so a reader that does
//! not read holds no copy of the ring. The live channel only wakes readers; one that falls
//! more than the backlog behind it is dropped, and reconnects with `Last-Event-ID`.
//! `event: gap` tells a reader that events it should have seen were dropped from the ring.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::sync::{Arc, Mutex};

use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures::Stream;
use serde_json::{Value, json};
use tokio::io::AsyncBufReadExt;
use tokio::sync::broadcast;

use super::AppState;
use crate::host::Host;

/// Events a reader copies from the ring at once.
const PAGE: usize = 32;

/// One event as sent: its id and its SessionEvent JSON.
struct Frame {
    id: u64,
    json: String,
}

/// Fans the event lines of the outbound pipe out to the open streams.
pub(super) struct Hub {
    sender: Arc<Mutex<Option<broadcast::Sender<Arc<Frame>>>>>,
}

impl Hub {
    /// Reads the outbound pipe until it closes (teardown has flushed the last event); the
    /// streams end then.
    pub(super) fn start(read_end: tokio::io::DuplexStream, backlog: usize) -> Self {
        let (sender, _) = broadcast::channel(backlog.max(1));
        let slot = Arc::new(Mutex::new(Some(sender.clone())));
        let closing = Arc::clone(&slot);
        tokio::spawn(async move {
            let mut lines = tokio::io::BufReader::new(read_end).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                if let Some(frame) = frame_of(&line) {
                    // No reader open is fine: the ring keeps the event for replay.
                    let _ = sender.send(Arc::new(frame));
                }
            }
            if let Ok(mut slot) = closing.lock() {
                slot.take();
            }
        });
        Self { sender: slot }
    }

    fn subscribe(&self) -> Option<broadcast::Receiver<Arc<Frame>>> {
        let slot = self.sender.lock().ok()?;
        slot.as_ref().map(broadcast::Sender::subscribe)
    }
}

/// The SessionEvent of a `SessionEvent` notification line; `None` for anything else.
fn frame_of(line: &str) -> Option<Frame> {
    let mut value: Value = serde_json::from_str(line).ok()?;
    let params = value.get_mut("params")?.take();
    let id = params.get("eventId")?.as_u64()?;
    Some(Frame {
        id,
        json: serde_json::to_string(&params).ok()?,
    })
}

/// `data:` carries the SessionEvent with `id` (= the frame's id) beside its fields.
fn session_event(id: u64, json: &str) -> Event {
    Event::default()
        .id(id.to_string())
        .event("session_event")
        .data(data_of(id, json))
}

fn data_of(id: u64, json: &str) -> String {
    match json.strip_prefix('{') {
        Some(rest) if rest.trim_start().starts_with('}') => format!("{{\"id\":{id}}}"),
        Some(rest) => format!("{{\"id\":{id},{rest}"),
        None => json.to_owned(),
    }
}

fn gap(since: u64, oldest: Option<u64>, latest: u64) -> Event {
    Event::default().event("gap").data(
        json!({
            "lastEventId": since,
            "oldestAvailableId": oldest,
            "latestId": latest,
            "message": "Some events were dropped from the sandbox's replay buffer before this stream received them."
        })
        .to_string(),
    )
}

pub(super) async fn events(State(state): State<Arc<AppState>>, headers: HeaderMap) -> Response {
    let since = headers
        .get("last-event-id")
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.trim().parse::<u64>().ok())
        .unwrap_or(0);
    // Subscribed before the ring is read: an event sent in between only wakes the reader,
    // which sends by id from the ring.
    let live = state.hub.subscribe();
    let reader = Reader {
        host: Arc::clone(&state.host),
        live,
        pending: VecDeque::new(),
        last: since,
    };
    Sse::new(reader.into_stream())
        .keep_alive(KeepAlive::default())
        .into_response()
}

struct Reader {
    host: Arc<Host>,
    live: Option<broadcast::Receiver<Arc<Frame>>>,
    pending: VecDeque<Event>,
    last: u64,
}

impl Reader {
    /// Queues the next page of the ring after the last id sent (and a gap when it lost
    /// some); whether it found any.
    fn refill(&mut self) -> bool {
        let replay = self.host.replay_events(self.last, PAGE);
        if replay.gap_detected {
            let oldest = replay.events.first().map(|(id, _)| *id);
            self.pending
                .push_back(gap(self.last, oldest, replay.latest_id));
        }
        let found = !replay.events.is_empty();
        for (id, json) in replay.events {
            // The same last backstop as every line the runtime sends.
            let json = crate::redact::global().redact_values(&json).into_owned();
            self.pending.push_back(session_event(id, &json));
            self.last = id;
        }
        found
    }

    fn into_stream(self) -> impl Stream<Item = Result<Event, Infallible>> {
        futures::stream::unfold(self, |mut reader| async move {
            loop {
                if let Some(event) = reader.pending.pop_front() {
                    return Some((Ok(event), reader));
                }
                if reader.refill() {
                    continue;
                }
                let live = reader.live.as_mut()?;
                match live.recv().await {
                    Ok(frame) if frame.id > reader.last => {
                        // Sent in order from the ring's cursor; this frame only woke us.
                        let _ = reader.refill();
                        if reader.pending.is_empty() {
                            // The session is gone (teardown): send the frame itself.
                            reader.last = frame.id;
                            return Some((Ok(session_event(frame.id, &frame.json)), reader));
                        }
                    }
                    Ok(_) => {}
                    Err(broadcast::error::RecvError::Lagged(missed)) => {
                        // Too slow for the live channel: dropped, it reconnects with
                        // Last-Event-ID and is served from the ring.
                        tracing::info!(
                            missed,
                            last = reader.last,
                            "an event reader fell behind; closing its stream (AGENT_RUNTIME_SANDBOX_READER_BACKLOG)"
                        );
                        return None;
                    }
                    Err(broadcast::error::RecvError::Closed) => return None,
                }
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_carry_the_id_beside_the_event_fields() {
        let line = r#"{"jsonrpc":"2.0","method":"SessionEvent","params":{"eventId":7,"eventType":"text_chunk","payload":{"text":"hi"}}}"#;
        let frame = frame_of(line).unwrap();
        assert_eq!(frame.id, 7);
        assert!(frame_of(r#"{"jsonrpc":"2.0","id":1,"result":{}}"#).is_none());
        let data: Value = serde_json::from_str(&data_of(frame.id, &frame.json)).unwrap();
        assert_eq!(data["id"], json!(7));
        assert_eq!(data["eventId"], json!(7));
        assert_eq!(data["payload"]["text"], json!("hi"));
        assert_eq!(data_of(3, "{}"), r#"{"id":3}"#);
    }

    struct NoTools;

    #[async_trait::async_trait]
    impl agent_protocol::ToolRouter for NoTools {
        async fn execute(
            &self,
            request: agent_protocol::ToolRequest,
        ) -> agent_protocol::ToolResult {
            agent_protocol::ToolResult::succeeded(&request, "")
        }
        fn available_tools(&self) -> Vec<agent_protocol::ToolDefinition> {
            Vec::new()
        }
    }

    /// A reader that was not polled while more events than the backlog passed is dropped
    /// (its stream ends) rather than sent what it missed from the live channel: it
    /// reconnects with `Last-Event-ID` and is served from the ring.
    #[tokio::test]
    async fn a_reader_that_fell_behind_the_backlog_is_dropped() {
        use futures::StreamExt as _;
        let config = crate::HostConfig::with_endpoints(
            "http://127.0.0.1:9/v1",
            "t",
            "http://127.0.0.1:9",
            "http://127.0.0.1:9",
        );
        let host = Host::new(
            config,
            Arc::new(NoTools),
            crate::testing::discarding_outbound(),
        );
        let (sender, live) = broadcast::channel(2);
        let reader = Reader {
            host,
            live: Some(live),
            pending: VecDeque::new(),
            last: 0,
        };
        for id in 1..=5 {
            let _ = sender.send(Arc::new(Frame {
                id,
                json: "{}".to_owned(),
            }));
        }
        let mut stream = std::pin::pin!(reader.into_stream());
        assert!(stream.next().await.is_none(), "the lagging reader was kept");
    }
}
