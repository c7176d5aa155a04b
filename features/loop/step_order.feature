Feature: A step ends after its tools
  step_completed is sent after all the step's tool results are collected and its checkpoint
  is written; the checkpoint is written after the tool results are added to the thread
  (local-agent-host.md §12, §9.3).

  Background:
    Given the workspace file "notes.txt" contains "The launch code is 4-8-15-16."
    And a running session

  @REQ-LOOP-030
  Scenario: step_completed comes after the tool_completed of each of the step's tool calls
    Given the model will call ReadFile on "notes.txt" 2 times, then answer "Nothing new in there."
    When the client starts the task "What is in notes.txt?"
    Then every step's step_completed comes after the tool_completed of each tool call of that step

  @REQ-REC-016
  Scenario: the checkpoint holds the step's tool result when step_completed is reported
    Given the model will call ReadFile on "notes.txt"
    And the model will begin answering "The code" and then pause
    When the client starts the task "What is the launch code in notes.txt?"
    Then when the first step_completed is reported, the checkpoint of the session holds "4-8-15-16"
