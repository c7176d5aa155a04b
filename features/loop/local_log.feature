Feature: Events are also logged locally
  Besides the protocol, every SessionEvent is written as structured JSON to the runtime's log
  in LOG_DIR, one JSON object per line, carrying the event's type and ID chain
  (local-agent-host.md §12, Phase 1–2). Where the file lives and how its lines are shaped
  beyond that is the runtime's choice (conformance/README.md).

  @REQ-EVT-006
  Scenario: a task's events reach the log directory as JSON lines
    Given a running session
    And the model will answer "Logged and shown."
    When the client starts the task "Say something."
    Then the log directory holds task_started and task_completed of the task as JSON lines

  @REQ-EVT-006
  Scenario: the local event record does not depend on LOG_LEVEL
    Given the runtime is started with LOG_LEVEL set to "warn"
    And a running session
    And the model will answer "Logged and shown."
    When the client starts the task "Say something."
    Then the log directory holds task_started and task_completed of the task as JSON lines
