Feature: Task options that tighten the policy
  StartTask's taskOptions.approvalMode and allowNetwork can only make a task stricter than
  its policy bundle, never looser (system-design.md "Task"; architecture.md §6;
  local-agent-host.md §8, §10).

  @REQ-APR-013
  Scenario: approvalMode "always" asks before an action the policy allows outright
    Given the workspace file "notes.txt" contains "The launch code is 4-8-15-16."
    And a running session
    And the model will call ReadFile on "notes.txt"
    And the model will then answer "Done."
    When the client starts the task "Read notes.txt." with the task options '{"approvalMode": "always"}'
    Then the approval request rates the risk "low"
    And the runtime asks for approval titled "Allow ReadFile?" to read "notes.txt"

  @REQ-APR-013
  Scenario: approvalMode "on_risky_actions" leaves it to the policy
    Given the workspace file "notes.txt" contains "The launch code is 4-8-15-16."
    And a running session
    And the model will call ReadFile on "notes.txt"
    And the model will then answer "Done."
    When the client starts the task "Read notes.txt." with the task options '{"approvalMode": "on_risky_actions"}'
    Then the ReadFile call runs and returns "The launch code is 4-8-15-16."
    And the runtime asks for no approval

  @REQ-APR-013
  Scenario: approvalMode "never" denies what would need approval instead of asking
    Given the policy requires approval for File.Read under the rule "Read a local file"
    And the workspace file "notes.txt" contains "The launch code is 4-8-15-16."
    And a running session
    And the model will call ReadFile on "notes.txt"
    And the model will then answer "I may not read it."
    When the client starts the task "Read notes.txt." with the task options '{"approvalMode": "never"}'
    Then the ReadFile call is denied with error code "CAPABILITY_DENIED"
    And the runtime asks for no approval
    And no model request contains "4-8-15-16"

  @REQ-POL-020
  Scenario: allowNetwork false withholds HttpRequest and denies a call to it
    Given the policy lets HttpRequest reach "example.com" but never "", after approval
    And a running session
    And the model will fetch "https://example.com/"
    And the model will then answer "No network."
    When the client starts the task "Fetch it." with the task options '{"allowNetwork": false}'
    Then the HttpRequest call is denied
    And the model is not offered HttpRequest
    And the runtime asks for no approval

  @REQ-POL-020
  Scenario: allowNetwork true keeps HttpRequest under the policy's rules
    Given the policy lets HttpRequest reach "example.com" but never "", after approval
    And a running session
    And the model will fetch "https://example.com/"
    When the client starts the task "Fetch it." with the task options '{"allowNetwork": true}'
    Then the HttpRequest call waits for approval
    And the model is offered HttpRequest
