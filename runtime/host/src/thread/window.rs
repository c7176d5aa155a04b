//! Context window management (local-agent-host.md §5.4): what of the thread is sent on
//! the next LLM call. The system prompt and tool definitions are never cut; the first
//! message (the conversation's opening request) and a recency window of the latest
//! messages are kept; the oldest messages in between are dropped and a marker stands in
//! their place. An assistant tool call and its tool results form one unit that is kept or
//! dropped whole: a tool result without its call makes real gateways reject the request.
//!
//! The thread itself is never changed — checkpoints and history keep everything.

use agent_protocol::message::{ConversationMessage, Role};

use super::MessageMeta;

/// Limits a request must stay within.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// `llmPolicy.maxInputTokens`; `None` means no token limit.
    pub max_input_tokens: Option<u64>,
    /// Tokens of what is always sent: the system prompt and the tool definitions.
    pub fixed_tokens: u64,
    /// Most messages one request may carry, the system prompt included (the real gateway
    /// rejects more than 50).
    pub max_messages: usize,
    /// Latest messages kept whenever possible.
    pub recency_window: usize,
}

/// One message of a request.
#[derive(Debug, Clone, PartialEq)]
pub enum Sent {
    /// Message `index` of the thread.
    Thread(usize),
    /// The marker standing in for the messages cut, made for this request.
    Marker(Box<ConversationMessage>),
}

/// The messages to send, in order.
#[derive(Debug, Clone, PartialEq)]
pub struct Fitted {
    pub messages: Vec<Sent>,
    /// Thread messages left out of this request.
    pub dropped: usize,
}

pub fn marker_text(dropped: usize) -> String {
    format!("[Earlier conversation truncated — {dropped} messages removed]")
}

/// Splits the thread into units that must stay together: an assistant message with tool
/// calls and the tool messages answering them (`joins_previous`); any other message alone.
fn units(messages: &[MessageMeta]) -> Vec<std::ops::Range<usize>> {
    let mut units: Vec<std::ops::Range<usize>> = Vec::new();
    for (index, meta) in messages.iter().enumerate() {
        match units.last_mut() {
            Some(unit) if meta.joins_previous => unit.end = index + 1,
            _ => units.push(index..index + 1),
        }
    }
    units
}

fn tokens(messages: &[MessageMeta], range: &std::ops::Range<usize>) -> u64 {
    messages[range.clone()]
        .iter()
        .map(|message| message.token_count)
        .sum()
}

/// Chooses what to send. Linear in the thread's length: a 10 000-message session costs
/// no more per step than reading its token counts once.
pub fn fit(
    messages: &[MessageMeta],
    limits: &Limits,
    marker: impl Fn(usize) -> ConversationMessage,
) -> Fitted {
    let token_budget = limits
        .max_input_tokens
        .map_or(u64::MAX, |max| max.saturating_sub(limits.fixed_tokens));
    // One slot is the system prompt.
    let message_budget = limits.max_messages.saturating_sub(1);
    let mut used_tokens: u64 = messages.iter().map(|m| m.token_count).sum();
    if used_tokens <= token_budget && messages.len() <= message_budget {
        return Fitted {
            messages: (0..messages.len()).map(Sent::Thread).collect(),
            dropped: 0,
        };
    }
    let units = units(messages);
    let mut keep = vec![true; units.len()];
    let last = units.len().saturating_sub(1);
    // The recency window, rounded out to whole units.
    let mut recent_from = last;
    let mut recent_messages = units.get(last).map_or(0, |unit| unit.len());
    while recent_from > 0 && recent_messages + units[recent_from - 1].len() <= limits.recency_window
    {
        recent_from -= 1;
        recent_messages += units[recent_from].len();
    }
    // From here on something is cut, so the marker is part of the request.
    used_tokens += marker(0).token_count.unwrap_or(0);
    let mut used_messages = messages.len() + 1;
    let mut dropped = 0usize;
    // Order of sacrifice: the middle (oldest first), then the opening message, then the
    // recency window from its oldest end. The last unit is always sent.
    let head_is_user = messages.first().is_some_and(|m| m.role == Role::User) && last > 0;
    let first_droppable = usize::from(head_is_user);
    let order = (first_droppable..recent_from)
        .chain(head_is_user.then_some(0))
        .chain(recent_from.max(first_droppable)..last);
    for index in order {
        if used_messages <= message_budget && used_tokens <= token_budget {
            break;
        }
        keep[index] = false;
        used_messages -= units[index].len();
        used_tokens -= tokens(messages, &units[index]);
        dropped += units[index].len();
    }
    let mut out = Vec::with_capacity(used_messages);
    let mut marker_placed = dropped == 0;
    for (index, unit) in units.iter().enumerate() {
        if keep[index] {
            out.extend(unit.clone().map(Sent::Thread));
        } else if !marker_placed {
            out.push(Sent::Marker(Box::new(marker(dropped))));
            marker_placed = true;
        }
    }
    Fitted {
        messages: out,
        dropped,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_protocol::message::MessageToolCall;

    fn message(role: Role, content: &str, tokens: u64) -> ConversationMessage {
        ConversationMessage {
            message_id: content.to_owned(),
            session_id: "s".into(),
            task_id: None,
            step_id: None,
            role,
            content: content.into(),
            token_count: Some(tokens),
            timestamp: "t".into(),
            tool_calls: vec![],
            tool_call_id: None,
            tool_name: None,
            image_urls: Vec::new(),
        }
    }

    fn call(id: &str, tokens: u64) -> ConversationMessage {
        let mut m = message(Role::Assistant, id, tokens);
        m.tool_calls = vec![MessageToolCall {
            id: id.into(),
            name: "ReadFile".into(),
            arguments: "{}".into(),
            message_id: None,
        }];
        m
    }

    fn result(id: &str, tokens: u64) -> ConversationMessage {
        let mut m = message(Role::Tool, &format!("r-{id}"), tokens);
        m.tool_call_id = Some(id.into());
        m
    }

    fn marker(dropped: usize) -> ConversationMessage {
        message(Role::System, &marker_text(dropped), 5)
    }

    fn limits(max_input_tokens: u64, recency_window: usize) -> Limits {
        Limits {
            max_input_tokens: Some(max_input_tokens),
            fixed_tokens: 10,
            max_messages: 50,
            recency_window,
        }
    }

    /// `thread` fitted as the thread keeps it: by its messages' [`MessageMeta`].
    fn fit_thread(
        thread: &[ConversationMessage],
        limits: &Limits,
    ) -> (Vec<ConversationMessage>, usize) {
        let kept = super::super::Thread::restore("s", thread.to_vec());
        let fitted = fit(kept.meta(), limits, marker);
        let messages = fitted
            .messages
            .into_iter()
            .map(|sent| match sent {
                Sent::Thread(index) => thread[index].clone(),
                Sent::Marker(marker) => *marker,
            })
            .collect();
        (messages, fitted.dropped)
    }

    fn contents(messages: &[ConversationMessage]) -> Vec<&str> {
        messages.iter().map(|m| m.content.as_str()).collect()
    }

    #[test]
    fn a_thread_within_the_budget_is_sent_whole() {
        let thread = vec![
            message(Role::User, "u1", 10),
            message(Role::Assistant, "a1", 10),
        ];
        let (messages, dropped) = fit_thread(&thread, &limits(100, 4));
        assert_eq!(dropped, 0);
        assert_eq!(messages, thread);
    }

    #[test]
    fn the_oldest_middle_messages_go_first_and_a_marker_takes_their_place() {
        let thread = vec![
            message(Role::User, "u1", 10),
            message(Role::Assistant, "a1", 30),
            message(Role::User, "u2", 30),
            message(Role::Assistant, "a2", 10),
            message(Role::User, "u3", 10),
        ];
        // 90 tokens of thread, 60 available after the fixed 10.
        let (messages, dropped) = fit_thread(&thread, &limits(70, 2));
        assert_eq!(contents(&messages), ["u1", &marker_text(2), "a2", "u3"]);
        assert_eq!(dropped, 2);
    }

    #[test]
    fn a_tool_call_is_never_split_from_its_results() {
        let thread = vec![
            message(Role::User, "u1", 10),
            call("c1", 10),
            result("c1", 40),
            call("c2", 10),
            result("c2", 10),
            message(Role::Assistant, "done", 10),
        ];
        let (messages, _) = fit_thread(&thread, &limits(60, 3));
        let got = contents(&messages);
        assert!(!got.contains(&"r-c1"), "{got:?}");
        assert!(
            !got.contains(&"c1"),
            "the call goes with its result: {got:?}"
        );
        assert!(got.contains(&"c2") && got.contains(&"r-c2"), "{got:?}");
        for (i, m) in messages.iter().enumerate() {
            if m.role == Role::Tool {
                let id = m.tool_call_id.as_deref().unwrap();
                assert!(
                    messages[..i]
                        .iter()
                        .any(|p| p.tool_calls.iter().any(|c| c.id == id)),
                    "orphan {id}"
                );
            }
        }
    }

    #[test]
    fn the_message_count_limit_applies_too() {
        let thread: Vec<_> = (0..60)
            .map(|i| {
                message(
                    if i % 2 == 0 {
                        Role::User
                    } else {
                        Role::Assistant
                    },
                    &format!("m{i}"),
                    1,
                )
            })
            .collect();
        let (messages, dropped) = fit_thread(
            &thread,
            &Limits {
                max_input_tokens: None,
                fixed_tokens: 0,
                max_messages: 50,
                recency_window: 10,
            },
        );
        assert_eq!(
            messages.len(),
            49,
            "system prompt + 48 kept + the marker = 50"
        );
        assert_eq!(messages[0].content, "m0");
        assert_eq!(messages[1].content, marker_text(12));
        assert_eq!(messages.last().unwrap().content, "m59");
        assert_eq!(dropped, 12);
    }

    #[test]
    fn when_even_the_recency_window_is_too_big_the_last_unit_still_goes() {
        let thread = vec![
            message(Role::User, "u1", 50),
            message(Role::Assistant, "a1", 50),
            message(Role::User, "u2", 20),
        ];
        let (messages, _) = fit_thread(&thread, &limits(40, 10));
        assert_eq!(contents(&messages), [&marker_text(2) as &str, "u2"]);
    }
}
