Feature: Watching a task while the model is still answering
  The desktop app streams text as it arrives and may ask for the state at any time
  (local-agent-host.md §3.3, §6.3).

  Background:
    Given a running session
    And the model will begin answering "Let me think about that for a moment." and then pause

  @REQ-TASK-003
  Scenario: text is forwarded while the model is still streaming
    When the client starts the task "Think it over."
    Then the first words of the answer arrive while the model is still answering

  @REQ-TASK-012
  Scenario: GetSessionState names the running task while the model answers
    When the client starts the task "Think it over."
    And the model has begun streaming its answer
    And the client asks for the session state
    Then the session state names the task as still running

  @REQ-TASK-012 @REQ-TASK-008
  Scenario: the task completes once the model finishes its answer
    When the client starts the task "Think it over."
    And the model has begun streaming its answer
    And the model finishes its answer
    Then the task ends with exactly one task_completed event
