Feature: An approval nobody answers
  Without a decision within APPROVAL_TIMEOUT_SECONDS the action is treated as denied and the
  app is told the agent moved on; a decision that comes later changes nothing
  (local-agent-host.md §10.3; INTEROP.md §1).

  Background:
    Given the runtime is started with APPROVAL_TIMEOUT_SECONDS set to "0.2"
    And the policy requires approval for File.Read under the rule "Read a local file"
    And the workspace file "notes.txt" contains "The launch code is 4-8-15-16."
    And a running session
    And the model will call ReadFile on "notes.txt"
    And the model will then answer "Nobody answered, so I did not read it."

  @REQ-APR-006
  Scenario: an approval nobody answers times out and the action is denied
    When the client starts the task "What is the launch code in notes.txt?"
    Then the runtime reports approval_timeout for the approval
    And the runtime reports approval_resolved with decision "timed_out"
    And the ReadFile call is denied with error code "APPROVAL_DENIED"

  @REQ-APR-007
  Scenario: a decision after the timeout is answered "expired"
    When the client starts the task "What is the launch code in notes.txt?"
    And the approval times out
    And the user approves the action
    Then ApproveAction answers "expired" without an error

  @REQ-APR-012
  Scenario: the model learns that nobody answered, not that the user refused
    When the client starts the task "What is the launch code in notes.txt?"
    Then the runtime reports approval_resolved with decision "timed_out"
    And the ReadFile call is denied with error code "APPROVAL_DENIED"
    And the model is told no decision arrived in time, not that the user denied it
