Feature: Tools of remote MCP servers
  The runtime is an MCP client over streamable HTTP: it contacts only the servers the policy
  bundle lists, registers only their allowlisted tools as {serverName}/{toolName}, and a
  server it cannot reach never stops the session (local-tool-runtime.md §9.2–§9.5,
  system-design.md §19.6). The fake server listens on loopback over plain http, so the
  runtime runs in its test mode.

  Background:
    Given the runtime is started with AGENT_RUNTIME_ALLOW_LOOPBACK_HTTP set to "true"

  @REQ-EXT-001 @REQ-EXT-002
  Scenario: an allowlisted MCP tool is offered under its server's name and its call reaches the server
    Given an MCP server "docs" the policy allows with only the tool "echo"
    And a running session
    And the model will call the tool "docs__echo" with the arguments '{"text": "hello"}'
    And the model will then answer "Done."
    When the client starts the task "Echo hello."
    # judges @REQ-EXT-001
    Then the runtime reports tool_completed for "docs/echo" with a result containing "echo: hello"
    # judges @REQ-EXT-001
    And the model is offered the function "docs__echo"
    # judges @REQ-EXT-001
    And the model is not offered the function "docs__secret"
    # judges @REQ-EXT-001
    And the MCP server "docs" received only the call "echo" with the text "hello"
    # judges @REQ-EXT-002
    And the MCP server "docs" was sent the bearer token from the policy

  @REQ-EXT-003
  Scenario: a tool of the server that the policy does not allow is never called
    Given an MCP server "docs" the policy allows with only the tool "echo"
    And a running session
    And the model will call the tool "docs__secret" with the arguments "{}"
    And the model will then answer "I may not."
    When the client starts the task "Tell me the secret."
    Then the call of "docs/secret" does not succeed
    And the MCP server "docs" received no tool call
    And no model request contains "4-8-15-16"

  @REQ-EXT-004
  Scenario: an MCP server that cannot be reached is reported and the session works without it
    Given an MCP server "gone" the policy allows that cannot be reached
    And a running session
    And the model will answer "Still here."
    When the client starts the task "Are you there?"
    Then the task completes after 1 model request
    And the runtime reported a warning naming the MCP server "gone"
    And the model is not offered the function "gone__echo"
