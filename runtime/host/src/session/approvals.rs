//! Approvals (local-agent-host.md §10): a pending request per approvalId, resolved by
//! ApproveAction, by the timeout, or by cancellation. ApproveAction never fails; a late,
//! duplicate or unknown decision is reported by status and changes nothing.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use agent_protocol::approval::{ApprovalRequest, Decision};
use agent_protocol::methods::ApproveActionStatus;
use tokio::sync::oneshot;

/// The outcome of one approval: the decision and the user's reason, if any.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Resolution {
    pub decision: Decision,
    pub reason: Option<String>,
}

#[derive(Default)]
struct Table {
    pending: HashMap<String, oneshot::Sender<Resolution>>,
    /// The requests behind `pending`, for the checkpoint (§9.2 pending approvals).
    requests: HashMap<String, ApprovalRequest>,
    resolved: HashMap<String, Decision>,
}

/// A registered approval, waiting for [`ApprovalBroker::wait_for`].
pub(crate) struct Pending {
    approval_id: String,
    receiver: oneshot::Receiver<Resolution>,
}

#[derive(Default)]
pub(crate) struct ApprovalBroker {
    table: Mutex<Table>,
}

impl ApprovalBroker {
    fn lock(&self) -> std::sync::MutexGuard<'_, Table> {
        match self.table.lock() {
            Ok(table) => table,
            Err(poisoned) => poisoned.into_inner(),
        }
    }

    /// Registers `approval_id` so a decision can be delivered from now on. Call it before
    /// the approval_requested event goes out: a client may answer as soon as it sees it.
    pub(crate) fn register(&self, approval_id: &str) -> Pending {
        let (sender, receiver) = oneshot::channel();
        self.lock().pending.insert(approval_id.to_owned(), sender);
        Pending {
            approval_id: approval_id.to_owned(),
            receiver,
        }
    }

    /// [`register`](Self::register), keeping the request for [`pending`](Self::pending).
    pub(crate) fn register_request(&self, request: &ApprovalRequest) -> Pending {
        self.lock()
            .requests
            .insert(request.approval_id.clone(), request.clone());
        self.register(&request.approval_id)
    }

    /// The requests still waiting for a decision, oldest id first.
    pub(crate) fn pending(&self) -> Vec<ApprovalRequest> {
        let table = self.lock();
        let mut requests: Vec<ApprovalRequest> = table
            .requests
            .iter()
            .filter(|(id, _)| table.pending.contains_key(*id))
            .map(|(_, request)| request.clone())
            .collect();
        requests.sort_by(|a, b| a.approval_id.cmp(&b.approval_id));
        requests
    }

    /// Registers `approval_id` and waits for its resolution or the timeout.
    #[cfg(test)]
    pub(crate) async fn wait(&self, approval_id: &str, timeout: Duration) -> Resolution {
        let pending = self.register(approval_id);
        self.wait_for(pending, timeout).await
    }

    /// Waits for a registered approval's resolution or the timeout.
    pub(crate) async fn wait_for(&self, pending: Pending, timeout: Duration) -> Resolution {
        let Pending {
            approval_id,
            receiver,
        } = pending;
        let resolution = match tokio::time::timeout(timeout, receiver).await {
            Ok(Ok(resolution)) => resolution,
            Ok(Err(_)) => Resolution {
                decision: Decision::Cancelled,
                reason: None,
            },
            Err(_) => Resolution {
                decision: Decision::TimedOut,
                reason: None,
            },
        };
        let mut table = self.lock();
        table.pending.remove(&approval_id);
        table.requests.remove(&approval_id);
        table
            .resolved
            .insert(approval_id.clone(), resolution.decision);
        resolution
    }

    /// Delivers a user's decision.
    pub(crate) fn resolve(
        &self,
        approval_id: &str,
        decision: Decision,
        reason: Option<String>,
    ) -> ApproveActionStatus {
        let mut table = self.lock();
        if let Some(sender) = table.pending.remove(approval_id) {
            table.requests.remove(approval_id);
            table.resolved.insert(approval_id.to_owned(), decision);
            return match sender.send(Resolution { decision, reason }) {
                Ok(()) => ApproveActionStatus::Accepted,
                Err(_) => ApproveActionStatus::Expired,
            };
        }
        match table.resolved.get(approval_id) {
            Some(Decision::TimedOut) | Some(Decision::Cancelled) => ApproveActionStatus::Expired,
            Some(_) => ApproveActionStatus::AlreadyResolved,
            None => ApproveActionStatus::NotFound,
        }
    }

    /// Resolves every pending approval as cancelled (task cancellation, shutdown).
    pub(crate) fn cancel_all(&self) {
        let pending: Vec<_> = {
            let mut table = self.lock();
            table.requests.clear();
            table.pending.drain().collect()
        };
        for (id, sender) in pending {
            self.lock().resolved.insert(id, Decision::Cancelled);
            let _ = sender.send(Resolution {
                decision: Decision::Cancelled,
                reason: Some("The task was cancelled".to_owned()),
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[tokio::test]
    async fn a_decision_resolves_the_waiter_and_a_second_one_changes_nothing() {
        let broker = Arc::new(ApprovalBroker::default());
        let waiter = {
            let broker = Arc::clone(&broker);
            tokio::spawn(async move { broker.wait("a1", Duration::from_secs(30)).await })
        };
        while broker.resolve("a1", Decision::Approved, None) == ApproveActionStatus::NotFound {
            tokio::task::yield_now().await;
        }
        assert_eq!(waiter.await.unwrap().decision, Decision::Approved);
        assert_eq!(
            broker.resolve("a1", Decision::Denied, None),
            ApproveActionStatus::AlreadyResolved
        );
        assert_eq!(
            broker.resolve("zzz", Decision::Denied, None),
            ApproveActionStatus::NotFound
        );
    }

    #[tokio::test]
    async fn a_decision_right_after_registration_is_not_lost() {
        let broker = ApprovalBroker::default();
        let pending = broker.register("a3");
        // The client answers before the loop starts waiting.
        assert_eq!(
            broker.resolve("a3", Decision::Approved, None),
            ApproveActionStatus::Accepted
        );
        let resolution = broker.wait_for(pending, Duration::from_secs(30)).await;
        assert_eq!(resolution.decision, Decision::Approved);
    }

    #[tokio::test]
    async fn the_timeout_is_recorded_apart_from_a_denial() {
        let broker = ApprovalBroker::default();
        let resolution = broker.wait("a2", Duration::from_millis(1)).await;
        assert_eq!(resolution.decision, Decision::TimedOut);
        assert_eq!(
            broker.resolve("a2", Decision::Approved, None),
            ApproveActionStatus::Expired
        );
    }
}
