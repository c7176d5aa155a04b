Feature: Capabilities the policy grants
  The policy enforcer checks every LLM call and every tool call against the session's policy
  bundle; what it denies never happens, and the model is told why (local-agent-host.md §8.2,
  §8.7, §4.6).

  @REQ-POL-001
  Scenario: without LLM.Call the model is never asked
    Given the policy does not grant LLM.Call
    And a running session
    And the model will answer "Never asked."
    When the client starts the task "Hello?"
    Then the task fails with error code "CAPABILITY_DENIED"
    And the gateway received no request

  @REQ-POL-002
  Scenario: a tool whose capability is not granted is denied and the model is told why
    Given the policy does not grant File.Read
    And the workspace file "notes.txt" contains "The launch code is 4-8-15-16."
    And a running session
    And the model will call ReadFile on "notes.txt"
    And the model will then answer "I may not read files here."
    When the client starts the task "What is the launch code in notes.txt?"
    Then the ReadFile call is denied with error code "CAPABILITY_DENIED"
    And the model is told the ReadFile call was denied because of "File.Read"
    And no model request contains "4-8-15-16"
