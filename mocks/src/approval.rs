//! The Approval Service fake (local-agent-host.md §10.4, INTEROP.md §6) on wiremock: records
//! every decision a runtime persists with `POST /approvals`, and can be made to fail
//! ([`ApprovalServiceFake::fail_next`]) or disappear ([`ApprovalServiceFake::go_down`]) to
//! show that persistence never holds up a tool.

use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use wiremock::matchers::{method, path};
use wiremock::{Mock, Request, ResponseTemplate};

use crate::faults::{FaultQueue, json_template};
use crate::host::WiremockHost;
use crate::util::{lock, new_id, validation_error};

/// Fields INTEROP.md §6 lists for the body; a record without one of them (or with one that
/// is not a string, `reason` and `stepId` excepted) is refused with 422, as a real service
/// validating its input would.
pub(crate) const REQUIRED_FIELDS: &[&str] = &[
    "approvalId",
    "sessionId",
    "taskId",
    "userId",
    "tenantId",
    "workspaceId",
    "decision",
    "actionSummary",
    "riskLevel",
    "clientTimestamp",
];

#[derive(Default)]
struct State {
    records: Vec<Value>,
}

type Shared = Arc<Mutex<State>>;

/// The Approval Service fake.
pub struct ApprovalServiceFake {
    host: WiremockHost,
    state: Shared,
    faults: Arc<FaultQueue>,
}

crate::faults::fault_control!(ApprovalServiceFake);

impl ApprovalServiceFake {
    /// Starts on a fresh ephemeral loopback port with no records.
    pub async fn start() -> anyhow::Result<Self> {
        let state: Shared = Arc::default();
        let faults = Arc::new(FaultQueue::default());
        let approvals = Mock::given(method("POST")).and(path("/approvals"));
        let host = faults
            .serve(vec![faults.route(approvals, &state, |state, request| {
                record(&mut state.records, request)
            })])
            .await?;
        Ok(Self {
            host,
            state,
            faults,
        })
    }

    /// The service's base URL (no trailing slash), for `APPROVAL_SERVICE_URL`.
    pub fn url(&self) -> String {
        self.host.base_url()
    }

    /// Bodies of the accepted `POST /approvals`, in order.
    pub fn records(&self) -> Vec<Value> {
        lock(&self.state).records.clone()
    }
}

fn record(records: &mut Vec<Value>, request: &Request) -> ResponseTemplate {
    let body: Value = match serde_json::from_slice(&request.body) {
        Ok(body @ Value::Object(_)) => body,
        _ => return json_template(422, &validation_error("the body must be a JSON object")),
    };
    let missing: Vec<&str> = REQUIRED_FIELDS
        .iter()
        .copied()
        .filter(|field| !body.get(*field).is_some_and(Value::is_string))
        .collect();
    if !missing.is_empty() {
        let message = format!("missing or non-string fields: {}", missing.join(", "));
        return json_template(422, &validation_error(&message));
    }
    records.push(body);
    json_template(201, &json!({"approvalRecordId": new_id("aprec")}))
}
