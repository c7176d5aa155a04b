Feature: Resuming a paused session takes the fresh bundle whole
  A session paused by a gateway that stayed down (or an expired policy) is brought back by
  ResumeSession, which fetches a fresh policy bundle and session metadata from the Session
  Service (local-agent-host.md §3.3 PAUSED → RUNNING "re-init policy enforcer", §8.6, §9.5).
  Everything derived from the bundle follows it: the MCP servers it lists, and the feature
  flags the resume answer carries.

  Background:
    Given the runtime is started with AGENT_RUNTIME_ALLOW_LOOPBACK_HTTP set to "true"
    And the runtime is started with LLM_MAX_RETRIES set to "1"
    And a running session
    And the LLM Gateway answers 503 to the next 2 requests
    When the client starts the task "Echo a line."
    Then the task fails recoverably with error code "LLM_UNAVAILABLE"
    And the session is paused

  @REQ-EXT-208
  Scenario: an MCP server the fresh bundle adds is connected when the paused session resumes
    Given the Session Service's fresh policy allows an MCP server "docs" with only the tool "echo"
    And the model will call the tool "docs__echo" with the arguments '{"text": "after the pause"}'
    And the model will then answer "Done."
    When the client resumes the session
    And the client continues the incomplete task
    Then the continued task completes with "Done."
    And the runtime reports tool_completed for "docs/echo" with a result containing "echo: after the pause"
    And the MCP server "docs" received only the call "echo" with the text "after the pause"

  @REQ-SES-303
  Scenario: the feature flags sent with the fresh bundle replace the session's on resume
    Given the Session Service's resume answers carry its feature flags
    And the Session Service turns on the feature flag "betaTools"
    When the client resumes the session
    Then the session reports the feature flag "betaTools" turned on
