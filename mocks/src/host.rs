//! A wiremock server on a listener we own, so the fake can be taken down.
//!
//! `MockServer::start()` hands out pooled servers whose ports stay open after drop; a server
//! built with `MockServer::builder().listener(..)` is not pooled, and dropping it closes its
//! listener. `go_down` drops it, waits until the port refuses connections, then keeps the
//! port reserved (see [`crate::port`]). The requests recorded so far are kept, so tests can
//! still inspect them after the outage.

use std::net::SocketAddr;
use std::sync::Mutex;

use tokio::net::TcpSocket;
use wiremock::{Mock, MockServer};

use crate::port;
use crate::recording::RecordedRequest;
use crate::util::lock;

pub(crate) struct WiremockHost {
    addr: SocketAddr,
    server: tokio::sync::Mutex<Option<MockServer>>,
    down: Mutex<Option<Down>>,
}

struct Down {
    recorded: Vec<RecordedRequest>,
    /// Held only to keep the port reserved.
    _reservation: Option<TcpSocket>,
}

impl WiremockHost {
    /// Starts a wiremock server on a fresh ephemeral loopback port with the given mocks.
    pub(crate) async fn start(mocks: Vec<Mock>) -> anyhow::Result<Self> {
        let listener = port::loopback_listener()?;
        let addr = listener.local_addr()?;
        let server = MockServer::builder().listener(listener).start().await;
        for mock in mocks {
            server.register(mock).await;
        }
        Ok(Self {
            addr,
            server: tokio::sync::Mutex::new(Some(server)),
            down: Mutex::new(None),
        })
    }

    /// `http://127.0.0.1:<port>`, stable across `go_down`.
    pub(crate) fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Every request received, in order, including those answered by faults or the catch-all.
    pub(crate) async fn requests(&self) -> Vec<RecordedRequest> {
        let server = self.server.lock().await;
        match server.as_ref() {
            Some(server) => recorded(server).await,
            None => lock(&self.down)
                .as_ref()
                .map(|down| down.recorded.clone())
                .unwrap_or_default(),
        }
    }

    pub(crate) async fn go_down(&self) {
        let mut server = self.server.lock().await;
        let Some(running) = server.take() else {
            return;
        };
        let recorded = recorded(&running).await;
        drop(running);
        port::wait_until_refused(self.addr).await;
        let reservation = port::reserve(self.addr);
        *lock(&self.down) = Some(Down {
            recorded,
            _reservation: reservation,
        });
    }
}

async fn recorded(server: &MockServer) -> Vec<RecordedRequest> {
    server
        .received_requests()
        .await
        .unwrap_or_default()
        .iter()
        .map(RecordedRequest::from_wiremock)
        .collect()
}

/// The lowest-priority route of every wiremock fake: an unknown endpoint is recorded and
/// answered 404 `{"detail": "Not Found"}`, as FastAPI answers it (wiremock's own 404 would
/// have no body).
pub(crate) fn no_route() -> Mock {
    Mock::given(wiremock::matchers::any())
        .respond_with(|_: &wiremock::Request| {
            crate::faults::json_template(404, &serde_json::json!({"detail": "Not Found"}))
        })
        .with_priority(u8::MAX)
}
