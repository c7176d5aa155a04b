Feature: Asking the user before acting
  A capability that requires approval suspends its tool call until the user decides in the
  desktop app; the decision, never an error, is answered at once (local-agent-host.md §10,
  §8.5; INTEROP.md §1).

  Background:
    Given the policy requires approval for File.Read under the rule "Read a local file"
    And the workspace file "notes.txt" contains "The launch code is 4-8-15-16."
    And a running session
    And the model will call ReadFile on "notes.txt"
    And the model will then answer "Done."

  @REQ-APR-001
  Scenario: the approval request carries the whole ApprovalRequest
    When the client starts the task "What is the launch code in notes.txt?"
    Then the runtime asks for approval titled "Read a local file" to read "notes.txt"

  @REQ-APR-002
  Scenario: reading a file is rated low risk
    When the client starts the task "What is the launch code in notes.txt?"
    Then the approval request rates the risk "low"

  @REQ-APR-003
  Scenario: an approved action runs
    When the client starts the task "What is the launch code in notes.txt?"
    And the user approves the action
    Then ApproveAction answers "accepted" without an error
    And the ReadFile call runs and returns "The launch code is 4-8-15-16."

  @REQ-APR-004
  Scenario: the user's decision is reported with approval_resolved
    When the client starts the task "What is the launch code in notes.txt?"
    And the user approves the action
    Then the runtime reports approval_resolved with decision "approved"

  @REQ-APR-005
  Scenario: a denied action is not run and the model learns the user's reason
    When the client starts the task "What is the launch code in notes.txt?"
    And the user denies the action because "Please do not open my notes"
    Then the ReadFile call is denied with error code "APPROVAL_DENIED"
    And the model is told the ReadFile call was denied because of "Please do not open my notes"
    And no model request contains "4-8-15-16"

  @REQ-APR-007
  Scenario Outline: ApproveAction answers "<status>" instead of an error when <situation>
    When the client starts the task "What is the launch code in notes.txt?"
    And <action>
    Then ApproveAction answers "<status>" without an error

    Examples:
      | situation                                  | action                                                | status           |
      | the approval id is unknown                 | the user approves an approval id the runtime never issued | not_found        |
      | the action was already decided             | the user approves the action twice                    | already_resolved |
      | the decision is neither approved nor denied | the user answers the approval with the decision "maybe" | invalid_decision |

  @REQ-APR-008
  Scenario: cancelling a task that waits for approval resolves the approval as cancelled
    When the client starts the task "What is the launch code in notes.txt?"
    And the client cancels the task while it waits for approval
    Then the runtime reports approval_resolved with decision "cancelled"
    And the task ends cancelled
