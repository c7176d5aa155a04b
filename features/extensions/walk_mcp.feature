Feature: MCP client statements catalogued by the spec walk
  Statements of local-tool-runtime.md §9 found by walking it line by line that no earlier
  scenario certified: TLS is required for MCP connections (§9.3), a tool whose manifest is
  invalid is rejected at ingress (§9.3), and results are translated by §9.5 (text blocks
  concatenated, images packaged as artifacts, isError → failed). The fake server listens on
  loopback over plain http, so every scenario but the TLS one runs the runtime in its test mode.

  @REQ-EXT-200
  Scenario: an MCP server without https is never contacted
    Given an MCP server "plain" the policy allows with only the tool "echo"
    And a running session
    And the model will answer "Still here."
    When the client starts the task "Are you there?"
    Then the task completes after 1 model request
    And the runtime reported a warning naming the MCP server "plain"
    And the model is not offered the function "plain__echo"
    And the MCP server "plain" received no request at all

  @REQ-EXT-201
  Scenario: an MCP result flagged isError fails the call with its text
    Given the runtime is started with AGENT_RUNTIME_ALLOW_LOOPBACK_HTTP set to "true"
    And an MCP server "docs" the policy allows with only the tool "fail"
    And a running session
    And the model will call the tool "docs__fail" with the arguments "{}"
    And the model will then answer "The tool failed."
    When the client starts the task "Try the failing tool."
    Then the tool call fails with errorCode "TOOL_EXECUTION_FAILED" and a message containing "the fake failed on purpose"
    And the next model request answers the call with a tool message naming "the fake failed on purpose"

  @REQ-EXT-202
  Scenario: text blocks are joined into the result and an image becomes an artifact
    Given the runtime is started with AGENT_RUNTIME_ALLOW_LOOPBACK_HTTP set to "true"
    And an MCP server "docs" the policy allows with only the tool "pages"
    And a running session
    And the model will call the tool "docs__pages" with the arguments "{}"
    And the model will then answer "Two pages and a picture."
    When the client starts the task "Get the pages."
    Then the tool call succeeds with a result containing "first page\nsecond page"
    And the tool call result does not contain "d2Fsay1tY3AtaW1hZ2UtYnl0ZXM="
    And the Workspace Service receives a tool_output artifact of the tool call containing "walk-mcp-image-bytes"

  @REQ-EXT-203
  Scenario: a tool whose input schema is not an object is rejected at ingress
    Given the runtime is started with AGENT_RUNTIME_ALLOW_LOOPBACK_HTTP set to "true"
    And an MCP server "docs" the policy allows with only the tool "broken"
    And a running session
    And the model will answer "No such tool here."
    When the client starts the task "Use the broken tool."
    Then the task completes after 1 model request
    And the runtime reported a warning naming the MCP tool "docs/broken"
    And the model is not offered the function "docs__broken"

  @REQ-EXT-204
  Scenario: an approval rule for one MCP tool is asked before the call is forwarded
    Given the runtime is started with AGENT_RUNTIME_ALLOW_LOOPBACK_HTTP set to "true"
    And an MCP server "docs" the policy allows with only the tool "echo", approved under the rule "Echo through docs"
    And a running session
    And the model will call the tool "docs__echo" with the arguments '{"text": "hello"}'
    And the model will then answer "Done."
    When the client starts the task "Echo hello."
    And the runtime asks for approval
    Then the MCP server "docs" has received no tool call yet
    When the user approves the action
    Then the runtime reports tool_completed for "docs/echo" with a result containing "echo: hello"
    And the MCP server "docs" received only the call "echo" with the text "hello"

  @REQ-EXT-205
  Scenario: an MCP server that never answers a call is bounded by the remote tool timeout
    Given the runtime is started with AGENT_RUNTIME_ALLOW_LOOPBACK_HTTP set to "true"
    And the runtime is started with AGENT_RUNTIME_REMOTE_TOOL_TIMEOUT_SECONDS set to "0.25"
    And an MCP server "docs" the policy allows with only the tool "hang"
    And a running session
    And the model will call the tool "docs__hang" with the arguments "{}"
    And the model will then answer "The tool hung."
    When the client starts the task "Call the hanging tool."
    Then the tool call fails with errorCode "TOOL_EXECUTION_TIMEOUT"
    And the task goes on to complete

  @REQ-EXT-206
  Scenario: an MCP response over 10 MB is aborted and the call fails
    Given the runtime is started with AGENT_RUNTIME_ALLOW_LOOPBACK_HTTP set to "true"
    And an MCP server "docs" the policy allows with only the tool "flood"
    And a running session
    And the model will call the tool "docs__flood" with the arguments "{}"
    And the model will then answer "Too much."
    When the client starts the task "Call the flooding tool."
    Then the tool call fails with errorCode "TOOL_EXECUTION_FAILED" and a message containing "10 MB"
    And the task goes on to complete

  @REQ-EXT-207
  Scenario: structured content that breaks the tool's declared output schema is rejected at egress
    Given the runtime is started with AGENT_RUNTIME_ALLOW_LOOPBACK_HTTP set to "true"
    And an MCP server "docs" the policy allows with only the tool "shape"
    And a running session
    And the model will call the tool "docs__shape" with the arguments "{}"
    And the model will then answer "The tool answered nonsense."
    When the client starts the task "Count things."
    Then the tool call fails with errorCode "TOOL_EXECUTION_FAILED" and a message containing "output schema"
    And no model request contains "many"
