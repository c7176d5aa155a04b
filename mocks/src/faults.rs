//! `fail_next(count, status, body)`: the next requests to any endpoint of a fake answer a
//! scripted error, whatever they ask for — the way a real service fails (a 503 from a load
//! balancer does not care about the route). Mounted in wiremock at the highest priority so it
//! wins over every route; wiremock matches and responds under one lock, so the matcher's
//! "armed?" check and the responder's "take one" cannot be interleaved by another request.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use wiremock::matchers::any;
use wiremock::{Match, Mock, Request, Respond, ResponseTemplate};

use crate::util::{lock, sane_status};

#[derive(Default)]
pub(crate) struct FaultQueue {
    queue: Mutex<VecDeque<(u16, Value)>>,
}

impl FaultQueue {
    /// Appends `count` failures; calls accumulate in order (`fail_next(1, 503, ..)` then
    /// `fail_next(1, 500, ..)` gives a 503 and then a 500).
    pub(crate) fn push(&self, count: usize, status: u16, body: Value) {
        let mut queue = lock(&self.queue);
        for _ in 0..count {
            queue.push_back((status, body.clone()));
        }
    }

    pub(crate) fn clear(&self) {
        lock(&self.queue).clear();
    }

    pub(crate) fn pending(&self) -> usize {
        lock(&self.queue).len()
    }

    fn take(&self) -> Option<(u16, Value)> {
        lock(&self.queue).pop_front()
    }

    /// The wiremock mock that serves the queued failures, to mount before any route.
    pub(crate) fn mock(self: &Arc<Self>) -> Mock {
        Mock::given(any())
            .and(Armed(Arc::clone(self)))
            .respond_with(Injector(Arc::clone(self)))
            .with_priority(1)
    }
}

struct Armed(Arc<FaultQueue>);

impl Match for Armed {
    fn matches(&self, _request: &Request) -> bool {
        self.0.pending() > 0
    }
}

struct Injector(Arc<FaultQueue>);

impl Respond for Injector {
    fn respond(&self, _request: &Request) -> ResponseTemplate {
        match self.0.take() {
            Some((status, body)) => json_template(status, &body),
            // Only reachable if a test cleared the queue between match and respond.
            None => json_template(
                503,
                &json!({"code": "FAULT_CLEARED", "message": "fault cleared"}),
            ),
        }
    }
}

/// A JSON response; a `Null` body gives an empty body (e.g. for 204 or a bare 502).
pub(crate) fn json_template(status: u16, body: &Value) -> ResponseTemplate {
    let template = ResponseTemplate::new(sane_status(status));
    match body {
        Value::Null => template,
        Value::String(text) => template.set_body_raw(text.as_bytes().to_vec(), "text/plain"),
        other => template.set_body_json(other),
    }
}
