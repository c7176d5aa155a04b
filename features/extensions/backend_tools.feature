Feature: Remote tools of the Backend Tool Service
  A tool that resolves to BackendTool.Invoke is checked against the policy's allowedToolNames
  and run by POST /tools/{toolName}/invoke on the Backend Tool Service; its ToolResult is
  handled like a local one (local-agent-host.md §7.2, §7.6).

  @REQ-EXT-005
  Scenario: an allowed remote tool runs on the Backend Tool Service and its result reaches the task
    Given the Backend Tool Service runs the tool "Translate" answering "bonjour" and the policy allows only it
    And a running session
    And the model will call the tool "Translate" with the arguments '{"text": "hello"}'
    And the model will then answer "It is bonjour."
    When the client starts the task "Translate hello."
    Then the runtime reports tool_completed for "Translate" with a result containing "bonjour"
    And the Backend Tool Service received only the invocation "Translate" with the text "hello"

  @REQ-EXT-006
  Scenario: a remote tool the policy does not name is never invoked
    Given the Backend Tool Service runs the tool "Translate" answering "bonjour" and the policy allows only it
    And a running session
    And the model will call the tool "Summarize" with the arguments '{"text": "hello"}'
    And the model will then answer "I cannot."
    When the client starts the task "Summarize hello."
    Then the call of "Summarize" does not succeed
    And the Backend Tool Service received no invocation
    And the model is not offered the function "Summarize"

  @REQ-EXT-008
  Scenario: a remote tool call that outlasts the remote tool timeout fails with TOOL_EXECUTION_TIMEOUT
    Given the Backend Tool Service runs the tool "Translate" answering "bonjour" and the policy allows only it
    And the Backend Tool Service is slow by 3 s
    And the runtime is started with AGENT_RUNTIME_REMOTE_TOOL_TIMEOUT_SECONDS set to "0.25"
    And a running session
    And the model will call the tool "Translate" with the arguments '{"text": "hello"}'
    And the model will then answer "The translation timed out."
    When the client starts the task "Translate hello."
    Then the tool call fails with errorCode "TOOL_EXECUTION_TIMEOUT" and a message containing "Translate"
    And the task completes after 2 model requests
