Feature: The session's token budget
  Before each call the runtime checks the request against llmPolicy.maxSessionTokens; a response
  that overshoots lets its step finish but no further call is made (local-agent-host.md §6.5).

  @REQ-LLM-017
  Scenario: a request that would exceed the budget is never sent
    Given the policy allows a session budget of 10 tokens
    And a running session
    And the model will answer "Never asked."
    When the client starts the task "What is the launch code?"
    Then the task fails with error code "LLM_BUDGET_EXCEEDED"
    And the gateway received no request

  @REQ-LLM-018
  Scenario: a response that overshoots the budget finishes its step and stops the next call
    Given the policy allows a session budget of 20000 tokens
    And the gateway reports usage of 25000 prompt tokens and 10 completion tokens
    And the workspace file "notes.txt" contains "The launch code is 4-8-15-16."
    And a running session
    And the model will call ReadFile on "notes.txt"
    And the model will then answer "Never asked."
    When the client starts the task "What is the launch code in notes.txt?"
    Then the task fails with error code "LLM_BUDGET_EXCEEDED"
    And the runtime reports tool_completed for ReadFile with a result containing "The launch code is 4-8-15-16."
    And the gateway received exactly 1 request

  @REQ-LLM-018
  Scenario: the budget counts a response's prompt and completion tokens together
    Given the policy allows a session budget of 20000 tokens
    And the gateway reports usage of 15000 prompt tokens and 10000 completion tokens
    And the workspace file "notes.txt" contains "The launch code is 4-8-15-16."
    And a running session
    And the model will call ReadFile on "notes.txt"
    And the model will then answer "Never asked."
    When the client starts the task "What is the launch code in notes.txt?"
    Then the task fails with error code "LLM_BUDGET_EXCEEDED"
    And the gateway received exactly 1 request

  @REQ-LLM-018
  Scenario: responses whose usage stays within the budget let the task go on
    Given the policy allows a session budget of 100000 tokens
    And the gateway reports usage of 1000 prompt tokens and 1000 completion tokens
    And the workspace file "notes.txt" contains "The launch code is 4-8-15-16."
    And a running session
    And the model will call ReadFile on "notes.txt"
    And the model will then answer "The launch code is 4-8-15-16."
    When the client starts the task "What is the launch code in notes.txt?"
    Then the task ends with exactly one task_completed event
    And the gateway received exactly 2 requests
