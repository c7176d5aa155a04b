//! The LLM Gateway fake on wiremock: OpenAI Chat Completions streaming (INTEROP.md §2) with
//! each SSE body sent as one buffer. Enough for everything except timing; the
//! [`crate::StreamingGateway`] covers chunk-by-chunk delivery, stalls and disconnects.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use wiremock::matchers::{any, method, path};
use wiremock::{Mock, Request, ResponseTemplate};

use crate::faults::json_template;
use crate::host::WiremockHost;
use crate::recording::RecordedRequest;
use crate::sse::{GatewayReply, RenderedReply, Usage, render_reply, requested_model, sse_body};
use crate::util::{lock, sane_headers, sane_status};

/// Where requests arrive, relative to the server root; the URL handed to the runtime is the
/// root plus `/v1`, as `LLM_GATEWAY_ENDPOINT` includes it.
pub(crate) const COMPLETIONS_PATH: &str = "/v1/chat/completions";

/// The body of the 500 answered when the script has run out: loud, so a scenario that makes
/// one more LLM call than it scripted fails visibly instead of hanging.
pub(crate) fn script_exhausted() -> Value {
    json!({"error": "no scripted reply left"})
}

/// A FIFO of scripted entries plus the usage numbers and an optional fallback reply; shared
/// by both gateways so they behave the same.
pub(crate) struct ReplyScript<T> {
    queue: Mutex<VecDeque<T>>,
    usage: Mutex<Option<Usage>>,
    fallback: Mutex<Option<GatewayReply>>,
}

impl<T> Default for ReplyScript<T> {
    fn default() -> Self {
        Self {
            queue: Mutex::new(VecDeque::new()),
            usage: Mutex::new(Some(Usage::default())),
            fallback: Mutex::new(None),
        }
    }
}

/// What to answer one request with.
pub(crate) enum Next<T> {
    Scripted(T),
    Fallback(GatewayReply),
    Exhausted,
}

impl<T> ReplyScript<T> {
    pub(crate) fn push(&self, entry: T) {
        lock(&self.queue).push_back(entry);
    }

    pub(crate) fn next(&self) -> Next<T> {
        if let Some(entry) = lock(&self.queue).pop_front() {
            return Next::Scripted(entry);
        }
        match lock(&self.fallback).clone() {
            Some(reply) => Next::Fallback(reply),
            None => Next::Exhausted,
        }
    }

    /// What [`Self::next`] would give, leaving it in the script.
    pub(crate) fn peek(&self) -> Next<T>
    where
        T: Clone,
    {
        if let Some(entry) = lock(&self.queue).front() {
            return Next::Scripted(entry.clone());
        }
        match lock(&self.fallback).clone() {
            Some(reply) => Next::Fallback(reply),
            None => Next::Exhausted,
        }
    }

    pub(crate) fn remaining(&self) -> usize {
        lock(&self.queue).len()
    }

    pub(crate) fn usage(&self) -> Option<Usage> {
        *lock(&self.usage)
    }

    pub(crate) fn set_usage(&self, usage: Option<Usage>) {
        *lock(&self.usage) = usage;
    }

    pub(crate) fn set_fallback(&self, reply: Option<GatewayReply>) {
        *lock(&self.fallback) = reply;
    }
}

/// The wiremock-based gateway fake. See the crate docs for the wire format.
pub struct GatewayFake {
    host: WiremockHost,
    script: Arc<ReplyScript<GatewayReply>>,
}

impl GatewayFake {
    /// Starts on a fresh ephemeral loopback port with an empty script.
    pub async fn start() -> anyhow::Result<Self> {
        let script: Arc<ReplyScript<GatewayReply>> = Arc::default();
        let responder_script = Arc::clone(&script);
        let completions = Mock::given(method("POST"))
            .and(path(COMPLETIONS_PATH))
            .respond_with(move |request: &Request| answer(&responder_script, request));
        let catch_all = Mock::given(any())
            .respond_with(|request: &Request| {
                let message = format!(
                    "no such endpoint: {} {}",
                    request.method,
                    request.url.path()
                );
                json_template(404, &json!({ "error": message }))
            })
            .with_priority(u8::MAX);
        let host = WiremockHost::start(vec![completions, catch_all]).await?;
        Ok(Self { host, script })
    }

    /// The base URL including `/v1`; requests arrive at `POST {url}/chat/completions`.
    pub fn url(&self) -> String {
        format!("{}/v1", self.host.base_url())
    }

    /// Appends a reply to the script; each request takes the oldest one.
    pub fn push_reply(&self, reply: GatewayReply) {
        self.script.push(reply);
    }

    /// Appends several replies in order.
    pub fn push_replies(&self, replies: impl IntoIterator<Item = GatewayReply>) {
        for reply in replies {
            self.script.push(reply);
        }
    }

    /// The numbers put in the usage chunk of every later streamed reply (`RawSse` excepted).
    pub fn set_usage(&self, prompt_tokens: u64, completion_tokens: u64) {
        self.script.set_usage(Some(Usage {
            prompt_tokens,
            completion_tokens,
        }));
    }

    /// Leaves the usage chunk out of later replies (the runtime must estimate locally).
    pub fn omit_usage(&self) {
        self.script.set_usage(None);
    }

    /// A reply used when the script is empty, instead of the default 500; `None` restores
    /// the 500. Meant for hand use (`mock-services`), not for scenarios.
    pub fn set_fallback_reply(&self, reply: Option<GatewayReply>) {
        self.script.set_fallback(reply);
    }

    /// Every `POST …/chat/completions`, in order (also those answered 500 for lack of script).
    pub async fn requests(&self) -> Vec<RecordedRequest> {
        self.host
            .requests()
            .await
            .into_iter()
            .filter(|request| request.method == "POST" && request.path == COMPLETIONS_PATH)
            .collect()
    }

    /// Every request, including those to unknown paths (answered 404).
    pub async fn all_requests(&self) -> Vec<RecordedRequest> {
        self.host.requests().await
    }

    /// Scripted replies not yet consumed.
    pub fn remaining_replies(&self) -> usize {
        self.script.remaining()
    }

    /// Stops accepting connections (connection refused) and keeps the port reserved.
    pub async fn go_down(&self) {
        self.host.go_down().await;
    }
}

fn answer(script: &ReplyScript<GatewayReply>, request: &Request) -> ResponseTemplate {
    let reply = match script.next() {
        Next::Scripted(reply) | Next::Fallback(reply) => reply,
        Next::Exhausted => return json_template(500, &script_exhausted()),
    };
    let body: Value = serde_json::from_slice(&request.body).unwrap_or(Value::Null);
    match render_reply(&reply, &requested_model(&body), script.usage()) {
        RenderedReply::Stream(payloads) => ResponseTemplate::new(200)
            .insert_header("cache-control", "no-cache")
            .set_body_raw(sse_body(&payloads).into_bytes(), "text/event-stream"),
        RenderedReply::Status {
            status,
            headers,
            body,
        } => {
            let mut template = ResponseTemplate::new(sane_status(status));
            let headers = sane_headers(&headers);
            let has_content_type = headers.iter().any(|(name, _)| name == "content-type");
            for (name, value) in headers {
                template = template.append_header(name, value);
            }
            if !has_content_type {
                template = template.insert_header("content-type", status_content_type(&body));
            }
            template.set_body_bytes(body.into_bytes())
        }
    }
}

/// `application/json` for a JSON body, else `text/plain`: what a client sees from the real
/// gateway (JSON) or from a proxy in front of it (text/HTML).
pub(crate) fn status_content_type(body: &str) -> &'static str {
    if serde_json::from_str::<Value>(body).is_ok() {
        "application/json"
    } else {
        "text/plain; charset=utf-8"
    }
}
