//! Processing the tool calls of one step (local-agent-host.md §4.2, §7.3): policy checks in
//! order, then every call concurrently — approvals waited for independently, tools run
//! with their own timeouts — and the results returned in the model's order.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use agent_protocol::events::{EventBody, ToolCompleted, ToolRequested, Warning};
use agent_protocol::services::ArtifactUploadRequest;
use agent_protocol::state::TaskStatus;
use agent_protocol::tool::ToolLimits;
use agent_protocol::{ErrorCode, ImagePart, ToolRequest, ToolResult, ToolStatus};
use serde_json::{Map, Value, json};

use super::{TaskRun, millis};
use crate::events::Scope;
use crate::llm::ToolCall;
use crate::policy::Verdict;
use crate::routing::capability_in;
use crate::thread::ToolReply;

struct Planned<'a> {
    call: &'a ToolCall,
    request: ToolRequest,
    verdict: Result<Verdict, ToolResult>,
}

impl TaskRun {
    /// Returns, per call and in call order, what the model will read (and see).
    pub(super) async fn run_tools(&self, step_id: &str, calls: &[ToolCall]) -> Vec<ToolReply> {
        let scope = Scope::step(&self.task_id, step_id);
        let policy = self.session.policy();
        let planned: Vec<Planned<'_>> = calls
            .iter()
            .map(|call| {
                let capability = capability_in(&call.name, &policy);
                let parsed = serde_json::from_str::<Value>(&call.arguments);
                let arguments = match &parsed {
                    Ok(Value::Object(map)) => map.clone(),
                    _ => Map::new(),
                };
                self.session.events.emit(
                    scope.clone(),
                    EventBody::ToolRequested(ToolRequested {
                        tool_call_id: call.id.clone(),
                        tool_name: call.name.clone(),
                        capability: capability.unwrap_or_default().to_owned(),
                        arguments: match &parsed {
                            Ok(value @ Value::Object(_)) => value.clone(),
                            _ => json!({ "raw": call.arguments }),
                        },
                    }),
                );
                // What a started process may reach follows the tool (a git tool judged as
                // a file tool still runs git).
                let grant = policy.grant(
                    capability,
                    crate::routing::capability_for(&call.name),
                    &self.options,
                );
                let (tool_timeout, _) = crate::routing::tool_timeout(
                    capability.unwrap_or_default(),
                    &arguments,
                    &self.config.tools,
                );
                let tool_timeout = grant
                    .max_time
                    .map_or(tool_timeout, |most| tool_timeout.min(most));
                let request = ToolRequest {
                    tool_name: call.name.clone(),
                    arguments,
                    session_id: self.session.id().to_owned(),
                    task_id: self.task_id.clone(),
                    step_id: step_id.to_owned(),
                    capability: capability.map(str::to_owned),
                    tool_call_id: Some(call.id.clone()),
                    workspace_root: self
                        .session
                        .identity
                        .workspace_root
                        .as_ref()
                        .map(|root| root.display().to_string()),
                    limits: ToolLimits {
                        timeout_ms: Some(millis(tool_timeout)),
                        ..grant.limits
                    },
                    granted_paths: grant.granted_paths,
                    blocked_paths: grant.blocked_paths,
                    sandbox: grant.sandbox,
                };
                let verdict = match (capability, parsed) {
                    (_, Err(error)) => Err(ToolResult::failed(
                        &request,
                        ErrorCode::InvalidRequest,
                        format!(
                            "The arguments of {} are not valid JSON ({error}); send a JSON object.",
                            call.name
                        ),
                    )),
                    (_, Ok(value)) if !value.is_object() => Err(ToolResult::failed(
                        &request,
                        ErrorCode::InvalidRequest,
                        format!("The arguments of {} must be a JSON object.", call.name),
                    )),
                    (None, _) => Err(ToolResult::failed(
                        &request,
                        ErrorCode::ToolNotFound,
                        format!("Unknown tool: {}", call.name),
                    )),
                    // §8.6: expiry is checked before every tool call too.
                    (Some(_), _) if policy.is_expired() => Err(expired(&request)),
                    (Some(capability), _) => Ok(policy.check_tool_for_task(
                        &call.name,
                        capability,
                        &request.arguments,
                        &self.options,
                    )),
                };
                Planned {
                    call,
                    request,
                    verdict,
                }
            })
            .collect();
        let approvals = planned
            .iter()
            .filter(|plan| matches!(plan.verdict, Ok(Verdict::ApprovalRequired { .. })))
            .count();
        let waiting = AtomicUsize::new(approvals);
        self.transition(if approvals > 0 {
            TaskStatus::WaitingForApproval
        } else {
            TaskStatus::ExecutingTools
        });
        let runs = planned
            .into_iter()
            .map(|plan| self.run_one(plan, &scope, &waiting));
        futures::future::join_all(runs).await
    }

    async fn run_one(&self, plan: Planned<'_>, scope: &Scope, waiting: &AtomicUsize) -> ToolReply {
        let started = Instant::now();
        let result = match plan.verdict {
            Err(result) => result,
            Ok(Verdict::Denied(reason)) => {
                ToolResult::denied(&plan.request, ErrorCode::CapabilityDenied, reason)
            }
            Ok(Verdict::Allowed) => self.execute(plan.request.clone()).await,
            Ok(Verdict::ApprovalRequired { rule_id, risk }) => {
                let asking = crate::approval::Asking {
                    session: &self.session,
                    backends: &self.backends,
                    task_id: &self.task_id,
                    timeout: self.config.tools.approval,
                };
                let decision =
                    crate::approval::ask(&asking, &plan.request, rule_id.as_deref(), risk, scope)
                        .await;
                if waiting.fetch_sub(1, Ordering::SeqCst) == 1 {
                    self.transition(TaskStatus::ExecutingTools);
                }
                match crate::approval::refusal(&plan.request, decision, self.config.tools.approval)
                {
                    Some(refused) => refused,
                    None if self.session.policy().is_expired() => expired(&plan.request),
                    None => match self.recheck(&plan.request) {
                        Some(denied) => denied,
                        None => self.execute(plan.request.clone()).await,
                    },
                }
            }
        };
        // Secrets leave the result before anything else sees it: the thread — and so every
        // checkpoint, history upload and model request —, the event and the artifacts.
        let mut result = result;
        crate::redact::apply::tool_result(&crate::redact::global(), &mut result);
        let result = self.upload_artifacts(result, scope).await;
        self.session
            .record_file_changes(&self.task_id, &result.file_changes);
        let text = result.text_for_model();
        self.session.events.emit(
            scope.clone(),
            EventBody::ToolCompleted(ToolCompleted {
                tool_call_id: plan.call.id.clone(),
                tool_name: plan.call.name.clone(),
                status: result.status,
                latency_ms: millis(started.elapsed()),
                result: (result.status == ToolStatus::Succeeded).then(|| text.clone()),
                error: result.error.as_ref().map(|error| error.message.clone()),
                error_code: result.error.as_ref().map(|error| error.code.clone()),
                artifact_uris: result.artifact_uris.clone(),
            }),
        );
        ToolReply {
            text,
            image_urls: result.images.iter().map(ImagePart::data_uri).collect(),
        }
    }

    /// The policy judged the call before the user was asked; while they decided, a path it
    /// names may have become a link to somewhere else, or the bundle may have changed. So the
    /// approved call is judged again, against the policy of now: the denial, if it fails.
    fn recheck(&self, request: &ToolRequest) -> Option<ToolResult> {
        let policy = self.session.policy();
        let capability = request.capability.as_deref()?;
        match policy.check_tool_for_task(
            &request.tool_name,
            capability,
            &request.arguments,
            &self.options,
        ) {
            Verdict::Denied(reason) => Some(ToolResult::denied(
                request,
                ErrorCode::CapabilityDenied,
                format!("Checked again after the approval, the policy refuses it: {reason}"),
            )),
            Verdict::Allowed | Verdict::ApprovalRequired { .. } => None,
        }
    }

    async fn execute(&self, request: ToolRequest) -> ToolResult {
        let (_, timeout) = crate::routing::tool_timeout(
            request.capability.as_deref().unwrap_or_default(),
            &request.arguments,
            &self.config.tools,
        );
        let fallback = request.clone();
        // Cancellation is cooperative (§4.5): a running tool is waited for. Only when it is
        // still running a grace period after CancelTask is it force-cancelled: its future is
        // dropped, which makes the tool runtime kill its process tree.
        let grace = self.config.tools.force_cancel_grace;
        let force = async {
            self.cancel.cancelled().await;
            tokio::time::sleep(grace).await;
        };
        tokio::select! {
            outcome = tokio::time::timeout(timeout, self.tools.execute(request)) => match outcome {
                Ok(result) => result,
                Err(_) => ToolResult::failed(
                    &fallback,
                    ErrorCode::ToolExecutionTimeout,
                    format!(
                        "{} timed out after {:.1} seconds",
                        fallback.tool_name,
                        timeout.as_secs_f64()
                    ),
                ),
            },
            () = force => {
                let message = format!(
                    "{} was still running {:.1} seconds after the task was cancelled, so it was stopped (its processes were killed); its effects may be incomplete.",
                    fallback.tool_name,
                    grace.as_secs_f64()
                );
                tracing::warn!(target: "audit", tool = %fallback.tool_name, tool_call_id = ?fallback.tool_call_id, "tool force-cancelled");
                self.session.events.emit(
                    Scope::step(&self.task_id, &fallback.step_id),
                    EventBody::Warning(Warning { code: ErrorCode::ToolExecutionFailed, message: message.clone() }),
                );
                ToolResult::failed(&fallback, ErrorCode::ToolExecutionFailed, message)
            }
        }
    }

    /// Best effort (§7.5): an artifact that cannot be uploaded leaves `artifactUris`
    /// without it and is reported by a `warning` event; the result still reaches the thread.
    async fn upload_artifacts(&self, mut result: ToolResult, scope: &Scope) -> ToolResult {
        for artifact in std::mem::take(&mut result.artifacts) {
            let request = ArtifactUploadRequest {
                session_id: result.session_id.clone(),
                task_id: Some(result.task_id.clone()),
                step_id: Some(result.step_id.clone()),
                artifact_type: artifact.artifact_type,
                artifact_name: artifact.artifact_name,
                content_type: artifact.content_type,
                content_base64: Some(artifact.content_base64),
                messages: None,
                snapshot_after_task_id: None,
                snapshot_at: None,
                metadata: json!({ "toolName": result.tool_name, "stepId": result.step_id })
                    .as_object()
                    .cloned()
                    .unwrap_or_default(),
            };
            match self
                .backends
                .workspace
                .upload_artifact(&self.session.identity.workspace_id, &request)
                .await
            {
                Ok(response) => result.artifact_uris.push(response.artifact_uri),
                Err(error) => {
                    tracing::warn!(%error, "artifact upload failed; continuing without it");
                    self.session.events.emit(
                        scope.clone(),
                        EventBody::Warning(Warning {
                            code: ErrorCode::WorkspaceUploadFailed,
                            message: format!(
                                "The {} artifact {} of {} could not be uploaded, so the full output is not kept: {error}",
                                request.artifact_type, request.artifact_name, result.tool_name
                            ),
                        }),
                    );
                }
            }
        }
        result
    }
}

fn expired(request: &ToolRequest) -> ToolResult {
    ToolResult::denied(
        request,
        ErrorCode::PolicyExpired,
        "The session's policy expired before this call could run, so nothing was done.",
    )
}
