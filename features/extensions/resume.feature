Feature: Extension tools after a crash
  A runtime restarted after a crash restores the session from its checkpoint; it must also
  reconnect the MCP servers the refreshed policy bundle lists, exactly as CreateSession does,
  or the resumed task silently loses its extension tools (local-agent-host.md §9.5,
  local-tool-runtime.md §9.2).

  Background:
    Given the runtime is started with AGENT_RUNTIME_ALLOW_LOOPBACK_HTTP set to "true"

  @REQ-EXT-007
  Scenario: an MCP tool works in the task continued after a crash and ResumeSession
    Given an MCP server "docs" the policy allows with only the tool "echo"
    And a running session
    And the model will begin answering "Let me" and then pause
    And the model will call the tool "docs__echo" with the arguments '{"text": "after the crash"}'
    And the model will then answer "Done."
    When the client starts the task "Echo a line."
    And the model has begun streaming its answer
    And the runtime process is killed
    And the client resumes the session
    And the client continues the incomplete task
    Then the runtime reports tool_completed for "docs/echo" with a result containing "echo: after the crash"
    And the MCP server "docs" received only the call "echo" with the text "after the crash"
