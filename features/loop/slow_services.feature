Feature: A slow Workspace Service does not hold up the end of a task
  Every backend request is bounded by AGENT_RUNTIME_SERVICE_TIMEOUT_SECONDS; when the
  session_history upload cannot finish in time the task still ends, with a warning
  (local-agent-host.md §11).

  @REQ-LOOP-026
  Scenario: a Workspace Service slower than the service timeout ends in a warning, not a hang
    Given the runtime is started with AGENT_RUNTIME_SERVICE_TIMEOUT_SECONDS set to "0.3"
    And the runtime is started with AGENT_RUNTIME_SERVICE_RETRIES set to "1"
    And the Workspace Service is slow by 10 s
    And a running session
    And the model will answer "Saved late or never, here is the answer."
    When the client starts the task "Answer even if saving is slow."
    Then a warning with code "WORKSPACE_UPLOAD_FAILED" precedes task_completed
