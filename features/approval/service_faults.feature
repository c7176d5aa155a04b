Feature: Approval decisions reach a failing Approval Service
  Persisting a decision is fire-and-forget with bounded retry (local-agent-host.md §10.4):
  a service that fails a few times still gets the record, and the tool never waits for it.

  Background:
    Given the policy requires approval for File.Read under the rule "Read a local file"
    And the workspace file "notes.txt" contains "The launch code is 4-8-15-16."

  @REQ-APR-010 @REQ-APR-011
  Scenario: a decision the Approval Service fails twice is retried until it is recorded
    Given the Approval Service answers 503 to the next 2 requests
    And a running session
    And the model will call ReadFile on "notes.txt"
    And the model will then answer "Done."
    When the client starts the task "What is the launch code in notes.txt?"
    And the user approves the action
    # judges @REQ-APR-011
    Then the ReadFile call runs and returns "The launch code is 4-8-15-16."
    # judges @REQ-APR-010
    And the Approval Service records the decision "approved" for the approval

