Feature: Pausing when the gateway stays down, and resuming
  When the retries run out the session is checkpointed and paused; the app offers the task
  again, resumes the session and restarts the task with the same taskId
  (local-agent-host.md §6.4, §3.3; INTEROP.md §1, §3).

  Background:
    Given the runtime is started with LLM_MAX_RETRIES set to "1"
    And a running session
    And the LLM Gateway answers 503 to the next 2 requests

  @REQ-LLM-009
  Scenario: when the retries run out the session pauses and the task fails recoverably
    When the client starts the task "Are you there?"
    Then the task fails recoverably with error code "LLM_UNAVAILABLE"
    And the session is paused
    And the gateway received exactly 2 requests

  @REQ-LLM-010
  Scenario: a paused session offers the interrupted task for resumption
    Given the client has run the task "Are you there?" to its end
    When the client asks for the session state
    Then the session state reports the session as SESSION_PAUSED
    And the session state offers the task as incomplete with its prompt

  @REQ-LLM-011
  Scenario: ResumeSession brings a paused session back to running
    Given the client has run the task "Are you there?" to its end
    When the client resumes the session
    And the client asks for the session state
    Then the Session Service received a resume for the session
    And the session runs again
    And the session state reports the session as SESSION_RUNNING

  @REQ-LLM-012
  Scenario: the resumed task continues without repeating its prompt
    Given the client has run the task "Are you there?" to its end
    And the client has resumed the session
    And the model will answer "I am here now."
    When the client continues the incomplete task
    Then the continued task completes with "I am here now."
    And the last model request carries the prompt exactly once

  @REQ-RST-007
  Scenario: a task that fails recoverably is recorded as failed, and as completed once continued
    When the client starts the task "Are you there?"
    Then the task fails recoverably with error code "LLM_UNAVAILABLE"
    And the Session Service holds the task as failed
    Given the model will answer "I am here."
    When the client resumes the session
    And the client continues the incomplete task
    Then the continued task completes with "I am here."
    And the Session Service holds the task as completed
