//! `fail_next(count, status, body)`: the next requests to any endpoint of a fake answer a
//! scripted error, whatever they ask for — the way a real service fails (a 503 from a load
//! balancer does not care about the route). Mounted in wiremock at the highest priority so it
//! wins over every route; wiremock matches and responds under one lock, so the matcher's
//! "armed?" check and the responder's "take one" cannot be interleaved by another request.
//!
//! [`FaultControl`] is the one fault vocabulary of every backend fake (fail, slow, down,
//! requests); [`fault_control!`] implements it for a wiremock fake with a `host` and a
//! `faults` field, so adding a fake to the vocabulary is one line.

use std::collections::VecDeque;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use wiremock::matchers::any;
use wiremock::{Match, Mock, MockBuilder, Request, Respond, ResponseTemplate};

use crate::host::WiremockHost;
use crate::recording::RecordedRequest;
use crate::util::{lock, sane_status};

/// The fault controls every backend fake offers, whatever it serves.
pub trait FaultControl {
    /// The next `count` requests to any endpoint answer `status` with `body` (JSON; a JSON
    /// string is sent as plain text, `null` as an empty body). Calls accumulate in order.
    fn fail_next(&self, count: usize, status: u16, body: Value);
    /// Drops failures not yet served.
    fn clear_faults(&self);
    /// From now on every answer is held back by `delay` (a slow service: the connection is
    /// accepted, the answer comes late); `None` answers at once.
    fn slow_by(&self, delay: Option<Duration>);
    /// Stops accepting connections (connection refused) and keeps the port reserved.
    fn go_down(&self) -> impl Future<Output = ()> + Send;
    /// Every request to any endpoint, in order (failed ones included).
    fn requests(&self) -> impl Future<Output = Vec<RecordedRequest>> + Send;
}

/// Implements [`FaultControl`] for a wiremock fake with fields `host: WiremockHost` and
/// `faults: Arc<FaultQueue>` (whose routes answer through [`FaultQueue::slowed`]).
macro_rules! fault_control {
    ($fake:ty) => {
        impl $crate::faults::FaultControl for $fake {
            fn fail_next(&self, count: usize, status: u16, body: serde_json::Value) {
                self.faults.push(count, status, body);
            }
            fn clear_faults(&self) {
                self.faults.clear();
            }
            fn slow_by(&self, delay: Option<std::time::Duration>) {
                self.faults.set_delay(delay);
            }
            async fn go_down(&self) {
                self.host.go_down().await;
            }
            async fn requests(&self) -> Vec<$crate::recording::RecordedRequest> {
                self.host.requests().await
            }
        }
    };
}
pub(crate) use fault_control;

#[derive(Default)]
pub(crate) struct FaultQueue {
    queue: Mutex<VecDeque<(u16, Value)>>,
    delay: Mutex<Option<Duration>>,
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

    pub(crate) fn set_delay(&self, delay: Option<Duration>) {
        *lock(&self.delay) = delay;
    }

    /// The delay set with [`FaultControl::slow_by`], for fakes that are not wiremock.
    pub(crate) fn delay(&self) -> Option<Duration> {
        *lock(&self.delay)
    }

    /// A route's answer, held back by the delay set with [`FaultControl::slow_by`].
    pub(crate) fn slowed(&self, template: ResponseTemplate) -> ResponseTemplate {
        match *lock(&self.delay) {
            Some(delay) => template.set_delay(delay),
            None => template,
        }
    }

    pub(crate) fn clear(&self) {
        lock(&self.queue).clear();
    }

    pub(crate) fn pending(&self) -> usize {
        lock(&self.queue).len()
    }

    pub(crate) fn take(&self) -> Option<(u16, Value)> {
        lock(&self.queue).pop_front()
    }

    /// A route answered by `handler` from a fake's state (under its lock), held back by the
    /// delay set with [`FaultControl::slow_by`].
    pub(crate) fn route<S, F>(
        self: &Arc<Self>,
        matcher: MockBuilder,
        state: &Arc<Mutex<S>>,
        handler: F,
    ) -> Mock
    where
        S: Send + 'static,
        F: Fn(&mut S, &Request) -> ResponseTemplate + Send + Sync + 'static,
    {
        let state = Arc::clone(state);
        let pace = Arc::clone(self);
        matcher
            .respond_with(move |request: &Request| pace.slowed(handler(&mut lock(&state), request)))
    }

    /// Starts a fake's server: the queued failures first, then `routes`, then the 404 of an
    /// unknown route — the same order for every fake.
    pub(crate) async fn serve(self: &Arc<Self>, routes: Vec<Mock>) -> anyhow::Result<WiremockHost> {
        let mut mocks = Vec::with_capacity(routes.len() + 2);
        mocks.push(self.mock());
        mocks.extend(routes);
        mocks.push(crate::host::no_route());
        WiremockHost::start(mocks).await
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
