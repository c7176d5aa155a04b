Feature: Approval decisions are persisted to the Approval Service
  Every decision is POSTed to APPROVAL_SERVICE_URL/approvals with the fields of INTEROP.md §6,
  fire-and-forget with bounded retry: the tool never waits for it and never fails because of
  it; without APPROVAL_SERVICE_URL nothing is sent (local-agent-host.md §10.4).

  Background:
    Given the policy requires approval for File.Read under the rule "Read a local file"
    And the workspace file "notes.txt" contains "The launch code is 4-8-15-16."

  @REQ-APR-010
  Scenario: an approval is recorded as approved
    Given a running session
    And the model will call ReadFile on "notes.txt"
    And the model will then answer "Done."
    When the client starts the task "What is the launch code in notes.txt?"
    And the user approves the action
    Then the Approval Service records the decision "approved" for the approval

  @REQ-APR-010
  Scenario: a denial is recorded as denied
    Given a running session
    And the model will call ReadFile on "notes.txt"
    And the model will then answer "Done."
    When the client starts the task "What is the launch code in notes.txt?"
    And the user denies the action because "Not now"
    Then the Approval Service records the decision "denied" for the approval

  @REQ-APR-010 @REQ-APR-012
  Scenario: an approval nobody answers is recorded as timed_out
    Given the runtime is started with APPROVAL_TIMEOUT_SECONDS set to "0.2"
    And a running session
    And the model will call ReadFile on "notes.txt"
    And the model will then answer "Nobody answered."
    When the client starts the task "What is the launch code in notes.txt?"
    Then the Approval Service records the decision "timed_out" for the approval

  @REQ-APR-011
  Scenario: the Approval Service being down neither blocks nor fails the approved tool
    Given the Approval Service is down
    And a running session
    And the model will call ReadFile on "notes.txt"
    And the model will then answer "Done."
    When the client starts the task "What is the launch code in notes.txt?"
    And the user approves the action
    Then the ReadFile call runs and returns "The launch code is 4-8-15-16."
    And the task_completed result is "Done."

  @REQ-APR-011
  Scenario: an Approval Service that hangs does not hold up the approved tool
    Given the Approval Service is slow by 10 s
    And a running session
    And the model will call ReadFile on "notes.txt"
    And the model will then answer "Done."
    When the client starts the task "What is the launch code in notes.txt?"
    And the user approves the action
    Then the ReadFile call runs and returns "The launch code is 4-8-15-16."
    And the task_completed result is "Done."

  @REQ-APR-011
  Scenario: without APPROVAL_SERVICE_URL no decision is sent
    Given the runtime is started with APPROVAL_SERVICE_URL set to ""
    And a running session
    And the model will call ReadFile on "notes.txt"
    And the model will then answer "Done."
    When the client starts the task "What is the launch code in notes.txt?"
    And the user approves the action
    Then the ReadFile call runs and returns "The launch code is 4-8-15-16."
    And the Approval Service received no request
