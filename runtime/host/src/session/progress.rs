//! How a running task changes the session, as the agent loop reports it: the model's
//! answer and the tokens it cost, the tools' results, and the completed steps that make
//! the resume cursor (local-agent-host.md §4.2, §9.2).

use agent_protocol::message::MessageToolCall;

use super::Session;
use crate::llm::{LlmResponse, ToolCall};
use crate::thread::Origin;

impl Session {
    /// The model's answer into the thread (its tool calls with it) and `tokens` onto the
    /// session's budget.
    pub fn record_answer(&self, response: &LlmResponse, tokens: u64, origin: Origin<'_>) {
        let calls = response
            .tool_calls
            .iter()
            .map(|call| MessageToolCall {
                id: call.id.clone(),
                name: call.name.clone(),
                arguments: call.arguments.clone(),
            })
            .collect();
        let mut inner = self.lock();
        inner.thread.add_assistant(
            &response.text,
            calls,
            response.usage.map(|usage| usage.output_tokens),
            origin,
        );
        inner.tokens_used = inner.tokens_used.saturating_add(tokens);
    }

    /// Each call's result into the thread, answering its call, in the calls' order.
    pub fn record_tool_results(
        &self,
        calls: &[ToolCall],
        results: Vec<String>,
        origin: Origin<'_>,
    ) {
        let mut inner = self.lock();
        for (call, text) in calls.iter().zip(results) {
            inner
                .thread
                .add_tool_result(&call.id, &call.name, text, origin);
        }
    }

    /// Counts a step of the current task as completed and makes it the resume cursor;
    /// the task's completed steps.
    pub fn complete_step(&self, step_id: &str) -> u32 {
        let mut inner = self.lock();
        inner.task.as_mut().map_or(0, |task| {
            task.step_count += 1;
            task.step_cursor = Some(step_id.to_owned());
            task.step_count
        })
    }

    /// The current task's completed steps.
    pub fn step_count(&self) -> u32 {
        self.lock().task.as_ref().map_or(0, |task| task.step_count)
    }

    /// The number in the current task's step cursor `step_NNN`, 0 when there is none.
    pub fn cursor_number(&self) -> u32 {
        self.lock()
            .task
            .as_ref()
            .and_then(|task| {
                task.step_cursor
                    .as_deref()?
                    .strip_prefix("step_")?
                    .parse()
                    .ok()
            })
            .unwrap_or(0)
    }
}
