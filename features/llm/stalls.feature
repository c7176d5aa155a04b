Feature: A gateway that goes silent, and one that is only slow
  Silence from the gateway — no response head, or no event inside a stream — for longer than
  the idle timeout (AGENT_RUNTIME_LLM_IDLE_TIMEOUT_SECONDS) is a network timeout: the attempt is
  abandoned and the whole request retried (local-agent-host.md §6.4; INTEROP.md §2). An answer
  that keeps coming is read to its end, however long it takes in total.

  @REQ-LLM-400
  Scenario: a stream that stalls mid-answer is abandoned and retried whole
    Given the runtime is started with AGENT_RUNTIME_LLM_IDLE_TIMEOUT_SECONDS set to "0.25"
    And the workspace file "notes.txt" contains "The launch code is 4-8-15-16."
    And a running session
    And the LLM Gateway stalls after 2 chunks
    And the model will then call ReadFile on "notes.txt" saying "Let me open notes.txt first."
    And the model will then answer "The launch code is 4-8-15-16."
    When the client starts the task "What is the launch code in notes.txt?"
    Then the task_completed result is "The launch code is 4-8-15-16."
    And the runtime reports llm_response_discarded before the retry
    And the last model request carries the assistant text "Let me open notes.txt first." exactly once
    And the gateway received exactly 3 requests

  @REQ-LLM-401
  Scenario: a gateway that sends no answer within the idle timeout is retried, then the session pauses
    Given the runtime is started with AGENT_RUNTIME_LLM_IDLE_TIMEOUT_SECONDS set to "0.25"
    And the runtime is started with LLM_MAX_RETRIES set to "1"
    And a running session
    And the LLM Gateway is slow by 10 s
    And the model will answer "Too late to matter."
    When the client starts the task "Are you there?"
    Then the task fails recoverably with error code "LLM_UNAVAILABLE"
    And the session is paused
    And the gateway received exactly 2 requests

  @REQ-LLM-402
  Scenario: a slow answer whose events keep coming is read to its end without a retry
    Given the runtime is started with AGENT_RUNTIME_LLM_IDLE_TIMEOUT_SECONDS set to "0.5"
    And a running session
    And the LLM Gateway is slow by 150 ms
    And the model will answer "Slow and steady wins." with 150 ms between chunks
    When the client starts the task "Take your time."
    Then the task_completed result is "Slow and steady wins."
    And the gateway received exactly 1 request
