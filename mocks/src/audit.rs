//! The Audit Service and Telemetry Service fakes (architecture.md §6.3, system-design.md §14)
//! on wiremock: `POST /audit/events` and `POST /telemetry/events` record what a runtime
//! delivers, with the shared fault controls — [`EventServiceFake::go_down`],
//! [`EventServiceFake::fail_next`] (e.g. 500 for the next N) and
//! [`EventServiceFake::answer_after`] (slow) — to show that delivery never holds up a task.
//!
//! A body may be one envelope, an array of envelopes or `{"events": [...]}` (the reference
//! runtime's batch); each accepted request is kept as it came ([`EventServiceFake::batches`])
//! and its envelopes in order ([`EventServiceFake::envelopes`]). A body that is none of these
//! is refused with 422.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use wiremock::matchers::{method, path};
use wiremock::{Mock, Request, ResponseTemplate};

use crate::faults::{FaultQueue, json_template};
use crate::host::WiremockHost;
use crate::recording::RecordedRequest;
use crate::util::{lock, validation_error};

/// Which of the two services a fake plays.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventService {
    Audit,
    Telemetry,
}

impl EventService {
    pub fn path(self) -> &'static str {
        match self {
            EventService::Audit => "/audit/events",
            EventService::Telemetry => "/telemetry/events",
        }
    }
}

#[derive(Default)]
struct State {
    batches: Vec<Value>,
    envelopes: Vec<Value>,
    delay: Option<Duration>,
}

type Shared = Arc<Mutex<State>>;

/// The Audit Service or the Telemetry Service fake.
pub struct EventServiceFake {
    kind: EventService,
    host: WiremockHost,
    state: Shared,
    faults: Arc<FaultQueue>,
}

impl EventServiceFake {
    /// Starts on a fresh ephemeral loopback port with no records.
    pub async fn start(kind: EventService) -> anyhow::Result<Self> {
        let state: Shared = Arc::default();
        let faults = Arc::new(FaultQueue::default());
        let store = Arc::clone(&state);
        // Not through `FaultQueue::route`: this fake holds its answers back itself.
        let events = Mock::given(method("POST"))
            .and(path(kind.path()))
            .respond_with(move |request: &Request| accept(&mut lock(&store), request));
        let host = faults.serve(vec![events]).await?;
        Ok(Self {
            kind,
            host,
            state,
            faults,
        })
    }

    pub fn kind(&self) -> EventService {
        self.kind
    }

    /// The service's base URL (no trailing slash), for `AUDIT_SERVICE_URL` /
    /// `TELEMETRY_SERVICE_URL`.
    pub fn url(&self) -> String {
        self.host.base_url()
    }

    /// Accepted bodies, as they came.
    pub fn batches(&self) -> Vec<Value> {
        lock(&self.state).batches.clone()
    }

    /// Every envelope of every accepted body, in order.
    pub fn envelopes(&self) -> Vec<Value> {
        lock(&self.state).envelopes.clone()
    }

    /// From now on every accepted body is answered only after `delay` (a slow service: the
    /// envelopes are recorded at once, the answer comes late). `None` answers at once.
    pub fn answer_after(&self, delay: Option<Duration>) {
        lock(&self.state).delay = delay;
    }
}

/// The envelopes of a body: one envelope, an array of them or `{"events": [...]}`.
pub fn envelopes_of(body: &Value) -> Option<Vec<Value>> {
    match body {
        Value::Array(items) => Some(items.clone()),
        Value::Object(map) => match map.get("events") {
            Some(Value::Array(items)) => Some(items.clone()),
            Some(_) => None,
            None if map.contains_key("eventType") => Some(vec![body.clone()]),
            None => None,
        },
        _ => None,
    }
}

fn accept(state: &mut State, request: &Request) -> ResponseTemplate {
    let body: Value = match serde_json::from_slice(&request.body) {
        Ok(body) => body,
        Err(_) => return json_template(422, &validation_error("the body must be JSON")),
    };
    let Some(envelopes) = envelopes_of(&body) else {
        return json_template(
            422,
            &validation_error("expected an envelope, an array of envelopes or {\"events\": [...]}"),
        );
    };
    let accepted = envelopes.len();
    state.envelopes.extend(envelopes);
    state.batches.push(body);
    let template = json_template(202, &json!({ "accepted": accepted }));
    match state.delay {
        Some(delay) => template.set_delay(delay),
        None => template,
    }
}

/// The shared fault vocabulary. "Slow" records the envelopes at once and answers late
/// (what a slow collector does), so delivery that waits for the answer is what slows down.
impl crate::faults::FaultControl for EventServiceFake {
    fn fail_next(&self, count: usize, status: u16, body: Value) {
        self.faults.push(count, status, body);
    }
    fn clear_faults(&self) {
        self.faults.clear();
    }
    fn slow_by(&self, delay: Option<Duration>) {
        self.answer_after(delay);
    }
    async fn go_down(&self) {
        self.host.go_down().await;
    }
    async fn requests(&self) -> Vec<RecordedRequest> {
        self.host.requests().await
    }
}
