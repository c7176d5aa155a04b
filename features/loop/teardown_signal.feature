Feature: SIGTERM takes the Shutdown path
  SIGTERM (logout, a process manager stopping the runtime) ends the session exactly as
  Shutdown does: a running task is cancelled, the history is uploaded, the session's terminal
  event is reported and the process exits 0 (local-agent-host.md §3.4).

  @REQ-SES-019
  Scenario: SIGTERM ends an idle session completed, with its history uploaded
    Given a running session that has completed a task
    When the runtime receives SIGTERM
    Then the runtime reports session_completed for the session
    And the Workspace Service receives a session_history upload made after Shutdown
    And the runtime exits with code 0

  @REQ-SES-019
  Scenario: SIGTERM during a running task cancels it and ends the session cancelled
    Given a running session
    And the model will begin answering "Let me think about that for a moment." and then pause
    And the client has started the task "Think it over."
    When the model has begun streaming its answer
    And the runtime receives SIGTERM
    Then the runtime reports task_cancelled and then session_cancelled
    And the runtime exits with code 0
