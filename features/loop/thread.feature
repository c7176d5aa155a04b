Feature: The message thread across tasks and within the context window
  The thread accumulates every task of the session. When it no longer fits a request, the
  oldest messages in the middle are dropped behind a marker, the opening prompt and the latest
  messages stay, and a tool result never travels without its call
  (local-agent-host.md §5.1, §5.4; INTEROP.md §1, §2).

  @REQ-THR-001
  Scenario: the second task's first request carries the first task's conversation
    Given a running session
    And the model will answer "Paris is the capital of France."
    And the model will then answer "Rome is the capital of Italy."
    And the client has run the task "What is the capital of France?" to its end
    When the client starts another task "And of Italy?"
    Then the first model request of the new task carries the earlier prompt "What is the capital of France?" and answer "Paris is the capital of France."

  @REQ-THR-002
  Scenario: a conversation too long for one request is truncated in the middle behind a marker
    Given the runtime is started with AGENT_RUNTIME_MAX_REQUEST_MESSAGES set to "6"
    And the runtime is started with AGENT_RUNTIME_RECENCY_WINDOW set to "2"
    And a running session
    And the model will call ReadFile on "notes.txt" 6 times, then answer "I have read it six times."
    When the client starts the task "Read notes.txt six times."
    Then the last model request replaces 10 earlier messages with the truncation marker
    And the last model request still starts the conversation with the task's prompt
    And the last model request ends with the latest tool call and its result

  @REQ-THR-003
  Scenario: dropping messages from the requests is reported with context_compacted
    Given the runtime is started with AGENT_RUNTIME_MAX_REQUEST_MESSAGES set to "6"
    And the runtime is started with AGENT_RUNTIME_RECENCY_WINDOW set to "2"
    And a running session
    And the model will call ReadFile on "notes.txt" 6 times, then answer "I have read it six times."
    When the client starts the task "Read notes.txt six times."
    Then the runtime reports context_compacted with messagesDropped 10

  @REQ-THR-004
  Scenario: a truncated request never carries a tool result without its call
    Given the runtime is started with AGENT_RUNTIME_MAX_REQUEST_MESSAGES set to "5"
    And the runtime is started with AGENT_RUNTIME_RECENCY_WINDOW set to "3"
    And a running session
    And the model will call ReadFile on "notes.txt" 6 times, then answer "I have read it six times."
    When the client starts the task "Read notes.txt six times."
    Then no model request carries a tool result without the tool call it answers

  @REQ-THR-005
  Scenario: a conversation longer than the gateway accepts still goes out in requests of at most 50 messages
    Given a running session
    And the model will call ReadFile on "notes.txt" 26 times, then answer "I have read it many times."
    When the client starts the task "Read notes.txt over and over."
    Then the task completes after 27 model requests
    And no model request carries more than 50 messages

  @REQ-THR-002
  Scenario: a conversation over llmPolicy.maxInputTokens is truncated behind a marker
    Given the policy allows requests of at most 3000 input tokens
    And the workspace file "big.txt" holds 2500 distinct words
    And a running session
    And the model will call ReadFile on "big.txt" once, then on "notes.txt" 6 times, then answer "I have read them all."
    When the client starts the task "Read big.txt, then notes.txt six times."
    Then the last model request carries a truncation marker where messages were dropped
    And the last model request no longer carries the content of "big.txt"
    And the last model request ends with the latest tool call and its result
