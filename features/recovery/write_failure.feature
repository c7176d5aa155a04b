Feature: A checkpoint that cannot be written
  Checkpoints are a crash-recovery buffer: when one cannot be written the runtime logs a
  warning and the loop goes on (local-agent-host.md §11).

  @REQ-REC-012
  Scenario: a checkpoint that cannot be written does not stop the task
    Given the runtime's checkpoint directory cannot be written
    And the workspace file "notes.txt" contains "The launch code is 4-8-15-16."
    And a running session
    And the model will call ReadFile on "notes.txt"
    And the model will then answer "The launch code is 4-8-15-16."
    When the client starts the task "What is the launch code in notes.txt?"
    Then the task ends with exactly one task_completed event
    And the task_completed result is "The launch code is 4-8-15-16."
